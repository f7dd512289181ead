//go:build fleet

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/fleet"
)

const fleetUsage = `
Usage: pi fleet COMMAND [flags]

Many agent runs, queued on NATS JetStream and run by workers on any number
of machines (docs/fleet.md).

  pi fleet submit --repo DIR --prompt TEXT [--wait]   queue a task
  pi fleet submit --file tasks.jsonl [--wait]         queue one task a line
  pi fleet worker [--concurrency N]                   run tasks until SIGTERM
  pi fleet status [ID | --label L] [--json]           where tasks are
  pi fleet results ID [--patch | --session | --log | --json]
  pi fleet cancel ID                                  stop a task
  pi fleet retry ID                                   run an ended task again

Without --nats URL (or [fleet] nats in pi.toml) pi runs an embedded NATS
server on a local store (--store, default ~/.local/share/pi-go/fleet);
'pi fleet submit ... --wait' alone then runs the tasks with local workers.

Task flags (and the fields of a --file line, same names):
  --repo DIR | --git URL [--rev REV]   the workspace (a folder is packed
                                       and sent; a URL is cloned by the worker)
  --prompt TEXT      the message; repeat it for several, sent in turn
  --model NAME       a model of the worker's configuration (never an
                     endpoint or a key: those are the worker's)
  --thinking LEVEL   --tools LIST   --sandbox MODE   --plan
  --max-turns N      --timeout 30m  --max-tokens N  --max-cost USD
  --label L (repeatable)   --id ID
A task is never looser than your configuration: tools it has not active,
a looser sandbox or more turns are refused.
`

// fleetFlags are the flags every fleet command takes.
type fleetFlags struct {
	commonFlags
	nats, store string
	json        bool
}

func (f *fleetFlags) register(fs *flag.FlagSet) {
	f.commonFlags.register(fs)
	fs.StringVar(&f.nats, "nats", "", "NATS server `URL` (comma-separated for a cluster); default [fleet] nats, else the embedded server")
	fs.StringVar(&f.store, "store", "", "the embedded server's store `DIR` (default [fleet] store, else ~/.local/share/pi-go/fleet)")
	fs.BoolVar(&f.json, "json", false, "print JSON")
}

type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func cmdFleet(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, fleetUsage, stdout, stderr); done {
		return code
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "submit":
		return fleetSubmit(rest, stdout, stderr)
	case "worker":
		return fleetWorker(rest, stdout, stderr)
	case "status", "results", "cancel", "retry":
		return fleetTask(sub, rest, stdout, stderr)
	}
	return usageError(stderr, "fleet", "unknown subcommand %q (submit, worker, status, results, cancel, retry)", sub)
}

// fleetEnv is the configuration a fleet command works with.
type fleetEnv struct {
	opts   fleet.Options
	policy fleet.Policy
	conc   int
	piHome string
}

// loadFleet reads pi.toml ([fleet], [tools], [sandbox]) under the flags.
//
// For a worker, --tools and --sandbox set its own policy; for submit they
// are the task's, checked against pi.toml's.
func loadFleet(f *fleetFlags, worker bool, stderr io.Writer) (fleetEnv, int, bool) {
	// pi.toml's own settings: a submit's --tools and --sandbox are the
	// task's, checked against them.
	cf := f.commonFlags
	cf.tools, cf.sandbox = "", ""
	opts := cf.appOptions(stderr, app.ModelOptions{})
	opts.Mode, opts.MCPStart = app.ModeTool, app.MCPLazy
	rt, err := app.Open(context.Background(), opts)
	if err != nil {
		return fleetEnv{}, openFailed(stderr, err, ""), false
	}
	cfg, piHome := rt.Config(), rt.PIHome()
	rt.Close()
	fc := cfg.Fleet
	home, _ := os.UserHomeDir()
	expand := func(p string) string {
		if strings.HasPrefix(p, "~/") && home != "" {
			return filepath.Join(home, p[2:])
		}
		return p
	}
	e := fleetEnv{
		opts: fleet.Options{
			URL: fc.NATS, Creds: expand(fc.Creds), TLSCA: expand(fc.TLSCA), TLSCert: expand(fc.TLSCert), TLSKey: expand(fc.TLSKey),
			Store: expand(fc.Store), AckWait: time.Duration(fc.AckWaitS) * time.Second, MaxAttempts: fc.MaxAttempts, Replicas: fc.Replicas,
			Name: "pi fleet",
		},
		policy: fleet.Policy{Tools: cfg.Tools.Active, Sandbox: cfg.Sandbox.Mode},
		conc:   fc.Concurrency, piHome: piHome,
	}
	if worker && f.tools != "" {
		e.policy.Tools = splitList(f.tools)
	}
	if worker && f.sandbox != "" {
		e.policy.Sandbox = f.sandbox
	}
	if f.nats != "" {
		e.opts.URL = f.nats
	}
	if f.store != "" {
		e.opts.Store = f.store
	}
	if e.opts.Store == "" {
		e.opts.Store = fleet.DefaultStore()
	}
	if e.conc <= 0 {
		e.conc = max(1, runtime.NumCPU())
	}
	return e, 0, true
}

// workerFlags are the flags of a worker (also submit --wait's local ones).
type workerFlags struct {
	script, workDir, name string
	concurrency           int
	ackWait               time.Duration
	maxAttempts           int
	replicas              int
}

func (w *workerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.script, "script", "", "runs play the scripted model in `FILE` instead of calling one (tests, benchmarks)")
	fs.StringVar(&w.workDir, "work-dir", "", "the runs' workspaces go in `DIR` (default STORE/work)")
	fs.StringVar(&w.name, "name", "", "the worker's `NAME` in the status records (default HOST/PID)")
	fs.IntVar(&w.concurrency, "concurrency", 0, "runs at once, `N` (default [fleet] concurrency, else the CPUs)")
	fs.DurationVar(&w.ackWait, "ack-wait", 0, "a task silent this `LONG` is delivered again (default [fleet] ack_wait_s, else 30s)")
	fs.IntVar(&w.maxAttempts, "max-attempts", 0, "deliveries of a task before it fails, `N` (default [fleet] max_attempts, else 3)")
	fs.IntVar(&w.replicas, "replicas", 0, "replicas of the stream and buckets, `N` (default [fleet] replicas, else 1)")
}

func (w *workerFlags) apply(e *fleetEnv) {
	if w.concurrency > 0 {
		e.conc = w.concurrency
	}
	if w.ackWait > 0 {
		e.opts.AckWait = w.ackWait
	}
	if w.maxAttempts > 0 {
		e.opts.MaxAttempts = w.maxAttempts
	}
	if w.replicas > 0 {
		e.opts.Replicas = w.replicas
	}
}

// workerOptions are the runs' settings: the pi binary and the worker's
// own flags, which pick the model and key (never the task).
func (w *workerFlags) workerOptions(f *fleetFlags, e fleetEnv, log io.Writer) (fleet.WorkerOptions, error) {
	exe, err := os.Executable()
	if err != nil {
		return fleet.WorkerOptions{}, fmt.Errorf("the pi binary: %w", err)
	}
	pi := []string{exe, "--log-level", f.logLevel}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if f.configFile != "" {
		pi = append(pi, "--config", abs(f.configFile))
	}
	if w.script != "" {
		pi = append(pi, "--script", abs(w.script))
	}
	wd := w.workDir
	if wd == "" {
		wd = filepath.Join(e.opts.Store, "work")
	}
	// The runs' commands must not read the queue's store (its data and
	// the embedded server's token), the credentials to the server or pi's
	// home (models.json may hold keys; the runs' pi reads it, not their
	// commands).
	private := []string{abs(e.opts.Store)}
	if e.piHome != "" {
		private = append(private, e.piHome)
	}
	for _, p := range []string{e.opts.Creds, e.opts.TLSKey} {
		if p != "" {
			private = append(private, abs(p))
		}
	}
	return fleet.WorkerOptions{Name: w.name, Concurrency: e.conc, Pi: pi, WorkDir: abs(wd), Private: private, Policy: e.policy, Log: log}, nil
}

func fleetWorker(args []string, stdout, stderr io.Writer) int {
	var f fleetFlags
	var w workerFlags
	fs := newFlagSet("pi fleet worker", fleetUsage, stdout, stderr)
	f.register(fs)
	w.register(fs)
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "fleet worker", "unexpected argument %q", pos[0])
	}
	e, code, ok := loadFleet(&f, true, stderr)
	if !ok {
		return code
	}
	w.apply(&e)
	wo, err := w.workerOptions(&f, e, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pi fleet worker: %v\n", err)
		return exitError
	}
	// SIGTERM or Ctrl-C: drain (take no more, finish the running runs); a
	// second one stops the runs, which are delivered again elsewhere.
	drain, stopDrain := context.WithCancel(context.Background())
	abort, stopAbort := context.WithCancel(context.Background())
	defer stopAbort()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		stopDrain()
		fmt.Fprintln(stderr, "pi fleet worker: draining: finishing the running tasks (again to stop them)")
		<-sigs
		stopAbort()
	}()
	fl, err := fleet.Open(drain, e.opts)
	if err != nil {
		fmt.Fprintf(stderr, "pi fleet worker: %v\n", err)
		return exitError
	}
	defer fl.Close()
	fmt.Fprintf(stderr, "pi fleet worker: %d runs at once on %s\n", e.conc, where(fl, e.opts))
	if err := fl.Work(drain, abort, wo); err != nil {
		fmt.Fprintf(stderr, "pi fleet worker: %v\n", err)
		return exitError
	}
	return exitOK
}

func where(fl *fleet.Fleet, o fleet.Options) string {
	if fl.Embedded {
		return "the embedded NATS server (store " + o.Store + ")"
	}
	if o.URL == "" {
		return "the embedded NATS server another pi runs (store " + o.Store + ")"
	}
	return o.URL
}

func fleetSubmit(args []string, stdout, stderr io.Writer) int {
	var f fleetFlags
	var w workerFlags
	var t fleet.Task
	var prompts, labels stringsFlag
	var file string
	var wait bool
	fs := newFlagSet("pi fleet submit", fleetUsage, stdout, stderr)
	f.register(fs)
	w.register(fs)
	fs.StringVar(&file, "file", "", "tasks from `FILE` (JSON lines; - for stdin)")
	fs.StringVar(&t.Repo, "repo", "", "the workspace: a local `DIR`, packed and sent")
	fs.StringVar(&t.Git, "git", "", "the workspace: a git `URL` the worker clones")
	fs.StringVar(&t.Rev, "rev", "", "the `REV` of --git (default HEAD)")
	fs.Var(&prompts, "prompt", "the `TEXT` to send (repeatable: sent in turn)")
	fs.StringVar(&t.Model, "model", "", "model `NAME` of the worker's configuration")
	fs.StringVar(&t.Thinking, "thinking", "", "thinking `LEVEL`")
	fs.BoolVar(&t.Plan, "plan", false, "run in plan mode")
	fs.IntVar(&t.MaxTurns, "max-turns", 0, "stop after `N` model turns")
	fs.StringVar(&t.Timeout, "timeout", "", "stop the run after `DURATION` (default 30m)")
	fs.IntVar(&t.MaxTokens, "max-tokens", 0, "stop the run once the model has used `N` tokens")
	fs.Float64Var(&t.MaxCost, "max-cost", 0, "stop the run once the model has cost `USD`")
	fs.Var(&labels, "label", "tag the task with `LABEL` (repeatable)")
	fs.StringVar(&t.ID, "id", "", "the task's `ID` (default a new one)")
	fs.BoolVar(&wait, "wait", false, "wait until every task has ended, showing progress; exit 1 when one failed")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "fleet submit", "unexpected argument %q (a prompt goes in --prompt)", pos[0])
	}
	e, code, ok := loadFleet(&f, false, stderr)
	if !ok {
		return code
	}
	w.apply(&e)
	var tasks []fleet.Task
	switch {
	case file != "" && (t.Repo != "" || t.Git != "" || len(prompts) > 0):
		return usageError(stderr, "fleet submit", "give --file or the task's flags (--repo/--git, --prompt), not both")
	case file != "":
		var r io.Reader = os.Stdin
		if file != "-" {
			fh, err := os.Open(file)
			if err != nil {
				fmt.Fprintf(stderr, "pi fleet submit: %v\n", err)
				return exitError
			}
			defer fh.Close()
			r = fh
		}
		var err error
		if tasks, err = fleet.ParseTasks(r, file); err != nil {
			fmt.Fprintf(stderr, "pi fleet submit: %v\n", err)
			return exitUsage
		}
		// Relative repo folders are relative to the file.
		for i := range tasks {
			if tasks[i].Repo != "" && !filepath.IsAbs(tasks[i].Repo) && file != "-" {
				tasks[i].Repo = filepath.Join(filepath.Dir(file), tasks[i].Repo)
			}
		}
	default:
		t.Prompt, t.Label = fleet.Strings(prompts), fleet.Strings(labels)
		if f.tools != "" {
			t.Tools = splitList(f.tools)
		}
		t.Sandbox = f.sandbox
		if err := t.Check(); err != nil {
			return usageError(stderr, "fleet submit", "%v", flagNames(err))
		}
		tasks = []fleet.Task{t}
	}
	for i := range tasks {
		if tasks[i].Repo != "" {
			if a, err := filepath.Abs(tasks[i].Repo); err == nil {
				tasks[i].Repo = a
			}
		}
		if err := e.policy.Limit(&tasks[i]); err != nil {
			if file != "" {
				fmt.Fprintf(stderr, "pi fleet submit: %s: task %d: %v\n", file, i+1, err)
			} else {
				fmt.Fprintf(stderr, "pi fleet submit: %v\n", flagNames(err))
			}
			return exitUsage
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fl, err := fleet.Open(ctx, e.opts)
	if err != nil {
		fmt.Fprintf(stderr, "pi fleet submit: %v\n", err)
		return exitError
	}
	defer fl.Close()
	subs, err := fl.Submit(ctx, tasks)
	if err != nil {
		fmt.Fprintf(stderr, "pi fleet submit: %v\n", err)
	}
	if !wait {
		printSubmitted(stdout, subs, f.json)
		if err != nil {
			return exitError
		}
		return exitOK
	}
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.ID
	}
	// This process runs the embedded server: nobody else can run the
	// tasks, so local workers do.
	workersDone := make(chan struct{})
	drain, stopWorkers := context.WithCancel(context.Background())
	defer stopWorkers()
	if fl.Embedded {
		wo, werr := w.workerOptions(&f, e, nil)
		if werr != nil {
			fmt.Fprintf(stderr, "pi fleet submit: %v\n", werr)
			return exitError
		}
		go func() {
			defer close(workersDone)
			if err := fl.Work(drain, ctx, wo); err != nil {
				fmt.Fprintf(stderr, "pi fleet submit: local workers: %v\n", err)
			}
		}()
	} else {
		close(workersDone)
	}
	var progress io.Writer = stderr
	final, werr := fl.Wait(ctx, ids, progress, isTerminal(os.Stderr))
	stopWorkers()
	<-workersDone
	if werr != nil {
		fmt.Fprintf(stderr, "pi fleet submit: %v (the tasks go on: pi fleet status)\n", werr)
		return exitError
	}
	printStatuses(stdout, final, f.json)
	for _, s := range final {
		if s == nil || s.State != fleet.StateDone {
			return exitError
		}
	}
	if err != nil {
		return exitError
	}
	return exitOK
}

// flagNames words a task field error with the flag's name.
func flagNames(err error) error {
	var fe *fleet.FieldError
	if errors.As(err, &fe) && fe.Field != "" {
		return fmt.Errorf("--%s: %s", fe.Field, fe.Msg)
	}
	return err
}

func printSubmitted(w io.Writer, subs []fleet.Submitted, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, s := range subs {
			enc.Encode(s)
		}
		return
	}
	for _, s := range subs {
		fmt.Fprintln(w, s.ID)
	}
}

func printStatuses(w io.Writer, list []*fleet.Status, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, s := range list {
			if s != nil {
				enc.Encode(s)
			}
		}
		return
	}
	for _, s := range list {
		if s == nil {
			continue
		}
		line := fmt.Sprintf("%-20s %-9s run %d", s.ID, s.State, s.Run)
		if s.Worker != "" {
			line += " on " + s.Worker
		}
		if s.Result != nil {
			line += fmt.Sprintf(", %d files changed, %.1fs, %d tokens", s.Result.FilesChanged, s.Result.Seconds, s.Result.Usage.Total)
		}
		if s.Reason != "" {
			line += ": " + s.Reason
		}
		if len(s.Label) > 0 {
			line += " [" + strings.Join(s.Label, ",") + "]"
		}
		fmt.Fprintln(w, line)
	}
}

func fleetTask(sub string, args []string, stdout, stderr io.Writer) int {
	var f fleetFlags
	var label string
	var patch, session, log bool
	fs := newFlagSet("pi fleet "+sub, fleetUsage, stdout, stderr)
	f.register(fs)
	switch sub {
	case "status":
		fs.StringVar(&label, "label", "", "the tasks with `LABEL`")
	case "results":
		fs.BoolVar(&patch, "patch", false, "print the patch")
		fs.BoolVar(&session, "session", false, "print the session file")
		fs.BoolVar(&log, "log", false, "print the run's log")
	}
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	id := ""
	switch {
	case len(pos) > 1:
		return usageError(stderr, "fleet "+sub, "one task ID, got %d", len(pos))
	case len(pos) == 1:
		id = pos[0]
	case sub != "status":
		return usageError(stderr, "fleet "+sub, "want a task ID")
	}
	e, code, ok := loadFleet(&f, false, stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fl, err := fleet.Open(ctx, e.opts)
	if err != nil {
		fmt.Fprintf(stderr, "pi fleet %s: %v\n", sub, err)
		return exitError
	}
	defer fl.Close()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "pi fleet %s: %v\n", sub, err)
		return exitError
	}
	switch sub {
	case "status":
		if id != "" {
			s, err := fl.Get(ctx, id)
			if err != nil {
				return fail(err)
			}
			printStatuses(stdout, []*fleet.Status{s}, f.json)
			return exitOK
		}
		list, err := fl.List(ctx, label)
		if err != nil {
			return fail(err)
		}
		printStatuses(stdout, list, f.json)
		return exitOK
	case "cancel":
		s, err := fl.Cancel(ctx, id)
		if err != nil {
			return fail(err)
		}
		if s.State == fleet.StateRunning {
			fmt.Fprintf(stdout, "%s: stopping (it was running on %s)\n", id, s.Worker)
		} else {
			fmt.Fprintf(stdout, "%s: canceled\n", id)
		}
		return exitOK
	case "retry":
		s, err := fl.Retry(ctx, id)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "%s: queued (run %d)\n", id, s.Run)
		return exitOK
	}
	// results
	s, err := fl.Get(ctx, id)
	if err != nil {
		return fail(err)
	}
	if f.json {
		printStatuses(stdout, []*fleet.Status{s}, true)
		return exitOK
	}
	if !fleet.Final(s.State) || s.Result == nil {
		if fleet.Final(s.State) {
			return fail(fmt.Errorf("task %s %s without a result: %s", id, s.State, s.Reason))
		}
		return fail(fmt.Errorf("task %s is %s: no result yet", id, s.State))
	}
	obj := ""
	switch {
	case patch:
		obj = s.Result.Patch
	case session:
		obj = s.Result.Session
	case log:
		obj = s.Result.Log
	default:
		printStatuses(stdout, []*fleet.Status{s}, false)
		fmt.Fprintln(stdout, s.Result.Text)
		return exitOK
	}
	if obj == "" {
		return exitOK // an empty patch, no session or log
	}
	b, err := fl.Object(ctx, obj)
	if err != nil {
		return fail(err)
	}
	stdout.Write(b)
	return exitOK
}

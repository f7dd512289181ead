package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/pi-go/pi/internal/sandbox"
)

// WorkerOptions say how a worker runs tasks.
type WorkerOptions struct {
	// Name identifies the worker in the status records (default the host
	// name and pid).
	Name string
	// Concurrency is the runs kept going at once (default 1).
	Concurrency int
	// Pi is the command of one run without its per-task flags: the pi
	// binary (os.Executable) and the worker's own flags (--config,
	// --script, ...). The model's endpoint and key come from these, never
	// from the task.
	Pi []string
	// Env is the runs' environment (default os.Environ()).
	Env []string
	// WorkDir holds the runs' temporary workspaces (default
	// $TMPDIR/pi-fleet-work-UID). The runs' bash commands see none of it
	// but their own workspace (PI_SANDBOX_PRIVATE, where the kernel
	// sandbox runs).
	WorkDir string
	// Private are more folders or files the runs' commands must not see
	// (the embedded server's store, credentials files), besides WorkDir.
	Private []string
	// Policy is the worker's configuration: a task is narrowed to it.
	Policy Policy
	// Log gets a line per task started and ended (nil: none).
	Log io.Writer
	// GracePeriod is how long a stopped run has to end before it is
	// killed (default 10s).
	GracePeriod time.Duration
	// SharedPIDs runs pi in the worker's own user, PID and mount
	// namespaces (for tests and comparison): by default each run's pi is
	// the init of namespaces of its own, where they are available, so a
	// run's commands see no other run's processes in /proc and none
	// outlives the run.
	SharedPIDs bool
}

// Work takes tasks and runs them until drain ends: then it takes no more
// and returns once the running ones have ended. When abort ends, the
// running ones are stopped and left to be delivered again.
//
// # Errors
//
// The consumer cannot be made.
func (f *Fleet) Work(drain, abort context.Context, o WorkerOptions) error {
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Name == "" {
		h, _ := os.Hostname()
		o.Name = fmt.Sprintf("%s/%d", h, os.Getpid())
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.GracePeriod <= 0 {
		o.GracePeriod = 10 * time.Second
	}
	if o.WorkDir == "" {
		o.WorkDir = filepath.Join(os.TempDir(), fmt.Sprintf("pi-fleet-work-%d", os.Getuid()))
	}
	if abs, err := filepath.Abs(o.WorkDir); err == nil {
		o.WorkDir = abs
	}
	if len(o.Pi) == 0 {
		return errors.New("fleet worker: no pi command")
	}
	removeStale(o.WorkDir)
	cons, err := f.consumer(drain)
	if err != nil {
		return fmt.Errorf("fleet worker: consumer: %w", err)
	}
	w := &worker{f: f, o: o, abort: abort, running: map[string]*run{}}
	if !o.SharedPIDs {
		if err := sandbox.ProbePIDNamespace(); err != nil {
			out := o.Log
			if out == nil {
				out = os.Stderr
			}
			fmt.Fprintf(out, "pi fleet worker %s: warning: runs share the worker's PID namespace (a run's commands can see other runs' processes in /proc, and a hung run's commands may outlive it): %v\n", o.Name, err)
		} else {
			w.pidns = true
		}
	}
	wctx, stopWatch := context.WithCancel(abort)
	defer stopWatch()
	if err := w.watchCancels(wctx); err != nil {
		return fmt.Errorf("fleet worker: watch cancels: %w", err)
	}
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for drain.Err() == nil && abort.Err() == nil {
				// Each pull is bounded: a pull request the server lost
				// (its node went down while it waited) would otherwise
				// be waited on for ever, and the worker take nothing
				// more.
				pull, cancel := context.WithTimeout(drain, pullWait)
				msg, err := cons.Next(jetstream.FetchContext(pull))
				cancel()
				if err != nil {
					if drain.Err() == nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
						// The server is away (a node restarting): wait a
						// little before asking again.
						t := time.NewTimer(200 * time.Millisecond)
						select {
						case <-drain.Done():
						case <-t.C:
						}
					}
					continue
				}
				w.handle(msg)
			}
		}()
	}
	wg.Wait()
	return nil
}

// pullWait bounds one pull request of a worker's loop.
const pullWait = 5 * time.Second

type worker struct {
	f     *Fleet
	o     WorkerOptions
	abort context.Context
	pidns bool // each run's pi is the init of its own namespaces

	mu      sync.Mutex
	running map[string]*run // by task id
}

// run is one task being run here.
type run struct {
	id     string
	n      int
	cancel context.CancelCauseFunc
}

var errCanceled = errors.New("canceled")

// watchCancels stops a running task when its cancel key is written.
func (w *worker) watchCancels(ctx context.Context) error {
	kw, err := w.f.kv.Watch(ctx, "cancel.*", jetstream.UpdatesOnly(), jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	go func() {
		defer kw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-kw.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue
				}
				id := strings.TrimPrefix(e.Key(), "cancel.")
				n, _ := strconv.Atoi(string(e.Value()))
				w.mu.Lock()
				r := w.running[id]
				w.mu.Unlock()
				if r != nil && r.n == n {
					r.cancel(errCanceled)
				}
			}
		}
	}()
	return nil
}

func (w *worker) canceled(ctx context.Context, id string, n int) bool {
	var e jetstream.KeyValueEntry
	err := retry(ctx, 30*time.Second, func(ctx context.Context) error {
		var err error
		e, err = w.f.kv.Get(ctx, cancelKey(id))
		return err
	})
	return err == nil && string(e.Value()) == strconv.Itoa(n)
}

func (w *worker) logf(format string, args ...any) {
	if w.o.Log != nil {
		fmt.Fprintf(w.o.Log, "%s fleet worker %s: %s\n", time.Now().UTC().Format(time.TimeOnly), w.o.Name, fmt.Sprintf(format, args...))
	}
}

// ack acknowledges msg, making sure the server has it.
func (w *worker) ack(msg jetstream.Msg) {
	_ = retry(context.Background(), 30*time.Second, func(ctx context.Context) error { return msg.DoubleAck(ctx) })
}

// handle takes one delivery to its end: skip it (a result exists, a newer
// run, canceled), fail it (too many deliveries), or run it.
func (w *worker) handle(msg jetstream.Msg) {
	ctx := context.Background()
	var m message
	if err := json.Unmarshal(msg.Data(), &m); err != nil || m.ID == "" {
		w.logf("dropping a message that is not a task: %v", err)
		_ = msg.Term()
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		_ = msg.Term()
		return
	}
	attempt := int(meta.NumDelivered)
	var s *Status
	var rev uint64
	claim, _ := randomHex(8)
	for {
		s, rev, err = w.f.get(ctx, m.ID)
		if errors.Is(err, ErrNotFound) {
			w.logf("task %s: no status record; dropping it", m.ID)
			w.ack(msg)
			return
		}
		if err != nil {
			w.logf("task %s: %v; leaving it for later", m.ID, err)
			_ = msg.NakWithDelay(time.Second)
			return
		}
		if s.Run != m.Run || Final(s.State) {
			w.ack(msg) // a result exists, or a newer run replaced this one
			return
		}
		now := time.Now().UTC()
		if w.canceled(ctx, m.ID, m.Run) {
			s.State, s.Reason, s.Finished = StateCanceled, "canceled before it started", &now
		} else if attempt > w.f.opts.MaxAttempts {
			s.State, s.Finished = StateFailed, &now
			s.Reason = fmt.Sprintf("delivered %d times without a result (max %d attempts); the last attempt, on worker %s, ended without storing one: the worker was lost or its run overran the ack wait", attempt, w.f.opts.MaxAttempts, s.Worker)
		} else {
			s.State, s.Attempt, s.Worker, s.Claim, s.Started, s.Reason = StateRunning, attempt, w.o.Name, claim, &now, ""
		}
		nrev, err := w.f.update(ctx, s, rev)
		if errors.Is(err, errConflict) {
			continue
		}
		if err != nil {
			_ = msg.NakWithDelay(time.Second)
			return
		}
		if Final(s.State) {
			w.logf("task %s: %s: %s", m.ID, s.State, s.Reason)
			w.ack(msg)
			return
		}
		rev = nrev
		break
	}

	rctx, cancel := context.WithCancelCause(w.abort)
	defer cancel(nil)
	r := &run{id: m.ID, n: m.Run, cancel: cancel}
	w.mu.Lock()
	w.running[m.ID] = r
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.running, m.ID)
		w.mu.Unlock()
	}()
	// A cancel written between the check above and the watch seeing us.
	if w.canceled(ctx, m.ID, m.Run) {
		cancel(errCanceled)
	}

	// In-progress acks while it runs, so a long run is not delivered again.
	hbDone := make(chan struct{})
	go func() {
		t := time.NewTicker(max(w.f.opts.AckWait/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-hbDone:
				return
			case <-t.C:
				_ = msg.InProgress()
				// The watch brings a cancel at once; this look covers a
				// watch that a lost cluster node broke.
				if w.canceled(rctx, m.ID, m.Run) {
					cancel(errCanceled)
				}
			}
		}
	}()
	w.logf("task %s: run %d attempt %d started", m.ID, m.Run, attempt)
	out := w.runTask(rctx, &m, attempt)
	close(hbDone)

	if w.abort.Err() != nil && context.Cause(rctx) != errCanceled {
		// The worker is stopping: no result; the task is delivered again.
		w.logf("task %s: stopped with the worker; it will be delivered again", m.ID)
		_ = msg.Nak()
		return
	}
	_ = msg.InProgress()
	prefix := fmt.Sprintf("res/%s/%d/%d/", m.ID, m.Run, attempt)
	res := out.result
	var stored []string
	put := func(name string, data []byte) string {
		if data == nil {
			return ""
		}
		err := retry(ctx, 60*time.Second, func(ctx context.Context) error {
			_, err := w.f.obs.PutBytes(ctx, prefix+name, data)
			return err
		})
		if err != nil {
			out.storeErr = errors.Join(out.storeErr, fmt.Errorf("store %s: %w", name, err))
			return ""
		}
		stored = append(stored, prefix+name)
		return prefix + name
	}
	res.Patch = put("patch", out.patch)
	res.Session = put("session.jsonl", out.session)
	res.Log = put("log", out.log)
	if out.storeErr != nil {
		// Not stored: leave the task to be delivered again.
		w.logf("task %s: %v; it will be delivered again", m.ID, out.storeErr)
		w.deleteObjects(stored)
		_ = msg.NakWithDelay(time.Second)
		return
	}
	now := time.Now().UTC()
	s.State, s.Reason, s.Finished, s.Result = out.state, out.reason, &now, &res
	if _, err := w.f.update(ctx, s, rev); err != nil {
		// Another worker holds the task now (ours overran the ack wait):
		// its result will be the one; ours goes.
		w.logf("task %s: not recorded (%v); another attempt holds it", m.ID, err)
		w.deleteObjects(stored)
		if errors.Is(err, errConflict) {
			w.ack(msg)
		}
		return
	}
	w.ack(msg)
	if attempt > 1 {
		w.dropEarlierAttempts(ctx, m.ID, m.Run, prefix)
	}
	w.logf("task %s: %s %s", m.ID, out.state, out.reason)
}

// dropEarlierAttempts deletes the result objects of the run's other
// attempts: a worker killed between storing its result and recording it
// leaves them behind, and only the recorded attempt's are the result.
func (w *worker) dropEarlierAttempts(ctx context.Context, id string, run int, keep string) {
	names, err := w.f.Objects(ctx, fmt.Sprintf("res/%s/%d/", id, run))
	if err != nil {
		w.logf("task %s: list the results of earlier attempts: %v", id, err)
		return
	}
	var drop []string
	for _, n := range names {
		if !strings.HasPrefix(n, keep) {
			drop = append(drop, n)
		}
	}
	w.deleteObjects(drop)
}

func (w *worker) deleteObjects(names []string) {
	for _, n := range names {
		_ = retry(context.Background(), 30*time.Second, func(ctx context.Context) error { return w.f.obs.Delete(ctx, n) })
	}
}

// outcome is what runTask did.
type outcome struct {
	state, reason       string
	result              Result
	patch, session, log []byte
	storeErr            error
}

// runTask runs one task as a pi child process in a new workspace and
// collects what it left.
func (w *worker) runTask(ctx context.Context, m *message, attempt int) (out outcome) {
	start := time.Now()
	fail := func(format string, args ...any) outcome {
		out.state, out.reason = StateFailed, fmt.Sprintf(format, args...)
		out.result.ExitCode = -1
		out.result.Seconds = time.Since(start).Seconds()
		return out
	}
	t := m.Task
	if err := t.Check(); err != nil {
		return fail("bad task: %v", err)
	}
	if err := w.o.Policy.Limit(&t); err != nil {
		return fail("the worker's configuration refuses the task: %v", err)
	}
	if err := os.MkdirAll(w.o.WorkDir, 0o700); err != nil {
		return fail("workspace: %v", err)
	}
	// The worker's pid in the name: a worker started later removes what
	// a killed one left (removeStale).
	ws, err := os.MkdirTemp(w.o.WorkDir, fmt.Sprintf("pi-fleet-%s-%d-", m.ID, os.Getpid()))
	if err != nil {
		return fail("workspace: %v", err)
	}
	defer os.RemoveAll(ws)
	repo, sessDir, tmp := filepath.Join(ws, "repo"), filepath.Join(ws, "session"), filepath.Join(ws, "tmp")
	for _, d := range []string{repo, sessDir, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fail("workspace: %v", err)
		}
	}
	git, err := w.prepare(ctx, m, ws, repo)
	if err != nil {
		if context.Cause(ctx) == errCanceled {
			out.state, out.reason = StateCanceled, "canceled"
			return out
		}
		return fail("workspace: %v", err)
	}

	args := append(slices.Clone(w.o.Pi[1:]), "-p", "--mode", "json", "--cwd", repo, "--session-dir", sessDir,
		"--sandbox", t.Sandbox, "--tools", strings.Join(t.Tools, ","))
	if t.Model != "" {
		args = append(args, "--model="+t.Model)
	}
	if t.Thinking != "" {
		args = append(args, "--thinking="+t.Thinking)
	}
	if t.MaxTurns > 0 {
		args = append(args, "--max-turns", strconv.Itoa(t.MaxTurns))
	}
	// max-tokens and max-cost are the worker's to watch (events below).
	if t.Plan {
		args = append(args, "--plan")
	}
	args = append(args, "--")
	args = append(args, t.Prompt...)
	tctx, cancelTimeout := context.WithTimeoutCause(ctx, t.timeout(), errTimeout)
	defer cancelTimeout()
	bctx, overBudget := context.WithCancelCause(tctx)
	defer overBudget(nil)
	ev := &events{onUsage: func(u Usage) {
		if t.MaxTokens > 0 && u.Total > t.MaxTokens {
			overBudget(fmt.Errorf("%w: token limit %d passed (%d used)", errBudget, t.MaxTokens, u.Total))
		}
		if t.MaxCost > 0 && u.Cost > t.MaxCost {
			overBudget(fmt.Errorf("%w: cost limit $%g passed ($%.4f used)", errBudget, t.MaxCost, u.Cost))
		}
	}}
	cmd := exec.CommandContext(bctx, w.o.Pi[0], args...)
	cmd.Dir = repo
	cmd.Env = runEnv(w.o.Env, tmp, strings.Join(append([]string{w.o.WorkDir}, w.o.Private...), string(filepath.ListSeparator)))
	// Its own process group; SIGTERM when the worker dies (pi then stops
	// the run and kills its commands' sessions). Where it can, pi is the
	// init of new user, PID and mount namespaces (sandbox.InitEnv): it
	// mounts its own /proc, and when it ends, or is killed, the kernel
	// kills every process of the run.
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if w.pidns {
		cmd.SysProcAttr = sandbox.NamespaceInitAttr()
		cmd.Env = append(cmd.Env, sandbox.InitEnv+"="+sandbox.InitValue())
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pdeathsig = true, syscall.SIGTERM
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = w.o.GracePeriod
	stderr := &tailBuffer{max: 1 << 20}
	cmd.Stdout, cmd.Stderr = ev, stderr
	runStart := time.Now()
	// The parent-death signal fires when the thread that started the
	// child ends, not the process: keep this goroutine on its thread
	// until the child is gone.
	runtime.LockOSThread()
	err = cmd.Run()
	runtime.UnlockOSThread()
	out.result.RunSeconds = time.Since(runStart).Seconds()
	if cmd.Process != nil {
		// Whatever of the group is left (pi kills its commands' own
		// sessions itself).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	out.result.Seconds = time.Since(start).Seconds()
	out.result.ExitCode = cmd.ProcessState.ExitCode()
	out.result.Text, out.result.Usage = ev.result()
	out.log = stderr.Bytes()
	out.session = readSession(sessDir)
	out.patch, err = diff(git, repo)
	if err != nil {
		return fail("diff the workspace: %v", err)
	}
	out.result.FilesChanged = countFiles(out.patch)
	switch {
	case context.Cause(ctx) == errCanceled:
		out.state, out.reason = StateCanceled, "canceled while running"
	case context.Cause(tctx) == errTimeout:
		out.state, out.reason = StateFailed, fmt.Sprintf("time limit %s reached", t.timeout())
	case errors.Is(context.Cause(bctx), errBudget):
		out.state, out.reason = StateFailed, context.Cause(bctx).Error()
	case out.result.ExitCode == 0:
		out.state = StateDone
	default:
		out.state, out.reason = StateFailed, fmt.Sprintf("pi exited %d: %s", out.result.ExitCode, lastLine(stderr.Bytes()))
	}
	return out
}

var (
	errTimeout = errors.New("time limit")
	errBudget  = errors.New("stopped")
)

// removeStale removes the workspaces in dir of workers that are gone (a
// SIGKILLed worker cannot remove its own): their names end in
// -PID-RANDOM.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		parts := strings.Split(e.Name(), "-")
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "pi-fleet-") || len(parts) < 4 {
			continue
		}
		pid, err := strconv.Atoi(parts[len(parts)-2])
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// runEnv is env with TMPDIR in the workspace, the workspaces' folder
// private to the run's commands (PI_SANDBOX_PRIVATE: they see their own
// workspace only), the file tools confined to the workspace and no
// session folder of the worker's.
func runEnv(env []string, tmp, private string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMPDIR=") || strings.HasPrefix(kv, "PI_CODING_AGENT_SESSION_DIR=") || strings.HasPrefix(kv, "PI_SANDBOX_PRIVATE=") || strings.HasPrefix(kv, "PI_CONFINE_FILE_TOOLS=") || strings.HasPrefix(kv, sandbox.InitEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	// The file tools run in pi's process, outside the sandbox: kept to
	// the workspace (PI_CONFINE_FILE_TOOLS).
	return append(out, "TMPDIR="+tmp, "PI_SANDBOX_PRIVATE="+private, "PI_CONFINE_FILE_TOOLS=1")
}

// gitCmd runs git with the repository's own hooks, filters and monitors
// off (a task may have written them).
func gitCmd(ctx context.Context, gitDir, workTree string, args ...string) ([]byte, error) {
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.autocrlf=false",
		"-c", "user.name=pi fleet", "-c", "user.email=fleet@pi.invalid", "-c", "commit.gpgSign=false", "-c", "core.quotepath=off"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_DIR="+gitDir, "GIT_WORK_TREE="+workTree, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// prepare fills repo with the task's source and records the baseline the
// patch is taken against; it returns the git folder of that baseline.
func (w *worker) prepare(ctx context.Context, m *message, ws, repo string) (string, error) {
	if m.Task.Git != "" {
		gitDir := filepath.Join(repo, ".git")
		cmd := exec.CommandContext(ctx, "git", "-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=never", "clone", "--quiet", "--no-checkout", "--", m.Task.Git, repo)
		// Only network transports, also for redirects and submodules.
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ALLOW_PROTOCOL=https:http:ssh:git", "GIT_CONFIG_NOSYSTEM=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git clone %s: %v: %s", m.Task.Git, err, strings.TrimSpace(string(b)))
		}
		rev := m.Task.Rev
		if rev == "" {
			rev = "HEAD"
		}
		if _, err := gitCmd(ctx, gitDir, repo, "checkout", "--quiet", "--detach", rev, "--"); err != nil {
			return "", err
		}
		return gitDir, nil
	}
	data, err := w.f.Object(ctx, m.Source)
	if err != nil {
		return "", fmt.Errorf("source %s: %w", m.Source, err)
	}
	if err := unpack(data, repo); err != nil {
		return "", err
	}
	gitDir := filepath.Join(ws, "base.git")
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "--all", "--force"}, {"commit", "--quiet", "--allow-empty", "--no-verify", "-m", "base"}} {
		if _, err := gitCmd(ctx, gitDir, repo, args...); err != nil {
			return "", err
		}
	}
	return gitDir, nil
}

// diff is the workspace's change since the baseline, as a binary patch.
func diff(gitDir, repo string) ([]byte, error) {
	ctx := context.Background()
	if _, err := gitCmd(ctx, gitDir, repo, "add", "--all"); err != nil {
		return nil, err
	}
	return gitCmd(ctx, gitDir, repo, "diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD")
}

func countFiles(patch []byte) int {
	return bytes.Count(patch, []byte("\ndiff --git ")) + boolInt(bytes.HasPrefix(patch, []byte("diff --git ")))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// events reads pi's JSON event stream as it comes: the final answer and
// the usage summed over the answers, told to onUsage at each answer.
type events struct {
	mu      sync.Mutex
	partial []byte
	text    string
	usage   Usage
	onUsage func(Usage)
}

// maxEventLine bounds one event line kept whole; a longer one (a huge
// tool result) is skipped.
const maxEventLine = 64 << 20

func (e *events) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.partial = append(e.partial, p...)
	for {
		i := bytes.IndexByte(e.partial, '\n')
		if i < 0 {
			break
		}
		e.line(e.partial[:i])
		e.partial = e.partial[i+1:]
	}
	if len(e.partial) > maxEventLine {
		e.partial = e.partial[:0]
	}
	if len(e.partial) == 0 {
		e.partial = nil // let a large buffer go
	}
	return len(p), nil
}

func (e *events) line(b []byte) {
	// Most lines are deltas; only message_end is decoded.
	if !bytes.Contains(b, []byte(`"message_end"`)) {
		return
	}
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
		Usage *struct {
			Input  int `json:"input"`
			Output int `json:"output"`
			Total  int `json:"totalTokens"`
			Cost   *struct {
				Total float64 `json:"total"`
			} `json:"cost"`
		} `json:"usage"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.Type != "message_end" || ev.Message.Role != "assistant" {
		return
	}
	var parts []string
	for _, c := range ev.Message.Content {
		if c.Type == "text" && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	if len(parts) > 0 {
		e.text = strings.Join(parts, "\n")
	}
	if ev.Usage != nil {
		e.usage.Input += ev.Usage.Input
		e.usage.Output += ev.Usage.Output
		e.usage.Total += ev.Usage.Total
		if ev.Usage.Cost != nil {
			e.usage.Cost += ev.Usage.Cost.Total
		}
		if e.onUsage != nil {
			e.onUsage(e.usage)
		}
	}
}

func (e *events) result() (string, Usage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.partial) > 0 {
		e.line(e.partial)
		e.partial = nil
	}
	return e.text, e.usage
}

// readSession is the run's session file (nil when it saved none).
func readSession(dir string) []byte {
	var found []byte
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && found == nil {
			found, _ = os.ReadFile(p)
		}
		return nil
	})
	return found
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

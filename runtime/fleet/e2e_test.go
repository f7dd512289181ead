package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/fleet"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// env is one test's isolated machine: a pi home, a data folder, a store.
type env struct {
	t      testing.TB
	dir    string
	store  string
	pi     string
	script string
	vars   []string
}

func newEnv(t *testing.T) *env { return newBenchEnv(t) }

func newBenchEnv(t testing.TB) *env {
	dir := t.TempDir()
	e := &env{t: t, dir: dir, store: filepath.Join(dir, "store"), pi: plugin.PiFleet(t)}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	e.vars = append(os.Environ(), "HOME="+home, "PI_HOME="+filepath.Join(home, ".pi", "agent"), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	return e
}

// writeScript writes the scripted model: one bash call, then an answer.
func (e *env) writeScript(command string) {
	s := map[string]any{"turns": []any{
		map[string]any{"text": "editing", "toolCalls": []any{map[string]any{"name": "bash", "arguments": map[string]any{"command": command}}}},
		map[string]any{"text": "done editing"},
	}}
	b, _ := json.Marshal(s)
	e.script = filepath.Join(e.dir, "script.json")
	if err := os.WriteFile(e.script, b, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// repo makes a project folder whose file names the task.
func (e *env) repo(name string) string {
	d := filepath.Join(e.dir, "repos", name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "a.txt"), []byte("task "+name+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *env) piOptions() []string { return []string{e.pi, "--script", e.script} }

func (e *env) workerOptions(name string, conc int) fleet.WorkerOptions {
	return fleet.WorkerOptions{Name: name, Concurrency: conc, Pi: e.piOptions(), Env: e.vars, WorkDir: filepath.Join(e.dir, "work"), Private: []string{e.store}}
}

// startWorker runs `pi fleet worker` as a process.
func (e *env) startWorker(name string, extra ...string) *exec.Cmd {
	args := append([]string{"fleet", "worker", "--cwd", e.dir, "--store", e.store, "--script", e.script, "--name", name,
		"--work-dir", filepath.Join(e.dir, "work-"+name)}, extra...)
	cmd := exec.Command(e.pi, args...)
	cmd.Env = e.vars
	log := &prefixWriter{name: name}
	cmd.Stdout, cmd.Stderr = os.Stderr, log
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if e.t.Failed() {
			e.t.Logf("worker %s said:\n%s", name, log.String())
		}
	})
	return cmd
}

type prefixWriter struct {
	name string
	mu   sync.Mutex
	buf  strings.Builder
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *prefixWriter) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

func open(t *testing.T, o fleet.Options) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// waitUntil waits for cond, checked at each tick, up to limit.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func waitAll(t *testing.T, f *fleet.Fleet, ids []string, limit time.Duration) []*fleet.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	final, err := f.Wait(ctx, ids, nil, false)
	if err != nil {
		for _, id := range ids {
			s, _ := f.Get(context.Background(), id)
			t.Logf("%s: %+v", id, s)
		}
		t.Fatalf("wait: %v", err)
	}
	return final
}

// checkPatch checks the task's one result: done, its patch the edit of
// its own file, one set of result objects.
func checkPatch(t *testing.T, f *fleet.Fleet, s *fleet.Status, name string) {
	t.Helper()
	if s == nil || s.State != fleet.StateDone || s.Result == nil {
		t.Fatalf("task %s: %+v", name, s)
	}
	patch, err := f.Object(context.Background(), s.Result.Patch)
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n task " + name + "\n+edited\n"
	if !strings.HasSuffix(string(patch), want) || s.Result.FilesChanged != 1 {
		t.Fatalf("task %s: patch\n%s\nwant it to end with\n%s", name, patch, want)
	}
	if s.Result.Text != "done editing" {
		t.Errorf("task %s: text %q", name, s.Result.Text)
	}
	objs, err := f.Objects(context.Background(), fmt.Sprintf("res/%s/%d/", s.ID, s.Run))
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("res/%s/%d/%d/", s.ID, s.Run, s.Attempt)
	for _, o := range objs {
		if !strings.HasPrefix(o, prefix) {
			t.Errorf("task %s: a second result's object %s (the result is %s)", name, o, prefix)
		}
	}
}

func TestEmbeddedEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.writeScript("echo edited >> a.txt")
	f := open(t, fleet.Options{Store: e.store})
	if !f.Embedded {
		t.Fatal("the embedded server did not start")
	}
	var tasks []fleet.Task
	for i := range 4 {
		tasks = append(tasks, fleet.Task{ID: fmt.Sprintf("e%d", i), Repo: e.repo(fmt.Sprint(i)), Prompt: fleet.Strings{"add a line"}, Label: fleet.Strings{"batch"}, Tools: fleet.Strings{"read", "bash"}, Sandbox: "workspace-write"})
	}
	subs, err := f.Submit(context.Background(), tasks)
	if err != nil || len(subs) != 4 {
		t.Fatal(subs, err)
	}
	// The same id again is refused, not run twice.
	if _, err := f.Submit(context.Background(), tasks[:1]); err == nil || !strings.Contains(err.Error(), "the id is taken") {
		t.Fatalf("resubmit: %v", err)
	}
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.Work(drain, context.Background(), e.workerOptions("w1", 2)) }()
	final := waitAll(t, f, []string{"e0", "e1", "e2", "e3"}, 60*time.Second)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, s := range final {
		checkPatch(t, f, s, fmt.Sprint(i))
		if s.Attempt != 1 || s.Worker != "w1" {
			t.Errorf("%s: attempt %d on %s", s.ID, s.Attempt, s.Worker)
		}
		sess, err := f.Object(context.Background(), s.Result.Session)
		if err != nil || !strings.Contains(string(sess), `"type":"session"`) {
			t.Errorf("%s: session %v %.200s", s.ID, err, sess)
		}
	}
	list, err := f.List(context.Background(), "batch")
	if err != nil || len(list) != 4 {
		t.Fatalf("list --label: %d %v", len(list), err)
	}
	// The workspaces are gone.
	left, _ := os.ReadDir(filepath.Join(e.dir, "work"))
	if len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// TestCLI drives the commands as a user does: submit --wait alone on one
// machine, then status, results, a failing task's reason.
func TestCLI(t *testing.T) {
	e := newEnv(t)
	e.writeScript("echo edited >> a.txt")
	repo := e.repo("cli")
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(e.pi, append(args, "--cwd", e.dir, "--store", e.store)...)
		cmd.Env = e.vars
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return out.String(), errb.String(), code
	}
	out, errOut, code := run("fleet", "submit", "--repo", repo, "--prompt", "add a line", "--id", "c1", "--label", "cli", "--wait", "--script", e.script, "--concurrency", "2")
	if code != 0 || !strings.Contains(out, "c1") || !strings.Contains(out, "done") || !strings.Contains(errOut, "1/1 ended: 1 done") {
		t.Fatalf("submit --wait: %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = run("fleet", "results", "c1", "--patch")
	if code != 0 || !strings.Contains(out, "+edited") {
		t.Fatalf("results --patch: %d %s", code, out)
	}
	out, _, code = run("fleet", "status", "--label", "cli", "--json")
	var s fleet.Status
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.ID != "c1" || s.State != "done" {
		t.Fatalf("status --json: %d %s", code, out)
	}
	// A task file naming an endpoint is refused with file, line and field.
	tf := filepath.Join(e.dir, "tasks.jsonl")
	os.WriteFile(tf, []byte(`{"repo":"repos/cli","prompt":"x"}`+"\n"+`{"repo":"repos/cli","prompt":"x","base_url":"http://evil.example"}`+"\n"), 0o600)
	_, errOut, code = run("fleet", "submit", "--file", tf)
	if code != 2 || !strings.Contains(errOut, tf+`:2: field "base_url": a task cannot choose the endpoint`) {
		t.Fatalf("bad file: %d %s", code, errOut)
	}
	// A task looser than the configuration is refused.
	_, errOut, code = run("fleet", "submit", "--repo", repo, "--prompt", "x", "--sandbox", "off")
	if code != 2 || !strings.Contains(errOut, `--sandbox: "off" is looser`) {
		t.Fatalf("looser sandbox: %d %s", code, errOut)
	}
}

// pidAlive says a process runs (a zombie counts as gone).
func pidAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// markedPIDs are the processes (seen from the test, outside every run's
// namespaces) whose environment has PI_TEST_MARK=mark.
func markedPIDs(mark string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, b...), []byte("\x00PI_TEST_MARK="+mark+"\x00")) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pidAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// markedPID waits for the one process marked mark (a run's command; its
// pid in the run's PID namespace is not the test's).
func markedPID(t *testing.T, mark string) int {
	t.Helper()
	var pids []int
	waitUntil(t, 30*time.Second, "the process marked "+mark, func() bool { pids = markedPIDs(mark); return len(pids) == 1 })
	return pids[0]
}

// blockingScript: a run of the task whose file says "task NAME" starts a
// sleep marked task_NAME (markedPID), writes its pid to ctl/task_NAME.pid
// and waits, when
// ctl/task_NAME.block-first is there and it is the task's first run
// (counted in ctl/task_NAME.count), or when ctl/block is there; other
// runs edit at once.
func (e *env) blockingScript() string {
	ctl := filepath.Join(e.dir, "ctl")
	os.MkdirAll(ctl, 0o777)
	e.writeScript(`m=$(head -c 40 a.txt | tr ' ' _); k=` + ctl + `/$m; n=$(cat $k.count 2>/dev/null || echo 0); echo $((n+1)) > $k.count; ` +
		`if { [ "$n" = 0 ] && [ -e $k.block-first ]; } || [ -e ` + ctl + `/block ]; then PI_TEST_MARK=$m sleep 300 & echo $! > $k.pid; wait; fi; echo edited >> a.txt`)
	return ctl
}

func TestWorkerKilledMidTask(t *testing.T) {
	e := newEnv(t)
	ctl := e.blockingScript()
	os.WriteFile(filepath.Join(ctl, "task_k1.block-first"), nil, 0o600)
	f := open(t, fleet.Options{Store: e.store, AckWait: time.Second})
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "k1", Repo: e.repo("k1"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	w1 := e.startWorker("w1", "--ack-wait", "1s")
	pidFile := filepath.Join(ctl, "task_k1.pid")
	waitUntil(t, 60*time.Second, "the first run to start its command", func() bool { _, err := os.Stat(pidFile); return err == nil })
	sleepPID := markedPID(t, "task_k1")
	if err := w1.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w1.Wait()
	// The killed worker's run and its command go with it.
	waitUntil(t, 15*time.Second, "the killed worker's command to end", func() bool { return !pidAlive(sleepPID) })
	// w2 shares w1's work folder: it removes what the killed w1 left.
	stale, _ := filepath.Glob(filepath.Join(e.dir, "work-w1", "pi-fleet-k1-*"))
	if len(stale) != 1 {
		t.Fatalf("the killed worker's workspace: %v", stale)
	}
	e.startWorker("w2", "--ack-wait", "1s", "--work-dir", filepath.Join(e.dir, "work-w1"))
	s := waitAll(t, f, []string{"k1"}, 60*time.Second)[0]
	if _, err := os.Stat(stale[0]); err == nil {
		t.Errorf("the killed worker's workspace %s is still there", stale[0])
	}
	checkPatch(t, f, s, "k1")
	if s.Attempt != 2 || s.Worker != "w2" {
		t.Errorf("attempt %d on %s, want the second delivery on w2", s.Attempt, s.Worker)
	}
}

func TestMaxAttempts(t *testing.T) {
	e := newEnv(t)
	ctl := e.blockingScript()
	os.WriteFile(filepath.Join(ctl, "block"), nil, 0o600)
	f := open(t, fleet.Options{Store: e.store, AckWait: time.Second, MaxAttempts: 1})
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "m1", Repo: e.repo("m1"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	w1 := e.startWorker("w1", "--ack-wait", "1s", "--max-attempts", "1")
	waitUntil(t, 60*time.Second, "the run to start", func() bool { _, err := os.Stat(filepath.Join(ctl, "task_m1.pid")); return err == nil })
	w1.Process.Signal(syscall.SIGKILL)
	w1.Wait()
	e.startWorker("w2", "--ack-wait", "1s", "--max-attempts", "1")
	s := waitAll(t, f, []string{"m1"}, 60*time.Second)[0]
	if s.State != fleet.StateFailed || !strings.Contains(s.Reason, "delivered 2 times without a result (max 1 attempts)") || !strings.Contains(s.Reason, "worker w1") {
		t.Fatalf("%+v", s)
	}
}

func TestCancelAndRetry(t *testing.T) {
	e := newEnv(t)
	ctl := e.blockingScript()
	os.WriteFile(filepath.Join(ctl, "block"), nil, 0o600)
	f := open(t, fleet.Options{Store: e.store})
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "c1", Repo: e.repo("c1"), Prompt: fleet.Strings{"edit"}}, {ID: "c2", Repo: e.repo("c2"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	// Retry of a queued task publishes it again: still one result.
	if s, err := f.Retry(context.Background(), "c2"); err != nil || s.State != fleet.StateQueued || s.Run != 1 {
		t.Fatalf("retry queued: %+v %v", s, err)
	}
	// c2 is canceled while queued (no worker yet).
	if s, err := f.Cancel(context.Background(), "c2"); err != nil || s.State != fleet.StateCanceled {
		t.Fatalf("cancel queued: %+v %v", s, err)
	}
	drain, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- f.Work(drain, context.Background(), e.workerOptions("w1", 2)) }()
	pidFile := filepath.Join(ctl, "task_c1.pid")
	waitUntil(t, 60*time.Second, "c1 to start its command", func() bool { _, err := os.Stat(pidFile); return err == nil })
	sleepPID := markedPID(t, "task_c1")
	if s, err := f.Cancel(context.Background(), "c1"); err != nil || s.State != fleet.StateRunning {
		t.Fatalf("cancel running: %+v %v", s, err)
	}
	final := waitAll(t, f, []string{"c1", "c2"}, 30*time.Second)
	if final[0].State != fleet.StateCanceled || final[0].Reason != "canceled while running" || final[1].State != fleet.StateCanceled {
		t.Fatalf("c1 %+v\nc2 %+v", final[0], final[1])
	}
	if pidAlive(sleepPID) {
		t.Fatalf("the canceled run's command %d is still running", sleepPID)
	}
	if _, err := f.Cancel(context.Background(), "c1"); err == nil || !strings.Contains(err.Error(), "already canceled") {
		t.Errorf("cancel twice: %v", err)
	}
	// Retry both: now runs do not block.
	os.Remove(filepath.Join(ctl, "block"))
	for _, id := range []string{"c1", "c2"} {
		if s, err := f.Retry(context.Background(), id); err != nil || s.Run != 2 {
			t.Fatalf("retry %s: %+v %v", id, s, err)
		}
	}
	final = waitAll(t, f, []string{"c1", "c2"}, 60*time.Second)
	for i, s := range final {
		checkPatch(t, f, s, []string{"c1", "c2"}[i])
		if s.Run != 2 {
			t.Errorf("%s: run %d", s.ID, s.Run)
		}
	}
	if _, err := f.Retry(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), "no such task") {
		t.Errorf("retry unknown: %v", err)
	}
	stop()
	<-done
}

// SIGTERM drains a worker: the running task finishes and is recorded, no
// new task is taken, and the worker exits 0.
func TestWorkerDrainsOnSIGTERM(t *testing.T) {
	e := newEnv(t)
	ctl := e.blockingScript()
	os.WriteFile(filepath.Join(ctl, "block"), nil, 0o600)
	f := open(t, fleet.Options{Store: e.store})
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "d1", Repo: e.repo("d1"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	w := e.startWorker("w1", "--concurrency", "1")
	waitUntil(t, 60*time.Second, "d1 to start", func() bool { _, err := os.Stat(filepath.Join(ctl, "task_d1.pid")); return err == nil })
	w.Process.Signal(syscall.SIGTERM)
	log := w.Stderr.(*prefixWriter)
	waitUntil(t, 30*time.Second, "the worker to say it drains", func() bool { return strings.Contains(log.String(), "draining") })
	// Queued after the drain began: not taken.
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "d2", Repo: e.repo("d2"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ctl, "block"))
	// The sleep is what blocks: end it so the run goes on to its edit.
	syscall.Kill(markedPID(t, "task_d1"), syscall.SIGKILL)
	if err := w.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, log.String())
	}
	s, _ := f.Get(context.Background(), "d1")
	checkPatch(t, f, s, "d1")
	if s2, _ := f.Get(context.Background(), "d2"); s2.State != fleet.StateQueued {
		t.Fatalf("d2 taken by a draining worker: %+v", s2)
	}
}

// A run's commands see their own workspace and nothing of another run's,
// reads included: the workspaces' folder is private to each run.
func TestRunsDoNotSeeEachOther(t *testing.T) {
	e := newEnv(t)
	if out, _ := exec.Command(e.pi, "doctor").CombinedOutput(); !strings.Contains(string(out), "user namespaces available") {
		t.Skipf("no kernel sandbox here:\n%s", out)
	}
	ctl := filepath.Join(e.dir, "ctl")
	os.MkdirAll(ctl, 0o777)
	// x blocks with its workspace in place; y lists what it can see.
	e.writeScript(`m=$(head -c 40 a.txt | tr ' ' _); k=` + ctl + `/$m; if [ -e $k.block ]; then PI_TEST_MARK=$m sleep 300 & echo $! > $k.pid; wait; fi; ` +
		`{ echo "parent: $(ls -A .. | tr '\n' ' ')"; echo "root: $(ls -A ../.. | tr '\n' ' ')"; cat ../../*/repo/a.txt ../base.git/HEAD 2>&1; echo "store: $(ls -A ` + e.store + ` 2>&1 | tr '\n' ' ')"; } > seen.txt; echo edited >> a.txt`)
	os.WriteFile(filepath.Join(ctl, "task_x.block"), nil, 0o600)
	f := open(t, fleet.Options{Store: e.store})
	drain, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- f.Work(drain, context.Background(), e.workerOptions("w1", 2)) }()
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "x", Repo: e.repo("x"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "x to start", func() bool { _, err := os.Stat(filepath.Join(ctl, "task_x.pid")); return err == nil })
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "y", Repo: e.repo("y"), Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	s := waitAll(t, f, []string{"y"}, 60*time.Second)[0]
	if s.State != fleet.StateDone {
		t.Fatalf("%+v", s)
	}
	patch, _ := f.Object(context.Background(), s.Result.Patch)
	seen := string(patch)
	// x's workspace is there on the host (x still runs).
	ws, _ := os.ReadDir(filepath.Join(e.dir, "work"))
	if len(ws) != 1 || !strings.HasPrefix(ws[0].Name(), "pi-fleet-x-") {
		t.Fatalf("want x's workspace on the host, got %v", ws)
	}
	if strings.Contains(seen, "task x") || strings.Contains(seen, "pi-fleet-x-") || strings.Contains(seen, "base.git") && !strings.Contains(seen, "No such file") {
		t.Fatalf("y saw another run's workspace or its baseline:\n%s", seen)
	}
	if !strings.Contains(seen, "+store: \n") {
		t.Errorf("y saw the queue's store:\n%s", seen)
	}
	if !strings.Contains(seen, "+parent: repo tmp") || !strings.Contains(seen, "+task y") {
		t.Fatalf("y did not see its own workspace as expected:\n%s", seen)
	}
	syscall.Kill(markedPID(t, "task_x"), syscall.SIGKILL)
	waitAll(t, f, []string{"x"}, 60*time.Second)
	stop()
	<-done
}

// A task from a git URL: the worker clones it (from a real git daemon on
// loopback) at the revision, and the patch is against that revision.
func TestGitSource(t *testing.T) {
	e := newEnv(t)
	e.writeScript("echo edited >> a.txt")
	base := filepath.Join(e.dir, "git")
	src := filepath.Join(base, "r.git")
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "empty"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("task g\n"), 0o644)
	for _, args := range [][]string{{"add", "a.txt"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "a"}, {"tag", "v1"}} {
		if out, err := exec.Command("git", append([]string{"-C", src}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	// A later commit the task does not ask for.
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("later\n"), 0o644)
	exec.Command("git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "later").Run()
	port := freePorts(t, 1)[0]
	d := exec.Command("git", "daemon", "--export-all", "--reuseaddr", "--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	// git runs git-daemon as its child: the whole group is stopped at
	// the end, not only the git that started it.
	d.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-d.Process.Pid, syscall.SIGKILL); d.Wait() })
	url := fmt.Sprintf("git://127.0.0.1:%d/r.git", port)
	waitUntil(t, 20*time.Second, "git daemon", func() bool { return exec.Command("git", "ls-remote", url).Run() == nil })
	f := open(t, fleet.Options{Store: e.store})
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "g", Git: url, Rev: "v1", Prompt: fleet.Strings{"edit"}}}); err != nil {
		t.Fatal(err)
	}
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Work(drain, context.Background(), e.workerOptions("w1", 1)) }()
	s := waitAll(t, f, []string{"g"}, 60*time.Second)[0]
	stop()
	<-done
	checkPatch(t, f, s, "g")
}

// A task past its max-tokens is stopped and failed with the reason; the
// usage pi reported is in the result.
func TestTokenLimit(t *testing.T) {
	e := newEnv(t)
	e.script = filepath.Join(e.dir, "script.json")
	os.WriteFile(e.script, []byte(`{"turns":[{"text":"editing","toolCalls":[{"name":"bash","arguments":{"command":"echo edited >> a.txt"}}],"usage":{"input":900,"output":100,"totalTokens":1000}},{"text":"done editing","usage":{"input":1000,"output":10,"totalTokens":1010}}]}`), 0o600)
	f := open(t, fleet.Options{Store: e.store})
	if _, err := f.Submit(context.Background(), []fleet.Task{
		{ID: "cheap", Repo: e.repo("cheap"), Prompt: fleet.Strings{"edit"}, MaxTokens: 500},
		{ID: "free", Repo: e.repo("free"), Prompt: fleet.Strings{"edit"}},
	}); err != nil {
		t.Fatal(err)
	}
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Work(drain, context.Background(), e.workerOptions("w1", 2)) }()
	final := waitAll(t, f, []string{"cheap", "free"}, 60*time.Second)
	stop()
	<-done
	if s := final[0]; s.State != fleet.StateFailed || s.Reason != "stopped: token limit 500 passed (1000 used)" {
		t.Fatalf("cheap: %s %q", s.State, s.Reason)
	}
	checkPatch(t, f, final[1], "free")
	if u := final[1].Result.Usage; u.Total != 2010 || u.Input != 1900 || u.Output != 110 {
		t.Fatalf("free: usage %+v", u)
	}
}

// The file tools (run by pi, outside the kernel sandbox) are kept to the
// run's workspace: a read or write elsewhere is denied, one inside works.
func TestFileToolsConfined(t *testing.T) {
	e := newEnv(t)
	secret := filepath.Join(e.dir, "secret.txt")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	planted := filepath.Join(e.dir, "planted.txt")
	script := map[string]any{"turns": []any{
		map[string]any{"text": "trying", "toolCalls": []any{
			map[string]any{"name": "read", "arguments": map[string]any{"path": secret}},
			map[string]any{"name": "write", "arguments": map[string]any{"path": planted, "content": "x"}},
			map[string]any{"name": "read", "arguments": map[string]any{"path": "../../" + filepath.Base(e.dir) + "/secret.txt"}},
			map[string]any{"name": "read", "arguments": map[string]any{"path": "a.txt"}},
		}},
		map[string]any{"text": "done editing"},
	}}
	b, _ := json.Marshal(script)
	e.script = filepath.Join(e.dir, "script.json")
	os.WriteFile(e.script, b, 0o600)
	f := open(t, fleet.Options{Store: e.store})
	if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "f1", Repo: e.repo("f1"), Prompt: fleet.Strings{"look"}}}); err != nil {
		t.Fatal(err)
	}
	drain, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Work(drain, context.Background(), e.workerOptions("w1", 1)) }()
	s := waitAll(t, f, []string{"f1"}, 60*time.Second)[0]
	stop()
	<-done
	if s.State != fleet.StateDone {
		t.Fatalf("%+v", s)
	}
	sess, err := f.Object(context.Background(), s.Result.Session)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sess), "s3cret") {
		t.Error("the run read a file outside its workspace")
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("the run wrote a file outside its workspace")
	}
	if n := strings.Count(string(sess), "is outside this run's workspace"); n != 3 {
		t.Errorf("%d denials, want 3:\n%.3000s", n, sess)
	}
	if !strings.Contains(string(sess), "task f1") {
		t.Error("the read inside the workspace did not work")
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// liveOutput is a running pi's stdout and stderr together, which a test
// waits on for text to appear.
type liveOutput struct {
	mu   sync.Mutex
	b    strings.Builder
	more chan struct{}
}

func newLiveOutput() *liveOutput { return &liveOutput{more: make(chan struct{}, 1)} }

func (o *liveOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.b.Write(p)
	o.mu.Unlock()
	select {
	case o.more <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (o *liveOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitFor waits until the output after from holds want; it returns the
// output's length after want.
func (o *liveOutput) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for {
		s := o.String()
		if i := strings.Index(s[from:], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-o.more:
		case <-deadline.C:
			t.Fatalf("pi did not print %q; after offset %d it printed:\n%s", want, from, s[from:])
		}
	}
}

// livePi is pi's line mode on a pipe: the test types a line, waits for
// what pi prints, changes files, and types the next.
type livePi struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *liveOutput
	// at is where the next wait starts.
	at int
}

func startLivePi(t *testing.T, dir, home string, args ...string) *livePi {
	t.Helper()
	return startLivePiArgs(t, dir, home, append([]string{"--interactive"}, args...)...)
}

// startLivePiArgs starts pi with exactly args (and --cwd dir).
func startLivePiArgs(t *testing.T, dir, home string, args ...string) *livePi {
	t.Helper()
	cmd := exec.Command(realPi(t), append([]string{"--cwd", dir}, args...)...)
	cmd.Dir = dir
	cache, _ := plugin.CacheDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PI_HOME=" + home, "PI_CACHE_DIR=" + cache,
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", "PI_TUI=0", "NO_COLOR=1", "TERM=dumb", "TMPDIR=" + os.TempDir()}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &livePi{t: t, cmd: cmd, in: in, out: newLiveOutput()}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return p
}

// do types line and waits until pi printed each of want, in order.
func (p *livePi) do(line string, want ...string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("typing %q: %v\n%s", line, err, p.out.String())
	}
	for _, w := range want {
		p.at = p.out.waitFor(p.t, p.at, w)
	}
}

// promptWhenIdle sends an RPC prompt and waits for want, sending it again
// while pi answers that a run goes on: an extension command's result (a
// notify) is printed before pi has ended the command, so a client that
// prompts on seeing it may be told pi is busy (the RPC contract).
func (p *livePi) promptWhenIdle(id, message string, want ...string) {
	p.t.Helper()
	msg, _ := json.Marshal(message)
	for n := 0; n < 100; n++ {
		rid := fmt.Sprintf("%s-%d", id, n)
		p.do(`{"id":"`+rid+`","type":"prompt","message":`+string(msg)+`}`, `"id":"`+rid+`"`)
		line, _, _ := strings.Cut(p.since(p.at), "\n")
		if !strings.Contains(line, "already processing") {
			for _, w := range want {
				p.at = p.out.waitFor(p.t, p.at, w)
			}
			return
		}
	}
	p.t.Fatalf("pi stayed busy for 100 prompts of %q:\n%s", message, p.out.String())
}

// since is what pi printed from offset from on.
func (p *livePi) since(from int) string { return p.out.String()[from:] }

// extEntry is a pi.toml [[extensions]] entry loading wasm pinned.
func extEntry(t *testing.T, name, wasm string) string {
	t.Helper()
	sum, err := extensions.FileSHA256(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[[extensions]]\nname = %q\npath = %q\nsha256 = %q\n\n", name, wasm, sum)
}

// TestReloadReadsPiTomlAndModules: /reload in the line mode of a running
// pi reads pi.toml and the module files again, in the same conversation:
// an extension added is offered (its tools to the model, its commands to
// the person), a broken pi.toml or module is an error naming where, with
// the loaded extensions going on as they were, a rebuilt module runs its
// new code, a removed extension is gone. The session file holds the whole
// conversation.
func TestReloadReadsPiTomlAndModules(t *testing.T) {
	v1 := plugin.ScaffoldWAT(t, "hello", "v1", `[]`)
	v2 := plugin.ScaffoldWAT(t, "hello", "v2", `[]`)
	run12 := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	dir, home := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	hello := filepath.Join(dir, "hello.wasm")
	copyFile(t, v1, hello)
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pi.toml", extEntry(t, "hello", hello))
	var turns []string
	for i := 1; i <= 5; i++ {
		turns = append(turns, `{"toolCalls":[{"name":"hello","arguments":{}}]}`, fmt.Sprintf(`{"text":"answer %d"}`, i))
	}
	write("script.json", `{"turns":[`+strings.Join(turns, ",")+`]}`)
	pi := startLivePi(t, dir, home, "--trust", "--script", filepath.Join(dir, "script.json"))

	pi.do("call 1", "Hello from v1!", "answer 1")
	from := pi.at
	pi.do("/help", "!COMMAND")
	if strings.Contains(pi.since(from), "/bye") {
		t.Fatalf("run12's command is known before it is in pi.toml:\n%s", pi.since(from))
	}

	// Added: run12's tools and commands come with it.
	write("pi.toml", extEntry(t, "hello", hello)+extEntry(t, "run12", run12))
	pi.do("/reload", "✓ reloaded: 2 extensions")
	from = pi.at
	pi.do("/tools", "Tools (")
	pi.do("/help", "Commands:", "!COMMAND")
	for _, want := range []string{"count", "flags", "hello", "/bye", "/reload-all"} {
		if !strings.Contains(pi.since(from), want) {
			t.Errorf("after adding run12, /tools and /help lack %q:\n%s", want, pi.since(from))
		}
	}

	// Broken: pi.toml with an error, then a module that is not there.
	write("pi.toml", extEntry(t, "hello", hello)+"[[extensions]]\nname = \"bad\"\npath = \"x.wasm\"\nshaa = \"1\"\n")
	pi.do("/reload", "pi.toml:6", "the extensions loaded before stay")
	write("pi.toml", extEntry(t, "hello", hello)+"[[extensions]]\nname = \"gone\"\npath = \"missing.wasm\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\n")
	pi.do("/reload", "missing.wasm", "the extensions loaded before stay")
	write("bad.wasm", "not a module")
	write("pi.toml", extEntry(t, "hello", hello)+extEntry(t, "bad", filepath.Join(dir, "bad.wasm")))
	pi.do("/reload", "bad.wasm", "the extensions loaded before stay")
	pi.do("call 2", "Hello from v1!", "answer 2")
	from = pi.at
	pi.do("/help", "!COMMAND")
	if !strings.Contains(pi.since(from), "/bye") {
		t.Errorf("a failed reload dropped run12:\n%s", pi.since(from))
	}

	// Rebuilt: the new module at the same path, pinned again.
	copyFile(t, v2, hello)
	write("pi.toml", extEntry(t, "hello", hello)+extEntry(t, "run12", run12))
	pi.do("/reload", "✓ reloaded: 2 extensions")
	pi.do("call 3", "Hello from v2!", "answer 3")

	// Removed: hello's tool is gone.
	write("pi.toml", extEntry(t, "run12", run12))
	pi.do("/reload", "✓ reloaded: 1 extension")
	pi.do("call 4", "Tool hello not found", "answer 4")

	// run12's command works (and ends pi).
	pi.do("/bye", "bye")
	pi.in.Close()
	if err := pi.cmd.Wait(); err != nil {
		t.Fatalf("pi: %v\n%s", err, pi.out.String())
	}

	var sessions []string
	filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".jsonl") {
			sessions = append(sessions, path)
		}
		return nil
	})
	if len(sessions) != 1 {
		t.Fatalf("session files %v, want one for the whole conversation\n%s", sessions, pi.out.String())
	}
	b, _ := os.ReadFile(sessions[0])
	for _, want := range []string{"call 1", "Hello from v1!", "call 2", "Hello from v2!", "call 4", "Tool hello not found", "answer 4"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the session file lacks %q", want)
		}
	}
}

// TestReloadUntrustedProject: a project that is not trusted gains on
// /reload what it would at start: its pi.toml's extensions are not
// loaded, an extension given with -e is loaded again.
func TestReloadUntrustedProject(t *testing.T) {
	v1 := plugin.ScaffoldWAT(t, "hello", "v1", `[]`)
	flagged := plugin.ScaffoldWATTool(t, "flagged", "flagged", "flag", `[]`)
	dir, home := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "script.json"), []byte(`{"turns":[{"text":"no"}]}`), 0o644)
	pi := startLivePi(t, dir, home, "-e", flagged, "--script", filepath.Join(dir, "script.json"))
	pi.do("/reload", "✓ reloaded: 1 extension")
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(extEntry(t, "hello", v1)), 0o644)
	pi.do("/reload", `is not trusted`, `extension "hello"`, "✓ reloaded: 1 extension")
	from := pi.at
	pi.do("/ext", "flagged")
	pi.do("/tools", "Tools (", "write ")
	if strings.Contains(pi.since(from), "  hello ") {
		t.Errorf("an untrusted project's extension loaded on reload:\n%s", pi.since(from))
	}
}

// TestReloadTUIInTmux: /reload in the TUI loads an extension added to
// pi.toml, whose shortcut then works (the TUI binds the new set's keys);
// a broken pi.toml is an error naming file and line, after which the
// loaded extension goes on (its instance, with what it counted).
func TestReloadTUIInTmux(t *testing.T) {
	tmuxPath(t) // skips without tmux
	dir, home := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	hello := plugin.ScaffoldWAT(t, "hello", "v1", `[]`)
	ui12 := plugin.BuildGo(t, ui12Guest)
	toml := filepath.Join(dir, "pi.toml")
	os.WriteFile(toml, []byte(extEntry(t, "hello", hello)), 0o644)
	p, _ := startTmuxPi(t, "reload", dir, home, openai.NewServer(t).URL, "--trust", "--model", "test-model")
	p.waitFor("Enter sends", "test-model")

	os.WriteFile(toml, []byte(extEntry(t, "hello", hello)+extEntry(t, "ui12", ui12)), 0o644)
	p.typeLine("/reload")
	p.waitFor("reloaded: 2 extensions", "extension ui12: shortcut ctrl+c is not bound")
	p.run("send-keys", "-t", "pi", "F5")
	p.waitFor("pressed 1")

	os.WriteFile(toml, []byte(extEntry(t, "hello", hello)+extEntry(t, "ui12", ui12)+"[[extensions]]\nname = \"bad\"\n"), 0o644)
	p.typeLine("/reload")
	p.waitFor("pi.toml:11")
	p.run("send-keys", "-t", "pi", "F5")
	p.waitFor("pressed 2")

	// A reload that works clears what the old instances showed (the
	// status), and the fresh instance counts from the start.
	os.WriteFile(toml, []byte(extEntry(t, "hello", hello)+extEntry(t, "ui12", ui12)), 0o644)
	p.typeLine("/reload")
	s := waitCount(p, "reloaded: 2 extensions", 2)
	if strings.Contains(s, "pressed 2") {
		t.Errorf("the old instance's status is still shown after the reload:\n%s", s)
	}
	p.run("send-keys", "-t", "pi", "F5")
	p.waitFor("pressed 1")

	// pi.reload from a shortcut: the instance is fresh again (the status
	// goes, the count starts over).
	p.run("send-keys", "-t", "pi", "F5")
	p.waitFor("pressed 2")
	p.run("send-keys", "-t", "pi", "F7")
	waitGone(p, "pressed 2")
	p.run("send-keys", "-t", "pi", "F5")
	p.waitFor("pressed 1")
}

// waitGone polls the screen until it no longer shows s, for at most 30s.
func waitGone(p *tmuxPane, s string) {
	p.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		scr := p.screen()
		if !strings.Contains(scr, s) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			p.t.Fatalf("the terminal still shows %q after 30s:\n%s", s, scr)
		}
	}
}

// TestReloadRPC: an extension's command that asks pi.reload over RPC: the
// extension added to pi.toml is loaded (get_commands lists its command,
// session_start with reason reload is on the stream); a broken pi.toml is
// an error notify naming file and line, and the extensions go on.
func TestReloadRPC(t *testing.T) {
	run12 := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	conv12 := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	dir, home := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	toml := filepath.Join(dir, "pi.toml")
	os.WriteFile(toml, []byte(extEntry(t, "run12", run12)), 0o644)
	os.WriteFile(filepath.Join(dir, "script.json"), []byte(`{"turns":[{"text":"unused"}]}`), 0o644)
	pi := startRPCPi(t, dir, home)
	pi.do(`{"id":"1","type":"get_commands"}`, `"id":"1"`)
	if strings.Contains(pi.since(0), "conv12-typed") {
		t.Fatal("conv12's command is listed before it is in pi.toml")
	}

	os.WriteFile(toml, []byte(extEntry(t, "run12", run12)+extEntry(t, "conv12", conv12)), 0o644)
	pi.do(`{"id":"2","type":"prompt","message":"/reload-all"}`, `"id":"2"`, `"type":"session_start"`, `"reason":"reload"`)
	from := pi.at
	pi.do(`{"id":"3","type":"get_commands"}`, `"id":"3"`)
	if !strings.Contains(pi.since(from), "conv12-typed") {
		t.Errorf("get_commands after the reload lacks conv12's command:\n%s", pi.since(from))
	}

	os.WriteFile(toml, []byte(extEntry(t, "run12", run12)+"[[extensions]]\nname = 7\n"), 0o644)
	pi.do(`{"id":"4","type":"prompt","message":"/reload-all"}`, `"id":"4"`, `"method":"notify"`, "pi.toml:6", `"notifyType":"error"`)
	from = pi.at
	pi.do(`{"id":"5","type":"get_commands"}`, `"id":"5"`)
	if !strings.Contains(pi.since(from), "conv12-typed") {
		t.Errorf("a failed reload dropped conv12:\n%s", pi.since(from))
	}
}

// startRPCPi is startLivePi in RPC mode.
func startRPCPi(t *testing.T, dir, home string) *livePi {
	t.Helper()
	return startLivePiArgs(t, dir, home, "--mode", "rpc", "--trust", "--script", filepath.Join(dir, "script.json"))
}

// waitCount polls the screen until it shows want n times, for at most 30s.
func waitCount(p *tmuxPane, want string, n int) string {
	p.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		s := p.screen()
		if strings.Count(s, want) >= n {
			return s
		}
		select {
		case <-tick.C:
		case <-deadline:
			p.t.Fatalf("the terminal did not show %q %d times within 30s; it shows:\n%s", want, n, s)
		}
	}
}

// TestReloadRPCClearsStatuses: over RPC, a reload clears on the client
// the statuses the old extensions left (as the TUI drops them), before the
// new set's session_start; a status cleared by its extension is not
// cleared again.
func TestReloadRPCClearsStatuses(t *testing.T) {
	run12 := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	ui12 := plugin.BuildGo(t, ui12Guest)
	dir, home := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(extEntry(t, "run12", run12)+extEntry(t, "ui12", ui12)), 0o644)
	os.WriteFile(filepath.Join(dir, "script.json"), []byte(`{"turns":[{"text":"unused"}]}`), 0o644)
	pi := startRPCPi(t, dir, home)
	pi.do(`{"id":"1","type":"prompt","message":"/say hello"}`, `"id":"1"`, `"statusKey":"ui12:say"`, `"statusText":"said hello"`, `"message":"said"`)
	pi.promptWhenIdle("2", "/clear", `"statusKey":"ui12:st"`, `"message":"cleared"`)
	from := pi.at
	pi.promptWhenIdle("3", "/reload-all", `"type":"session_start"`, `"reason":"reload"`)
	out := pi.since(from)
	clear := -1
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, `"statusKey":"ui12:say"`) && !strings.Contains(line, "statusText"):
			clear = strings.Index(out, line)
		case strings.Contains(line, `"statusKey":"ui12:`):
			t.Errorf("after the reload: %s (want only the clear of ui12:say)", line)
		}
	}
	start := strings.Index(out, `"reason":"reload"`)
	if clear < 0 || start < clear {
		t.Fatalf("want the clear of ui12:say before session_start (clear at %d, session_start at %d):\n%s", clear, start, out)
	}
}

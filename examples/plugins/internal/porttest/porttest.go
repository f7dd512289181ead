// Package porttest runs the ported reference examples (C, Rust and Go
// extensions of ABI 1.2) through the real pi binary: it builds an
// example's module with its language's toolchain, makes a project whose
// pi.toml loads it, and runs pi in print, json or RPC mode with a
// scripted model or a local OpenAI-compatible server. It is imported only
// by tests.
package porttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// Build builds the example in dir (src/main.c for C, src/lib.rs for Rust,
// a Go main package otherwise) and returns its .wasm; the test is
// skipped, saying what to install, when the toolchain is missing.
func Build(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(plugin.ModuleRoot(t), abs)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(abs)+".wasm")
	var argv, srcs []string
	switch {
	case exists(filepath.Join(abs, "src", "main.c")):
		if msg := plugin.Toolchain("c"); msg != "" {
			t.Skip("C example not tested: " + msg)
		}
		argv = []string{plugin.CC(), "--target=wasm32-wasi", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
			"-mexec-model=reactor", "-Wl,--strip-debug", "-I", "sdk/c", "-o", out, filepath.Join(rel, "src", "main.c")}
		srcs = []string{filepath.Join(rel, "src"), "sdk/c"}
	case exists(filepath.Join(abs, "src", "lib.rs")):
		rc, target, ok := plugin.RustWasm()
		if !ok {
			t.Skip("Rust example not tested: " + plugin.Toolchain("rust"))
		}
		argv = []string{rc, "--edition", "2021", "--crate-type", "cdylib", "--target", target, "-O", "-C", "strip=debuginfo",
			"-D", "warnings", "-o", out, filepath.Join(rel, "src", "lib.rs")}
		srcs = []string{filepath.Join(rel, "src"), "sdk/rust"}
	default:
		return plugin.BuildGo(t, rel)
	}
	if err := plugin.CompileGuest(t, out, srcs, argv...); err != nil {
		t.Fatalf("build %s: %v", dir, err)
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Project is a folder whose pi.toml loads one extension, with its own
// PI_HOME.
type Project struct {
	t         testing.TB
	Dir, Home string
}

// New makes a project loading wasm as name; extra is TOML after the
// entry's header ([extensions.grants], ...).
func New(t testing.TB, name, wasm, extra string) *Project {
	t.Helper()
	p := &Project{t: t, Dir: t.TempDir(), Home: t.TempDir()}
	if err := os.Mkdir(filepath.Join(p.Dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := extensions.FileSHA256(wasm)
	if err != nil {
		t.Fatal(err)
	}
	p.Write("pi.toml", fmt.Sprintf("[[extensions]]\nname = %q\npath = %q\nsha256 = %q\n%s\n", name, wasm, sum, extra))
	return p
}

// Write writes a file of the project.
func (p *Project) Write(name, data string) {
	p.t.Helper()
	path := filepath.Join(p.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// Script writes a scripted model ({"turns": TURNS}) and returns the
// arguments that select it.
func (p *Project) Script(turns string) []string {
	p.t.Helper()
	p.Write("script.json", `{"turns":`+turns+`}`)
	return []string{"--script", filepath.Join(p.Dir, "script.json")}
}

func (p *Project) command(args []string) *exec.Cmd {
	cmd := exec.Command(plugin.Pi(p.t), append(args, "--trust", "--cwd", p.Dir)...)
	cmd.Dir = p.Dir
	cache, _ := plugin.CacheDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.Home, "PI_HOME=" + p.Home, "PI_CACHE_DIR=" + cache,
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", "PI_TUI=0", "NO_COLOR=1", "TMPDIR=" + os.TempDir()}
	return cmd
}

// Run runs pi with args and stdin; it returns stdout, stderr and the exit
// code.
func (p *Project) Run(stdin string, args ...string) (string, string, int) {
	p.t.Helper()
	cmd := p.command(args)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.String(), stderr.String(), ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// Events runs pi --mode json -p PROMPT and returns the event lines.
func (p *Project) Events(prompt string, args ...string) []map[string]any {
	p.t.Helper()
	out, stderr, code := p.Run("", append([]string{"--mode", "json", "-p", prompt}, args...)...)
	if code != 0 {
		p.t.Fatalf("pi --mode json -p %q: exit %d\n%s%s", prompt, code, out, stderr)
	}
	var events []map[string]any
	for _, line := range strings.Split(out, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil {
			events = append(events, e)
		}
	}
	return events
}

// RPC is pi running in RPC mode: JSON lines in and out.
type RPC struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan map[string]any
	stderr bytes.Buffer
	// Seen are every line read so far, in order.
	Seen []map[string]any
}

// RPC starts pi --mode rpc with args; it is stopped when the test ends.
func (p *Project) RPC(args ...string) *RPC {
	p.t.Helper()
	r := &RPC{t: p.t, cmd: p.command(append([]string{"--mode", "rpc"}, args...)), lines: make(chan map[string]any, 1024)}
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		p.t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.lines <- m
			}
		}
		close(r.lines)
	}()
	p.t.Cleanup(func() {
		r.in.Close()
		done := make(chan struct{})
		go func() { r.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			r.cmd.Process.Kill()
			<-done
		}
	})
	return r
}

// Send writes one command.
func (r *RPC) Send(cmd map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		r.t.Fatal(err)
	}
}

// Until reads lines until match accepts one, which it returns; it fails
// the test when pi ends or 30 s pass first.
func (r *RPC) Until(what string, match func(map[string]any) bool) map[string]any {
	r.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("pi ended before %s\nseen: %v\n%s", what, r.Seen, r.stderr.String())
			}
			r.Seen = append(r.Seen, m)
			if match(m) {
				return m
			}
		case <-deadline:
			r.t.Fatalf("no %s in 30 s\nseen: %v\n%s", what, r.Seen, r.stderr.String())
		}
	}
}

// Response waits for the response to the command with id.
func (r *RPC) Response(id string) map[string]any {
	r.t.Helper()
	return r.Until("response "+id, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}

// UI waits for an extension_ui_request of method.
func (r *RPC) UI(method string) map[string]any {
	r.t.Helper()
	return r.Until("extension_ui_request "+method, func(m map[string]any) bool {
		return m["type"] == "extension_ui_request" && m["method"] == method
	})
}

// Settle waits until pi is not busy with a prompt or a command: it asks
// get_state until isStreaming is false (a command's answer comes before
// the command has run, and no event marks its end).
func (r *RPC) Settle() {
	r.t.Helper()
	for i := 0; ; i++ {
		id := fmt.Sprintf("settle-%d", i)
		r.Send(map[string]any{"id": id, "type": "get_state"})
		d, _ := r.Response(id)["data"].(map[string]any)
		if d["isStreaming"] == false {
			return
		}
		if i == 3000 {
			r.t.Fatalf("pi stayed busy\nseen: %v", r.Seen)
		}
	}
}

// Idle waits for the end of a run (agent_end).
func (r *RPC) Idle() {
	r.t.Helper()
	r.Until("agent_end", func(m map[string]any) bool { return m["type"] == "agent_end" })
}

// Wait waits for pi to exit and returns its exit code.
func (r *RPC) Wait() int {
	r.t.Helper()
	deadline := time.After(30 * time.Second)
	for open := true; open; {
		select {
		case m, ok := <-r.lines:
			if ok {
				r.Seen = append(r.Seen, m)
			}
			open = ok
		case <-deadline:
			r.t.Fatalf("pi did not end in 30 s\nseen: %v\n%s", r.Seen, r.stderr.String())
		}
	}
	err := r.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// Stderr is what pi wrote to stderr so far.
func (r *RPC) Stderr() string { return r.stderr.String() }

// Contains reports whether v, written as JSON, contains s.
func Contains(v any, s string) bool {
	b, _ := json.Marshal(v)
	return strings.Contains(string(b), s)
}

// TUI is pi's terminal UI running in the project inside tmux.
type TUI struct {
	t            testing.TB
	tmux, socket string
}

// TUI starts pi's terminal UI (120x40) in the project with args (a
// scripted model of no turns unless they give --script); it is stopped when the test ends. The test is
// skipped when tmux is missing.
func (p *Project) TUI(t testing.TB, args ...string) *TUI {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not found (apt-get install tmux)")
	}
	var script []string
	if !strings.Contains(strings.Join(args, " "), "--script") {
		script = p.Script(`[]`)
	}
	u := &TUI{t: t, tmux: tmux, socket: fmt.Sprintf("porttest-%d-%s", os.Getpid(), filepath.Base(p.Dir))}
	t.Cleanup(func() { exec.Command(tmux, "-L", u.socket, "kill-server").Run() })
	cache, _ := plugin.CacheDir()
	var quoted []string
	for _, a := range append(append([]string{plugin.Pi(t)}, script...), append(args, "--trust")...) {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	cmd := fmt.Sprintf("cd %q && TERM=xterm-256color %s 2>%q; echo PI-EXIT=$?; exec cat", p.Dir, strings.Join(quoted, " "), filepath.Join(p.Home, "stderr.txt"))
	u.run("new-session", "-d", "-s", "pi", "-x", "120", "-y", "40",
		"-e", "PI_HOME="+p.Home, "-e", "HOME="+p.Home, "-e", "PI_CACHE_DIR="+cache, "-e", "NO_COLOR=", "-e", "PI_TUI=",
		"-e", "OPENAI_API_KEY=", "sh", "-c", cmd)
	u.WaitFor("Enter sends")
	return u
}

func (u *TUI) run(args ...string) string {
	u.t.Helper()
	out, err := exec.Command(u.tmux, append([]string{"-L", u.socket}, args...)...).CombinedOutput()
	if err != nil {
		u.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Screen is what the terminal shows.
func (u *TUI) Screen() string { return u.run("capture-pane", "-p", "-t", "pi") }

// Keys sends tmux key names ("Down", "C-c", "q").
func (u *TUI) Keys(keys ...string) { u.run(append([]string{"send-keys", "-t", "pi"}, keys...)...) }

// Line types text and Enter.
func (u *TUI) Line(text string) {
	u.run("send-keys", "-t", "pi", "-l", text)
	u.run("send-keys", "-t", "pi", "Enter")
}

// WaitFor waits until the screen shows every string of want (30 s at
// most) and returns it.
func (u *TUI) WaitFor(want ...string) string {
	u.t.Helper()
	return u.wait(fmt.Sprintf("show %q", want), func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

// WaitGone waits until the screen no longer shows s.
func (u *TUI) WaitGone(s string) string {
	u.t.Helper()
	return u.wait(fmt.Sprintf("stop showing %q", s), func(screen string) bool { return !strings.Contains(screen, s) })
}

func (u *TUI) wait(what string, ok func(string) bool) string {
	u.t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		s := u.Screen()
		if ok(s) {
			return s
		}
		select {
		case <-tick.C:
		case <-deadline:
			u.t.Fatalf("the terminal did not %s within 30 s; it shows:\n%s", what, s)
		}
	}
}

// WaitCount waits until the screen shows s at least n times.
func (u *TUI) WaitCount(s string, n int) string {
	u.t.Helper()
	return u.wait(fmt.Sprintf("show %q %d times", s, n), func(screen string) bool { return strings.Count(screen, s) >= n })
}

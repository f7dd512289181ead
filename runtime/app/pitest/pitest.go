// Package pitest is the test kit for pi extensions: it builds an extension
// into a .wasm file, starts a real pi around it (the same assembly the pi
// command uses: built-in tools, the extension host with its sandbox, hooks,
// permissions and redaction) with the grants and config you choose, and
// lets a Go test call tools, run slash commands and read what was logged.
//
// A test of a Go extension lives beside its main.go, built only for the
// host:
//
//	//go:build !wasip1
//
//	package main
//
//	import (
//		"testing"
//
//		"github.com/pi-go/pi/runtime/app/pitest"
//	)
//
//	func TestHello(t *testing.T) {
//		wasm := pitest.BuildGo(t, ".")
//		pi := pitest.Load(t, pitest.Extension{Path: wasm, Grants: []string{"fs=ro:."}})
//		r := pi.Call("hello", map[string]any{"name": "Ada"})
//		if r.IsError || r.Text != "Hello, Ada!" {
//			t.Fatalf("hello = %+v", r)
//		}
//	}
//
// and runs with plain `go test ./...`. Extensions in other languages are
// built by their own toolchain; pass the .wasm path (BuildWAT assembles
// WebAssembly text with wat2wasm).
//
// The kit is a host-side package: it imports the extension host (wazero),
// so it cannot live in the SDK, which guests compile for wasip1 with the
// standard library only.
//
// It is the one test kit outside internal/testkit on purpose: pi's own tests
// share their kits under internal/testkit, which other modules cannot
// import, while extension authors import this one from theirs.
//
// Compiled modules are cached across tests and runs in the user's cache
// directory (pi-go/pitest-cache), through $PI_CACHE_DIR, which Load sets
// for the process when it is unset; a cold compile of a Go guest takes
// seconds, a cached one milliseconds.
package pitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/internal/testkit/waitbuf"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/tool"
)

// Extension is one .wasm module to load, with what `pi ext install` would
// give it.
type Extension struct {
	// Path is the .wasm file (relative to the test's working directory).
	Path string
	// Grants are written as `pi ext install --grant` takes them:
	// "fs=ro:.", "fs=rw:out", "exec=git status*", "env=HOME",
	// "http=https://api.example.com/*", "tool=read".
	Grants []string
	// Config is the extension's [extensions.config]; nil for none.
	Config map[string]any
}

// Options shape the pi the extensions load into. The zero value is a
// fresh empty project folder, nothing approved.
type Options struct {
	// Dir is the project folder and working directory of every tool;
	// "" makes a fresh t.TempDir(). A pi.toml found from it upwards is
	// read as pi would (untrusted unless Trust).
	Dir string
	// Files are written into Dir before the extensions load: relative
	// slash-separated name → content.
	Files map[string]string
	// Yes approves every call a hook or permission rule asks about (as
	// --yes does); else such a call is blocked with "needs approval".
	Yes bool
	// Trust trusts Dir's pi.toml for the run (as --trust does).
	Trust bool
	// Tools is the active tool set; nil is pi's default set plus every
	// extension tool.
	Tools []string
	// Home is PI_HOME for the run (global pi.toml, trust, the extensions'
	// kv stores); "" makes a fresh t.TempDir(). Pass the Home of an
	// earlier Pi (after its Close) to test what survives a restart.
	Home string
	// Converse, when not nil, holds a conversation on the pi
	// (Pi.Conversation, Pi.Prompt): its session in memory, its model a
	// script answering these texts in order. The extensions then run in
	// print mode, where ABI 1.2's session.* and agent.* answer; without
	// it they run in tool mode, as under pi tool call (session.append
	// and session.entries still keep entries in memory).
	Converse []string
}

// Pi is a running pi with the extensions loaded; it is closed when the test
// ends.
type Pi struct {
	t         testing.TB
	rt        *app.Runtime
	dir, home string
	logs      *waitbuf.Buffer
	seq       int
	closeOnce sync.Once
	conv      *conversation.Conversation
}

// Result is a tool call's outcome as the model would see it.
type Result struct {
	// Text is the text blocks joined with newlines.
	Text string
	// IsError is set for a failed, blocked or faulted call.
	IsError bool
	// Details is the result's details (nil for none): decoded JSON for an
	// extension tool's result.
	Details any
	// Raw is the whole result.
	Raw tool.Result
}

// Load starts a pi in a fresh project folder with the extensions loaded, and
// fails the test when one does not load.
func Load(t testing.TB, exts ...Extension) *Pi {
	t.Helper()
	return New(t, Options{}, exts...)
}

// New starts a pi shaped by opts with the extensions loaded, and fails the
// test when one does not load.
func New(t testing.TB, opts Options, exts ...Extension) *Pi {
	t.Helper()
	p, err := open(t, opts, exts)
	if err != nil {
		t.Fatalf("pitest: start pi: %v", err)
	}
	return p
}

// LoadErr starts a pi that should fail to start (an extension that must be
// refused: bad config, a missing grant, a broken module) and returns the
// error; it fails the test when pi starts.
func LoadErr(t testing.TB, opts Options, exts ...Extension) error {
	t.Helper()
	p, err := open(t, opts, exts)
	if err == nil {
		p.rt.Close()
		t.Fatalf("pitest: pi started with %d extensions, want a load error", len(exts))
	}
	return err
}

func open(t testing.TB, opts Options, exts []Extension) (*Pi, error) {
	t.Helper()
	ensureCache(t)
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	for name, body := range opts.Files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("pitest: write %s: %v", name, err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatalf("pitest: write %s: %v", name, err)
		}
	}
	var flags []app.ExtensionFlag
	for _, e := range exts {
		var g config.Grants
		for _, s := range e.Grants {
			if err := g.AddFlag(s); err != nil {
				t.Fatalf("pitest: extension %s: grant %q: %v", e.Path, s, err)
			}
		}
		path, err := filepath.Abs(e.Path)
		if err != nil {
			t.Fatalf("pitest: extension %s: %v", e.Path, err)
		}
		flags = append(flags, app.ExtensionFlag{Path: path, Grants: g, Config: e.Config})
	}
	home := opts.Home
	if home == "" {
		home = t.TempDir()
	}
	logs := waitbuf.New()
	rt, err := app.Open(context.Background(), app.Options{
		Cwd:            dir,
		PIHome:         home,
		Trust:          opts.Trust,
		ExtensionFlags: flags,
		Tools:          opts.Tools,
		LogOutput:      logs,
		LogLevel:       "debug",
		Approver:       approver(opts.Yes),
		HostName:       "pitest",
		Mode:           modeFor(opts),
	})
	if err != nil {
		if logs.String() != "" {
			return nil, fmt.Errorf("%w\npi's log:\n%s", err, logs.String())
		}
		return nil, err
	}
	p := &Pi{t: t, rt: rt, dir: dir, home: home, logs: logs}
	t.Cleanup(p.Close)
	if err := p.converse(opts); err != nil {
		return nil, err
	}
	return p, nil
}

// Close stops the pi (the extensions' instances end; a bare runtime holds
// no conversation, so no session_shutdown is sent); later calls fail. It runs by itself when
// the test ends; call it early to restart with the same Home and Dir.
func (p *Pi) Close() { p.closeOnce.Do(p.close) }

// Call runs one tool call through pi's whole pipeline (validation, the
// tool_call hooks and permission rules, the tool, the tool_result hooks,
// redaction) and returns what the model would see. An unknown tool fails
// the test.
func (p *Pi) Call(name string, args any) Result {
	p.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		p.t.Fatalf("pitest: call %s: encode the arguments: %v", name, err)
	}
	p.seq++
	res, err := p.rt.CallTool(context.Background(), name, fmt.Sprintf("pitest-%d", p.seq), raw, nil)
	if err != nil {
		p.t.Fatalf("pitest: call %s: %v", name, err)
	}
	return Result{Text: res.Text(), IsError: res.IsError, Details: res.Details, Raw: res}
}

// MustCall is Call for a call that must succeed: it fails the test with the
// result's text when IsError is set, and returns the text.
func (p *Pi) MustCall(name string, args any) string {
	p.t.Helper()
	r := p.Call(name, args)
	if r.IsError {
		p.t.Fatalf("pitest: call %s failed: %s", name, r.Text)
	}
	return r.Text
}

// Command runs the slash command /name with args (as typed after the name)
// and returns its answer: Text for the person, Prompt for the model.
func (p *Pi) Command(name, args string) (app.CommandResult, error) {
	return p.rt.RunCommand(context.Background(), name, args)
}

// Tools lists the names of every registered tool (pi's and the
// extensions'), sorted.
func (p *Pi) Tools() []string { return p.rt.ToolNames() }

// Extensions describes the loaded extensions: what init declared and what
// was granted.
func (p *Pi) Extensions() []app.ExtensionInfo { return p.rt.Extensions() }

// Dir is the project folder.
func (p *Pi) Dir() string { return p.dir }

// Home is the run's PI_HOME.
func (p *Pi) Home() string { return p.home }

// Path joins a slash-separated name to the project folder.
func (p *Pi) Path(name string) string { return filepath.Join(p.dir, filepath.FromSlash(name)) }

// Logs is what pi logged so far at debug level and above: the extensions'
// pi.log lines, their stdout and stderr, faults, refused paths.
func (p *Pi) Logs() string { return p.logs.String() }

// Runtime is the assembled pi, for what the kit does not wrap (input
// hooks, events, sessions): see package runtime/app.
func (p *Pi) Runtime() *app.Runtime { return p.rt }

var (
	cacheOnce sync.Once
	buildMu   sync.Mutex
	built     = map[string]string{}
)

// ensureCache points $PI_CACHE_DIR at a cache shared by every test and
// run, unless it is set.
func ensureCache(t testing.TB) {
	cacheOnce.Do(func() {
		if os.Getenv("PI_CACHE_DIR") != "" {
			return
		}
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		d := filepath.Join(base, "pi-go", "pitest-cache")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Logf("pitest: no shared compilation cache (%v); every test compiles afresh", err)
			return
		}
		os.Setenv("PI_CACHE_DIR", d)
	})
}

// BuildGo builds the Go extension (a main package) in dir, relative to the
// test's working directory ("." for the package under test), with
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, once per test
// binary, and returns the .wasm path. The file is written to a folder under
// the system's temporary directory named after dir, replaced atomically,
// so parallel test binaries do not collide. A failed build fails the test
// with the compiler's output.
func BuildGo(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatalf("pitest: build %s: %v", dir, err)
	}
	return build(t, "go:"+abs, filepath.Base(abs)+".wasm", func(out string) *exec.Cmd {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, ".")
		cmd.Dir = abs
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		return cmd
	})
}

// BuildWAT assembles a WebAssembly text file (relative to the test's
// working directory) with wat2wasm, once per test binary, and returns the
// .wasm path. A missing wat2wasm fails the test (Debian: apt-get install
// wabt).
func BuildWAT(t testing.TB, file string) string {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatalf("pitest: assemble %s: %v", file, err)
	}
	bin, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("pitest: assemble %s: wat2wasm was not found on PATH (Debian: apt-get install wabt)", file)
	}
	return build(t, "wat:"+abs, strings.TrimSuffix(filepath.Base(abs), ".wat")+".wasm", func(out string) *exec.Cmd {
		return exec.Command(bin, abs, "-o", out)
	})
}

func build(t testing.TB, key, name string, command func(out string) *exec.Cmd) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[key]; ok {
		return p
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("pitest-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6])))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("pitest: build %s: %v", name, err)
	}
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		t.Fatalf("pitest: build %s: %v", name, err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := command(tmp.Name())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			t.Fatalf("pitest: build %s: %v", name, err)
		}
		t.Fatalf("pitest: build %s: %v\n%s", name, err, out.String())
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatalf("pitest: build %s: %v", name, err)
	}
	final := filepath.Join(dir, name)
	if err := atomicfile.WriteFile(final, data, 0o644); err != nil {
		t.Fatalf("pitest: build %s: %v", name, err)
	}
	built[key] = final
	return final
}

// approver is --yes's approver when yes, else none (asks are blocked).
func approver(yes bool) app.Approver {
	if yes {
		return app.YesApprover{}
	}
	return nil
}

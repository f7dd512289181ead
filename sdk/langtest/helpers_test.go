package langtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
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

	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) {
	code := plugin.Main(m)
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// A lang is one guest SDK under test: how to build its test guest.
type lang struct {
	name  string
	build func(t *testing.T) string
}

var langs = []lang{{"c", buildC}, {"rust", buildRust}}

// forEachLang runs fn as a subtest per language with the path of that
// language's guest11.wasm.
func forEachLang(t *testing.T, fn func(t *testing.T, l string, wasm string)) {
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) { fn(t, l.name, l.build(t)) })
	}
}

var (
	buildMu  sync.Mutex
	builtDir string
	built    = map[string]string{} // lang -> .wasm, or "skip: why"
)

// buildOnce builds a guest once per test binary.
func buildOnce(t *testing.T, name string, build func(out string) (skip string, err error)) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		if why, skip := strings.CutPrefix(p, "skip: "); skip {
			t.Skip(why)
		}
		return p
	}
	if builtDir == "" {
		d, err := os.MkdirTemp("", "langtest-")
		if err != nil {
			t.Fatal(err)
		}
		builtDir = d
	}
	out := filepath.Join(builtDir, name+".wasm")
	skip, err := build(out)
	if skip != "" {
		built[name] = "skip: " + skip
		t.Skip(skip)
	}
	if err != nil {
		t.Fatal(err)
	}
	built[name] = out
	return out
}

// buildC builds testdata/guest11.c with clang and wasi-libc, as the C
// scaffold's build.sh does, with every warning an error.
func buildC(t *testing.T) string {
	return buildOnce(t, "c", func(out string) (string, error) {
		if msg := plugin.Toolchain("c"); msg != "" {
			return "C guest not tested: " + msg, nil
		}
		err := plugin.CompileGuest(t, out, []string{"sdk/langtest/testdata", "sdk/c"}, plugin.CC(), "--target=wasm32-wasi", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
			"-mexec-model=reactor", "-Wl,--strip-debug", "-I", "sdk/c", "-o", out, "sdk/langtest/testdata/guest11.c")
		if err != nil {
			return "", fmt.Errorf("build the C guest: %v", err)
		}
		return "", nil
	})
}

// buildRust builds testdata/rust/lib.rs with the first rustc that has the
// wasm32-wasip1 or wasm32-wasi standard library ($RUSTC, rustc,
// /usr/bin/rustc), as the Rust scaffold's build.sh does, warnings denied.
func buildRust(t *testing.T) string {
	return buildOnce(t, "rust", func(out string) (string, error) {
		rc, target, ok := plugin.RustWasm()
		if !ok {
			return "Rust guest not tested: " + plugin.Toolchain("rust"), nil
		}
		err := plugin.CompileGuest(t, out, []string{"sdk/langtest/testdata", "sdk/rust"}, rc, "--edition", "2021", "--crate-type", "cdylib", "--target", target, "-O", "-C", "strip=debuginfo",
			"-D", "warnings", "-o", out, "sdk/langtest/testdata/rust/lib.rs")
		if err != nil {
			return "", fmt.Errorf("build the Rust guest with %s: %v", rc, err)
		}
		return "", nil
	})
}

// piBin is the real pi binary, built once per test binary.
func piBin(t *testing.T) string { return plugin.Pi(t) }

// A project is a folder whose pi.toml loads guest11, and the PI_HOME pi
// runs with.
type project struct {
	t         *testing.T
	dir, home string
}

// entry says how pi.toml loads guest11.
type entry struct {
	grants string // TOML lines under [extensions.grants]
	limits string // under [extensions.limits]
	config string // under [extensions.config]
}

func newProject(t *testing.T, wasm string, e entry) *project {
	t.Helper()
	p := &project{t: t, dir: t.TempDir(), home: t.TempDir()}
	if err := os.Mkdir(filepath.Join(p.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	var toml strings.Builder
	fmt.Fprintf(&toml, "[[extensions]]\nname = \"guest11\"\npath = %q\nsha256 = %q\n", wasm, hex.EncodeToString(sum[:]))
	for _, s := range [][2]string{{"grants", e.grants}, {"limits", e.limits}, {"config", e.config}} {
		if s[1] != "" {
			fmt.Fprintf(&toml, "[extensions.%s]\n%s\n", s[0], s[1])
		}
	}
	p.write("pi.toml", toml.String())
	return p
}

func (p *project) write(name, text string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// script writes a scripted model's turns (the "turns" of --script) and
// returns the file.
func (p *project) script(turns string) string {
	p.t.Helper()
	f := filepath.Join(p.dir, "script.json")
	p.write("script.json", `{"turns":`+turns+`}`)
	return f
}

// run runs pi in the project with stdin and returns stdout, stderr and the
// exit code.
func (p *project) run(stdin string, args ...string) (string, string, int) {
	p.t.Helper()
	cmd := exec.Command(piBin(p.t), append(args, "--trust", "--cwd", p.dir)...)
	cmd.Dir = p.dir
	cmd.Stdin = strings.NewReader(stdin)
	cache, _ := plugin.CacheDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "PI_HOME=" + p.home, "PI_CACHE_DIR=" + cache,
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", "PI_TUI=0", "NO_COLOR=1", "TMPDIR=" + os.TempDir()}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// call runs `pi tool call TOOL INPUT` and returns the result's text and
// whether it is an error result.
func (p *project) call(tool string, input any) (string, bool) {
	p.t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		p.t.Fatal(err)
	}
	out, stderr, code := p.run(string(in), "tool", "call", tool, "-")
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 {
		p.t.Fatalf("pi tool call %s %s: exit %d, %v\n%s%s", tool, in, code, err, out, stderr)
	}
	// Exit status 1 exactly when the result is an error.
	if want := map[bool]int{false: 0, true: 1}[res.IsError]; code != want {
		p.t.Fatalf("pi tool call %s %s: exit %d for a result with isError %v\n%s%s", tool, in, code, res.IsError, out, stderr)
	}
	return res.Content[0].Text, res.IsError
}

// ok is call for a call that must succeed.
func (p *project) ok(input map[string]any) string {
	p.t.Helper()
	text, isErr := p.call("probe", input)
	if isErr {
		p.t.Fatalf("probe %v failed: %s", input, text)
	}
	return text
}

// fails is call for a call that must fail; it returns the error.
func (p *project) fails(input map[string]any) string {
	p.t.Helper()
	text, isErr := p.call("probe", input)
	if !isErr {
		p.t.Fatalf("probe %v = %s, want an error", input, text)
	}
	return text
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// toolEnds runs pi --mode json -p PROMPT with a scripted model and
// returns the text and error flag of each tool result, in order.
func (p *project) toolEnds(prompt, turns string, extra ...string) (texts []string, isErr []bool) {
	p.t.Helper()
	out, stderr, code := p.run("", append([]string{"--mode", "json", "-p", prompt, "--script", p.script(turns)}, extra...)...)
	if code != 0 {
		p.t.Fatalf("pi --mode json: exit %d\n%s%s", code, out, stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		var e struct {
			Type   string
			Result struct {
				Content []struct{ Text string }
				IsError bool
			}
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Type != "tool_execution_end" {
			continue
		}
		text := ""
		if len(e.Result.Content) > 0 {
			text = e.Result.Content[0].Text
		}
		texts, isErr = append(texts, text), append(isErr, e.Result.IsError)
	}
	return texts, isErr
}

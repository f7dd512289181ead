package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// scaffoldEnv is an environment in which nothing can be downloaded: no Go
// module proxy, an empty module cache, the local toolchain only. The build
// cache stays (it holds no sources from the network).
func scaffoldEnv(t *testing.T, home string) []string {
	env := []string{"PI_HOME=" + home, "HOME=" + t.TempDir(), "OPENAI_API_KEY=", "PI_TRUST=",
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOMODCACHE=" + t.TempDir(), "GONOSUMDB=*", "GOSUMDB=off"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "GOCACHE", "TMPDIR", "RUSTC", "CC":
			env = append(env, kv)
		}
	}
	if gocache, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		env = append(env, "GOCACHE="+strings.TrimSpace(string(gocache)))
	}
	return env
}

// runIn runs a command in dir with env and returns its output; want says
// whether it must succeed.
func runIn(t *testing.T, dir string, env []string, wantOK bool, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if (err == nil) != wantOK {
		t.Fatalf("%s %s: err = %v, want ok=%v\n%s", name, strings.Join(args, " "), err, wantOK, out)
	}
	return string(out)
}

// stdoutIn is runIn for output that is parsed: stdout alone, so that a
// notice on stderr ("compiling x.wasm (first load only)…" when the compile
// cache is cold or slow) cannot get in the way; stderr is in the failure.
func stdoutIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// TestScaffolds is the authors' whole loop for each language, through the
// real pi binary and the real toolchains, offline: pi ext new → the
// project's own test.sh (unit tests, build, one call with -e and
// --ext-config, one call its hook blocks) → pi ext install with config →
// a call → edit the source → pi ext dev (rebuild, update) → the call shows
// the change with config, grants and trust kept → pi ext remove leaves
// nothing. Go always runs; C, Rust and WAT are skipped, saying what to
// install, when their toolchain is missing (scripts/test installs them).
func TestScaffolds(t *testing.T) {
	pi := realPi(t)
	piDir := filepath.Dir(pi)
	for _, lang := range []string{"go", "c", "rust", "wat"} {
		t.Run(lang, func(t *testing.T) {
			if msg := plugin.Toolchain(lang); msg != "" {
				t.Skipf("%s scaffold not tested: %s", lang, msg)
			}
			home, work := t.TempDir(), t.TempDir()
			env := append(scaffoldEnv(t, home), "PI="+pi)
			for i, kv := range env {
				if strings.HasPrefix(kv, "PATH=") {
					env[i] = "PATH=" + piDir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
				}
			}
			name := "demo-" + lang
			out := runIn(t, work, env, true, pi, "ext", "new", name, "--lang", lang)
			if !strings.Contains(out, "wrote "+lang+" extension "+name) {
				t.Fatalf("ext new: %s", out)
			}
			src := filepath.Join(work, name)
			if out := runIn(t, src, env, true, "./test.sh"); !strings.Contains(out, "ok: "+name) {
				t.Fatalf("test.sh:\n%s", out)
			}

			if lang != "wat" {
				// The JSON reader and writer of each language: escapes in, escapes out.
				out := stdoutIn(t, src, env, pi, "tool", "call", name, `{"name":"A\"b\\n\u00e9\ud83d\ude00 \u0001"}`, "-e", name+".wasm")
				var res struct {
					Content []struct{ Text string } `json:"content"`
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "Hello, A\"b\\né😀 \x01!" {
					t.Errorf("escaped name: %s (%v)", out, err)
				}
			}

			proj := filepath.Join(work, "proj")
			if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			wasm := filepath.Join(src, name+".wasm")
			install := []string{"ext", "install", wasm, "--grant", "env=HOME"}
			if lang != "wat" { // the WAT module reads no config
				install = append(install, "--ext-config", `greeting="Howdy"`)
				// A config its init refuses is refused before anything is written.
				bad := `greeting=1`
				if lang == "go" {
					bad = "nope=1" // the SDK decodes config strictly
				}
				out := runIn(t, proj, env, false, pi, "ext", "install", wasm, "--ext-config", bad)
				if !strings.Contains(out, "nothing written") {
					t.Errorf("bad config: %s", out)
				}
				if _, err := os.Stat(filepath.Join(proj, "pi.toml")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused install wrote pi.toml")
				}
			}
			runIn(t, proj, env, true, pi, append(install, "--timeout-ms", "20000")...)
			greeting := "Howdy, Ada!"
			if lang == "wat" {
				greeting = "Hello from " + name + "!"
			}
			if out := runIn(t, proj, env, true, pi, "tool", "call", name, `{"name":"Ada"}`); !strings.Contains(out, greeting) {
				t.Errorf("installed call: %s", out)
			}
			before := readTOML(t, proj)

			// Edit, then pi ext dev: rebuilt, updated, config kept.
			editSource(t, src, lang)
			out = runIn(t, proj, env, true, pi, "ext", "dev", src)
			if !strings.Contains(out, "updated "+name) || !strings.Contains(out, "kept: grants, limits and config") {
				t.Errorf("ext dev: %s", out)
			}
			want := strings.Replace(greeting, "Howdy", "Howdy (v2)", 1)
			if lang == "wat" {
				want = "Hello from v2!"
			}
			if out := runIn(t, proj, env, true, pi, "tool", "call", name, `{"name":"Ada"}`); !strings.Contains(out, want) {
				t.Errorf("after dev: %s (want %q)", out, want)
			}
			after := readTOML(t, proj)
			if sumLine := sha256Line(before); sumLine == "" || strings.Replace(before, sumLine, sha256Line(after), 1) != after {
				t.Errorf("pi.toml changed beyond its sha256:\n%s\n---\n%s", before, after)
			}

			out = runIn(t, proj, env, true, pi, "ext", "remove", name)
			for _, p := range []string{"pi.toml", ".pi"} {
				if _, err := os.Stat(filepath.Join(proj, p)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("remove left %s: %s", p, out)
				}
			}
		})
	}
}

func readTOML(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pi.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sha256Line(toml string) string {
	for _, l := range strings.Split(toml, "\n") {
		if strings.HasPrefix(l, "sha256 = ") {
			return l
		}
	}
	return ""
}

// editSource changes what the scaffold's tool answers, as an author
// would: the greeting gets " (v2)" after it (for WAT, the answer text).
func editSource(t *testing.T, dir, lang string) {
	t.Helper()
	file := map[string]string{"go": "logic.go", "c": "demo-c.c", "rust": "src/lib.rs", "wat": "demo-wat.wat"}[lang]
	edits := map[string][2]string{
		"go":   {`return greeting + ", "`, `return greeting + " (v2), "`},
		"c":    {`"%s, %s!"`, `"%s (v2), %s!"`},
		"rust": {`format!("{}, {}!"`, `format!("{} (v2), {}!"`},
		"wat":  {`\"text\":\"Hello from demo-wat!\"`, `\"text\":\"Hello from v2!\"`},
	}
	old, new := edits[lang][0], edits[lang][1]
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q to edit", p, old)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExtDevWatch: with --watch, a change to the project's source is
// rebuilt and the installed copy updated, while pi ext dev keeps running.
func TestExtDevWatch(t *testing.T) {
	if msg := plugin.Toolchain("wat"); msg != "" {
		t.Skip(msg)
	}
	pi := realPi(t)
	home, work := t.TempDir(), t.TempDir()
	env := scaffoldEnv(t, home)
	src := filepath.Join(work, "demo-wat")
	runIn(t, work, env, true, pi, "ext", "new", "demo-wat", "--lang", "wat")
	runIn(t, src, env, true, "./build.sh")
	proj := filepath.Join(work, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	runIn(t, proj, env, true, pi, "ext", "install", filepath.Join(src, "demo-wat.wasm"))

	cmd := exec.Command(pi, "ext", "dev", "--watch", src)
	cmd.Dir, cmd.Env, cmd.Stderr = proj, env, io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("pi ext dev --watch did not stop on SIGINT")
		}
	}()
	lines := bufio.NewScanner(stdout)
	waitFor := func(what string) {
		t.Helper()
		for lines.Scan() {
			if strings.Contains(lines.Text(), what) {
				return
			}
		}
		t.Fatalf("pi ext dev --watch ended before %q", what)
	}
	waitFor("watching") // the first build is done and the watch has begun
	editSource(t, src, "wat")
	waitFor("updated demo-wat")
	if out := runIn(t, proj, env, true, pi, "tool", "call", "demo-wat", `{}`); !strings.Contains(out, "Hello from v2!") {
		t.Errorf("after the watch rebuilt: %s", out)
	}
}

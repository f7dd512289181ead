package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/internal/testkit/proc"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
)

// bashCall runs the bash tool through the real pipeline (wrap, validation,
// execute) and returns the result.
func bashCall(t *testing.T, ctx context.Context, opts BashOptions, cwd string, args map[string]any, update tool.UpdateFunc) tool.Result {
	t.Helper()
	if opts.OutputDir == nil {
		opts.OutputDir = NewOutputDir("")
		t.Cleanup(func() { opts.OutputDir.Close() })
	}
	if opts.Processes == nil {
		opts.Processes = testProcesses
	}
	at, err := tool.Wrap(bashDefinition(opts), func(string) tool.Context { return tool.Context{Cwd: cwd} })
	if err != nil {
		t.Fatalf("wrap bash: %v", err)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(ctx, []tool.AgentTool{at}, nil, "bash", "call-1", raw, update)
}

// waitGone waits a little for processes that are already dying; the tool
// promises they are gone when it returns, so the wait is only for /proc.
func assertGone(t *testing.T, name string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	if pids := proc.Pids(name); len(pids) > 0 {
		var states []string
		for _, pid := range pids {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			states = append(states, string(b))
		}
		t.Fatalf("processes of %s still present after the call: %q", name, states)
	}
}

func resultText(t *testing.T, r tool.Result) string {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block, got %+v", r.Content)
	}
	return r.Content[0].Text
}

func TestBashTexts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		command string
		want    string
		isError bool
	}{
		{"stdout and stderr interleave", "echo a; echo b >&2; echo c", "a\nb\nc\n", false},
		{"no output", "true", "(no output)", false},
		{"exit code with output", "echo out; exit 3", "out\n\n\nCommand exited with code 3", true},
		{"exit code without output", "exit 7", "(no output)\n\nCommand exited with code 7", true},
		{"killed by signal", "echo dying; kill -9 $$", "dying\n\n\nCommand killed by signal SIGKILL", true},
		{"killed by signal without output", "kill -TERM $$", "Command killed by signal SIGTERM", true},
		{"stdin is closed", "cat; read x; echo rc=$?", "rc=1\n", false},
		{"ansi colours removed", `printf '\033[1;31mred\033[0m \033]0;title\007plain \033]8;;http://x\033\\link\033]8;;\033\\\n'`, "red plain link\n", false},
		{"invalid utf-8 and nul", `printf 'a\377b\000c\342\202d\n'`, "a\uFFFDbc\uFFFD\uFFFDd\n", false},
		{"valid utf-8 kept", `printf 'héllo wörld ✓\n'`, "héllo wörld ✓\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": c.command}, nil)
			if got := resultText(t, r); got != c.want {
				t.Errorf("text = %q, want %q", got, c.want)
			}
			if r.IsError != c.isError {
				t.Errorf("isError = %v, want %v", r.IsError, c.isError)
			}
			if r.Details != nil {
				t.Errorf("details = %#v, want none for short output", r.Details)
			}
		})
	}
}

func TestBashDefinitionTexts(t *testing.T) {
	t.Parallel()
	def := bashDefinition(BashOptions{})
	if def.Name != "bash" || def.Label != "bash" {
		t.Errorf("name/label = %q/%q", def.Name, def.Label)
	}
	// The texts of the reference agent (pi-coding-agent 0.73.1, bash.js).
	const (
		refDescription = "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds."
		refSnippet     = "Execute bash commands (ls, grep, find, etc.)"
		refSchema      = `{"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"Bash command to execute"},"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}}}`
	)
	if def.Description != refDescription || def.PromptSnippet != refSnippet || len(def.PromptGuidelines) != 0 {
		t.Errorf("model-visible texts differ from the reference: %q / %q / %q", def.Description, def.PromptSnippet, def.PromptGuidelines)
	}
	if string(def.Parameters) != refSchema {
		t.Errorf("schema = %s, want %s", def.Parameters, refSchema)
	}
	// The description states the limits; keep it in step with them.
	for _, want := range []string{strconv.Itoa(output.DefaultMaxLines) + " lines", strconv.Itoa(output.DefaultMaxBytes/1024) + "KB"} {
		if !strings.Contains(def.Description, want) {
			t.Errorf("description %q does not mention %q", def.Description, want)
		}
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	dec := json.NewDecoder(bytes.NewReader(def.Parameters))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	if schema.Type != "object" || len(schema.Properties) != 2 || len(schema.Required) != 1 || schema.Required[0] != "command" {
		t.Errorf("schema = %s", def.Parameters)
	}
	r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": 42}, nil)
	if !r.IsError || !strings.Contains(resultText(t, r), `Validation failed for tool "bash"`) {
		t.Errorf("a number as command: %+v", r)
	}
}

func TestBashWorkingDirectoryAndShell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := bashCall(t, context.Background(), BashOptions{}, dir, map[string]any{"command": "pwd -P"}, nil)
	if got := resultText(t, r); got != real+"\n" {
		t.Errorf("pwd = %q, want %q", got, real+"\n")
	}

	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	r = bashCall(t, context.Background(), BashOptions{Shell: sh}, dir, map[string]any{"command": `echo "$0"`}, nil)
	if got := resultText(t, r); got != sh+"\n" {
		t.Errorf("configured shell: $0 = %q, want %q", got, sh+"\n")
	}

	missing := filepath.Join(dir, "no-such-shell")
	r = bashCall(t, context.Background(), BashOptions{Shell: missing}, dir, map[string]any{"command": "true"}, nil)
	if got := resultText(t, r); !r.IsError || got != "Custom shell path not found: "+missing {
		t.Errorf("missing shell: %q (isError %v)", got, r.IsError)
	}

	gone := filepath.Join(dir, "gone")
	r = bashCall(t, context.Background(), BashOptions{}, gone, map[string]any{"command": "true"}, nil)
	if got := resultText(t, r); !r.IsError || got != "Working directory does not exist: "+gone+"\nCannot execute bash commands." {
		t.Errorf("missing cwd: %q (isError %v)", got, r.IsError)
	}
}

func TestBashPrefixAndSpawnHooks(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	other := t.TempDir()
	otherReal, _ := filepath.EvalSymlinks(other)
	var seen []tool.BashSpawn
	var mu sync.Mutex
	opts := BashOptions{
		CommandPrefix: "export PI_TEST_PREFIX=from-prefix",
		SpawnHooks: []tool.SpawnHook{
			{Name: "move", Func: func(_ context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
				mu.Lock()
				seen = append(seen, s)
				mu.Unlock()
				env := map[string]string{}
				for k, v := range s.Env {
					env[k] = v
				}
				env["PI_TEST_HOOK"] = "from-hook"
				return tool.BashSpawn{Command: s.Command, Cwd: other, Env: env}, nil
			}},
			{Name: "append", Func: func(_ context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
				mu.Lock()
				seen = append(seen, s)
				mu.Unlock()
				s.Command += "\necho appended"
				return s, nil
			}},
		},
	}
	r := bashCall(t, context.Background(), opts, home, map[string]any{"command": `echo "$PI_TEST_PREFIX $PI_TEST_HOOK"; pwd -P`}, nil)
	want := "from-prefix from-hook\n" + otherReal + "\nappended\n"
	if got := resultText(t, r); got != want || r.IsError {
		t.Errorf("text = %q, want %q", got, want)
	}
	if len(seen) != 2 {
		t.Fatalf("hooks ran %d times, want 2", len(seen))
	}
	if want := "export PI_TEST_PREFIX=from-prefix\necho \"$PI_TEST_PREFIX $PI_TEST_HOOK\"; pwd -P"; seen[0].Command != want {
		t.Errorf("first hook saw command %q, want %q", seen[0].Command, want)
	}
	if seen[0].Cwd != home || seen[0].Env["PATH"] != os.Getenv("PATH") {
		t.Errorf("first hook saw cwd %q and PATH %q", seen[0].Cwd, seen[0].Env["PATH"])
	}
	if seen[1].Cwd != other || seen[1].Env["PI_TEST_HOOK"] != "from-hook" {
		t.Errorf("second hook did not see the first one's changes: %+v", seen[1].Cwd)
	}

	t.Run("a failing hook blocks", func(t *testing.T) {
		t.Parallel()
		marker := filepath.Join(t.TempDir(), "ran")
		opts := BashOptions{SpawnHooks: []tool.SpawnHook{{Name: "extension guard", Func: func(context.Context, tool.BashSpawn) (tool.BashSpawn, error) {
			return tool.BashSpawn{}, errors.New("rm is not allowed here")
		}}}}
		r := bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": "touch " + marker}, nil)
		got := resultText(t, r)
		if !r.IsError || !strings.Contains(got, "rm is not allowed here") || !strings.Contains(got, "extension guard") {
			t.Errorf("blocked call: %q (isError %v)", got, r.IsError)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("the command ran although its hook failed")
		}
	})
}

func TestBashBackgroundChildDoesNotHoldTheCall(t *testing.T) {
	t.Parallel()
	sl := proc.Sleeper(t)
	start := time.Now()
	r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": sl + " 30 & echo started"}, nil)
	took := time.Since(start)
	if got := resultText(t, r); got != "started\n" || r.IsError {
		t.Errorf("text = %q (isError %v)", got, r.IsError)
	}
	if took > 5*time.Second {
		t.Errorf("the call waited for the background child: %v", took)
	}
	if len(proc.Pids(filepath.Base(sl))) != 1 {
		t.Errorf("the background child should still run after a normal exit")
	}
}

func TestBashTimeoutKillsEverything(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		command func(sl string) string
	}{
		{"grandchild in the group", func(sl string) string { return "bash -c '" + sl + " 600; true' & " + sl + " 600" }},
		{"setsid child", func(sl string) string { return "setsid " + sl + " 600 & " + sl + " 30" }},
		{"double fork into a new session", func(sl string) string {
			return "(setsid sh -c '" + sl + " 600 & " + sl + " 601; true' &); " + sl + " 30"
		}},
		{"ignores SIGTERM", func(sl string) string { return "trap '' TERM; " + sl + " 600 & " + sl + " 600" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("setsid"); err != nil && strings.Contains(c.command("x"), "setsid") {
				t.Skip("no setsid")
			}
			sl := proc.Sleeper(t)
			start := time.Now()
			r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "echo begun; " + c.command(sl), "timeout": 1}, nil)
			took := time.Since(start)
			got, want := resultText(t, r), "begun\n\n\nCommand timed out after 1 seconds"
			if c.name == "ignores SIGTERM" {
				// The shell survives SIGTERM too and may report its
				// killed jobs before SIGKILL reaches it.
				if !strings.HasPrefix(got, "begun\n") || !strings.HasSuffix(got, "\n\nCommand timed out after 1 seconds") {
					t.Errorf("text = %q, want %q", got, want)
				}
			} else if got != want {
				t.Errorf("text = %q, want %q", got, want)
			}
			if !r.IsError {
				t.Errorf("a timeout is an error")
			}
			if took < time.Second || took > 4*time.Second {
				t.Errorf("returned after %v, want about a second", took)
			}
			assertGone(t, filepath.Base(sl))
		})
	}
	t.Run("fractional timeout", func(t *testing.T) {
		t.Parallel()
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "sleep 5", "timeout": 0.3}, nil)
		if got := resultText(t, r); got != "Command timed out after 0.3 seconds" {
			t.Errorf("text = %q", got)
		}
	})
}

// TestBashTimeoutKillsScrubbedOrphans covers processes that hide from the
// marker and the group and lose their parent. Not parallel: pi can tell such
// an orphan's call only while no other bash call runs.
func TestBashTimeoutKillsScrubbedOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("subreaper is Linux only")
	}
	cases := []struct {
		name, needs string
		command     func(sl string) string
	}{
		{"clean environment, new session, double fork", "setsid", func(sl string) string {
			return "(env -i setsid " + sl + " 600 &); " + sl + " 30"
		}},
		{"clean environment, own process group, double fork", "perl", func(sl string) string {
			return "(env -i perl -e 'setpgrp(0,0); exec @ARGV' " + sl + " 600 &); " + sl + " 30"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.needs); err != nil {
				t.Skip("no " + c.needs)
			}
			sl := proc.Sleeper(t)
			r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": c.command(sl), "timeout": 1}, nil)
			if got := resultText(t, r); got != "Command timed out after 1 seconds" {
				t.Errorf("text = %q", got)
			}
			assertGone(t, filepath.Base(sl))
		})
	}
}

func TestBashCancellation(t *testing.T) {
	t.Parallel()
	t.Run("while running", func(t *testing.T) {
		t.Parallel()
		sl := proc.Sleeper(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			time.Sleep(300 * time.Millisecond)
			cancel()
		}()
		start := time.Now()
		r := bashCall(t, ctx, BashOptions{}, t.TempDir(), map[string]any{"command": "echo before; setsid " + sl + " 600 & " + sl + " 600"}, nil)
		if got := resultText(t, r); got != "before\n\n\nCommand aborted" || !r.IsError {
			t.Errorf("text = %q (isError %v)", got, r.IsError)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("cancellation took %v", took)
		}
		assertGone(t, filepath.Base(sl))
	})
	t.Run("before it starts", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		marker := filepath.Join(t.TempDir(), "ran")
		hooked := false
		opts := BashOptions{SpawnHooks: []tool.SpawnHook{{Name: "spy", Func: func(_ context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
			hooked = true
			return s, nil
		}}}}
		r := bashCall(t, ctx, opts, t.TempDir(), map[string]any{"command": "touch " + marker}, nil)
		if got := resultText(t, r); got != "Command aborted" || !r.IsError {
			t.Errorf("text = %q (isError %v)", got, r.IsError)
		}
		if hooked {
			t.Errorf("spawn hooks ran for a cancelled call")
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("the command ran although the context was cancelled")
		}
	})
}

// seqText is `seq 1 n` as the test computes it.
func seqText(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// details decodes a result's details through JSON, as a UI would see them.
func bashDetailsOf(t *testing.T, r tool.Result) (d struct {
	Truncation     map[string]any `json:"truncation"`
	FullOutputPath string         `json:"fullOutputPath"`
}) {
	t.Helper()
	b, err := json.Marshal(r.Details)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("details %s: %v", b, err)
	}
	return d
}

func readFullOutput(t *testing.T, path string) []byte {
	t.Helper()
	dir := filepath.Dir(path)
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(dir), fmt.Sprintf("pi-%d-", os.Getpid())) ||
		!strings.HasPrefix(filepath.Base(path), "pi-bash-") || !strings.HasSuffix(path, ".log") {
		t.Errorf("full output path %q is not TMPDIR/pi-<pid>-<random>/pi-bash-<hex>.log", path)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("full output folder %s: mode %v, %v; want 0700", dir, fi.Mode(), err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("full output: %v", err)
	}
	t.Cleanup(func() { os.Remove(path) })
	return b
}

func TestBashTruncation(t *testing.T) {
	t.Parallel()

	t.Run("by lines", func(t *testing.T) {
		t.Parallel()
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "seq 1 3000"}, nil)
		full := seqText(3000)
		d := bashDetailsOf(t, r)
		// 3000 lines and a trailing newline are 3001 pieces; the last 2000
		// pieces start at line 1002.
		want := strings.Join(strings.Split(full, "\n")[1001:], "\n") +
			"\n\n[Showing lines 1002-3001 of 3001. Full output: " + d.FullOutputPath + "]"
		if got := resultText(t, r); got != want || r.IsError {
			t.Errorf("text ends %q, want ending %q", tailOf(got, 120), tailOf(want, 120))
		}
		if d.Truncation["truncatedBy"] != "lines" || d.Truncation["totalLines"] != float64(3001) || d.Truncation["outputLines"] != float64(2000) {
			t.Errorf("truncation details = %v", d.Truncation)
		}
		if got := readFullOutput(t, d.FullOutputPath); string(got) != full {
			t.Errorf("full output file has %d bytes, want %d", len(got), len(full))
		}
	})

	t.Run("by bytes", func(t *testing.T) {
		t.Parallel()
		// 1000 lines of 100 characters: 101000 bytes, under the line limit.
		line := strings.Repeat("x", 96)
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": `for i in $(seq 1000 1999); do echo "${i}` + line + `"; done`}, nil)
		var lines []string
		for i := 1000; i <= 1999; i++ {
			lines = append(lines, strconv.Itoa(i)+line)
		}
		lines = append(lines, "")
		// Keep whole lines from the end while they fit in 50KB.
		kept, size := 0, 0
		for i := len(lines) - 1; i >= 0; i-- {
			add := len(lines[i])
			if kept > 0 {
				add++
			}
			if size+add > output.DefaultMaxBytes {
				break
			}
			size += add
			kept++
		}
		d := bashDetailsOf(t, r)
		start := len(lines) - kept + 1
		want := strings.Join(lines[len(lines)-kept:], "\n") +
			fmt.Sprintf("\n\n[Showing lines %d-%d of %d (50.0KB limit). Full output: %s]", start, len(lines), len(lines), d.FullOutputPath)
		if got := resultText(t, r); got != want {
			t.Errorf("text ends %q, want ending %q", tailOf(got, 120), tailOf(want, 120))
		}
		if d.Truncation["truncatedBy"] != "bytes" {
			t.Errorf("truncatedBy = %v", d.Truncation["truncatedBy"])
		}
		if got := readFullOutput(t, d.FullOutputPath); string(got) != strings.Join(lines, "\n") {
			t.Errorf("full output file differs (%d bytes)", len(got))
		}
	})

	for _, newline := range []bool{false, true} {
		t.Run(fmt.Sprintf("one 70KB line, trailing newline %v", newline), func(t *testing.T) {
			t.Parallel()
			cmd := "head -c 71680 /dev/zero | tr '\\0' a; printf b"
			lineNo, total := 1, 1
			if newline {
				cmd += "; echo"
				lineNo, total = 1, 2
			}
			r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": cmd}, nil)
			d := bashDetailsOf(t, r)
			got := resultText(t, r)
			shown := output.DefaultMaxBytes
			if newline {
				shown-- // the newline counts against the limit
			}
			body := strings.Repeat("a", shown-1) + "b"
			if newline {
				body += "\n"
			}
			want := body + fmt.Sprintf("\n\n[Showing last %s of line %d (line is 70.0KB). Full output: %s]", output.FormatSize(shown), lineNo, d.FullOutputPath)
			if got != want {
				t.Errorf("text = %q...%q, want %q...%q", got[:20], tailOf(got, 120), want[:20], tailOf(want, 120))
			}
			if d.Truncation["lastLinePartial"] != true || d.Truncation["totalLines"] != float64(total) {
				t.Errorf("truncation details = %v", d.Truncation)
			}
			if got := readFullOutput(t, d.FullOutputPath); len(got) != 71681+total-1 {
				t.Errorf("full output has %d bytes", len(got))
			}
		})
	}

	t.Run("raw bytes in the file, clean text for the model", func(t *testing.T) {
		t.Parallel()
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": `for i in $(seq 1 2500); do printf '\033[1m%d\033[0m\n' $i; done; exit 4`}, nil)
		d := bashDetailsOf(t, r)
		got := resultText(t, r)
		if !r.IsError || !strings.HasSuffix(got, "Full output: "+d.FullOutputPath+"]\n\nCommand exited with code 4") {
			t.Errorf("text ends %q", tailOf(got, 160))
		}
		if strings.ContainsRune(got, 0x1b) || !strings.HasPrefix(got, "502\n503\n") {
			t.Errorf("text starts %q", got[:20])
		}
		var raw strings.Builder
		for i := 1; i <= 2500; i++ {
			fmt.Fprintf(&raw, "\033[1m%d\033[0m\n", i)
		}
		if file := readFullOutput(t, d.FullOutputPath); string(file) != raw.String() {
			t.Errorf("full output file is not the raw output")
		}
	})

	t.Run("escapes over the limit do not leave a file", func(t *testing.T) {
		t.Parallel()
		// 60KB of colour codes around little text: the clean text fits.
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": `for i in $(seq 1 6000); do printf '\033[0m\033[0m'; done; echo done`}, nil)
		if got := resultText(t, r); got != "done\n" || r.Details != nil {
			t.Errorf("text %q, details %v", got, r.Details)
		}
	})
}

func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func TestBashPartialUpdates(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var updates []tool.Result
	update := func(r tool.Result) {
		mu.Lock()
		updates = append(updates, r)
		mu.Unlock()
	}
	r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.1; done"}, update)
	want := "line1\nline2\nline3\nline4\nline5\nline6\n"
	if got := resultText(t, r); got != want {
		t.Fatalf("final text %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updates) < 3 {
		t.Fatalf("got %d updates, want the empty start and several partial results", len(updates))
	}
	if len(updates[0].Content) != 0 {
		t.Errorf("first update should be empty, got %+v", updates[0].Content)
	}
	prev := ""
	for i, u := range updates[1:] {
		text := u.Text()
		if !strings.HasPrefix(want, text) || len(text) < len(prev) {
			t.Errorf("update %d = %q does not grow towards the final output", i+1, text)
		}
		prev = text
	}
	if prev != want {
		t.Errorf("last update = %q, want the whole output", prev)
	}
	if prev == updates[1].Text() {
		t.Errorf("all partial updates carry the same text: output was not streamed")
	}

	t.Run("throttled", func(t *testing.T) {
		t.Parallel()
		n := 0
		start := time.Now()
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "for i in $(seq 1 40); do seq 1 2000; sleep 0.005; done"}, func(tool.Result) { n++ })
		took := time.Since(start)
		if r.IsError {
			t.Fatalf("%s", r.Text())
		}
		if limit := int(took/bashUpdateEvery) + 3; n > limit {
			t.Errorf("%d updates in %v; want at most %d (one per %v)", n, took, limit, bashUpdateEvery)
		}
		d := bashDetailsOf(t, r)
		readFullOutput(t, d.FullOutputPath)
	})
}

// TestProcessesClose: closing the Processes of a bash definition ends what
// its calls left running, however they detached, and nothing else. Not
// parallel: Close takes orphans that dropped their tag only while no other
// owner's call runs.
func TestProcessesClose(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("marker-based process control is Linux only")
	}
	sl := proc.Sleeper(t)
	name := filepath.Base(sl)
	cmds := []string{
		sl + " 600 & echo one",
		"setsid " + sl + " 600 & echo two",
		"(setsid sh -c '" + sl + " 600 & true' &); echo three",
		"(env -i setsid " + sl + " 600 &); echo four",
	}
	procs := NewProcesses()
	defer procs.Close()
	for _, c := range cmds {
		r := bashCall(t, context.Background(), BashOptions{Processes: procs}, t.TempDir(), map[string]any{"command": c}, nil)
		if r.IsError {
			t.Fatalf("%q: %s", c, r.Text())
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(proc.Pids(name)) < len(cmds) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(proc.Pids(name)); n != len(cmds) {
		t.Fatalf("%d background sleepers running, want %d", n, len(cmds))
	}
	other := exec.Command(sl, "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	procs.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v", took)
	}
	if pids := proc.Pids(name); len(pids) != 1 || pids[0] != other.Process.Pid {
		t.Errorf("after Close: %v, want only the process bash did not start (%d)", pids, other.Process.Pid)
	}
	r := bashCall(t, context.Background(), BashOptions{Processes: procs}, t.TempDir(), map[string]any{"command": "echo ran"}, nil)
	if got := r.Text(); !r.IsError || !strings.Contains(got, "closing") || strings.Contains(got, "ran") {
		t.Errorf("a call after Close: %q (isError %v), want it refused", got, r.IsError)
	}
	_ = other.Process.Kill()
	if err := other.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the unrelated child was reaped by someone else: %v", err)
	}
}

// TestBashDoesNotStealOtherChildren checks that reaping bash's orphans never
// reaps a child that other code started and still waits for.
func TestBashDoesNotStealOtherChildren(t *testing.T) {
	t.Parallel()
	other := exec.Command("sh", "-c", "exit 5")
	other.Stdout = io.Discard
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // it is a zombie now
	for i := 0; i < 3; i++ {
		bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "(sleep 0.01 &); true", "timeout": 5}, nil)
	}
	err := other.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("other child's status = %v, want exit status 5", err)
	}
}

// benchPipeline prints PI_BENCH_BYTES bytes (default 30 MB) as lines of 100
// characters.
func benchPipeline(b *testing.B) (string, int64) {
	n := int64(30_000_000)
	if s := os.Getenv("PI_BENCH_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatalf("PI_BENCH_BYTES: %v", err)
		}
		n = v
	}
	return fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a | fold -w 100", n), n
}

// BenchmarkBashThroughput runs a command that prints a lot through the bash
// tool and, for comparison, the same pipeline into /dev/null. It reports the
// ratio of the two wall times and the peak RSS of the process.
//
//	PI_BENCH_BYTES=300000000 go test -run '^$' -bench BashThroughput -benchtime 3x ./tools/builtin/
func BenchmarkBashThroughput(b *testing.B) {
	pipeline, n := benchPipeline(b)
	opts := BashOptions{OutputDir: NewOutputDir(b.TempDir())}
	if os.Getenv("PI_BENCH_REDACT") == "1" {
		// The cost of redacting the full-output file.
		opts.Redactor = redact.New("sk-bench-0123456789abcdef")
	}
	if v := os.Getenv("PI_BENCH_SANDBOX"); v == "1" || v == "percall" {
		// The same under the default sandbox (docs/sandbox.md), through
		// its fork server (1) or in the per-call helper (percall).
		dir := b.TempDir()
		box := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{dir, "/tmp"}}
		opts.Sandbox = func() *sandbox.Policy { return box }
		opts.sandboxPerCall = v == "percall"
	}
	def := bashDefinition(opts)
	args, _ := json.Marshal(map[string]any{"command": pipeline})
	var toolTime, nullTime, toolCPU, toolChildCPU, nullCPU time.Duration
	usage := func(who int) time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(who, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cpu := func() time.Duration { return usage(syscall.RUSAGE_SELF) }
	// The shell and the pipeline are reaped by this process, so their CPU
	// lands in RUSAGE_CHILDREN.
	childCPU := func() time.Duration { return usage(syscall.RUSAGE_CHILDREN) }
	b.SetBytes(n)
	b.ResetTimer()
	var serverCPU time.Duration
	for i := 0; i < b.N; i++ {
		start, startCPU, startChild, startServer := time.Now(), cpu(), childCPU(), sandboxServerCPU()
		r, err := def.Execute(context.Background(), tool.NewCall("b", args, func(tool.Result) {}), tool.Context{Cwd: b.TempDir()})
		toolTime += time.Since(start)
		toolCPU += cpu() - startCPU
		toolChildCPU += childCPU() - startChild
		serverCPU += sandboxServerCPU() - startServer
		if err != nil || r.IsError {
			b.Fatalf("bash: %v %s", err, r.Text())
		}
		if d, ok := r.Details.(*bashDetails); ok && d.FullOutputPath != "" {
			os.Remove(d.FullOutputPath)
		}
		b.StopTimer()
		start, startChild = time.Now(), childCPU()
		if out, err := exec.Command("/bin/bash", "-c", pipeline+" > /dev/null").CombinedOutput(); err != nil {
			b.Fatalf("baseline: %v %s", err, out)
		}
		nullTime += time.Since(start)
		nullCPU += childCPU() - startChild
		b.StartTimer()
	}
	b.ReportMetric(float64(toolTime)/float64(nullTime), "x-devnull")
	b.ReportMetric(toolCPU.Seconds()/float64(b.N), "pi-CPU-s/op")
	// The CPU of pi and the pipeline against the pipeline's into /dev/null.
	// The fork server's CPU (not pi's child's, so not in RUSAGE_CHILDREN)
	// is counted too.
	b.ReportMetric(float64(toolCPU+toolChildCPU+serverCPU)/float64(nullCPU), "x-devnull-CPU")
	b.ReportMetric(serverCPU.Seconds()/float64(b.N), "server-CPU-s/op")
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}

// BenchmarkBashTrue is the fixed cost of one call: start the shell, run
// `true`, scan /proc for what the call left, reap.
func BenchmarkBashTrue(b *testing.B) {
	def := bashDefinition(BashOptions{})
	args := json.RawMessage(`{"command":"true"}`)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		r, err := def.Execute(context.Background(), tool.NewCall("b", args, nil), tool.Context{Cwd: dir})
		if err != nil || r.IsError {
			b.Fatalf("bash: %v %s", err, r.Text())
		}
	}
}

func TestBashTimeoutSparesOtherCalls(t *testing.T) {
	t.Parallel()
	sl := proc.Sleeper(t)
	name := filepath.Base(sl)
	r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "setsid " + sl + " 30 & " + sl + " 31 & echo left running"}, nil)
	if r.IsError {
		t.Fatalf("%s", r.Text())
	}
	before := proc.Pids(name)
	if len(before) != 2 {
		t.Fatalf("%d background processes, want 2", len(before))
	}
	other := proc.Sleeper(t)
	r = bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "setsid " + other + " 600 & " + other + " 600", "timeout": 0.5}, nil)
	if !strings.HasSuffix(r.Text(), "Command timed out after 0.5 seconds") {
		t.Fatalf("%s", r.Text())
	}
	assertGone(t, filepath.Base(other))
	if after := proc.Pids(name); len(after) != 2 {
		t.Errorf("another call's timeout killed this call's background processes: %v -> %v", before, after)
	}
}

func TestBashReapsExitedOrphans(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("subreaper is Linux only")
	}
	sl := proc.Sleeper(t)
	for _, c := range []string{"(setsid " + sl + " 0.2 &); true", "(" + sl + " 0.2 &); true"} {
		r := bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": c}, nil)
		if r.IsError {
			t.Fatalf("%s", r.Text())
		}
	}
	time.Sleep(600 * time.Millisecond) // both orphans have exited: zombies until reaped
	bashCall(t, context.Background(), BashOptions{}, t.TempDir(), map[string]any{"command": "true"}, nil)
	assertGone(t, filepath.Base(sl))
}

// TestBashLeavesNoGoroutines runs calls that end in every way and checks that
// none of the call's goroutines (reader, updater, waiter) outlives it. Not
// parallel, so that other tests' goroutines do not count.
func TestBashLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	sl := proc.Sleeper(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for _, c := range []struct {
		ctx  context.Context
		args map[string]any
	}{
		{context.Background(), map[string]any{"command": "seq 1 5000"}},
		{context.Background(), map[string]any{"command": sl + " 5 & echo held"}},
		{context.Background(), map[string]any{"command": sl + " 5", "timeout": 0.2}},
		{ctx, map[string]any{"command": sl + " 5"}},
	} {
		r := bashCall(t, c.ctx, BashOptions{}, t.TempDir(), c.args, func(tool.Result) {})
		if d, ok := r.Details.(*bashDetails); ok && d.FullOutputPath != "" {
			os.Remove(d.FullOutputPath)
		}
	}
}

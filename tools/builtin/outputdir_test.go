package builtin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
)

const outKey = "sk-full-output-KEY-0123456789"

// The folder is made on the first file only, is 0700, holds 0600 files and
// is gone after Close; two owners never touch each other's files.
func TestOutputDirLifecycle(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	a, b := NewOutputDir(parent), NewOutputDir(parent)
	if a.Path() != "" {
		t.Fatal("folder created before any file")
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("NewOutputDir created %v", ents)
	}
	fa, pa, err := a.create("pi-bash")
	if err != nil {
		t.Fatal(err)
	}
	fa.Close()
	fb, pb, err := b.create("pi-bash")
	if err != nil {
		t.Fatal(err)
	}
	fb.Close()
	if filepath.Dir(pa) == filepath.Dir(pb) {
		t.Fatal("two owners share one folder")
	}
	for _, p := range []string{pa, pb} {
		di, err := os.Stat(filepath.Dir(p))
		if err != nil || di.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), fmt.Sprintf("pi-%d-", os.Getpid())) {
			t.Fatalf("folder of %s: %v %v", p, di.Mode(), err)
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("file %s: %v %v", p, fi.Mode(), err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(pa)); !os.IsNotExist(err) {
		t.Fatalf("folder still there after Close: %v", err)
	}
	if _, err := os.Stat(pb); err != nil {
		t.Fatalf("closing one owner removed the other's file: %v", err)
	}
	if _, _, err := a.create("pi-bash"); err == nil {
		t.Fatal("a closed OutputDir made a file")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	b.Close()
}

// A file reaches its cap, stops, and ends with a line saying it was cut;
// output under the cap has no such line.
func TestFullOutputCap(t *testing.T) {
	t.Parallel()
	const capBytes = 100 << 10
	dir := NewOutputDir(t.TempDir())
	defer dir.Close()
	opts := BashOptions{OutputDir: dir, FullOutputMaxBytes: capBytes}
	r := bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": "seq 1 100000"}, nil)
	d := bashDetailsOf(t, r)
	got, err := os.ReadFile(d.FullOutputPath)
	if err != nil {
		t.Fatal(err)
	}
	full := seqText(100000)
	cutLine := fmt.Sprintf("\n[pi: full output cut at the %s cap; %d more bytes were not saved]\n", output.FormatSize(capBytes), len(full)-capBytes)
	if string(got) != full[:capBytes]+cutLine {
		t.Fatalf("capped file: %d bytes ending %q, want the first %d bytes then %q", len(got), got[max(0, len(got)-120):], capBytes, cutLine)
	}
	// The model-visible text is the usual tail with the file's path.
	if !strings.HasSuffix(r.Text(), "Full output: "+d.FullOutputPath+"]") || !strings.Contains(r.Text(), "100000\n") {
		t.Fatalf("result text: %q", r.Text()[max(0, len(r.Text())-200):])
	}
	r = bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": "seq 1 3000"}, nil)
	got, err = os.ReadFile(bashDetailsOf(t, r).FullOutputPath)
	if err != nil || string(got) != seqText(3000) {
		t.Fatalf("uncapped file: %d bytes, %v", len(got), err)
	}
}

// A real command that prints the key in a long output: the file has
// [REDACTED] where the key was.
func TestBashFullOutputRedacted(t *testing.T) {
	t.Parallel()
	dir := NewOutputDir(t.TempDir())
	defer dir.Close()
	opts := BashOptions{OutputDir: dir, Redactor: redact.New(outKey)}
	cmd := fmt.Sprintf(`for i in $(seq 1 4000); do printf '%%s %%s\n' $i %s; done`, outKey)
	r := bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": cmd}, nil)
	got, err := os.ReadFile(bashDetailsOf(t, r).FullOutputPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte(outKey)) || bytes.Count(got, []byte(redact.Mark)) != 4000 {
		t.Fatalf("file not redacted: %d marks", bytes.Count(got, []byte(redact.Mark)))
	}
	if !strings.HasPrefix(string(got), "1 [REDACTED]\n2 [REDACTED]\n") {
		t.Fatalf("file starts %q", got[:40])
	}
}

// After its OutputDir is closed (pi shutting down) bash still answers,
// saying the full output was not saved.
func TestBashAfterOutputDirClosed(t *testing.T) {
	t.Parallel()
	dir := NewOutputDir(t.TempDir())
	dir.Close()
	r := bashCall(t, context.Background(), BashOptions{OutputDir: dir}, t.TempDir(), map[string]any{"command": "seq 1 3000"}, nil)
	if r.IsError || !strings.Contains(r.Text(), "Full output: (not saved: "+errOutputDirClosed.Error()+")]") {
		t.Fatalf("result: %q", r.Text()[max(0, len(r.Text())-200):])
	}
}

// HideEnv removes variables from what commands and spawn hooks get; a hook
// may still set such a name itself.
func TestBashHideEnv(t *testing.T) {
	t.Setenv("PI_TEST_HIDDEN", "hidden-value-123456")
	t.Setenv("PI_TEST_SHOWN", "shown")
	var seen map[string]string
	opts := BashOptions{HideEnv: []string{"PI_TEST_HIDDEN"}}
	r := bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": `echo "h=${PI_TEST_HIDDEN-unset} s=$PI_TEST_SHOWN"`}, nil)
	if r.Text() != "h=unset s=shown\n" {
		t.Fatalf("output %q", r.Text())
	}
	opts.SpawnHooks = []tool.SpawnHook{{Name: "spy", Func: func(_ context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
		seen = s.Env
		env := map[string]string{}
		for k, v := range s.Env {
			env[k] = v
		}
		env["PI_TEST_HIDDEN"] = "set-by-hook"
		s.Env = env
		return s, nil
	}}}
	r = bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": `echo "h=${PI_TEST_HIDDEN-unset}"`}, nil)
	if _, ok := seen["PI_TEST_HIDDEN"]; ok || seen["PI_TEST_SHOWN"] != "shown" {
		t.Fatalf("the hook saw a hidden variable or missed a shown one")
	}
	if r.Text() != "h=set-by-hook\n" {
		t.Fatalf("output %q", r.Text())
	}
}

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/testkit/proc"
	"github.com/pi-go/pi/runtime/tool"
)

func runCommand(t *testing.T, ctx context.Context, opts BashOptions, command string, update func(string)) CommandResult {
	t.Helper()
	if opts.OutputDir == nil {
		opts.OutputDir = NewOutputDir("")
		t.Cleanup(func() { opts.OutputDir.Close() })
	}
	if opts.Processes == nil {
		opts.Processes = testProcesses
	}
	res, err := RunCommand(ctx, opts, t.TempDir(), command, update)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A person's command: exit codes as numbers, the output without notices,
// the hidden variables hidden, the prefix and spawn hooks applied, no
// default timeout.
func TestRunCommand(t *testing.T) {
	r := runCommand(t, context.Background(), BashOptions{}, "echo out; echo err >&2; exit 3", nil)
	if r.Output != "out\nerr\n" || r.ExitCode == nil || *r.ExitCode != 3 || r.Cancelled || r.Truncated {
		t.Fatalf("result %+v", r)
	}
	t.Setenv("PI_TEST_SECRET_VAR", "s3cr3t")
	spawned := false
	opts := BashOptions{
		HideEnv: []string{"PI_TEST_SECRET_VAR"}, CommandPrefix: "P=prefixed", DefaultTimeout: 0.01,
		SpawnHooks: []tool.SpawnHook{{Name: "h", Func: func(_ context.Context, s tool.BashSpawn) (tool.BashSpawn, error) {
			spawned = true
			return s, nil
		}}},
	}
	r = runCommand(t, context.Background(), opts, `sleep 0.1; echo "[$PI_TEST_SECRET_VAR] $P"`, nil)
	if r.Output != "[] prefixed\n" || *r.ExitCode != 0 || !spawned {
		t.Fatalf("result %+v (spawn hook ran: %v)", r, spawned)
	}
	r = runCommand(t, context.Background(), BashOptions{}, "kill -9 $$", nil)
	if r.ExitCode != nil {
		t.Fatalf("a command killed by a signal has exit code %d, want none", *r.ExitCode)
	}
}

// Long output: the tail, Truncated and the full output in a file.
func TestRunCommandTruncated(t *testing.T) {
	t.Parallel()
	r := runCommand(t, context.Background(), BashOptions{}, "seq 1 3000", nil)
	if !r.Truncated || r.FullOutputPath == "" || !strings.HasSuffix(r.Output, "\n3000\n") || strings.HasPrefix(r.Output, "1\n") {
		t.Fatalf("result %+v", r)
	}
	full, err := os.ReadFile(r.FullOutputPath)
	if err != nil || !strings.HasPrefix(string(full), "1\n2\n") {
		t.Fatalf("full output %q…, %v", string(full[:min(len(full), 20)]), err)
	}
}

// Cancelling ends the command and every process it started; the output so
// far streams to update first.
func TestRunCommandCancelled(t *testing.T) {
	t.Parallel()
	sl := proc.Sleeper(t)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	r := runCommand(t, ctx, BashOptions{}, "echo started; "+sl+" 60 & "+sl+" 60", func(out string) {
		if strings.Contains(out, "started") {
			once.Do(cancel)
		}
	})
	if !r.Cancelled || r.ExitCode != nil || r.Output != "started\n" {
		t.Fatalf("result %+v", r)
	}
	assertGone(t, filepath.Base(sl))
	if _, err := RunCommand(context.Background(), BashOptions{Processes: testProcesses}, "/does/not/exist", "true", nil); err == nil {
		t.Fatal("a missing working directory is not an error")
	}
}

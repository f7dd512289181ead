package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/fleet"
)

func needPIDNamespace(t *testing.T) {
	if err := sandbox.ProbePIDNamespace(); err != nil {
		t.Skip(err)
	}
}

// A run's command hunts through /proc for another run's processes and
// reads its files through their cwd: with each run in its own PID
// namespace it finds none; with the runs sharing the worker's (the
// control) it reads the other's file, so the test can fail.
func TestRunsDoNotSeeEachOthersProcesses(t *testing.T) {
	needPIDNamespace(t)
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "own", true: "shared"}[shared], func(t *testing.T) {
			e := newEnv(t)
			ctl := filepath.Join(e.dir, "ctl")
			os.MkdirAll(ctl, 0o777)
			// x blocks in its workspace; y looks at every process it can
			// see (cwd, environ, cmdline).
			e.writeScript(`m=$(head -c 40 a.txt | tr ' ' _); k=` + ctl + `/$m; if [ -e $k.block ]; then PI_TEST_MARK=$m sleep 300 & wait; fi; ` +
				`{ echo "procs: $(ls -d /proc/[0-9]* | wc -l)"; for p in /proc/[0-9]*; do cat $p/cwd/a.txt; tr '\0' '\n' < $p/environ | grep PI_TEST_MARK; tr '\0' ' ' < $p/cmdline | grep -o 'pi-fleet-[x]-[^/ ]*'; done; } > seen.txt 2>/dev/null; echo edited >> a.txt`)
			os.WriteFile(filepath.Join(ctl, "task_x.block"), nil, 0o600)
			f := open(t, fleet.Options{Store: e.store})
			drain, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan error, 1)
			o := e.workerOptions("w1", 2)
			o.SharedPIDs = shared
			go func() { done <- f.Work(drain, context.Background(), o) }()
			if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "x", Repo: e.repo("x"), Prompt: fleet.Strings{"edit"}}}); err != nil {
				t.Fatal(err)
			}
			sleeper := markedPID(t, "task_x")
			if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "y", Repo: e.repo("y"), Prompt: fleet.Strings{"edit"}}}); err != nil {
				t.Fatal(err)
			}
			s := waitAll(t, f, []string{"y"}, 60*time.Second)[0]
			if s.State != fleet.StateDone {
				t.Fatalf("%+v", s)
			}
			patch, _ := f.Object(context.Background(), s.Result.Patch)
			seen := string(patch)
			syscall.Kill(sleeper, syscall.SIGKILL)
			waitAll(t, f, []string{"x"}, 60*time.Second)
			stop()
			<-done
			leaked := strings.Contains(seen, "task x") || strings.Contains(seen, "PI_TEST_MARK=task_x") || strings.Contains(seen, "pi-fleet-x-")
			if !strings.Contains(seen, "+task y") {
				t.Fatalf("y did not see its own process's workspace:\n%s", seen)
			}
			if shared && !leaked {
				t.Fatalf("control: sharing the PID namespace, y should reach x's files through /proc:\n%s", seen)
			}
			if !shared && leaked {
				t.Fatalf("y reached x's processes through /proc:\n%s", seen)
			}
		})
	}
}

// A run's command leaves a process in a session of its own, then pi hangs
// (stopped) and the run is canceled: after the grace period the worker
// kills pi, and with it every process of the run. Sharing the worker's
// PID namespace (the control) the session's process survives.
func TestHungRunLeavesNoProcess(t *testing.T) {
	needPIDNamespace(t)
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "own", true: "shared"}[shared], func(t *testing.T) {
			e := newEnv(t)
			e.writeScript(`export PI_TEST_MARK=hung_$(head -c 40 a.txt | tr ' ' _); setsid sleep 300 & sleep 300; echo edited >> a.txt`)
			f := open(t, fleet.Options{Store: e.store})
			drain, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan error, 1)
			o := e.workerOptions("w1", 1)
			o.SharedPIDs, o.GracePeriod = shared, time.Second
			go func() { done <- f.Work(drain, context.Background(), o) }()
			if _, err := f.Submit(context.Background(), []fleet.Task{{ID: "h", Repo: e.repo("h"), Prompt: fleet.Strings{"edit"}}}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, 60*time.Second, "the run's two sleeps", func() bool { return len(markedPIDs("hung_task_h")) == 2 })
			// pi hangs: every pi process of the run is stopped.
			var pis []int
			for _, pid := range allPIDs() {
				b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
				if strings.Contains(string(b), "--session-dir\x00"+filepath.Join(e.dir, "work", "pi-fleet-h-")) {
					var n int
					for _, c := range pid {
						n = n*10 + int(c-'0')
					}
					pis = append(pis, n)
				}
			}
			if len(pis) == 0 {
				t.Fatal("no pi process of the run found")
			}
			for _, pid := range pis {
				syscall.Kill(pid, syscall.SIGSTOP)
			}
			t.Cleanup(func() {
				for _, pid := range append(pis, markedPIDs("hung_task_h")...) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			if _, err := f.Cancel(context.Background(), "h"); err != nil {
				t.Fatal(err)
			}
			s := waitAll(t, f, []string{"h"}, 30*time.Second)[0]
			if s.State != fleet.StateCanceled {
				t.Fatalf("%+v", s)
			}
			left := markedPIDs("hung_task_h")
			stop()
			<-done
			if shared && len(left) == 0 {
				t.Fatal("control: sharing the PID namespace, the session's sleep should outlive the hung run")
			}
			if !shared && len(left) != 0 {
				t.Fatalf("processes of the canceled run still there: %v", left)
			}
		})
	}
}

func allPIDs() []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for i, d := range dirs {
		dirs[i] = filepath.Base(d)
	}
	return dirs
}

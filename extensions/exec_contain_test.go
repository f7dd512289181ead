//go:build linux

package extensions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/cgroup"
	"github.com/pi-go/pi/internal/testkit/proc"
)

// TestSandboxExecContainsEscapes: an extension's exec that starts processes
// that leave its session, double-fork, scrub their environment, ignore
// SIGTERM or fork-bomb leaves nothing running, neither when its timeoutMs
// passes nor when it returns normally. That needs cgroups (each exec runs in
// a cgroup of its own); without them only the process group is killed.
func TestSandboxExecContainsEscapes(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil {
		t.Skipf("exec is contained whole only with cgroups: %v", err)
	}
	f := newSandbox(t, extensions.Limits{})
	escapes := func(h proc.Helper, log string) string {
		return fmt.Sprintf(": > %[3]s; "+
			"%[1]s %[2]s log:%[3]s fork fork setsid envclear ignoreterm sleep >/dev/null 2>&1 & "+
			"%[1]s %[2]s bomb:2 log:%[3]s ignoreterm sleep >/dev/null 2>&1 & "+
			"%[1]s %[2]s log:%[3]s fork setsid fork closefds sleep >/dev/null 2>&1 & "+
			`while [ "$(grep -c ' ready' %[3]s)" -lt 6 ]; do sleep 0.01; done; echo ready`,
			h.Path, h.Token, log)
	}
	t.Run("timeout", func(t *testing.T) {
		h := proc.Escape(t)
		log := filepath.Join(t.TempDir(), "log")
		r := f.call(t, "exec", map[string]any{"argv": []string{"sh", "-c", escapes(h, log) + "; sleep 60"}, "ms": 5000, "cwd": "out"})
		if !r.IsError || !strings.Contains(r.Text(), "context deadline exceeded") {
			t.Fatalf("result = %+v", r)
		}
		if n := proc.Lines(log, " ready"); n < 6 {
			t.Fatalf("only %d of 6 helpers got out before the deadline", n)
		}
		if left := proc.Alive(h.Token); len(left) > 0 {
			t.Errorf("left running after the exec's deadline: %v", left)
		}
	})
	t.Run("normal return", func(t *testing.T) {
		h := proc.Escape(t)
		log := filepath.Join(t.TempDir(), "log")
		start := time.Now()
		r := f.call(t, "exec", map[string]any{"argv": []string{"sh", "-c", escapes(h, log)}, "ms": 30000, "cwd": "out"})
		if r.IsError || !strings.Contains(r.Text(), `"stdout":"ready\n"`) {
			t.Fatalf("result = %+v", r)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("exec took %v", d)
		}
		if left := proc.Alive(h.Token); len(left) > 0 {
			t.Errorf("left running after the exec returned: %v", left)
		}
	})
	p, _ := cgroup.Detect()
	ents, _ := os.ReadDir(p.Dir())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), fmt.Sprintf("pi-%d-", os.Getpid())) {
			t.Errorf("cgroup %s left behind", e.Name())
		}
	}
}

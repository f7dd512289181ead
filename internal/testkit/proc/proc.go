// Package proc is what the process-control tests share: it builds the
// escape helper (./escape), a program that tries every way out of the
// process tree it was started in, and finds its processes in /proc. It is
// imported only by tests.
package proc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Helper is one test's copy of the escape helper.
type Helper struct {
	// Path is the binary, named Token, so that its processes are found by
	// their command name even as zombies (whose command line is gone).
	Path string
	// Token is the binary's name: 14 characters, within the 15 that
	// /proc/PID/stat keeps of a command name.
	Token string
}

// Escape builds the escape helper once per test binary (into
// $TMPDIR/pi-testkit-proc-UID) and returns a copy of it under a fresh name in
// the test's temporary folder. The processes of
// the copy are SIGKILLed when the test ends, whatever the test found.
func Escape(t testing.TB) Helper {
	t.Helper()
	buildOnce.Do(func() {
		// One folder per user, reused by every test binary: go build is
		// quick when nothing changed, and a new build replaces the binary
		// atomically (processes still running the old one keep it).
		dir := filepath.Join(os.TempDir(), "pi-testkit-proc-"+strconv.Itoa(os.Getuid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		tmp, err := os.CreateTemp(dir, "escape-*.tmp")
		if err != nil {
			buildErr = err
			return
		}
		tmp.Close()
		defer os.Remove(tmp.Name())
		cmd := exec.Command("go", "build", "-o", tmp.Name(), "github.com/pi-go/pi/internal/testkit/proc/escape")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build escape: %v\n%s", err, out)
			return
		}
		bin, err := os.ReadFile(tmp.Name())
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "escape")
		buildErr = atomicfile.WriteFile(buildPath, bin, 0o755)
	})
	if buildErr != nil {
		t.Fatalf("%v", buildErr)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	h := Helper{Token: "pe" + hex.EncodeToString(b[:])}
	h.Path = filepath.Join(t.TempDir(), h.Token)
	bin, err := os.ReadFile(buildPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.Path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range Find(h.Token) {
			_ = syscallKill(p.Pid)
		}
	})
	return h
}

// Proc is a process found in /proc.
type Proc struct {
	Pid, PPid, Pgid, Sid int
	Name                 string // the command name
	State                byte
	Cgroup               string // the cgroup v2 path ("0::" line)
}

func (p Proc) String() string {
	return fmt.Sprintf("pid %d (ppid %d, pgid %d, sid %d, state %c, cgroup %s)", p.Pid, p.PPid, p.Pgid, p.Sid, p.State, p.Cgroup)
}

// Find lists the processes, zombies included, whose command name is token.
func Find(token string) []Proc {
	ents, _ := os.ReadDir("/proc")
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok && p.Name == token {
			out = append(out, p)
		}
	}
	return out
}

// Pids lists the pids of Find(token).
func Pids(token string) []int {
	var out []int
	for _, p := range Find(token) {
		out = append(out, p.Pid)
	}
	return out
}

// Sleeper copies the sleep binary under a name unique to the test (also its
// command name), so that its processes are found by Find with that name,
// filepath.Base of the returned path. Processes of that name still running
// when the test ends are SIGKILLed.
func Sleeper(t testing.TB) string {
	t.Helper()
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("no sleep binary on PATH: %v", err)
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	name := "pis" + hex.EncodeToString(id[:])
	dst := filepath.Join(t.TempDir(), name)
	in, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, in, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range Pids(name) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return dst
}

// Alive is Find without zombies.
func Alive(token string) []Proc {
	var out []Proc
	for _, p := range Find(token) {
		if p.State != 'Z' && p.State != 'X' {
			out = append(out, p)
		}
	}
	return out
}

func stat(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, '(')
	if i < 0 || j < 0 || j > i {
		return Proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return Proc{}, false
	}
	p := Proc{Pid: pid, Name: string(b[j+1 : i]), State: f[0][0]}
	p.PPid, _ = strconv.Atoi(f[1])
	p.Pgid, _ = strconv.Atoi(f[2])
	p.Sid, _ = strconv.Atoi(f[3])
	if cg, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup"); err == nil {
		for _, line := range strings.Split(string(cg), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				p.Cgroup = rest
			}
		}
	}
	return p, true
}

// WaitLog waits until the helper's log file has at least n lines that
// contain want, or fails the test after timeout. It returns the log.
func WaitLog(t testing.TB, path, want string, n int, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), want) >= n {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the helper log %s has fewer than %d %q lines:\n%s", timeout, path, n, want, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Lines counts the lines of the log that contain want.
func Lines(path, want string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), want)
}

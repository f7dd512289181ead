//go:build linux

package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/plural"
)

// Parent is a cgroup v2 directory in which groups can be created.
type Parent struct {
	dir string // in the file system
	rel string // as /proc/PID/cgroup shows it
}

// Detect finds the cgroup v2 group of the calling process (the "0::PATH"
// line of /proc/self/cgroup, under a cgroup2 mount of
// /proc/self/mountinfo) and checks that it is a directory this process may
// write to. It does not create anything; the first Parent.New is the real
// test (mkdir), and a caller falls back when it fails. The error wraps
// ErrUnavailable and says why.
func Detect() (Parent, error) {
	rel, err := selfPath()
	if err != nil {
		return Parent{}, err
	}
	dir, err := mountedDir(rel)
	if err != nil {
		return Parent{}, err
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return Parent{}, fmt.Errorf("%w: %s is not writable (%v); run pi in a delegated cgroup (systemd-run --user --scope) or give it a writable cgroup2 mount", ErrUnavailable, dir, err)
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK); err != nil {
		return Parent{}, fmt.Errorf("%w: %s/cgroup.procs is not writable (%v)", ErrUnavailable, dir, err)
	}
	return Parent{dir: dir, rel: rel}, nil
}

// Dir is the parent's directory.
func (p Parent) Dir() string { return p.dir }

// New creates the group name in p (name must be one path element that does
// not exist yet).
func (p Parent) New(name string) (*Group, error) {
	if p.dir == "" {
		return nil, fmt.Errorf("%w: no parent group", ErrUnavailable)
	}
	return newGroup(p.dir, p.rel, name)
}

// Open is the existing group name in p.
func (p Parent) Open(name string) (*Group, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("cgroup name %q: want one path element", name)
	}
	dir := filepath.Join(p.dir, name)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	return &Group{dir: dir, rel: path.Join(p.rel, name)}, nil
}

// Children lists the names of p's child groups.
func (p Parent) Children() ([]string, error) {
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("list cgroup %s: %w", p.dir, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// selfPath is this process's cgroup v2 path, from /proc/self/cgroup.
func selfPath() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("%w: read /proc/self/cgroup: %v", ErrUnavailable, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			if strings.HasSuffix(rest, " (deleted)") {
				return "", fmt.Errorf("%w: this process's cgroup %s was deleted", ErrUnavailable, strings.TrimSuffix(rest, " (deleted)"))
			}
			return rest, nil
		}
	}
	return "", fmt.Errorf("%w: /proc/self/cgroup has no cgroup v2 entry (cgroup v1 only)", ErrUnavailable)
}

// mountedDir finds rel (a cgroup v2 path) under a cgroup2 mount.
func mountedDir(rel string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("%w: read /proc/self/mountinfo: %v", ErrUnavailable, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	found := false
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 1 || qf[0] != "cgroup2" {
			continue
		}
		found = true
		root, point := unescapeMount(pf[3]), unescapeMount(pf[4])
		sub, ok := underRoot(rel, root)
		if !ok {
			continue
		}
		dir := filepath.Join(point, sub)
		if fi, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil && fi.Mode().IsRegular() {
			return dir, nil
		}
	}
	if !found {
		return "", fmt.Errorf("%w: no cgroup2 file system is mounted", ErrUnavailable)
	}
	return "", fmt.Errorf("%w: this process's cgroup %s is not visible under any cgroup2 mount", ErrUnavailable, rel)
}

// underRoot is rel relative to a mount's root, when rel is at or below it.
func underRoot(rel, root string) (string, bool) {
	if root == "/" {
		return rel, true
	}
	if rel == root {
		return "/", true
	}
	if s, ok := strings.CutPrefix(rel, root+"/"); ok {
		return "/" + s, true
	}
	return "", false
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Group is one cgroup v2 group: a directory. It holds no open file.
type Group struct {
	dir string // in the file system
	rel string // as /proc/PID/cgroup shows it
}

// newGroup makes the directory name in parent.
func newGroup(parent, parentRel, name string) (*Group, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("cgroup name %q: want one path element", name)
	}
	dir := filepath.Join(parent, name)
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	return &Group{dir: dir, rel: path.Join(parentRel, name)}, nil
}

// Dir is the group's directory.
func (g *Group) Dir() string { return g.dir }

// New creates the child group name in g.
func (g *Group) New(name string) (*Group, error) { return newGroup(g.dir, g.rel, name) }

// Holds reports whether process pid is (or, for a zombie, was when it
// died) in g or one of its child groups, from /proc/PID/cgroup, also after
// the group was removed. False when the process is gone.
func (g *Group) Holds(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			rest = strings.TrimSuffix(rest, " (deleted)")
			return rest == g.rel || strings.HasPrefix(rest, strings.TrimSuffix(g.rel, "/")+"/")
		}
	}
	return false
}

// Attach sets attr so that the process started with it begins its life in
// g (clone3 with CLONE_INTO_CGROUP). Call release once the process was
// started (or failed to start): it closes the group's directory descriptor.
func (g *Group) Attach(attr *syscall.SysProcAttr) (release func(), err error) {
	fd, err := unix.Open(g.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return func() {}, fmt.Errorf("open cgroup %s: %w", g.dir, err)
	}
	attr.UseCgroupFD = true
	attr.CgroupFD = fd
	return func() { unix.Close(fd) }, nil
}

// OpenDir opens g's directory, for a process that starts another in g
// with clone3 (CLONE_INTO_CGROUP) itself (the sandbox's fork server, which
// pi sends it to).
func (g *Group) OpenDir() (*os.File, error) {
	f, err := os.OpenFile(g.dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open cgroup %s: %w", g.dir, err)
	}
	return f, nil
}

// StartErrorIsCgroup reports whether err, from starting a process attached
// to a group, may come from the cgroup part (clone3 missing or filtered,
// no permission to move into the group, a group that cannot take
// processes) rather than from the program: the caller then retries without
// a group. ENOENT is among them: clone3 gives it when the group or the
// caller's own is outside the cgroup namespace's root (seen once in CI with
// four test binaries at once); a program that is really missing fails the
// retry the same way.
func StartErrorIsCgroup(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case unix.ENOSYS, unix.EPERM, unix.EACCES, unix.EBUSY, unix.EOPNOTSUPP, unix.EINVAL, unix.ENODEV, unix.EBADF, unix.ENOENT:
		return true
	}
	return false
}

// Pids lists the processes of g and of its child groups (a snapshot: they
// may exit or fork at once). Zombies are not listed.
func (g *Group) Pids() ([]int, error) {
	var out []int
	err := g.walk(func(dir string) error {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return err
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil && pid > 0 {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out, err
}

// walk calls fn for g's directory and every child group's, children first.
func (g *Group) walk(fn func(dir string) error) error {
	var rec func(dir string, depth int) error
	rec = func(dir string, depth int) error {
		if depth > 64 {
			return fmt.Errorf("cgroup %s: nested too deep", dir)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		var first error
		for _, e := range ents {
			if e.IsDir() {
				if err := rec(filepath.Join(dir, e.Name()), depth+1); err != nil && first == nil && !errors.Is(err, os.ErrNotExist) {
					first = err
				}
			}
		}
		if err := fn(dir); err != nil && first == nil {
			first = err
		}
		return first
	}
	return rec(g.dir, 0)
}

// Populated reports whether a live process is in g or a child group (the
// "populated" key of cgroup.events).
func (g *Group) Populated() (bool, error) {
	// cgroup.events is two short lines: one read into a stack buffer, no
	// File (this runs after every bash call).
	name := filepath.Join(g.dir, "cgroup.events")
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("read cgroup events: %w", &os.PathError{Op: "open", Path: name, Err: err})
	}
	var buf [256]byte
	n, err := unix.Read(fd, buf[:])
	for err == unix.EINTR {
		n, err = unix.Read(fd, buf[:])
	}
	unix.Close(fd)
	if err != nil {
		return false, fmt.Errorf("read cgroup events: %w", &os.PathError{Op: "read", Path: name, Err: err})
	}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) == "1", nil
		}
	}
	return false, fmt.Errorf("read cgroup events: no populated key in %s/cgroup.events", g.dir)
}

// Signal sends sig to every process Pids lists and returns how many there
// were. It is not atomic: a process forked meanwhile may be missed (Kill is
// atomic).
func (g *Group) Signal(sig syscall.Signal) (int, error) {
	pids, err := g.Pids()
	for _, pid := range pids {
		_ = unix.Kill(pid, sig)
	}
	return len(pids), err
}

// Kill sends SIGKILL to every process of g and its child groups. With
// cgroup.kill (Linux 5.14) this is one atomic step that a forking process
// cannot outrun; else the group is frozen, every listed process is killed
// until none is listed, and the group is thawed. It does not wait for the
// processes to be gone (see WaitEmpty).
func (g *Group) Kill() error {
	err := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0)
	if err == nil {
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("kill cgroup %s: %w", g.dir, err)
	}
	return g.killEach(5 * time.Second)
}

// killEach is Kill without cgroup.kill: freeze (when cgroup.freeze exists),
// SIGKILL each listed process until none is listed or limit passes, thaw.
// A frozen process cannot fork, and SIGKILL still ends it.
func (g *Group) killEach(limit time.Duration) error {
	freeze := filepath.Join(g.dir, "cgroup.freeze")
	frozen := os.WriteFile(freeze, []byte("1"), 0) == nil
	if frozen {
		defer os.WriteFile(freeze, []byte("0"), 0)
	}
	deadline := time.Now().Add(limit)
	wait := 200 * time.Microsecond
	for {
		n, err := g.Signal(unix.SIGKILL)
		if err != nil {
			return fmt.Errorf("kill cgroup %s: %w", g.dir, err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kill cgroup %s: %s still listed after %v", g.dir, plural.Count(n, "process"), limit)
		}
		time.Sleep(wait)
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// WaitEmpty waits until no live process is in g or its child groups, or
// until timeout has passed (then it returns an error). It wakes on the
// kernel's notification of cgroup.events changes (inotify), with a polling
// backstop.
func (g *Group) WaitEmpty(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err == nil {
		defer unix.Close(ifd)
		if _, err := unix.InotifyAddWatch(ifd, filepath.Join(g.dir, "cgroup.events"), unix.IN_MODIFY); err != nil {
			unix.Close(ifd)
			ifd = -1
		}
	} else {
		ifd = -1
	}
	var buf [4096]byte
	for {
		pop, err := g.Populated()
		if err != nil {
			return err
		}
		if !pop {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("cgroup %s: processes still running after %v", g.dir, timeout)
		}
		step := min(left, 20*time.Millisecond)
		if ifd < 0 {
			time.Sleep(min(step, 2*time.Millisecond))
			continue
		}
		fds := []unix.PollFd{{Fd: int32(ifd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, int(step/time.Millisecond)+1); n > 0 {
			for {
				if m, err := unix.Read(ifd, buf[:]); m <= 0 || err != nil {
					break
				}
			}
		}
	}
}

// Remove deletes g and its child groups, deepest first. It fails (EBUSY)
// while a live process is in one of them: Kill and WaitEmpty first. A group
// already gone is not an error.
func (g *Group) Remove() error {
	// A group without child groups (every call's, nearly always) goes
	// in one step, without listing its directory.
	if err := unix.Rmdir(g.dir); err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	err := g.walk(func(dir string) error {
		if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// ExitHelperFailed is the helper's exit code when it could not set the
// sandbox up (its reason on stderr, where the command's output goes); the
// command did not run.
const ExitHelperFailed = 126

func init() {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		os.Exit(helperMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == ServerArg {
		os.Exit(serverMain(os.Args[2:]))
	}
}

// SysProcAttr is how the helper must be started for p (nil when p is not
// Active): in new user and mount namespaces, plus a network namespace with
// the network off, keeping across its exec the capabilities it needs in
// them (to map its user, mount and bring lo up) as ambient capabilities,
// which it drops before it execs the command. The caller may add a
// session and a cgroup.
func SysProcAttr(p Policy) *syscall.SysProcAttr {
	if !p.Active() {
		return nil
	}
	f := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS)
	if p.Network != NetworkOn {
		f |= unix.CLONE_NEWNET
	}
	return &syscall.SysProcAttr{Cloneflags: f,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_NET_ADMIN}}
}

// helperMain is the helper: POLICY-JSON -- ARGV....
func helperMain(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "pi sandbox: usage: "+HelperArg+" POLICY -- COMMAND...")
		return ExitHelperFailed
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "pi sandbox: policy: %v\n", err)
		return ExitHelperFailed
	}
	argv := args[2:]
	if err := enter(p); err != nil {
		fmt.Fprintf(os.Stderr, "pi sandbox: %v\n", err)
		return ExitHelperFailed
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "pi sandbox: drop capabilities: %v\n", err)
		return ExitHelperFailed
	}
	env := append(os.Environ(), p.Restore...)
	if p.Network == NetworkAllow {
		return forward(p.Proxy, argv, env)
	}
	err := syscall.Exec(argv[0], argv, env)
	fmt.Fprintf(os.Stderr, "pi sandbox: exec %s: %v\n", argv[0], err)
	return ExitHelperFailed
}

// enter applies p to the helper itself, which runs as the first process
// of new user and mount namespaces (CloneFlags).
func enter(p Policy) error {
	if err := p.Check(); err != nil {
		return err
	}
	if err := mapUser(p.UID, p.GID); err != nil {
		return err
	}
	if p.Network != NetworkOn {
		if err := loopbackUp(); err != nil {
			return err
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	for _, dir := range p.Private {
		if err := private(dir, p.Writable); err != nil {
			return err
		}
	}
	if p.Network != NetworkOn {
		for _, dir := range p.Hide {
			if err := hide(dir); err != nil {
				return err
			}
		}
	}
	if p.Mode == ModeFull {
		return nil
	}
	for _, dir := range pinned(p) {
		if err := pin(dir); err != nil {
			return err
		}
	}
	for _, path := range p.Protected {
		if err := bindReadOnly(path); err != nil {
			return err
		}
	}
	// The working directory was entered before the mounts; enter it again
	// so relative paths go through them.
	if wd, err := os.Getwd(); err == nil {
		_ = unix.Chdir(wd)
	}
	return restrictFS(p)
}

// mapUser maps uid and gid (the user outside) to themselves: a user
// namespace's first process may map its own ids.
func mapUser(uid, gid int) error {
	if err := os.WriteFile("/proc/self/setgroups", []byte("deny"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("user namespace setgroups: %w", err)
	}
	if err := os.WriteFile("/proc/self/uid_map", []byte(strconv.Itoa(uid)+" "+strconv.Itoa(uid)+" 1"), 0); err != nil {
		return fmt.Errorf("user namespace uid_map: %w", err)
	}
	if err := os.WriteFile("/proc/self/gid_map", []byte(strconv.Itoa(gid)+" "+strconv.Itoa(gid)+" 1"), 0); err != nil {
		return fmt.Errorf("user namespace gid_map: %w", err)
	}
	return nil
}

// loopbackUp brings lo up in the new network namespace, so a command can
// still talk to itself on 127.0.0.1 (never to the host's loopback).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// hide covers dir (a missing one is skipped) with an empty read-only
// tmpfs: the sockets in it are out of reach.
func hide(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	if err := unix.Mount("pi-sandbox", dir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"); err != nil {
		return fmt.Errorf("hide %s: %w", dir, err)
	}
	return nil
}

// private covers dir with an empty file system, then binds the writable
// roots inside it back in place (opened before dir is covered), then makes
// the cover read-only: what else was in dir cannot be seen or reached. A
// file is covered with an empty one.
func private(dir string, writable []string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		// A file (a credentials file): /dev/null over it, read-only.
		if err := unix.Mount("/dev/null", dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
		return nil
	}
	type kept struct {
		rel string
		fd  int
	}
	var keep []kept
	defer func() {
		for _, k := range keep {
			unix.Close(k.fd)
		}
	}()
	for _, w := range writable {
		if w == dir || !Within(w, dir) {
			continue
		}
		fd, err := unix.Open(w, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a root that does not exist has nothing to keep
		}
		rel, _ := filepath.Rel(dir, w)
		keep = append(keep, kept{rel, fd})
	}
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("pi-sandbox", dir, "tmpfs", flags, "size=64k,mode=0755"); err != nil {
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	for _, k := range keep {
		at := filepath.Join(dir, k.rel)
		if err := os.MkdirAll(at, 0o755); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", k.fd), at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("make %s private: keep %s: %w", dir, at, err)
		}
	}
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("make %s private: %w", dir, err)
	}
	return nil
}

// pinned are the folders that must not be renamed or removed, or a
// protected path could be moved away with them and made again unprotected:
// every folder between a protected path and a writable root above it
// (the project itself when /tmp is writable too), outermost first.
func pinned(p Policy) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, path := range p.Protected {
		for _, w := range p.Writable {
			if !Within(path, w) {
				continue
			}
			for d := filepath.Dir(path); d != w && Within(d, w); d = filepath.Dir(d) {
				if !seen[d] {
					seen[d] = true
					dirs = append(dirs, d)
				}
			}
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) < len(dirs[j]) })
	return dirs
}

// pin bind-mounts dir over itself: a mount point cannot be renamed or
// removed (EBUSY). A missing folder is skipped.
func pin(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("pin %s: %w", dir, err)
	}
	return nil
}

// bindReadOnly bind-mounts path read-only over itself (a missing path is
// skipped). The remount keeps the flags the kernel locks in a user
// namespace (nosuid, nodev, noexec, atime).
func bindReadOnly(path string) error {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("protect %s: bind: %w", path, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("protect %s: %w", path, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for _, f := range [][2]uintptr{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f[0] != 0 {
			flags |= f[1]
		}
	}
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("protect %s: read-only: %w", path, err)
	}
	return nil
}

// devices are the files every command may write (and use terminal ioctls
// on) whatever the mode.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrictFS applies Landlock: read and execute everywhere, write only
// under the writable roots (none in ModeReadOnly) and the devices; no
// signal to a process outside the sandbox, no abstract Unix socket of one
// (from ABI 6). Best
// effort across ABI versions, but never nothing: a kernel without Landlock
// is an error.
func restrictFS(p Policy) error {
	if _, err := landlockABI(); err != nil {
		return err
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts", "/dev/shm").WithIoctlDev().IgnoreIfMissing(),
	}
	if p.Mode == ModeWorkspaceWrite {
		var dirs []string
		for _, d := range p.Writable {
			if real, err := filepath.EvalSymlinks(d); err == nil {
				dirs = append(dirs, real)
			}
		}
		if len(dirs) > 0 {
			rules = append(rules, landlock.RWDirs(dirs...).WithRefer().IgnoreIfMissing())
		}
	}
	// The file system, and (ABI 6) signals to and abstract Unix sockets of
	// processes outside the sandbox; not TCP: the network is the network
	// namespace's business.
	cfg := landlock.V7
	cfg.HandledAccessNet = 0
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

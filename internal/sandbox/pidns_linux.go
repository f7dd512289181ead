//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// InitEnv, set to InitValue(), tells a pi started with NamespaceInitAttr
// that it is the init of its own PID namespace (namespaceInit), and which
// user and group to map. It is honoured only when the process really is
// PID 1; otherwise it is dropped.
const InitEnv = "PI_PID_NAMESPACE_INIT"

// initGrace is how long the namespace's init waits, once it passed pi a
// stop signal, before it ends the namespace (and pi with it): a worker
// that died cannot kill a hung pi itself.
const initGrace = 10 * time.Second

func init() {
	if os.Getenv(InitEnv) == "" {
		return
	}
	if os.Getpid() == 1 {
		os.Exit(namespaceInit())
	}
	os.Unsetenv(InitEnv)
}

// NamespaceInitAttr is how a process must be started to be the init of new
// user, PID and mount namespaces, with InitEnv=InitValue() in its
// environment: the capabilities it needs in the new user namespace (to map
// its user and group to themselves, as the sandbox's helper does, and to
// mount its own /proc) kept across the exec as ambient ones; the init
// drops them before pi runs. The init maps itself: pi is not dumpable, so
// its /proc files are root's and it could not write a child's maps. The
// caller may add a process group and a parent-death signal.
func NamespaceInitAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID},
	}
}

// InitValue is InitEnv's value: the user and group to map.
func InitValue() string { return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()) }

// ProbePIDNamespace starts `true` the way NamespaceInitAttr starts pi, and
// says why it cannot be done when it cannot.
func ProbePIDNamespace() error {
	bin := "/bin/true"
	if _, err := os.Stat(bin); err != nil {
		if p, err := exec.LookPath("true"); err == nil {
			bin = p
		}
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = NamespaceInitAttr()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("user and PID namespaces are not available (%v): check kernel.unprivileged_userns_clone, user.max_user_namespaces and AppArmor's restrict_unprivileged_userns", err)
	}
	return nil
}

// namespaceInit is PID 1 of a namespace made by NamespaceInitAttr: it makes
// its mount tree private, mounts a fresh /proc (only this namespace's
// processes are in it), drops its capabilities for the child, starts the
// same command again as pi proper, forwards signals to it, reaps every
// orphan, and exits with pi's status: the kernel then kills whatever is
// left in the namespace.
func namespaceInit() int {
	ids := os.Getenv(InitEnv)
	os.Unsetenv(InitEnv)
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "pi: namespace init: "+format+"\n", args...)
		return ExitHelperFailed
	}
	var uid, gid int
	if _, err := fmt.Sscanf(ids, "%d:%d", &uid, &gid); err != nil {
		return fail("%s=%q: want UID:GID", InitEnv, ids)
	}
	if err := mapUser(uid, gid); err != nil {
		return fail("%v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("make mounts private: %v", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fail("mount /proc: %v", err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	// Nothing of the run may use the init's capabilities (to unmount
	// this /proc, say): it drops them, on every thread (as the fork
	// server does), and is not dumpable (no ptrace by the run's
	// commands). The bounding set stays: a worker running as root runs pi
	// as root of this namespace, which its sandbox needs (mapping root in
	// a nested user namespace takes CAP_SETFCAP here); as any other user
	// pi has no capability.
	if err := dropCapabilities(true); err != nil {
		return fail("drop capabilities: %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail("not dumpable: %v", err)
	}
	pid, err := syscall.ForkExec(exe, os.Args, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return fail("start pi: %v", err)
	}
	go func() {
		var timer *time.Timer
		for s := range sigs {
			_ = syscall.Kill(pid, s.(syscall.Signal))
			if timer == nil {
				timer = time.AfterFunc(initGrace, func() { os.Exit(128 + int(syscall.SIGKILL)) })
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail("wait: %v", err)
		}
		if wpid != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

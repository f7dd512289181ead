//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// InitEnv, set to 1, tells a pi started with NamespaceInitAttr that it is
// the init of its own PID namespace (NamespaceInit). It is honoured only
// when the process really is PID 1; otherwise it is dropped.
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
// user, PID and mount namespaces: the user and group mapped to themselves,
// CAP_SYS_ADMIN in the new user namespace kept across the exec (ambient)
// so it can mount its own /proc; the init drops it before pi runs. The
// caller may add a process group and a parent-death signal.
func NamespaceInitAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
	}
}

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
	os.Unsetenv(InitEnv)
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "pi: namespace init: "+format+"\n", args...)
		return ExitHelperFailed
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
	// Capabilities are per thread: the child is forked from this one,
	// with no ambient capabilities, so its exec leaves it none.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail("drop capabilities: %v", err)
	}
	pid, err := syscall.ForkExec(exe, os.Args, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return fail("start pi: %v", err)
	}
	runtime.UnlockOSThread()
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

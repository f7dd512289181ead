//go:build linux

package sandbox

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The fork server's own fork and exec. The command must be pi's child
// (CLONE_PARENT) and born in its call's cgroup (CLONE_INTO_CGROUP); the
// kernel takes both from clone3 only with an exit signal of 0 (the child's
// is then the server's own, SIGCHLD), and syscall.ForkExec always asks
// for SIGCHLD. So the server forks by itself, from its call thread with
// every signal blocked, after which the child runs only the raw system
// calls of childExec — nosplit and norace, on memory prepared before the
// fork: no allocation, no stack growth, no lock, no Go runtime — and
// execs, or says why not on its standard error (the command's output) and
// exits with ExitHelperFailed, as the per-call helper does. On amd64 and
// arm64 the child shares the server's memory and runs on the call
// thread's stack, which waits meanwhile (CLONE_VM|CLONE_VFORK, as
// syscall.ForkExec does; clone3Vfork keeps the return address out of the
// child's reach): the server answers once the child has exec'd or exited.
// Elsewhere it is a plain fork, and the server waits for the same on a
// close-on-exec pipe. Answering at once, while the child still runs,
// measured slower on a busy machine (pi then competes with the child's
// start for the CPU).

// cloneArgs is struct clone_args (linux/sched.h) up to its cgroup field.
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls, setTID, setTIDSize, cgroup uint64
}

// childSpec is what the child needs, as addresses of memory the parent
// keeps alive across the fork.
type childSpec struct {
	argv0, argv, envv, dir uintptr
	files                  [3]uintptr
	setsid                 bool
	layer                  uintptr // the call's Landlock ruleset
	nofile                 uintptr // *unix.Rlimit, 0: leave the limit
	msg                    uintptr // "pi sandbox: start ARGV0: errno " (the failure's line, its number added)
	msgLen                 uintptr
}

// forkExec starts argv with env in dir (none: the server's), files as its
// standard input, output and error, in a new session when setsid, as pi's
// child, in the cgroup whose directory cgroupFD is open (-1: the
// server's), under a new Landlock layer, the ruleset layer, with nofile
// (nil: the server's) as its open files limit.
//
// # Errors
//
// clone3's error. The child's (a missing program or folder) is its exit
// status ExitHelperFailed, with the reason on its standard error.
func forkExec(argv, env []string, dir string, files [3]int, setsid bool, cgroupFD, layer int, nofile *unix.Rlimit) (int, error) {
	argv0p, err := syscall.BytePtrFromString(argv[0])
	if err != nil {
		return 0, err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return 0, err
	}
	envvp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return 0, err
	}
	var dirp *byte
	if dir != "" {
		if dirp, err = syscall.BytePtrFromString(dir); err != nil {
			return 0, err
		}
	}
	var pipe [2]int
	if shareMemory == 0 {
		if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
			return 0, err
		}
	}
	msg := []byte("pi sandbox: start " + argv[0] + ": errno ")
	c := childSpec{argv0: uintptr(unsafe.Pointer(argv0p)), argv: uintptr(unsafe.Pointer(&argvp[0])),
		envv: uintptr(unsafe.Pointer(&envvp[0])), dir: uintptr(unsafe.Pointer(dirp)), setsid: setsid, layer: uintptr(layer),
		msg: uintptr(unsafe.Pointer(&msg[0])), msgLen: uintptr(len(msg))}
	for i, f := range files {
		c.files[i] = uintptr(f)
	}
	if nofile != nil {
		c.nofile = uintptr(unsafe.Pointer(nofile))
	}
	args := cloneArgs{flags: unix.CLONE_PARENT | shareMemory}
	if cgroupFD >= 0 {
		args.flags |= unix.CLONE_INTO_CGROUP
		args.cgroup = uint64(cgroupFD)
	}
	// Every signal blocked around the fork: the child, on this thread's
	// stack, must run no handler.
	var all, was unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^all.Val[i]
	}
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &all, &was); err != nil {
		return 0, err
	}
	syscall.ForkLock.Lock()
	pid, errno := cloneExec(&args, unsafe.Sizeof(args), &c)
	syscall.ForkLock.Unlock()
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &was, nil)
	runtime.KeepAlive(argv0p)
	runtime.KeepAlive(argvp)
	runtime.KeepAlive(envvp)
	runtime.KeepAlive(dirp)
	runtime.KeepAlive(nofile)
	runtime.KeepAlive(msg)
	if shareMemory == 0 {
		unix.Close(pipe[1])
		defer unix.Close(pipe[0])
	}
	if errno != 0 {
		return 0, errno
	}
	if shareMemory == 0 {
		var b [1]byte
		for {
			if _, err := unix.Read(pipe[0], b[:]); err != unix.EINTR {
				break
			}
		}
	}
	return int(pid), nil
}

// cloneExec forks; the child never returns from it. With shareMemory the
// child runs on this frame's stack until it execs: the parent, which
// waits meanwhile, uses nothing of this frame after the fork but the
// results clone3Vfork writes once it runs again.
//
//go:noinline
//go:nosplit
//go:norace
func cloneExec(args *cloneArgs, size uintptr, c *childSpec) (uintptr, syscall.Errno) {
	pid, errno := clone3Vfork(uintptr(unsafe.Pointer(args)), size)
	if errno != 0 || pid != 0 {
		return pid, syscall.Errno(errno)
	}
	childExec(c)
	return 0, 0
}

// childExec is the child: raw system calls only, then exec (or its errno
// to the pipe, and exit).
//
//go:nosplit
//go:norace
func childExec(c *childSpec) {
	var errno syscall.Errno
	var mask uint64
	var e uintptr
	var digits [21]byte
	var n int
	if _, _, errno = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, c.layer, 0, 0); errno != 0 {
		goto fail
	}
	if c.setsid {
		if _, _, errno = syscall.RawSyscall(unix.SYS_SETSID, 0, 0, 0); errno != 0 {
			goto fail
		}
	}
	if _, _, errno = syscall.RawSyscall(unix.SYS_DUP3, c.files[0], 0, 0); errno != 0 {
		goto fail
	}
	if _, _, errno = syscall.RawSyscall(unix.SYS_DUP3, c.files[1], 1, 0); errno != 0 {
		goto fail
	}
	if _, _, errno = syscall.RawSyscall(unix.SYS_DUP3, c.files[2], 2, 0); errno != 0 {
		goto fail
	}
	if c.dir != 0 {
		if _, _, errno = syscall.RawSyscall(unix.SYS_CHDIR, c.dir, 0, 0); errno != 0 {
			goto fail
		}
	}
	if c.nofile != 0 {
		syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, c.nofile, 0, 0, 0)
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
	_, _, errno = syscall.RawSyscall(unix.SYS_EXECVE, c.argv0, c.argv, c.envv)
fail:
	// "pi sandbox: start ARGV0: errno N\n" on the command's stderr (2, or
	// the server's /dev/null before the files were set up).
	e = uintptr(errno)
	n = len(digits)
	digits[n-1] = '\n'
	n--
	for {
		n--
		digits[n] = byte('0' + e%10)
		e /= 10
		if e == 0 || n == 0 {
			break
		}
	}
	syscall.RawSyscall(unix.SYS_WRITE, 2, c.msg, c.msgLen)
	syscall.RawSyscall(unix.SYS_WRITE, 2, uintptr(unsafe.Pointer(&digits[n])), uintptr(len(digits)-n))
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, ExitHelperFailed, 0, 0)
	}
}

//go:build linux

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"syscall"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// The fork server: the helper started once per policy (ServerArg instead
// of HelperArg), which applies the policy to itself as the per-call helper
// does (user, mount and network namespaces, the read-only binds, Landlock)
// and then, instead of exec'ing one command, forks and execs the commands
// pi sends it over a socket pair. What it does to stay no way out:
//
//   - only pi can talk to it: the socket is one end of a socketpair pi
//     made, inherited as fd 3 (made close-on-exec at once), with no path;
//     every file it receives is received close-on-exec;
//   - it runs under the same namespaces and Landlock domain as its
//     commands, with every capability dropped (bounding, ambient,
//     permitted, effective, inheritable, on every thread) and no_new_privs,
//     so a command that took it over would hold nothing a command does
//     not hold already;
//   - it is not dumpable: no command can ptrace it, read its memory or
//     open its files through /proc/PID/fd (the socket among them);
//   - each command adds a Landlock layer of its own between fork and exec
//     (a nested domain: execute allowed everywhere, and from ABI 6 signals
//     and abstract sockets scoped): the commands of two calls are in
//     sibling domains, as with the per-call helper, and the server in
//     their parent's, so that a process one call left can neither ptrace
//     nor (ABI 6) signal the server or another call's command;
//   - where the call has a cgroup, pi sends its directory and the command
//     is born in it (clone3 with CLONE_INTO_CGROUP, fork_linux.go);
//   - the commands are forked with CLONE_PARENT: they are pi's children,
//     not the server's, so pi waits for them, kills their process groups
//     and finds their orphans exactly as before; pi checks that the pid
//     the server reports is its own child before it adopts it;
//   - before each command it checks that every path it bound read-only is
//     still on its bind mount (a protected path removed or replaced
//     outside loses it), and refuses and exits when one is not;
//   - with the network off it serves one request and exits (singleUse):
//     each call gets a network namespace of its own, as with the per-call
//     helper, so a process one call left cannot reach (or pose as) a
//     listener of a later call on the namespace's loopback; pi starts the
//     next call's server as soon as this one is used;
//   - before each fork it compares its resource limits and its thread's
//     priority with those it started with: a process of the same user may
//     change them from outside (prlimit, setpriority), and the commands
//     would inherit them; when they changed it refuses and exits, and pi
//     starts a new server.

// ServerArg is the argument that makes a program linking this package the
// fork server of one policy (argv: ServerArg POLICY-JSON [LIMITS-JSON],
// LIMITS-JSON a serverLimits; fd 3: its end of the socket pair).
const ServerArg = "__pi-sandbox-server"

// serverFD is the server's end of the socket pair.
const serverFD = 3

// maxFrame bounds one message (a command line and its environment).
const maxFrame = 16 << 20

// request is one command for the server: argv[0] is a path (never looked
// up), started in Dir with Env, in a new session when Setsid. The
// files sent with it are its stdin, stdout and stderr.
type request struct {
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	Setsid bool     `json:"setsid"`
	// Cgroup says the last file is the directory of the call's cgroup,
	// which the command is to be born in.
	Cgroup bool `json:"cgroup,omitempty"`
}

// reply is the server's answer: the command's pid, or why it did not
// start. Retry says the server started nothing and exits: a new server
// may be asked. The first reply, sent when the server is set up, has no
// pid.
type reply struct {
	Pid   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	Retry bool   `json:"retry,omitempty"`
	// Placed says the command was born in the call's cgroup.
	Placed bool `json:"placed,omitempty"`
}

// serverLimits are pi's resource limits as its children get them, for
// the server (the second argument).
type serverLimits struct {
	// Limits are pi's own when it started the server, which the server
	// inherited: its own must be the same when it takes them as the ones
	// its commands are to keep (but for RLIMIT_NOFILE's soft limit, which
	// Go raises at the start of each program), or a process of the same
	// user changed them from outside while it started (prlimit needs no
	// more than the same user).
	Limits [rlimits]unix.Rlimit `json:"limits"`
	// Priority is that of pi's thread that started the server (as
	// unix.Getpriority gives it), which the server's must be, likewise.
	Priority int `json:"priority"`
	// Nofile is the open files limit pi's children get (childNofile);
	// nil: the server finds it itself.
	Nofile *unix.Rlimit `json:"nofile,omitempty"`
}

// serverMain is the fork server: POLICY-JSON [LIMITS-JSON]. It returns when pi closes
// its end of the socket.
func serverMain(args []string) int {
	// Inherited as an extra file, the socket is not close-on-exec: it
	// must be before the first command, which would else get the server's
	// end of it (pi's requests: later calls' output pipes and cgroups).
	unix.CloseOnExec(serverFD)
	fail := func(err error) int {
		_ = writeFrame(serverFD, reply{Error: "pi sandbox server: " + err.Error()}, nil)
		return ExitHelperFailed
	}
	if len(args) != 1 && len(args) != 2 {
		return fail(errors.New("usage: " + ServerArg + " POLICY [LIMITS]"))
	}
	var pis *serverLimits
	if len(args) == 2 {
		pis = new(serverLimits)
		if err := json.Unmarshal([]byte(args[1]), pis); err != nil {
			return fail(fmt.Errorf("limits: %w", err))
		}
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fail(fmt.Errorf("policy: %w", err))
	}
	if !Served(p) {
		return fail(fmt.Errorf("mode %s with network %s is not served", p.Mode, p.Network))
	}
	if err := enter(p); err != nil {
		return fail(err)
	}
	layer, err := callLayer()
	if err != nil {
		return fail(err)
	}
	if err := dropCapabilities(false); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("make the server non-dumpable: %w", err))
	}
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("open /dev/null: %w", err))
	}
	var nofile *unix.Rlimit
	if pis != nil {
		nofile = pis.Nofile
	}
	if nofile == nil {
		nofile = childNofile()
	}
	mounts := boundMounts(p)
	limits := resourceLimits()
	if pis != nil {
		for r, l := range limits {
			if l != pis.Limits[r] && (r != unix.RLIMIT_NOFILE || l.Max != pis.Limits[r].Max) {
				return fail(fmt.Errorf("resource limit %d is %d:%d, not pi's %d:%d: changed from outside while the server started (by a process a command left?)",
					r, l.Cur, l.Max, pis.Limits[r].Cur, pis.Limits[r].Max))
			}
		}
	}
	nice, _ := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if pis != nil && nice != pis.Priority {
		return fail(fmt.Errorf("its priority is %d, not pi's %d: changed from outside while the server started (by a process a command left?)", nice, pis.Priority))
	}
	if err := writeFrame(serverFD, reply{}, nil); err != nil {
		return 0
	}
	f := &forker{p: p, null: null, layer: layer, limits: limits, nice: nice, nofile: nofile, mounts: mounts}
	return f.loop()
}

// forker is the server's state for serving commands.
type forker struct {
	p      Policy
	null   int
	layer  int
	limits [rlimits]unix.Rlimit
	nice   int
	nofile *unix.Rlimit
	mounts string
}

// loop serves commands, one at a time, from one thread (locked: forkExec
// blocks its signals around the fork), until pi closes its end, a check
// fails (Retry) or, with singleUse, after one.
func (f *forker) loop() int {
	runtime.LockOSThread()
	for {
		var req request
		fds, err := readFrame(serverFD, &req)
		if err != nil {
			return 0 // pi closed its end, or sent what it never sends
		}
		rep := f.serve(req, fds)
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		if writeFrame(serverFD, rep, nil) != nil || rep.Retry || singleUse(f.p) {
			return 0
		}
	}
}

// serve checks that nothing the commands inherit was changed from outside,
// then forks and execs one command, which adds the call's layer.
func (f *forker) serve(req request, fds []int) reply {
	if boundMounts(f.p) != f.mounts {
		return reply{Error: "pi sandbox server: a protected path was replaced or removed outside (its read-only mount is gone): not starting the command", Retry: true}
	}
	if resourceLimits() != f.limits {
		return reply{Error: "pi sandbox server: its resource limits were changed from outside (by a process a command left?); not starting the command", Retry: true}
	}
	if n, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err != nil || n != f.nice {
		return reply{Error: "pi sandbox server: its priority was changed from outside (by a process a command left?); not starting the command", Retry: true}
	}
	cgroupFD := -1
	if req.Cgroup && len(fds) >= 1 {
		cgroupFD = fds[len(fds)-1]
		fds = fds[:len(fds)-1]
	}
	if len(req.Argv) == 0 || (len(fds) != 2 && len(fds) != 3) {
		return reply{Error: "pi sandbox server: a request needs a command and its output files"}
	}
	files := [3]int{f.null, fds[0], fds[1]}
	if len(fds) == 3 {
		files = [3]int{fds[0], fds[1], fds[2]}
	}
	pid, err := forkExec(req.Argv, req.Env, req.Dir, files, req.Setsid, cgroupFD, f.layer, f.nofile)
	if err != nil {
		return reply{Error: fmt.Sprintf("start %s: %v", req.Argv[0], err)}
	}
	return reply{Pid: pid, Placed: cgroupFD >= 0}
}

// boundMounts says, for each path the server bound over itself (the
// protected paths and the folders pinned above them), the mount it is on
// now: a path removed or replaced outside (rename over it, rm -r and mkdir
// again) loses its bind mount in the server's namespace too, and the new
// file there would not be read-only; the inode number alone cannot tell
// (a file system may give the new one the same).
func boundMounts(p Policy) string {
	if p.Mode == ModeFull {
		return ""
	}
	var b []byte
	for _, list := range [][]string{pinned(p), p.Protected} {
		for _, path := range list {
			var st unix.Statx_t
			b = append(b, path...)
			if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID|unix.STATX_INO, &st); err != nil {
				b = append(b, ":-\x00"...)
				continue
			}
			b = fmt.Appendf(b, ":%d:%d\x00", st.Mnt_id, st.Ino)
		}
	}
	return string(b)
}

// childNofile is the open files limit the running program's children
// get: Go raised its own at its start and keeps the original to itself (its
// syscall.ForkExec puts it back in each child), so it is read from such a
// child, traced and so stopped before its first instruction, then killed.
// Nil when that fails (the commands then get the server's limit). pi
// finds it once (Servers) and hands it to each server: the server's
// children are to get what pi's get, and an exec per server start was a
// good part of the start's cost.
func childNofile() *unix.Rlimit {
	pid, err := syscall.ForkExec(SelfHelper, []string{"pi-sandbox-limits"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Ptrace: true}})
	if err != nil {
		return nil
	}
	var ws syscall.WaitStatus
	_, err = syscall.Wait4(pid, &ws, 0, nil)
	var lim unix.Rlimit
	if err == nil && ws.Stopped() {
		err = unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim)
	} else if err == nil {
		err = errors.New("not stopped")
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for {
		if _, werr := syscall.Wait4(pid, &ws, 0, nil); werr != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil
	}
	return &lim
}

// resourceLimits are the server's resource limits.
func resourceLimits() (l [rlimits]unix.Rlimit) {
	for r := range l {
		_ = unix.Getrlimit(r, &l[r])
	}
	return l
}

// callLayer is the ruleset of each call's own Landlock layer: it handles
// execution only, allowed everywhere (so it restricts no file), and from
// ABI 6 scopes signals and abstract Unix sockets; its point is the new
// domain, which keeps the call's processes from ptracing (and signalling)
// the server and other calls' processes.
func callLayer() (int, error) {
	abi, err := landlockABI()
	if err != nil {
		return -1, err
	}
	attr := llsys.RulesetAttr{HandledAccessFS: llsys.AccessFSExecute}
	if abi >= 6 {
		attr.Scoped = llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock call layer: %w", err)
	}
	unix.CloseOnExec(fd)
	root, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock call layer: %w", err)
	}
	defer unix.Close(root)
	if err := llsys.LandlockAddPathBeneathRule(fd, &llsys.PathBeneathAttr{AllowedAccess: llsys.AccessFSExecute, ParentFd: root}, 0); err != nil {
		return -1, fmt.Errorf("landlock call layer: %w", err)
	}
	return fd, nil
}

// dropCapabilities drops every capability of every thread: the ambient
// ones the server was started with, the bounding set (unless keepBounding:
// then a root child regains its namespace's on exec), and the permitted,
// effective and inheritable sets (psx: every thread at once, with cgo or
// without).
func dropCapabilities(keepBounding bool) error {
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("drop ambient capabilities: %w", e)
	}
	for c := 0; c <= unix.CAP_LAST_CAP && !keepBounding; c++ {
		if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0); e != 0 && e != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, e)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	if e != 0 {
		return fmt.Errorf("drop capabilities: %w", e)
	}
	return nil
}

// writeFrame sends v as JSON after its 4-byte length, with fds attached.
func writeFrame(fd int, v any, fds []int) error {
	frame, err := frameOf(v)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, err := unix.SendmsgN(fd, frame, oob, nil, 0)
	for err == nil && n < len(frame) {
		var m int
		m, err = unix.Write(fd, frame[n:])
		n += m
	}
	return err
}

// frameOf is v as a frame.
func frameOf(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	frame := make([]byte, 4, 4+len(body))
	binary.LittleEndian.PutUint32(frame, uint32(len(body)))
	return append(frame, body...), nil
}

// readFrame reads one frame into v, and the files sent with it
// (close-on-exec).
func readFrame(fd int, v any) ([]int, error) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err == nil {
				fds = append(fds, got...)
			}
		}
	}
	closeAll := func() {
		for _, f := range fds {
			_ = unix.Close(f)
		}
	}
	if n < 4 {
		closeAll()
		return nil, io.ErrUnexpectedEOF
	}
	size := int(binary.LittleEndian.Uint32(buf))
	if size > maxFrame {
		closeAll()
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	body := make([]byte, 0, size)
	body = append(body, buf[4:n]...)
	for len(body) < size {
		chunk := make([]byte, min(size-len(body), 1<<20))
		m, err := unix.Read(fd, chunk)
		if err != nil || m == 0 {
			closeAll()
			return nil, io.ErrUnexpectedEOF
		}
		body = append(body, chunk[:m]...)
	}
	if err := json.Unmarshal(body[:size], v); err != nil {
		closeAll()
		return nil, err
	}
	return fds, nil
}

// rlimits is the number of resource limits (RLIMIT_AS ... RLIMIT_RTTIME).
const rlimits = 16

//go:build linux

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxServers bounds the fork servers one Servers keeps (one per policy and
// state of the protected paths); the least recently used goes first.
const maxServers = 4

// serverTimeout bounds the wait for a server's answer: one that does not
// answer (stopped, or hung) is killed.
const serverTimeout = 10 * time.Second

// Served reports whether p is one a fork server serves: a file-system mode
// with Landlock (workspace-write, read-only) and the network on or off.
// Network "allow" (the proxy's forwarder runs beside each command) and
// mode "full" keep the per-call helper.
func Served(p Policy) bool {
	return (p.Mode == ModeWorkspaceWrite || p.Mode == ModeReadOnly) && (p.Network == NetworkOn || p.Network == NetworkOff)
}

// singleUse says p's server serves one command and exits: with the
// network off each call must have a network namespace of its own (a
// server's commands share its namespaces), so that what one call left
// running cannot reach a listener of the next on the loopback, or listen
// in its place. A server can make no namespace per command itself (it
// holds no capability, and its Landlock domain keeps a command's new user
// namespace from being mapped), so pi starts the next call's server ahead
// (Start): the call pays the server's start in CPU, as the per-call helper
// does, but not in time when the calls are not back to back.
func singleUse(p Policy) bool { return p.Network == NetworkOff }

// Servers keeps the fork servers of a program: one per policy (and helper),
// started on the first command under it, replaced when a protected path,
// writable root or hidden folder it was set up with appears, disappears or
// is replaced (a mount namespace fixes them at its start). The zero value
// is not usable; call NewServers. It is safe for concurrent use.
type Servers struct {
	// own starts the server as a child that no bash call's clean-up takes
	// for one of its processes (internal/procs.StartOwn); release is
	// called once it was waited for.
	own func(start func() (pid int, err error)) (release func(), err error)

	// keys holds the last policy's key: computing it (a JSON encoding)
	// is a good part of a served call's own cost.
	keys struct {
		sync.Mutex
		p           Policy
		helper, key string
	}

	mu     sync.Mutex
	live   map[string]*server // by policy key
	failed map[string]error   // policies whose server could not start
	closed bool
	tick   uint64
}

// NewServers returns an empty set of servers; own starts each server (nil:
// a plain start).
func NewServers(own func(start func() (pid int, err error)) (release func(), err error)) *Servers {
	if own == nil {
		own = func(start func() (int, error)) (func(), error) {
			_, err := start()
			return func() {}, err
		}
	}
	return &Servers{own: own, live: map[string]*server{}, failed: map[string]error{}}
}

// server is pi's side of one fork server.
type server struct {
	state string // the protected paths' state it was set up with
	used  uint64
	once  bool // it serves one command (singleUse)
	cmd   *exec.Cmd

	mu   sync.Mutex // one request at a time
	conn *os.File   // non-blocking: reads and writes take deadlines
	dead bool
	done chan struct{} // closed once the server was waited for
}

// Ready reports whether a fork server serves p (with helper, "" for
// SelfHelper), starting one if none runs for p's current state. False
// (p not Served, or its server cannot start: the reason is Failed's)
// means the per-call helper (Wrap, SysProcAttr) is the way.
func (s *Servers) Ready(p Policy, helper string) bool {
	_, err := s.get(p, helper, true)
	return err == nil
}

// key is serverKey's key of p, from the one-entry cache when p is the
// last policy asked for.
func (s *Servers) key(p Policy, helper string) (string, error) {
	s.keys.Lock()
	defer s.keys.Unlock()
	if s.keys.key != "" && s.keys.helper == helper && samePolicy(s.keys.p, p) {
		return s.keys.key, nil
	}
	key, err := serverKey(p, helper)
	if err != nil {
		return "", err
	}
	s.keys.p, s.keys.helper, s.keys.key = clonePolicy(p), helper, key
	return key, nil
}

// samePolicy reports whether a and b are the same policy.
func samePolicy(a, b Policy) bool {
	return a.Mode == b.Mode && a.Network == b.Network && a.Proxy == b.Proxy && a.UID == b.UID && a.GID == b.GID &&
		slices.Equal(a.AllowHosts, b.AllowHosts) && slices.Equal(a.Writable, b.Writable) && slices.Equal(a.Protected, b.Protected) &&
		slices.Equal(a.Hide, b.Hide) && slices.Equal(a.Private, b.Private) && slices.Equal(a.Restore, b.Restore)
}

// clonePolicy is p with slices of its own (the caller may change its).
func clonePolicy(p Policy) Policy {
	p.AllowHosts, p.Writable, p.Protected = slices.Clone(p.AllowHosts), slices.Clone(p.Writable), slices.Clone(p.Protected)
	p.Hide, p.Private, p.Restore = slices.Clone(p.Hide), slices.Clone(p.Private), slices.Clone(p.Restore)
	return p
}

// Failed is why p's server could not start (nil: it did, or was not
// tried).
func (s *Servers) Failed(p Policy, helper string) error {
	key, err := s.key(p, helper)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[key]
}

// errNotServed: the policy is not one a server serves.
var errNotServed = errors.New("network \"allow\" and mode full are not served by a fork server")

// serverKey is p's key: its helper and normalized policy.
func serverKey(p Policy, helper string) (string, error) {
	if !Served(p) {
		return "", errNotServed
	}
	if err := p.Check(); err != nil {
		return "", err
	}
	if helper == "" {
		helper = SelfHelper
	}
	data, err := json.Marshal(normalize(p))
	if err != nil {
		return "", err
	}
	return helper + "\x00" + string(data), nil
}

// pathState says which of the paths a server fixes at its start exist,
// and which file each is: the writable roots (Landlock holds their
// inodes), the protected paths and the folders pinned above them (bind
// mounts), the hidden folders.
func pathState(p Policy) string {
	var b strings.Builder
	add := func(path string, follow bool) {
		var st unix.Stat_t
		var err error
		if follow {
			err = unix.Stat(path, &st)
		} else {
			err = unix.Lstat(path, &st)
		}
		b.WriteString(path)
		if err != nil {
			b.WriteString(":-\x00")
			return
		}
		b.WriteString(":" + strconv.FormatUint(st.Dev, 36) + ":" + strconv.FormatUint(st.Ino, 36) + "\x00")
	}
	for _, d := range p.Writable {
		add(d, true)
	}
	for _, d := range pinned(p) {
		add(d, false)
	}
	for _, d := range p.Protected {
		add(d, false)
	}
	for _, d := range p.Hide {
		add(d, true)
	}
	return b.String()
}

// ErrServerGone is Start's error when p's server is gone, was tampered
// with, or no longer matches the protected paths, and the command was not
// started: Ready starts a new one, then Start may be called again.
var ErrServerGone = errors.New("the sandbox server is gone")

// get returns the live server for p's current state, starting one when
// start is set; without start (Start, just after Ready) the state of the
// paths is not looked at again (the server checks its protected paths'
// mounts before each command itself).
func (s *Servers) get(p Policy, helper string, start bool) (*server, error) {
	key, err := s.key(p, helper)
	if err != nil {
		return nil, err
	}
	state := ""
	if start {
		state = pathState(normalize(p))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the sandbox servers were closed")
	}
	if err := s.failed[key]; err != nil {
		return nil, err
	}
	s.tick++
	if sv := s.live[key]; sv != nil {
		if (!start || sv.state == state) && !sv.isDead() {
			sv.used = s.tick
			return sv, nil
		}
		delete(s.live, key)
		sv.close()
	}
	if !start {
		return nil, ErrServerGone
	}
	if len(s.live) >= maxServers {
		var oldKey string
		var old *server
		for k, sv := range s.live {
			if old == nil || sv.used < old.used {
				oldKey, old = k, sv
			}
		}
		delete(s.live, oldKey)
		old.close()
	}
	if helper == "" {
		helper = SelfHelper
	}
	sv, err := startServer(normalize(p), helper, s.own)
	if err != nil {
		s.failed[key] = err
		return nil, err
	}
	sv.state, sv.used, sv.once = state, s.tick, singleUse(p)
	s.live[key] = sv
	return sv, nil
}

// piNofile is the open files limit pi's children get (childNofile), found
// once.
var piNofile = sync.OnceValue(childNofile)

// startServer starts the fork server of p and waits until it is set up.
func startServer(p Policy, helper string, own func(func() (int, error)) (func(), error)) (*server, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox server socket: %w", err)
	}
	// pi's end non-blocking (its own open file: the server's end stays
	// blocking), so that os.File polls it and takes deadlines; not
	// net.FileConn: net would join the helper's package inits, which every
	// per-call helper start pays.
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return nil, fmt.Errorf("sandbox server socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(pair[0]), "pi-sandbox-server"), os.NewFile(uintptr(pair[1]), "pi-sandbox-server")
	defer theirs.Close()
	attr := SysProcAttr(p)
	attr.Setsid = true // out of pi's process group: a terminal's ^C is not for it
	// CAP_SETPCAP to empty its bounding set before it drops every
	// capability.
	attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SETPCAP)
	// What it prints (a program that is not a helper, a runtime's crash)
	// is kept for Failed (pi doctor).
	stderr := &headWriter{max: 2048}
	nofile := piNofile()
	var cmd *exec.Cmd
	release, err := own(func() (int, error) {
		// The server inherits the priority of the thread that starts
		// it: the same thread reads it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
		if err != nil {
			return 0, fmt.Errorf("priority: %w", err)
		}
		limits, err := json.Marshal(serverLimits{Limits: resourceLimits(), Priority: prio, Nofile: nofile})
		if err != nil {
			return 0, err
		}
		cmd = &exec.Cmd{Path: helper, Args: []string{helper, ServerArg, string(data), string(limits)}, Dir: "/", Env: []string{},
			ExtraFiles: []*os.File{theirs}, SysProcAttr: attr, Stderr: stderr}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err != nil {
		mine.Close()
		return nil, fmt.Errorf("start the sandbox server: %w", err)
	}
	theirs.Close()
	sv := &server{cmd: cmd, conn: mine, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		release()
		sv.mu.Lock()
		sv.dead = true
		sv.mu.Unlock()
		close(sv.done)
	}()
	var ready reply
	if err := sv.read(&ready); err != nil || ready.Error != "" {
		sv.close()
		if err == nil {
			err = errors.New(ready.Error)
		}
		if out := strings.TrimSpace(stderr.String()); out != "" {
			err = fmt.Errorf("%w (%s printed: %s)", err, helper, out)
		}
		return nil, fmt.Errorf("the sandbox server did not start: %w", err)
	}
	return sv, nil
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *headWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

func (sv *server) isDead() bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.dead
}

// kill ends the server (sv.mu held).
func (sv *server) kill() {
	sv.dead = true
	_ = sv.conn.Close()
	_ = sv.cmd.Process.Kill()
}

// close ends the server and waits for it.
func (sv *server) close() {
	sv.mu.Lock()
	sv.kill()
	sv.mu.Unlock()
	<-sv.done
}

// read reads one reply (within serverTimeout).
func (sv *server) read(r *reply) error {
	_ = sv.conn.SetReadDeadline(time.Now().Add(serverTimeout))
	var head [4]byte
	if _, err := io.ReadFull(sv.conn, head[:]); err != nil {
		return err
	}
	size := binary.LittleEndian.Uint32(head[:])
	if size > maxFrame {
		return fmt.Errorf("reply of %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(sv.conn, body); err != nil {
		return err
	}
	return json.Unmarshal(body, r)
}

// Start starts cmd (Path, Args, Env, Dir, Stdin nil or a file, Stdout and
// Stderr files, SysProcAttr nil or with Setsid only) under p through the
// fork server Ready started, as pi's child, and sets cmd.Process: the
// caller waits for it with cmd.Wait. Start never starts a server itself
// (a caller may hold a lock the start of one needs: internal/procs').
//
// # Errors
//
// ErrServerGone (wrapped) when the server is gone, refused because it was
// tampered with, or no longer matches the protected paths, and the command
// was not started: call Ready, then Start again. Else a cmd with other
// settings, a server that did not answer (the command may have started:
// the server was killed meanwhile), and the command's own start error (a
// missing program or folder).
//
// With cgroup (the directory of the call's cgroup, nil for none), the
// command is born in that cgroup; placed says it was.
func (s *Servers) Start(p Policy, helper string, cmd *exec.Cmd, cgroup *os.File) (placed bool, err error) {
	if err := checkServedCmd(cmd); err != nil {
		return false, err
	}
	sv, err := s.get(p, helper, false)
	if err != nil {
		return false, err
	}
	placed, retry, err := sv.start(cmd, cgroup)
	if sv.once {
		// The next call's server, started now.
		go s.get(p, helper, true)
	}
	if retry {
		return false, fmt.Errorf("%w: %w", ErrServerGone, err)
	}
	return placed, err
}

// checkServedCmd refuses what a server cannot do for a command.
func checkServedCmd(cmd *exec.Cmd) error {
	if cmd.Process != nil {
		return errors.New("exec: already started")
	}
	if a := cmd.SysProcAttr; a != nil {
		if a.Cloneflags != 0 || a.Unshareflags != 0 || len(a.AmbientCaps) > 0 || a.UseCgroupFD || a.Credential != nil || a.Chroot != "" ||
			a.Setpgid || a.Setctty || a.Foreground || a.Noctty || a.Ptrace || a.Pdeathsig != 0 || a.UidMappings != nil || a.GidMappings != nil {
			return errors.New("the sandbox server starts a command in a new session or not, nothing else (no cgroup, namespaces or credentials)")
		}
	}
	for _, f := range []any{cmd.Stdout, cmd.Stderr} {
		if _, ok := f.(*os.File); !ok {
			return errors.New("the sandbox server needs the command's output as files")
		}
	}
	if cmd.Stdin != nil {
		if _, ok := cmd.Stdin.(*os.File); !ok {
			return errors.New("the sandbox server needs the command's input as a file")
		}
	}
	if len(cmd.ExtraFiles) > 0 || len(cmd.Args) == 0 || !filepath.IsAbs(cmd.Path) {
		return errors.New("the sandbox server starts a command given by its absolute path, with no extra files")
	}
	return nil
}

// start sends one command; retry says nothing was started and a new
// server may be asked.
func (sv *server) start(cmd *exec.Cmd, cgroup *os.File) (placed, retry bool, err error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.dead {
		return false, true, errors.New("it exited")
	}
	req := request{Argv: append([]string{cmd.Path}, cmd.Args[1:]...), Env: cmd.Env, Dir: cmd.Dir,
		Setsid: cmd.SysProcAttr != nil && cmd.SysProcAttr.Setsid}
	if req.Env == nil {
		req.Env = os.Environ()
	}
	var files []int
	if f, ok := cmd.Stdin.(*os.File); ok {
		files = append(files, int(f.Fd()))
	}
	files = append(files, int(cmd.Stdout.(*os.File).Fd()), int(cmd.Stderr.(*os.File).Fd()))
	if cgroup != nil {
		req.Cgroup = true
		files = append(files, int(cgroup.Fd()))
	}
	frame, err := frameOf(req)
	if err != nil {
		return false, false, err
	}
	_ = sv.conn.SetWriteDeadline(time.Now().Add(serverTimeout))
	n, err := sendmsg(sv.conn, frame, unix.UnixRights(files...))
	if err == nil && n < len(frame) {
		var m int
		m, err = sv.conn.Write(frame[n:])
		n += m
	}
	if err != nil {
		// A request not sent whole was never served.
		sv.kill()
		return false, true, fmt.Errorf("the sandbox server: send: %w", err)
	}
	var rep reply
	err = sv.read(&rep)
	if sv.once {
		sv.dead = true // it exits after this one
	}
	if err != nil {
		sv.kill()
		if errors.Is(err, syscall.ECONNRESET) {
			// The server closed its end with the request unread in it
			// (the kernel resets the connection only then): it never
			// saw the command.
			return false, true, fmt.Errorf("the sandbox server is gone: %w", err)
		}
		return false, false, fmt.Errorf("the sandbox server did not answer (it was stopped or killed; a new one starts with the next command): %w", err)
	}
	if rep.Retry {
		sv.dead = true
		return false, true, errors.New(rep.Error)
	}
	if rep.Error != "" {
		return false, false, errors.New(rep.Error)
	}
	proc, err := adopt(rep.Pid)
	if err != nil {
		sv.kill()
		return false, false, err
	}
	cmd.Process = proc
	return rep.Placed, false, nil
}

// sendmsg sends b with oob on the non-blocking f, waiting (within f's
// write deadline) while the socket is full; it returns how much of b went.
func sendmsg(f *os.File, b, oob []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		n, serr = unix.SendmsgN(int(fd), b, oob, nil, 0)
		return serr != unix.EAGAIN
	}); err != nil {
		return 0, err
	}
	return n, serr
}

// adopt returns the process of pid, which must be pi's own child (the
// server forks with CLONE_PARENT): never a pid the server could name to
// make pi wait for, or signal, a process that is not a command's.
func adopt(pid int) (*os.Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("the sandbox server reported pid %d", pid)
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return nil, err
	}
	// Asked after the process handle is held: a child of pi stays (as a
	// zombie at least) until pi reaps it, so the pid cannot be reused in
	// between. waitid without WNOWAIT's reaping answers ECHILD for a pid
	// that is not pi's child, in one system call.
	var info unix.Siginfo
	for {
		err = unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		_ = proc.Release()
		return nil, fmt.Errorf("the sandbox server reported pid %d, which is not pi's child: %w", pid, err)
	}
	return proc, nil
}

// Close ends every server and makes later Ready calls false.
func (s *Servers) Close() {
	s.mu.Lock()
	s.closed = true
	live := s.live
	s.live = map[string]*server{}
	s.mu.Unlock()
	for _, sv := range live {
		sv.close()
	}
}

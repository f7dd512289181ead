//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// viaServer makes runEnv start its commands through testServers
// (TestThroughServer sets it while it runs the attack suite again).
var viaServer bool

// testServers are the fork servers of this package's tests.
var testServers = NewServers(nil)

// runServed runs `bash -c script` in dir with env through p's fork server,
// as the bash tool does (a new session, stdout and stderr one pipe).
func runServed(t *testing.T, p Policy, dir string, env []string, script string) (string, int) {
	t.Helper()
	out, code, err := serve1(p, dir, env, script)
	if err != nil {
		t.Fatalf("run through the fork server: %v", err)
	}
	return out, code
}

func serve1(p Policy, dir string, env []string, script string) (string, int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	cmd := &exec.Cmd{Path: "/bin/bash", Args: []string{"bash", "-c", script}, Dir: dir, Env: env,
		Stdout: w, Stderr: w, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if !testServers.Ready(p, "") {
		return "", 0, testServers.Failed(p, "")
	}
	_, err = testServers.Start(p, "", cmd, nil)
	if errors.Is(err, ErrServerGone) && testServers.Ready(p, "") {
		_, err = testServers.Start(p, "", cmd, nil)
	}
	w.Close()
	if err != nil {
		return "", 0, err
	}
	out, _ := io.ReadAll(r)
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return string(out), 0, err
	}
	return string(out), cmd.ProcessState.ExitCode(), nil
}

// TestThroughServer runs the attack suite again with every served policy
// going through the fork server: what the per-call helper refuses, the
// server refuses.
func TestThroughServer(t *testing.T) {
	needKernel(t)
	viaServer = true
	defer func() { viaServer = false }()
	for name, test := range map[string]func(*testing.T){
		"Attacks": TestAttacks, "WorkspaceStillWritable": TestWorkspaceStillWritable, "ReadOnlyMode": TestReadOnlyMode,
		"EtcAsRoot": TestEtcAsRoot, "BackgroundProcess": TestBackgroundProcess, "NetworkOff": TestNetworkOff,
		"Refusals": TestRefusals, "SignalOutside": TestSignalOutside, "LoaderVariables": TestLoaderVariables,
		"ResolverSocketsHidden": TestResolverSocketsHidden,
	} {
		t.Run(name, test)
	}
}

// The attack program: this test binary, started by a sandboxed command
// with attackEnv=MODE and its arguments; it prints one line per attempt,
// "NAME ok" or "NAME errno-text".
const attackEnv = "PI_SANDBOX_TEST_ATTACK"

func init() {
	if mode := os.Getenv(attackEnv); mode != "" {
		os.Exit(attackMain(mode, os.Args[1:]))
	}
}

func attackMain(mode string, args []string) int {
	report := func(name string, err error) {
		if err == nil {
			fmt.Println(name, "ok")
		} else {
			fmt.Println(name, err)
		}
	}
	switch mode {
	case "server":
		// Every fork server this user runs, however it is found.
		pids := serverPids()
		fmt.Println("servers", len(pids))
		for _, pid := range pids {
			attackProcess(pid, "server", report)
		}
	case "pid":
		// The process whose pid the file args[0] holds, once it appears;
		// the result goes to args[1].
		pid := waitPid(args[0])
		var b strings.Builder
		attackProcess(pid, "other-call", func(name string, err error) {
			if err == nil {
				fmt.Fprintln(&b, name, "ok")
			} else {
				fmt.Fprintln(&b, name, err)
			}
		})
		// The control: the same attempts on a process of its own call.
		own := exec.Command("sleep", "30")
		if err := own.Start(); err == nil {
			attackProcess(own.Process.Pid, "own", func(name string, err error) {
				if err == nil {
					fmt.Fprintln(&b, name, "ok")
				} else {
					fmt.Fprintln(&b, name, err)
				}
			})
			_ = own.Process.Kill()
			_ = own.Wait()
		}
		_ = os.WriteFile(args[1]+".tmp", []byte(b.String()), 0o644)
		_ = os.Rename(args[1]+".tmp", args[1])
	case "socket":
		// A socket pair of its own at fds 100 and 101, kept across the
		// exec of args.
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Dup2(pair[0], 100)
		}
		if err == nil {
			err = unix.Dup2(pair[1], 101)
		}
		if err != nil {
			fmt.Println("socket", err)
			return 1
		}
		path, err := exec.LookPath(args[0])
		if err == nil {
			err = unix.Exec(path, args, os.Environ())
		}
		fmt.Println("exec", err)
		return 1
	case "dial":
		// Until the file args[1]/stop appears: connect to 127.0.0.1:args[0]
		// again and again, and write args[1]/reached on the first
		// connection (args[1]/started says it runs).
		_ = os.WriteFile(args[1]+"/started", nil, 0o644)
		for {
			if _, err := os.Stat(args[1] + "/stop"); err == nil {
				return 0
			}
			if c, err := net.Dial("tcp", "127.0.0.1:"+args[0]); err == nil {
				c.Close()
				_ = os.WriteFile(args[1]+"/reached", nil, 0o644)
				return 0
			}
			unix.Nanosleep(&unix.Timespec{Nsec: 2e6}, nil)
		}
	case "listen":
		// Listen on 127.0.0.1:args[0] and say whether a connection came
		// within args[1] seconds.
		ln, err := net.Listen("tcp", "127.0.0.1:"+args[0])
		if err != nil {
			fmt.Println("listen", err)
			return 1
		}
		secs, _ := strconv.Atoi(args[1])
		_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Duration(secs) * time.Second))
		if c, err := ln.Accept(); err == nil {
			c.Close()
			fmt.Println("accepted")
		} else {
			fmt.Println("none")
		}
	case "tamper":
		for _, pid := range serverPids() {
			report("prlimit", unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}, nil))
			report("renice", unix.Setpriority(unix.PRIO_PROCESS, pid, 19))
		}
	}
	return 0
}

// serverPids are the fork servers' pids, by their command line.
func serverPids() []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte("\x00"+ServerArg+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func waitPid(file string) int {
	for {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 5e6}, nil)
	}
}

// attackProcess tries what would give a command a hold on the process pid:
// ptrace it, read its environment and memory map, open its files (the
// server's socket among them) through /proc and pidfd_getfd, and stop it.
func attackProcess(pid int, who string, report func(string, error)) {
	p := strconv.Itoa(pid)
	err := unix.PtraceAttach(pid)
	if err == nil {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
		_ = unix.PtraceDetach(pid)
	}
	report(who+"-ptrace", err)
	_, err = os.ReadFile("/proc/" + p + "/environ")
	report(who+"-environ", err)
	_, err = os.ReadFile("/proc/" + p + "/maps")
	report(who+"-maps", err)
	for _, fd := range []string{"0", "1", "2", "3"} {
		f, err := os.OpenFile("/proc/"+p+"/fd/"+fd, os.O_RDWR, 0)
		if err == nil {
			f.Close()
		}
		report(who+"-fd-open-"+fd, err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err == nil {
		fd, gerr := unix.PidfdGetfd(pidfd, 3, 0)
		if gerr == nil {
			unix.Close(fd)
		}
		report(who+"-pidfd-getfd", gerr)
		unix.Close(pidfd)
	} else {
		report(who+"-pidfd-getfd", err)
	}
	err = unix.Kill(pid, unix.SIGSTOP)
	if err == nil {
		_ = unix.Kill(pid, unix.SIGCONT)
	}
	report(who+"-stop", err)
}

// attackCmd is the shell words that start the attack program in mode.
func attackCmd(mode string, args ...string) string {
	exe, _ := os.Executable()
	return attackEnv + "=" + mode + " " + exe + " " + strings.Join(args, " ")
}

// lines maps "NAME result" lines to their results.
func lines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if name, res, ok := strings.Cut(l, " "); ok {
			m[name] = res
		}
	}
	return m
}

// TestServerOutOfReach: a command cannot ptrace the fork server, read its
// environment or memory map, open its files (its socket to pi among them)
// through /proc or pidfd_getfd, or (Landlock ABI 6) stop it; and it holds
// no capability, like the server. The server runs under the same
// restrictions as its commands (its own view of them: no capability,
// no_new_privs).
func TestServerOutOfReach(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	abi, _ := landlockABI()
	out, code, err := serve1(p, w.project, os.Environ(), attackCmd("server")+`; grep -E '^(Cap|NoNewPrivs)' /proc/self/status`)
	if err != nil || code != 0 {
		t.Fatalf("%v (exit %d): %s", err, code, out)
	}
	got := lines(out)
	if got["servers"] == "0" || got["servers"] == "" {
		t.Fatalf("the command found no server to attack: %s", out)
	}
	for name, res := range got {
		if !strings.HasPrefix(name, "server-") {
			continue
		}
		if name == "server-stop" && abi < 6 {
			continue // signals are scoped from ABI 6 only
		}
		if res == "ok" {
			t.Errorf("a command reached the fork server: %s ok\n%s", name, out)
		}
	}
	for _, c := range []string{"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"} {
		if !strings.Contains(out, c+"\t0000000000000000") {
			t.Errorf("the command holds capabilities (%s):\n%s", c, out)
		}
	}
	if !strings.Contains(out, "NoNewPrivs:\t1") {
		t.Errorf("no_new_privs is not set:\n%s", out)
	}
	for _, pid := range serverPids() {
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		for _, c := range []string{"CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"} {
			if !strings.Contains(string(st), c+"\t0000000000000000") {
				t.Errorf("the server %d holds capabilities (%s):\n%s", pid, c, st)
			}
		}
	}
}

// TestServerNoFilesLeak: a command started through the server holds no
// socket it did not open (not the server's socket to pi), though it holds
// one it opened itself (the control, a socket pair made by the attack
// program's "socket" mode and left open across its exec of ls).
func TestServerNoFilesLeak(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	out, code, err := serve1(p, w.project, os.Environ(), attackCmd("socket", "ls", "-l", "/proc/self/fd"))
	if err != nil || code != 0 {
		t.Fatalf("%v (exit %d): %s", err, code, out)
	}
	own := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[len(f)-2] != "->" || !strings.HasPrefix(f[len(f)-1], "socket:") {
			continue
		}
		if fd := f[len(f)-3]; fd == "100" || fd == "101" {
			own++
			continue
		}
		t.Errorf("the command holds a socket it did not open: %s\n%s", l, out)
	}
	if own != 2 {
		t.Fatalf("control: the command's own sockets are not listed:\n%s", out)
	}
}

// TestServerCallsIsolated: a process one call left behind can neither
// ptrace nor (ABI 6) stop the next call's command, though it can a
// process of its own call (the control): each call has a Landlock domain
// of its own, as with the per-call helper.
func TestServerCallsIsolated(t *testing.T) {
	needKernel(t)
	abi, _ := landlockABI()
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	pidFile, result := filepath.Join(w.project, "pid"), filepath.Join(w.project, "result")
	if out, _, err := serve1(p, w.project, os.Environ(), `(`+attackCmd("pid", pidFile, result)+` >/dev/null 2>&1 &) ; echo left`); err != nil || !strings.Contains(out, "left") {
		t.Fatalf("%v: %s", err, out)
	}
	out, code, err := serve1(p, w.project, os.Environ(), `echo $$ > pid; while [ ! -e result ]; do sleep 0.01; done; cat result; echo alive`)
	if err != nil || code != 0 || !strings.Contains(out, "alive") {
		t.Fatalf("%v (exit %d): %s", err, code, out)
	}
	got := lines(out)
	if got["own-ptrace"] != "ok" || got["own-stop"] != "ok" {
		t.Fatalf("control: the left process could not ptrace or stop a process of its own call:\n%s", out)
	}
	if got["other-call-ptrace"] == "ok" || got["other-call-environ"] == "ok" {
		t.Errorf("a process left by one call reached the next call's command:\n%s", out)
	}
	if abi >= 6 && got["other-call-stop"] == "ok" {
		t.Errorf("a process left by one call stopped the next call's command:\n%s", out)
	}
}

// TestServerTampered: a command that changes the server's resource limits
// and priority from outside (prlimit, setpriority: the kernel lets a
// process of the same user) does not pass them on: the server refuses the
// next command and a new one runs it, with the limits pi's commands get.
func TestServerTampered(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	before, _, err := serve1(p, w.project, os.Environ(), `ulimit -n; nice`)
	if err != nil {
		t.Fatal(err)
	}
	// The server passes on what the per-call helper does.
	if perCall, _ := runIn(t, p, w.project, w.home, `ulimit -n; nice`); perCall != before {
		t.Fatalf("limits and nice through the server %q, in the per-call helper %q", before, perCall)
	}
	out, _, err := serve1(p, w.project, os.Environ(), attackCmd("tamper"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tampering: %s", out)
	after, _, err := serve1(p, w.project, os.Environ(), `ulimit -n; nice`)
	if err != nil {
		t.Fatalf("the call after the tampering failed: %v", err)
	}
	if after != before {
		t.Fatalf("the tampering reached the next command: limits and nice %q, before %q", after, before)
	}
}

// TestServerReplaced: a server that is gone (killed) is replaced by the
// next command; one whose protected paths changed (a .git made after it
// started, a .git replaced) too, so the new path is protected.
func TestServerReplaced(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	if err := os.RemoveAll(w.project + "/.git"); err != nil {
		t.Fatal(err)
	}
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	if out, code, err := serve1(p, w.project, os.Environ(), `echo one`); err != nil || code != 0 {
		t.Fatalf("%v: %s", err, out)
	}
	// Every server of this test binary killed from outside: the next
	// command still runs.
	for _, pid := range serverPids() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if out, code, err := serve1(p, w.project, os.Environ(), `echo two`); err != nil || code != 0 || out != "two\n" {
		t.Fatalf("after the server was killed: %v (exit %d): %q", err, code, out)
	}
	// .git appears (git init) after the server started: protected.
	if err := os.MkdirAll(w.project+"/.git/hooks", 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, _ := serve1(p, w.project, os.Environ(), `echo pwned > .git/hooks/pre-commit`)
	if _, err := os.Stat(w.project + "/.git/hooks/pre-commit"); err == nil {
		t.Fatalf("a .git made after the server started was writable: %s", out)
	}
	// .git replaced from outside: the new one is protected.
	if err := os.RemoveAll(w.project + "/.git"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.project+"/.git/hooks", 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, _ = serve1(p, w.project, os.Environ(), `echo pwned > .git/hooks/pre-commit`)
	if _, err := os.Stat(w.project + "/.git/hooks/pre-commit"); err == nil {
		t.Fatalf("a replaced .git was writable: %s", out)
	}
}

// TestServerManyCalls: the per-call Landlock layer never piles up on the
// server's threads (a domain holds 16 layers at most): many calls, in
// parallel too, all run.
func TestServerManyCalls(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		go func() {
			out, code, err := serve1(p, w.project, os.Environ(), `echo ok`)
			if err == nil && (code != 0 || out != "ok\n") {
				err = fmt.Errorf("exit %d: %q", code, out)
			}
			errs <- err
		}()
	}
	for i := 0; i < 40; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestServerStartFails: a command whose program is missing fails as it
// does in the per-call helper: exit status ExitHelperFailed, the reason on
// its standard error; the server serves the next command.
func TestServerStartFails(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: w.project + "/missing", Args: []string{"missing"}, Dir: w.project, Env: os.Environ(),
		Stdout: wr, Stderr: wr, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if !testServers.Ready(p, "") {
		t.Fatal(testServers.Failed(p, ""))
	}
	if _, err := testServers.Start(p, "", cmd, nil); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	out, _ := io.ReadAll(r)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitHelperFailed || string(out) != "pi sandbox: start "+w.project+"/missing: errno 2\n" {
		t.Fatalf("exit %d, output %q", code, out)
	}
	if out, code, err := serve1(p, w.project, os.Environ(), `echo next`); err != nil || code != 0 || out != "next\n" {
		t.Fatalf("the next command: %v (exit %d): %q", err, code, out)
	}
}

// TestServerCallsNetworkApart: with the network off, a process one call
// left running cannot reach a listener of a later call on the loopback
// (each call has a network namespace of its own: its server serves one
// command), and the next call's server is ready; with the network on
// (the host's loopback, shared) it can: the control.
func TestServerCallsNetworkApart(t *testing.T) {
	needKernel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	for _, network := range []string{NetworkOn, NetworkOff} {
		w := newWorld(t)
		p := w.policy(t, ModeWorkspaceWrite, network)
		marks := filepath.Join(w.project, "marks") // writable inside
		if err := os.Mkdir(marks, 0o755); err != nil {
			t.Fatal(err)
		}
		out, code := runServed(t, p, w.project, os.Environ(), attackCmd("dial", port, marks)+" >/dev/null 2>&1 &")
		if code != 0 {
			t.Fatalf("network %s: the first call: exit %d: %s", network, code, out)
		}
		waitFile(t, marks+"/started")
		out, _ = runServed(t, p, w.project, os.Environ(), attackCmd("listen", port, "2"))
		if err := os.WriteFile(marks+"/stop", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, errReached := os.Stat(marks + "/reached")
		if network == NetworkOn {
			if strings.TrimSpace(out) != "accepted" || errReached != nil {
				t.Fatalf("control (network on): the left process did not reach the next call's listener: %q", out)
			}
			continue
		}
		if strings.TrimSpace(out) != "none" || errReached == nil {
			t.Fatalf("network off: the process one call left reached the next call's listener: %q", out)
		}
	}
}

// TestAdoptOnlyOwnChildren: pi takes a pid the server reports only when it
// is pi's own child: never itself, its parent or another process (a pid
// a taken-over server could name to make pi signal or wait for it); a
// child of its own is the control.
func TestAdoptOnlyOwnChildren(t *testing.T) {
	other := exec.Command("sleep", "30")
	other.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	// A grandchild: the child of a shell of this process's, not its own.
	r, w, _ := os.Pipe()
	sh := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	sh.Stdout = w
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() { _ = sh.Process.Kill(); _ = sh.Wait() }()
	var grand int
	if _, err := fmt.Fscan(r, &grand); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(grand, syscall.SIGKILL)
	for _, pid := range []int{os.Getpid(), os.Getppid(), 1, grand, 0, -1} {
		if p, err := adopt(pid); err == nil {
			_ = p.Release()
			t.Errorf("pid %d was taken for a child of pi", pid)
		}
	}
	p, err := adopt(other.Process.Pid)
	if err != nil {
		t.Fatalf("control: its own child: %v", err)
	}
	_ = p.Release()
}

// TestServerTamperedWhileStarting: a process of the same user that lowers
// a server's open files limit or its priority while the server starts
// (before it takes its own as the ones to keep) does not get a command run
// under them: the server sees that they are not pi's and does not start
// (Failed says so), and the commands go to the per-call helper. The
// control: a server started untouched serves the command with pi's.
func TestServerTamperedWhileStarting(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil || prio <= 1 {
		t.Skipf("this test runs at nice 19 already (%v)", err)
	}
	const script = "echo $(ulimit -Hn) $(nice)"
	tampered := map[string]func(pid int) error{
		"": nil,
		"limit": func(pid int) error {
			return unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}, nil)
		},
		"priority": func(pid int) error { return unix.Setpriority(unix.PRIO_PROCESS, pid, 19) },
	}
	for name, tamper := range tampered {
		servers := NewServers(func(start func() (int, error)) (func(), error) {
			pid, err := start()
			if err == nil && tamper != nil {
				// At once: the server is still in its start (the Go
				// runtime, its namespaces, its mounts).
				err = tamper(pid)
			}
			return func() {}, err
		})
		ready := servers.Ready(p, "")
		why := servers.Failed(p, "")
		var out string
		if ready {
			r, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := &exec.Cmd{Path: "/bin/bash", Args: []string{"bash", "-c", script}, Dir: w.project, Env: os.Environ(),
				Stdout: wr, Stderr: wr, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
			_, err = servers.Start(p, "", cmd, nil)
			wr.Close()
			if err == nil {
				b, _ := io.ReadAll(r)
				_ = cmd.Wait()
				out = strings.TrimSpace(string(b))
			}
			r.Close()
		}
		servers.Close()
		limit, nice, _ := strings.Cut(out, " ")
		if tamper == nil {
			if !ready || out == "" || limit == "64" || nice == "19" {
				t.Fatalf("control: ready %v (%v), open files limit and nice %q", ready, why, out)
			}
			continue
		}
		if limit == "64" || nice == "19" {
			t.Fatalf("%s: a command ran under what was set from outside while its server started: %q", name, out)
		}
		if ready || why == nil || !strings.Contains(why.Error(), "changed from outside while the server started") {
			t.Fatalf("%s: ready %v, why %v, output %q", name, ready, why, out)
		}
	}
}

//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needKernel skips the test, saying why, when the kernel lacks Landlock or
// user namespaces.
func needKernel(t *testing.T) {
	t.Helper()
	if s := Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
}

// world is a temporary machine: a HOME with a .bashrc, a project with
// .git/hooks, .pi and pi.toml, and a sibling folder of the project.
type world struct {
	home, project, sibling, outside string
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := t.TempDir()
	w := world{
		home:    filepath.Join(root, "home"),
		project: filepath.Join(root, "home", "proj"),
		sibling: filepath.Join(root, "home", "sibling"),
		outside: filepath.Join(root, "outside"),
	}
	for _, d := range []string{w.project + "/.git/hooks", w.project + "/.pi", w.project + "/src", w.sibling, w.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{w.home + "/.bashrc", w.project + "/pi.toml", w.project + "/.git/config"} {
		if err := os.WriteFile(f, []byte("# original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// policy is the default policy of w's project: workspace-write, writable
// project and a scratch folder, the project's config protected.
func (w world) policy(t *testing.T, mode, network string) Policy {
	scratch := filepath.Join(filepath.Dir(w.home), "scratch")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	return Policy{Mode: mode, Network: network,
		Writable:  []string{w.project, scratch},
		Protected: []string{w.project + "/.git", w.project + "/.pi", w.project + "/pi.toml"}}
}

// runIn runs `bash -c script` in dir under p (this test binary is the
// helper: the package's init serves HelperArg), returning the combined
// output and exit code.
func runIn(t *testing.T, p Policy, dir, home, script string) (string, int) {
	t.Helper()
	return runEnv(t, p, dir, append(os.Environ(), "HOME="+home), script)
}

// runEnv is runIn with the environment env: through the fork server of
// p (testServers) when viaServer is set and one serves p, else in the
// per-call helper.
func runEnv(t *testing.T, p Policy, dir string, env []string, script string) (string, int) {
	t.Helper()
	if viaServer && Served(p) {
		return runServed(t, p, dir, env, script)
	}
	argv, env, err := Wrap(p, "", []string{"/bin/bash", "-c", script}, env)
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: argv[0], Args: argv}
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = SysProcAttr(p)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run: %v", err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestAttacks tries each way to write outside the workspace or into
// protected files; each must succeed with the sandbox off (the control)
// and fail under workspace-write, leaving the target unchanged.
func TestAttacks(t *testing.T) {
	needKernel(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed")
	}
	cases := []struct {
		name        string
		script      string // writes "pwned" to the file target names
		target      func(w world) string
		writeParent bool // the project's parent folder is a writable root too (as /tmp is)
	}{
		{"bashrc", `echo pwned >> ~/.bashrc`, func(w world) string { return w.home + "/.bashrc" }, false},
		{"sibling", `echo pwned > ../sibling/x`, func(w world) string { return w.sibling + "/x" }, false},
		{"symlink out", `ln -s ../sibling link && echo pwned > link/y`, func(w world) string { return w.sibling + "/y" }, false},
		{"python", `python3 -c 'open("../sibling/p","w").write("pwned")'`, func(w world) string { return w.sibling + "/p" }, false},
		{"git hook", `echo pwned > .git/hooks/pre-commit`, func(w world) string { return ".git/hooks/pre-commit" }, false},
		{"git config", `echo pwned >> .git/config`, func(w world) string { return ".git/config" }, false},
		{"pi.toml", `echo pwned >> pi.toml`, func(w world) string { return "pi.toml" }, false},
		{"pi.toml replaced", `echo pwned > t && mv -f t pi.toml`, func(w world) string { return "pi.toml" }, false},
		{"pi dir", `echo pwned > .pi/new`, func(w world) string { return ".pi/new" }, false},
		{"project moved away", `cd .. && mv proj proj2 && mkdir -p proj/.git/hooks && echo pwned > proj/.git/hooks/pre-commit`, func(w world) string { return ".git/hooks/pre-commit" }, true},
		{"git moved away", `mv .git g2 && mkdir -p .git/hooks && echo pwned > .git/hooks/pre-commit`, func(w world) string { return ".git/hooks/pre-commit" }, false},
		{"pi dir from subdir", `cd src && echo pwned > ../.pi/sub`, func(w world) string { return ".pi/sub" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{ModeOff, ModeWorkspaceWrite} {
				w := newWorld(t)
				target := tc.target(w)
				if !filepath.IsAbs(target) {
					target = filepath.Join(w.project, target)
				}
				p := w.policy(t, mode, NetworkOn)
				if tc.writeParent {
					p.Writable = append(p.Writable, w.home)
				}
				out, _ := runIn(t, p, w.project, w.home, tc.script)
				data, _ := os.ReadFile(target)
				pwned := strings.Contains(string(data), "pwned")
				if mode == ModeOff && !pwned {
					t.Fatalf("control (sandbox off): %s was not written; output:\n%s", target, out)
				}
				if mode != ModeOff && pwned {
					t.Fatalf("sandbox %s: %s was written; output:\n%s", mode, target, out)
				}
			}
		})
	}
}

// TestWorkspaceStillWritable: the project, its subfolders and the
// scratch root stay writable, renames included, and /dev/null works.
func TestWorkspaceStillWritable(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	script := `set -e; echo a > f; mkdir -p src/deep; echo b > src/deep/g; mv f src/deep/f; echo c > /dev/null; echo d > ` + p.Writable[1] + `/s; rm src/deep/g; echo ok`
	out, code := runIn(t, p, w.project, w.home, script)
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// TestReadOnlyMode: nothing is writable, not even the project.
func TestReadOnlyMode(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	out, code := runIn(t, w.policy(t, ModeReadOnly, NetworkOn), w.project, w.home, `cat pi.toml && echo x > new`)
	if code == 0 || !strings.Contains(out, "# original") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(w.project, "new")); err == nil {
		t.Fatal("read-only mode let a file be created in the project")
	}
}

// TestEtcAsRoot: /etc stays closed even when pi runs as root (the command
// gets a user namespace, so root's capabilities do not count on the host).
func TestEtcAsRoot(t *testing.T) {
	needKernel(t)
	if os.Getuid() != 0 {
		t.Skip("this attack is for root; the test runs as another user")
	}
	w := newWorld(t)
	name := "/etc/pi-sandbox-test-" + filepath.Base(filepath.Dir(w.home))
	t.Cleanup(func() { os.Remove(name) })
	out, _ := runIn(t, w.policy(t, ModeOff, NetworkOn), w.project, w.home, `echo pwned > `+name)
	if _, err := os.Stat(name); err != nil {
		t.Fatalf("control: root could not write %s: %s", name, out)
	}
	os.Remove(name)
	out, _ = runIn(t, w.policy(t, ModeWorkspaceWrite, NetworkOn), w.project, w.home,
		`echo pwned > `+name+`; mount -o remount,rw /etc 2>&1; umount `+w.project+`/.git 2>&1; echo pwned > .git/x`)
	if _, err := os.Stat(name); err == nil {
		t.Fatalf("root wrote %s under the sandbox: %s", name, out)
	}
	if _, err := os.Stat(w.project + "/.git/x"); err == nil {
		t.Fatalf("root unmounted the protection of .git: %s", out)
	}
}

// TestBackgroundProcess: a process the command leaves behind keeps the
// sandbox after the command returned.
func TestBackgroundProcess(t *testing.T) {
	needKernel(t)
	for _, mode := range []string{ModeOff, ModeWorkspaceWrite} {
		w := newWorld(t)
		p := w.policy(t, mode, NetworkOn)
		done := filepath.Join(p.Writable[1], "done")
		gate := filepath.Join(p.Writable[1], "gate")
		// The background job waits until the command has returned (the
		// test creates gate), then tries its write.
		script := `(while [ ! -e ` + gate + ` ]; do sleep 0.01; done; echo pwned > ` + w.sibling + `/bg; touch ` + done + `) >/dev/null 2>&1 & disown; echo started`
		out, _ := runIn(t, p, w.project, w.home, script)
		if !strings.Contains(out, "started") {
			t.Fatalf("%s: %s", mode, out)
		}
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitFile(t, done)
		_, err := os.Stat(w.sibling + "/bg")
		if mode == ModeOff && err != nil {
			t.Fatal("control: the background job could not write with the sandbox off")
		}
		if mode != ModeOff && err == nil {
			t.Fatal("a background job wrote outside the workspace after the command returned")
		}
	}
}

// waitFile waits for the file a process is known to write.
func waitFile(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestNetworkOff: a loopback server of the host is out of reach with the
// network off, and reachable with it on (the control).
func TestNetworkOff(t *testing.T) {
	needKernel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	script := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && head -1 <&3`
	for _, network := range []string{NetworkOn, NetworkOff} {
		w := newWorld(t)
		out, code := runIn(t, w.policy(t, ModeWorkspaceWrite, network), w.project, w.home, script)
		got := code == 0 && strings.Contains(out, "hello")
		if network == NetworkOn && !got {
			t.Fatalf("control (network on): exit %d: %s", code, out)
		}
		if network == NetworkOff && got {
			t.Fatalf("network off reached the host's loopback server: %s", out)
		}
	}
}

// TestRefusals: what the sandbox refused is named from the command's own
// error output; a plain error that is not the sandbox's is not.
func TestRefusals(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	p := w.policy(t, ModeWorkspaceWrite, NetworkOff)
	out, _ := runIn(t, p, w.project, w.home, `echo x >> ~/.bashrc; touch .git/hooks/pre-commit; ln -s ../sibling l; echo > l/z; cat missing-file; curl -s http://127.0.0.1:1 || exec 3<>/dev/tcp/10.0.0.1/80`)
	got := strings.Join(p.Refusals(out, w.project, w.home), "\n")
	for _, want := range []string{
		"Sandbox refused: write outside the workspace: ~/.bashrc (sandbox workspace-write)",
		"Sandbox refused: write to a protected path: ~/proj/.git/hooks/pre-commit",
		"Sandbox refused: write outside the workspace: ~/proj/l/z (sandbox workspace-write)",
		"Sandbox refused: network access (sandbox network off)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("refusals lack %q; got:\n%s\noutput:\n%s", want, got, out)
		}
	}
	if strings.Contains(got, "missing-file") {
		t.Errorf("a missing file was blamed on the sandbox:\n%s", got)
	}
}

// TestPathCandidates: the path is found in the error texts of the common
// tools.
func TestPathCandidates(t *testing.T) {
	for line, want := range map[string]string{
		"bash: line 1: /etc/x: Permission denied":                   "/etc/x",
		"touch: cannot touch '/etc/x': Permission denied":           "/etc/x",
		"sh: 1: cannot create /etc/x: Read-only file system":        "/etc/x",
		"PermissionError: [Errno 13] Permission denied: '/etc/x'":   "/etc/x",
		"mkdir /home/u/.cache: permission denied":                   "/home/u/.cache",
		"mv: cannot move 'pi.toml' to ‘x’: Device or resource busy": "pi.toml",
		"open /tmp/ä/Ünïcode: permission denied":                    "/tmp/ä/Ünïcode",
	} {
		if got := pathCandidates(line); !slices.Contains(got, want) {
			t.Errorf("%q: candidates %q lack %q", line, got, want)
		}
	}
}

// TestSignalOutside: a sandboxed command cannot signal a process outside
// the sandbox (pi, your editor), though it can its own; the control kills
// it with the sandbox off.
func TestSignalOutside(t *testing.T) {
	needKernel(t)
	for _, mode := range []string{ModeOff, ModeWorkspaceWrite} {
		victim := exec.Command("sleep", "60")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- victim.Wait() }()
		w := newWorld(t)
		out, _ := runIn(t, w.policy(t, mode, NetworkOn), w.project, w.home,
			`sleep 30 & own=$!; kill $own && echo own-killed; kill `+strconv.Itoa(victim.Process.Pid)+`; echo sent`)
		if !strings.Contains(out, "own-killed") {
			t.Fatalf("%s: the command could not signal its own child: %s", mode, out)
		}
		if mode != ModeOff {
			// The kill was refused, and the victim is still alive; then end it.
			if !strings.Contains(out, "Operation not permitted") {
				t.Fatalf("the kill was not refused: %s", out)
			}
			select {
			case err := <-done:
				t.Fatalf("a sandboxed command killed a process outside (%v): %s", err, out)
			default:
			}
			victim.Process.Kill()
			<-done
			continue
		}
		err := <-done // the control's kill ends it (else sleep 60 ends and the test fails)
		var ee *exec.ExitError
		killedByTERM := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM
		if !killedByTERM {
			t.Fatalf("control: the sandbox-off command did not kill the victim (%v): %s", err, out)
		}
	}
}

// TestLoaderVariables: a library planted in the workspace and named by
// LD_PRELOAD (or LD_LIBRARY_PATH) in pi's environment runs only inside
// the sandbox: the helper, which runs before the sandbox, never loads it,
// and the command still gets the variable. The control writes outside
// with the sandbox off.
func TestLoaderVariables(t *testing.T) {
	needKernel(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the planted library")
	}
	for _, mode := range []string{ModeOff, ModeWorkspaceWrite} {
		w := newWorld(t)
		src := filepath.Join(w.project, "evil.c")
		lib := filepath.Join(w.project, "evil.so")
		marker := filepath.Join(w.outside, "loaded")
		code := `#include <stdio.h>
__attribute__((constructor)) static void evil(void) { FILE *f = fopen("` + marker + `", "a"); if (f) { fputs("pwned\n", f); fclose(f); } }
`
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
			t.Skipf("cannot build the planted library: %v %s", err, out)
		}
		env := append(os.Environ(), "HOME="+w.home, "LD_PRELOAD="+lib)
		out, _ := runEnv(t, w.policy(t, mode, NetworkOn), w.project, env, `echo "preload=$LD_PRELOAD"`)
		if !strings.Contains(out, "preload="+lib) {
			t.Fatalf("%s: the command lost LD_PRELOAD: %s", mode, out)
		}
		_, err := os.Stat(marker)
		if mode == ModeOff && err != nil {
			t.Fatalf("control: the library did not run: %s", out)
		}
		if mode != ModeOff && err == nil {
			t.Fatalf("the planted library ran outside the sandbox: %s", out)
		}
	}
}

// TestDefaultHelperIsTheRunningFile: the helper is the file the program
// runs from (/proc/self/exe), not whatever its path names now.
func TestDefaultHelperIsTheRunningFile(t *testing.T) {
	argv, _, err := Wrap(Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}, "", []string{"/bin/true"}, nil)
	if err != nil || argv[0] != SelfHelper || argv[1] != HelperArg {
		t.Fatalf("argv %q, %v", argv, err)
	}
}

// TestResolverSocketsHidden: with the network off or allow, the folders
// of local resolvers' sockets (Policy.Hide; here a folder with a listening
// socket standing in for nscd's) are empty inside, so a lookup cannot
// leave through them; with the network on (the control) the socket is
// there.
func TestResolverSocketsHidden(t *testing.T) {
	needKernel(t)
	dir := filepath.Join(t.TempDir(), "nscd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "socket"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct{ mode, network string }{{ModeWorkspaceWrite, NetworkOn}, {ModeWorkspaceWrite, NetworkOff}, {ModeFull, NetworkOff}} {
		network := c.network
		w := newWorld(t)
		p := w.policy(t, c.mode, network)
		p.Hide = []string{dir}
		out, _ := runIn(t, p, w.project, w.home, `test -S `+dir+`/socket && echo visible; echo done`)
		visible := strings.Contains(out, "visible")
		if !strings.Contains(out, "done") {
			t.Fatalf("%s: %s", network, out)
		}
		if network == NetworkOn && !visible {
			t.Fatalf("control (network on): the socket is hidden: %s", out)
		}
		if network == NetworkOff && visible {
			t.Fatalf("network off: the resolver's socket is reachable: %s", out)
		}
	}
}

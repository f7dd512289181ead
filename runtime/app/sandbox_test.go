package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// TestSandboxByDefault: an assembled runtime runs bash under
// workspace-write by default (the test binary is its own helper, as an
// embedding program is): the project is writable, a sibling folder, the
// project's pi.toml and PI_HOME are not, and the result names the
// refusals; --sandbox off is the control.
func TestSandboxByDefault(t *testing.T) {
	if s := ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, mode := range []string{"off", ""} {
		dir, home := project(t)
		sibling := outsideTmp(t)
		write(t, filepath.Join(dir, "pi.toml"), "[tools]\nactive = [\"bash\"]\n")
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Sandbox: mode})
		if err != nil {
			t.Fatal(err)
		}
		script := "echo a > in.txt; echo b > " + sibling + "/x; echo c >> pi.toml; echo d > " + home + "/pi.toml; echo done"
		input, _ := json.Marshal(map[string]string{"command": script})
		res, err := rt.CallTool(context.Background(), "bash", "c1", input, nil)
		rt.Close()
		if err != nil {
			t.Fatal(err)
		}
		text := res.Text()
		if _, err := os.Stat(filepath.Join(dir, "in.txt")); err != nil {
			t.Fatalf("mode %q: the project is not writable: %s", mode, text)
		}
		_, errSib := os.Stat(sibling + "/x")
		_, errHome := os.Stat(home + "/pi.toml")
		toml, _ := os.ReadFile(filepath.Join(dir, "pi.toml"))
		wrote := errSib == nil && errHome == nil && strings.Contains(string(toml), "c")
		if mode == "off" {
			if !wrote {
				t.Fatalf("control: writes failed with --sandbox off: %s", text)
			}
			continue
		}
		if errSib == nil || errHome == nil || strings.Contains(string(toml), "c\n") {
			t.Fatalf("default sandbox let a write through: %s", text)
		}
		for _, want := range []string{"Sandbox refused: write outside the workspace: " + shown(sibling) + "/x (sandbox workspace-write)",
			"Sandbox refused: write to a protected path: " + filepath.Join(dir, "pi.toml"),
			"Sandbox refused: write to a protected path: " + home + "/pi.toml"} {
			if !strings.Contains(text, want) {
				t.Errorf("result lacks %q:\n%s", want, text)
			}
		}
	}

}

// TestSandboxNetworkAllow: with network = "allow" in the global pi.toml,
// bash reaches a listed host (a loopback server named by its literal
// address) through pi's proxy, and the result names a host that is not
// listed; the proxy ends with the runtime.
func TestSandboxNetworkAllow(t *testing.T) {
	if s := ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello-from-host\n")
	}))
	defer srv.Close()
	hostport := strings.TrimPrefix(srv.URL, "http://")
	dir, home := project(t)
	write(t, filepath.Join(dir, "pi.toml"), "[tools]\nactive = [\"bash\"]\n")
	write(t, filepath.Join(home, "pi.toml"), "[sandbox]\nnetwork = \"allow\"\nallow_hosts = [\"127.0.0.1\"]\n")
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) string {
		return `hp=${HTTP_PROXY#http://}; exec 3<>/dev/tcp/127.0.0.1/${hp##*:} && printf 'GET ` + url + ` HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 && timeout 10 cat <&3; `
	}
	script := get("http://"+hostport+"/") + get("http://evil.example/")
	input, _ := json.Marshal(map[string]string{"command": script})
	res, err := rt.CallTool(context.Background(), "bash", "c1", input, nil)
	info := rt.Sandbox()
	rt.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	if !strings.Contains(text, "hello-from-host") {
		t.Fatalf("the listed host was not reached: %s", text)
	}
	if !strings.Contains(text, "Sandbox refused: network: host evil.example is not in [sandbox] allow_hosts") {
		t.Errorf("the refusal is not named: %s", text)
	}
	if info.Network != "allow" {
		t.Errorf("Sandbox() = %+v", info)
	}
}

// shown is path as refusal lines show it: "~/…" under the home folder.
func shown(path string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(path, home+"/") {
		return "~" + path[len(home):]
	}
	return path
}

// outsideTmp makes a folder outside the sandbox's default writable roots
// (/tmp, $TMPDIR, ~/.cache; the project is a t.TempDir): in the home
// folder, else in the package's folder (a checkout under /tmp is inside
// a root), removed after the test; it skips when both are inside one.
func outsideTmp(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	var roots []string // the default writable roots besides the project
	for _, r := range []string{"/tmp", os.TempDir(), filepath.Join(home, ".cache")} {
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		roots = append(roots, r)
	}
	for _, base := range []string{home, "."} {
		if base == "" {
			continue
		}
		abs, err := filepath.Abs(base)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		inside := false
		for _, r := range roots {
			if abs == r || strings.HasPrefix(abs, r+string(filepath.Separator)) {
				inside = true
			}
		}
		if inside {
			continue
		}
		d, err := os.MkdirTemp(abs, "pi-sandbox-outside-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skip("no folder outside the sandbox's default writable roots: the home folder and the checkout are both under /tmp, $TMPDIR or ~/.cache")
	return ""
}

// TestSandboxGoBuild: a real `go build` with a fresh GOCACHE under
// ~/.cache works under the default sandbox and its default writable
// roots (HOME is a folder outside /tmp, so only the default ~/.cache root
// makes the cache writable); under read-only the same build fails.
func TestSandboxGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the standard library into a fresh cache")
	}
	if s := ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	home := outsideTmp(t)
	t.Setenv("HOME", home)
	for _, mode := range []string{"read-only", ""} {
		dir, piHome := project(t)
		write(t, filepath.Join(dir, "go.mod"), "module hello\n\ngo 1.21\n")
		write(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the sandbox\") }\n")
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: piHome, Sandbox: mode})
		if err != nil {
			t.Fatal(err)
		}
		script := "export GOCACHE=$HOME/.cache/go-build-fresh GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOPROXY=off; " + goBin + " build -o hello . && ./hello"
		input, _ := json.Marshal(map[string]any{"command": script, "timeout": 600})
		res, err := rt.CallTool(context.Background(), "bash", "c1", input, nil)
		rt.Close()
		if err != nil {
			t.Fatal(err)
		}
		built := !res.IsError && strings.Contains(res.Text(), "hello from the sandbox")
		if mode == "" && !built {
			t.Fatalf("go build under the default sandbox failed:\n%s", res.Text())
		}
		if mode == "read-only" && built {
			t.Fatalf("go build wrote under read-only:\n%s", res.Text())
		}
	}
}

// TestSandboxProtectsWorktreeGitDir: in a git worktree (.git is a file),
// the git folder it points to and the repository's common folder (its
// hooks) are protected too, even where they lie in a writable root.
func TestSandboxProtectsWorktreeGitDir(t *testing.T) {
	if s := ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	main := t.TempDir() // under /tmp, a writable root
	if err := os.MkdirAll(filepath.Join(main, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitdir := filepath.Join(main, ".git", "worktrees", "wt")
	if err := os.MkdirAll(gitdir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(gitdir, "commondir"), "../..\n")
	dir, home := project(t)
	os.Remove(filepath.Join(dir, ".git"))
	write(t, filepath.Join(dir, ".git"), "gitdir: "+gitdir+"\n")
	for _, mode := range []string{"off", ""} {
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Sandbox: mode})
		if err != nil {
			t.Fatal(err)
		}
		hook := filepath.Join(main, ".git", "hooks", "pre-commit")
		input, _ := json.Marshal(map[string]string{"command": "echo pwned > " + hook + "; echo x > " + gitdir + "/HEAD"})
		res, err := rt.CallTool(context.Background(), "bash", "c1", input, nil)
		rt.Close()
		if err != nil {
			t.Fatal(err)
		}
		_, errHook := os.Stat(hook)
		if mode == "off" {
			if errHook != nil {
				t.Fatalf("control: %s", res.Text())
			}
			os.Remove(hook)
			continue
		}
		if errHook == nil {
			t.Fatalf("the repository's hook was written from a worktree: %s", res.Text())
		}
	}
}

// TestSandboxMissingKernelSupport: where the kernel lacks what the
// sandbox needs, an explicit mode (pi.toml, --sandbox, network off) is an
// error naming what is missing, the implicit default runs unsandboxed
// with one warning, and plan mode is refused while bash is active.
func TestSandboxMissingKernelSupport(t *testing.T) {
	saved := sandboxProbe
	t.Cleanup(func() { sandboxProbe = saved })
	sandboxProbe = func() SandboxSupport { return SandboxSupport{Missing: "the kernel has no Landlock (test)"} }

	dir, home := project(t)
	for _, o := range []Options{
		{Cwd: dir, PIHome: home, Sandbox: "read-only"},
		{Cwd: dir, PIHome: home, Sandbox: "workspace-write"},
	} {
		if _, err := Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "sandbox "+o.Sandbox+" (--sandbox) cannot run here: the kernel has no Landlock (test)") {
			t.Errorf("--sandbox %s: %v", o.Sandbox, err)
		}
	}
	write(t, filepath.Join(home, "pi.toml"), "[sandbox]\nnetwork = \"off\"\n")
	if _, err := Open(context.Background(), Options{Cwd: dir, PIHome: home}); err == nil || !strings.Contains(err.Error(), "cannot run here") {
		t.Errorf("network off: %v", err)
	}
	os.Remove(filepath.Join(home, "pi.toml"))

	var warnings []string
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, OnWarning: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if len(warnings) != 0 {
		t.Errorf("warned before a command ran: %q", warnings)
	}
	outside := outsideTmp(t)
	for range 2 {
		input, _ := json.Marshal(map[string]string{"command": "echo x > " + outside + "/ran"})
		if res, err := rt.CallTool(context.Background(), "bash", "c1", input, nil); err != nil || res.IsError {
			t.Fatalf("the default ran no command: %v %s", err, res.Text())
		}
	}
	if _, err := os.Stat(outside + "/ran"); err != nil {
		t.Error("the command did not run unsandboxed")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "commands run without the sandbox: the kernel has no Landlock (test)") {
		t.Errorf("warnings %q", warnings)
	}
	if s := rt.Sandbox(); s.Mode != "off" || s.Off == "" {
		t.Errorf("sandbox info %+v", s)
	}
	if err := rt.SetPlanMode(true); !errors.Is(err, ErrPlanNeedsSandbox) || rt.PlanMode() {
		t.Errorf("plan mode without a sandbox: %v (on: %v)", err, rt.PlanMode())
	}
	if _, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Sandbox: "off"}); err != nil {
		t.Errorf("--sandbox off: %v", err)
	}
}

// TestSandboxOffRuleAndRerun: a permission rule with sandbox = "off" runs
// its commands outside the sandbox (a touch outside lands, another
// command's write does not); after a refusal an interactive approver is
// asked once whether to re-run outside (yes: the write lands), --yes's
// approver never is.
func TestSandboxOffRuleAndRerun(t *testing.T) {
	if s := ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, approver := range []string{"person", "yes"} {
		dir, home := project(t)
		outside := outsideTmp(t)
		write(t, filepath.Join(dir, "pi.toml"), "[tools]\nactive = [\"bash\"]\n")
		write(t, filepath.Join(home, "pi.toml"), "[permissions]\ndefault = \"allow\"\n\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"touch\", \"*\"]\ndecision = \"allow\"\nsandbox = \"off\"\n")
		var questions []string
		var ap Approver = YesApprover{}
		if approver == "person" {
			ap = ApproverFunc(func(_ context.Context, req tool.ApprovalRequest) (ApprovalAnswer, error) {
				questions = append(questions, req.Questions...)
				return ApproveOnce, nil
			})
		}
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Approver: ap})
		if err != nil {
			t.Fatal(err)
		}
		call := func(script string) string {
			input, _ := json.Marshal(map[string]string{"command": script})
			res, err := rt.CallTool(context.Background(), "bash", "c1", input, nil)
			if err != nil {
				t.Fatal(err)
			}
			return res.Text()
		}
		if text := call("touch " + outside + "/ruled"); len(questions) != 0 {
			t.Fatalf("%s: a sandbox = off call asked %q: %s", approver, questions, text)
		}
		text := call("echo x > " + outside + "/asked")
		rt.Close()
		if _, err := os.Stat(outside + "/ruled"); err != nil {
			t.Errorf("%s: the sandbox = \"off\" rule's command was sandboxed", approver)
		}
		_, err = os.Stat(outside + "/asked")
		if approver == "yes" {
			if err == nil || !strings.Contains(text, "Sandbox refused: write outside the workspace") {
				t.Errorf("--yes re-ran a refused call outside the sandbox: %s", text)
			}
			continue
		}
		if len(questions) != 1 || !strings.HasPrefix(questions[0], RerunQuestion+" Sandbox refused: write outside the workspace: "+shown(outside)+"/asked") {
			t.Errorf("questions %q", questions)
		}
		if err != nil || !strings.Contains(text, "the user approved one re-run outside the sandbox") {
			t.Errorf("the approved re-run did not write: %s", text)
		}
	}
}

// TestSandboxServerReported: the runtime says whether its bash commands
// start through the sandbox's fork server and, when the server cannot
// start (here a helper program that is not one), why, with what the
// helper printed (pi doctor shows it); the running program as the helper
// is the control.
func TestSandboxServerReported(t *testing.T) {
	if s := ProbeSandbox(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	broken := filepath.Join(t.TempDir(), "helper")
	write(t, broken, "#!/bin/sh\necho 'not a pi helper' >&2\nexit 3\n")
	if err := os.Chmod(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, helper := range []string{"", broken} {
		dir, home := project(t)
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, SandboxHelper: helper})
		if err != nil {
			t.Fatal(err)
		}
		served, why := rt.SandboxServer()
		rt.Close()
		if helper == "" {
			if !served || why != nil {
				t.Fatalf("control: the fork server did not start: %v", why)
			}
			continue
		}
		if served || why == nil || !strings.Contains(why.Error(), "the sandbox server did not start") || !strings.Contains(why.Error(), "not a pi helper") {
			t.Fatalf("a broken helper: served %v, %v", served, why)
		}
	}
}

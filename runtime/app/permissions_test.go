package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/permission"
	"github.com/pi-go/pi/runtime/tool"
)

const permsToml = `[permissions]
default = "allow"

[[permissions.rules]]
tool = "bash"
command = ["touch"]
decision = "deny"
reason = "no new files from bash"

[[permissions.rules]]
tool = "bash"
command = ["git", "push"]
decision = "ask"
reason = "pushing needs a look"

[[permissions.rules]]
tool = "bash"
command = ["npm", "publish"]
decision = "ask"

[[permissions.rules]]
tool = "write|edit"
path = [".env*"]
decision = "deny"
reason = "secrets"
`

func callText(t *testing.T, rt *Runtime, name, input string) (string, bool) {
	t.Helper()
	res, err := rt.CallTool(context.Background(), name, "c1", json.RawMessage(input), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Text(), res.IsError
}

// TestPermissionsInCallTool: a deny blocks the call before it runs (the
// command has no effect), with the rule's file:line; an ask without anyone
// to ask is blocked with "needs approval"; --yes approves the ask but never
// the deny; path rules see the file tools' real paths.
func TestPermissionsInCallTool(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), permsToml)
	for _, yes := range []bool{false, true} {
		o := Options{Cwd: dir, PIHome: home}
		if yes {
			o.Approver = YesApprover{}
		}
		rt, err := Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		text, isErr := callText(t, rt, "bash", `{"command":"echo ok && touch marker"}`)
		if !isErr || !strings.HasPrefix(text, "Blocked by permissions: ") || !strings.HasSuffix(text, "pi.toml:4 bash touch (no new files from bash)") {
			t.Errorf("yes=%v deny: %q", yes, text)
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatalf("yes=%v: the denied command ran", yes)
		}
		text, isErr = callText(t, rt, "bash", `{"command":"git push 2>&1 || echo pushed"}`)
		switch {
		case yes && (isErr || !strings.Contains(text, "pushed")):
			t.Errorf("--yes must approve an ask: %q", text)
		case !yes && (!isErr || !strings.Contains(text, "needs approval: ") || !strings.Contains(text, "bash git push (pushing needs a look) (run interactively, or pass --yes)")):
			t.Errorf("ask without a person: %q", text)
		}
		text, isErr = callText(t, rt, "write", `{"path":"sub/.env.local","content":"KEY=1"}`)
		if !isErr || !strings.HasSuffix(text, "pi.toml:21 write|edit .env* (secrets)") {
			t.Errorf("path deny: %q", text)
		}
		if _, err := os.Stat(filepath.Join(dir, "sub", ".env.local")); err == nil {
			t.Fatal("the denied write happened")
		}
		if text, isErr = callText(t, rt, "bash", `{"command":"echo fine"}`); isErr || text != "fine\n" && text != "fine" {
			t.Errorf("allowed call: %q", text)
		}
		rt.Close()
	}
}

// TestPermissionsSeeHookRewrites: an extension's tool_call hook turns an
// allowed command into a denied one; the rules judge what would run.
func TestPermissionsSeeHookRewrites(t *testing.T) {
	dir, home := project(t)
	wasm := plugin.BuildGo(t, "runtime/app/testdata/rewrite")
	write(t, filepath.Join(home, "pi.toml"), permsToml+fmt.Sprintf("\n[[extensions]]\nname = \"rewrite\"\npath = %q\nsha256 = %q\n", wasm, sha(t, wasm)))
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	text, isErr := callText(t, rt, "bash", `{"command":"echo harmless"}`)
	if !isErr || !strings.Contains(text, "Blocked by permissions:") || !strings.Contains(text, "bash touch") {
		t.Errorf("rewritten call: %q", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "victim")); err == nil {
		t.Fatal("the rewritten, denied command ran")
	}
}

// TestPermissionsAskAlways: "always" is remembered per rule for the
// runtime's life: the same rule is not asked again (whatever the command),
// another rule is, and a call with two asking rules asks about the one not
// yet approved.
func TestPermissionsAskAlways(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), permsToml)
	var mu sync.Mutex
	var asked []string
	answer := ApproveAlways
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Approver: ApproverFunc(func(_ context.Context, req tool.ApprovalRequest) (ApprovalAnswer, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, strings.Join(req.Questions, " + "))
		return answer, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	run := func(cmd string) bool {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		_, isErr := callText(t, rt, "bash", string(in))
		return !isErr
	}
	if !run("git push -n 2>/dev/null; true") || len(asked) != 1 || !strings.Contains(asked[0], "bash git push (pushing needs a look)") {
		t.Fatalf("first push: asked %q", asked)
	}
	if !run("git push origin 2>/dev/null; true") || len(asked) != 1 {
		t.Errorf("the rule was approved always, but pi asked again: %q", asked)
	}
	answer = ApproveOnce
	if !run("git push 2>/dev/null; npm publish 2>/dev/null; true") || len(asked) != 2 || strings.Contains(asked[1], "git push") || !strings.Contains(asked[1], "bash npm publish") {
		t.Errorf("only the rule not yet approved is asked: %q", asked)
	}
	if !run("npm publish 2>/dev/null; true") || len(asked) != 3 {
		t.Errorf("a once answer is not remembered: %q", asked)
	}
	answer = Decline
	if run("npm publish --dry-run") || len(asked) != 4 {
		t.Errorf("a declined call ran: %q", asked)
	}
	if text, isErr := callText(t, rt, "bash", `{"command":"touch x"}`); !isErr || !strings.Contains(text, "Blocked by permissions") || len(asked) != 4 {
		t.Errorf("a deny is never asked: %q %q", text, asked)
	}
}

// TestPermissionsTrust: a project's allow rules and default apply only once
// it is trusted; its deny rules apply regardless.
func TestPermissionsTrust(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), "[permissions]\ndefault = \"ask\"\n")
	write(t, filepath.Join(dir, "pi.toml"), "[permissions]\ndefault = \"allow\"\n\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"echo\"]\ndecision = \"allow\"\n\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"printf\"]\ndecision = \"deny\"\n")
	for _, trust := range []bool{false, true} {
		var warnings []string
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: trust, OnWarning: func(w string) { warnings = append(warnings, w) }})
		if err != nil {
			t.Fatal(err)
		}
		echo, _ := rt.CheckPermission("bash", json.RawMessage(`{"command":"echo hi"}`))
		other, _ := rt.CheckPermission("bash", json.RawMessage(`{"command":"date"}`))
		printf, _ := rt.CheckPermission("bash", json.RawMessage(`{"command":"printf hi"}`))
		want := []permission.Decision{permission.Ask, permission.Ask, permission.Deny}
		if trust {
			want = []permission.Decision{permission.Allow, permission.Allow, permission.Deny}
		}
		if got := []permission.Decision{echo.Decision, other.Decision, printf.Decision}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("trust=%v: echo, date, printf = %v, want %v", trust, got, want)
		}
		info := rt.Permissions()
		if !trust && (len(warnings) != 1 || len(info.Rules) != 2 || info.Rules[1].Ignored == "" || info.Default != permission.Ask ||
			info.IgnoredDefault != permission.Allow || info.IgnoredDefaultAt != "pi.toml:2") {
			t.Errorf("untrusted: warnings %q, %+v", warnings, info)
		}
		rt.Close()
	}
}

// TestBashDefaultTimeoutFromConfig: [tools.bash] default_timeout ends a
// command the model gives no timeout.
func TestBashDefaultTimeoutFromConfig(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), "[tools.bash]\ndefault_timeout = 1\n")
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if text, isErr := callText(t, rt, "bash", `{"command":"sleep 30"}`); !isErr || !strings.Contains(text, "Command timed out after 1 seconds") {
		t.Errorf("got %q", text)
	}
}

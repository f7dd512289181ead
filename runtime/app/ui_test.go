package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testUI is a front end's UI that answers from a list and records what it
// was asked.
type testUI struct {
	mu      sync.Mutex
	answers []bool
	asked   []string
	notes   []string
}

func (u *testUI) Confirm(_ context.Context, title, message string) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asked = append(u.asked, title+"|"+message)
	a := u.answers[0]
	u.answers = u.answers[1:]
	return a, nil
}
func (u *testUI) Select(context.Context, string, []string) (string, bool, error) {
	return "", false, nil
}
func (u *testUI) Input(context.Context, string, string) (string, bool, error) { return "", false, nil }
func (u *testUI) Notify(m string, l NotifyLevel) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notes = append(u.notes, string(l)+":"+m)
}

// Options.UI answers the calls that permission rules ask about when no
// Approver is given (UIApprover): yes runs the call, no blocks it; the
// question names the tool and the command.
func TestUIAsks(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, "pi.toml"), "[permissions]\ndefault = \"allow\"\n[[permissions.rules]]\ntool = \"bash\"\ndecision = \"ask\"\n")
	ui := &testUI{answers: []bool{true, false}}
	rt, err := Open(context.Background(), Options{Cwd: t.TempDir(), PIHome: home, UI: ui})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.UI() != UI(ui) {
		t.Fatal("UI() is not Options.UI")
	}
	in := json.RawMessage(`{"command":"echo ran"}`)
	r1, err := rt.CallTool(context.Background(), "bash", "c1", in, nil)
	if err != nil || r1.IsError || !strings.Contains(r1.Content[0].Text, "ran") {
		t.Fatalf("approved call: %+v, %v", r1, err)
	}
	r2, _ := rt.CallTool(context.Background(), "bash", "c2", in, nil)
	if !r2.IsError {
		t.Fatalf("declined call ran: %+v", r2)
	}
	if len(ui.asked) != 2 || !strings.HasPrefix(ui.asked[0], "Allow bash?|") || !strings.HasSuffix(ui.asked[0], "$ echo ran") {
		t.Fatalf("asked %q", ui.asked)
	}
	// An Approver given with the UI answers instead of the person.
	rtYes, err := Open(context.Background(), Options{Cwd: t.TempDir(), PIHome: home, UI: ui, Approver: YesApprover{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rtYes.Close()
	if r, _ := rtYes.CallTool(context.Background(), "bash", "c3", in, nil); r.IsError || len(ui.asked) != 2 {
		t.Fatalf("YesApprover with a UI: %+v, asked %q", r, ui.asked)
	}
	// Without a UI, the headless one declines and logs.
	rt2, err := Open(context.Background(), Options{Cwd: t.TempDir(), PIHome: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if ok, _ := rt2.UI().Confirm(context.Background(), "t", "m"); ok {
		t.Fatal("the headless UI said yes")
	}
}

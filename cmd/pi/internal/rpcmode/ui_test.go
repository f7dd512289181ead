package rpcmode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/app"
)

// uiPeer reads the requests a UI writes and answers them.
type uiPeer struct {
	t    *testing.T
	ui   *UI
	reqs chan map[string]any
}

func newUIPeer(t *testing.T) *uiPeer {
	r, w := io.Pipe()
	p := &uiPeer{t: t, ui: NewUI(NewOutput(w)), reqs: make(chan map[string]any, 10)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not JSON: %s", sc.Text())
			}
			p.reqs <- m
		}
	}()
	t.Cleanup(func() { w.Close() })
	return p
}

func (p *uiPeer) next() map[string]any {
	p.t.Helper()
	select {
	case m := <-p.reqs:
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("no request")
		return nil
	}
}

// answer resolves the request with the response fields.
func (p *uiPeer) answer(req map[string]any, fields string) {
	p.ui.resolve([]byte(fmt.Sprintf(`{"type":"extension_ui_response","id":%q%s}`, req["id"], fields)))
}

// The dialogs of the extension UI sub-protocol, in the reference's shapes:
// select and input answer a value or nothing; a dismissal, an unknown
// field or a passed deadline is the default; notify waits for nothing.
func TestRPCUIDialogs(t *testing.T) {
	p := newUIPeer(t)
	ctx := context.Background()

	type sel struct {
		v  string
		ok bool
	}
	got := make(chan sel, 1)
	go func() {
		v, ok, _ := p.ui.Select(ctx, "Pick one", []string{"Allow", "Block"})
		got <- sel{v, ok}
	}()
	req := p.next()
	if req["type"] != "extension_ui_request" || req["method"] != "select" || req["title"] != "Pick one" || len(req["options"].([]any)) != 2 {
		t.Fatalf("select request %v", req)
	}
	p.answer(req, `,"confirmed":true`) // not an answer to a select
	if r := <-got; r.ok {
		t.Fatalf("a select answered with confirmed: %+v", r)
	}
	go func() {
		v, ok, _ := p.ui.Select(ctx, "Pick again", nil)
		got <- sel{v, ok}
	}()
	req = p.next()
	p.answer(req, `,"value":"Block"`)
	p.answer(req, `,"value":"Allow"`) // a second answer is dropped
	if r := <-got; !r.ok || r.v != "Block" {
		t.Fatalf("select = %+v", r)
	}

	go func() {
		v, ok, _ := p.ui.Input(ctx, "Name", "type it")
		got <- sel{v, ok}
	}()
	req = p.next()
	if req["method"] != "input" || req["placeholder"] != "type it" {
		t.Fatalf("input request %v", req)
	}
	p.answer(req, `,"cancelled":true`)
	if r := <-got; r.ok {
		t.Fatalf("a cancelled input = %+v", r)
	}

	// A deadline is sent as timeout (ms) and answers the default.
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	yes := make(chan bool, 1)
	go func() {
		ok, _ := p.ui.Confirm(dctx, "Sure?", "really")
		yes <- ok
	}()
	req = p.next()
	if ms, _ := req["timeout"].(float64); req["method"] != "confirm" || ms <= 0 || ms > 300 {
		t.Fatalf("confirm request %v", req)
	}
	if <-yes {
		t.Fatal("a confirm past its deadline said yes")
	}
	p.answer(req, `,"confirmed":true`) // too late: dropped

	p.ui.Notify("heads up", app.NotifyWarning)
	if req = p.next(); req["method"] != "notify" || req["message"] != "heads up" || req["notifyType"] != "warning" {
		t.Fatalf("notify %v", req)
	}

	// Closed (stdin ended): pending and new dialogs get the default.
	go func() {
		ok, _ := p.ui.Confirm(ctx, "Pending", "")
		yes <- ok
	}()
	p.next()
	p.ui.close()
	if <-yes {
		t.Fatal("a pending confirm said yes after close")
	}
	if ok, _ := p.ui.Confirm(ctx, "After", ""); ok {
		t.Fatal("a confirm after close said yes")
	}
}

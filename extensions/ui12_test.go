package extensions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

const ui12Guest = "extensions/testdata/guests/ui12"

// recUI is a front end for the tests: it records what the host shows,
// answers dialogs from its fields, and hands opened components to a
// channel.
type recUI struct {
	mu      sync.Mutex
	calls   []string
	answer  string // a dialog's answer; "" cancels; "wait" waits for ctx
	opened  chan *extensions.Component
	closed  chan *extensions.Component
	rerends chan *extensions.Component
	tui     bool
}

func newRecUI() *recUI {
	return &recUI{opened: make(chan *extensions.Component, 16), closed: make(chan *extensions.Component, 16), rerends: make(chan *extensions.Component, 1024), tui: true}
}

func (u *recUI) rec(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = append(u.calls, fmt.Sprintf(format, args...))
}

func (u *recUI) all() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.calls, "\n")
}

func (u *recUI) Notify(ext, msg, level string) { u.rec("notify %s %s", ext, msg) }
func (u *recUI) Confirm(ctx context.Context, ext, title, msg string) (bool, error) {
	return false, nil
}

func (u *recUI) dialog(ctx context.Context, what string) (string, bool, error) {
	u.rec("%s", what)
	u.mu.Lock()
	a := u.answer
	u.mu.Unlock()
	switch a {
	case "":
		return "", false, nil
	case "wait":
		<-ctx.Done()
		return "", false, ctx.Err()
	}
	return a, true, nil
}

func (u *recUI) Select(ctx context.Context, ext, title string, options []string) (string, bool, error) {
	return u.dialog(ctx, fmt.Sprintf("select %s %q %q", ext, title, options))
}
func (u *recUI) Input(ctx context.Context, ext, title, placeholder string) (string, bool, error) {
	return u.dialog(ctx, fmt.Sprintf("input %s %q %q", ext, title, placeholder))
}
func (u *recUI) Editor(ctx context.Context, ext, title, prefill string) (string, bool, error) {
	return u.dialog(ctx, fmt.Sprintf("editor %s %q %q", ext, title, prefill))
}
func (u *recUI) SetStatus(ext, key string, text extensions.Line) {
	if text == nil {
		u.rec("status %s %s cleared", ext, key)
		return
	}
	b, _ := json.Marshal(text)
	u.rec("status %s %s %s", ext, key, b)
}
func (u *recUI) SetWidget(ext, key string, lines []extensions.Line, placement string) {
	if lines == nil {
		u.rec("widget %s %s cleared", ext, key)
		return
	}
	b, _ := json.Marshal(lines)
	u.rec("widget %s %s %s %s", ext, key, placement, b)
}
func (u *recUI) SetTitle(ext, title string)                 { u.rec("title %s %q", ext, title) }
func (u *recUI) SetWorkingMessage(ext string, text *string) { u.rec("working %s %q", ext, *text) }
func (u *recUI) SetEditorText(ext, text string)             { u.rec("editor-text %s %q", ext, text) }
func (u *recUI) EditorText() (string, bool)                 { return "typed so far", true }
func (u *recUI) OpenComponent(c *extensions.Component) bool {
	if !u.tui {
		return false
	}
	u.opened <- c
	return true
}
func (u *recUI) RerenderComponent(c *extensions.Component) { u.rerends <- c }
func (u *recUI) CloseComponent(c *extensions.Component)    { u.closed <- c }

var _ extensions.UIExtended = (*recUI)(nil)

func loadUI12(t *testing.T, ui extensions.UI, tui bool, logs *logBuffer) (*extensions.Host, *extensions.Extension) {
	t.Helper()
	h := newHost(t, extensions.Options{UI: ui, TUI: tui, Mode: extensions.ModeInteractive, Logger: newLogger(logs)})
	e := load(t, h, extensions.Spec{Name: "ui12", Path: goGuest(t, ui12Guest)})
	return h, e
}

func command(t *testing.T, h *extensions.Host, name string) string {
	t.Helper()
	r, err := h.ExecuteCommand(context.Background(), name, "")
	if err != nil {
		t.Fatalf("/%s: %v", name, err)
	}
	return r.Text
}

func TestUI12InitDeclarations(t *testing.T) {
	var logs logBuffer
	h, e := loadUI12(t, newRecUI(), true, &logs)
	info := e.Info()
	if got := fmt.Sprint(info.Shortcuts); got != "[{f5 count a press} {ctrl+c a key pi binds} {f6 starts a run} {f7 reloads pi}]" {
		t.Errorf("shortcuts = %s", got)
	}
	if fmt.Sprint(info.MessageRenderers) != "[note]" {
		t.Errorf("messageRenderers = %v", info.MessageRenderers)
	}
	if h.ToolRenderer("fancy") != e || h.ToolRenderer("dialog") != nil || h.MessageRenderer("note") != e || h.MessageRenderer("other") != nil {
		t.Error("renderers not found as declared")
	}
	bound, warns := h.BindShortcuts(map[string]string{"ctrl+c": "interrupt / close the overlay"})
	if len(bound) != 3 || bound[0].Key != "f5" || bound[0].Extension != "ui12" || bound[1].Key != "f6" || bound[2].Key != "f7" {
		t.Errorf("bound = %v", bound)
	}
	if len(warns) != 1 || warns[0] != "extension ui12: shortcut ctrl+c is not bound: pi binds it (interrupt / close the overlay)" {
		t.Errorf("warnings = %q", warns)
	}
	if err := h.ExecuteShortcut(context.Background(), "ui12", "f5"); err != nil {
		t.Fatal(err)
	}
	if err := h.ExecuteShortcut(context.Background(), "ui12", "f9"); err == nil || !strings.Contains(err.Error(), "no extension \"ui12\" with shortcut f9") {
		t.Errorf("unknown shortcut: %v", err)
	}
}

func TestUI12BadDeclarations(t *testing.T) {
	for _, tc := range []struct{ init, want string }{
		{`{"name":"x","version":"1","tools":[],"hooks":[],"shortcuts":[{"key":"ctrl+shift+alt+x","description":"d"}]}`, `shortcuts[0]: key "ctrl+shift+alt+x" is not a key`},
		{`{"name":"x","version":"1","tools":[],"hooks":[],"shortcuts":[{"key":"f5","description":"d"},{"key":"f5","description":"e"}]}`, `shortcuts[1]: key "f5" declared twice`},
		{`{"name":"x","version":"1","tools":[],"hooks":[],"messageRenderers":["a","a"]}`, `messageRenderers[1]: custom type "a" declared twice`},
	} {
		err := extensions.CheckInitResult([]byte(tc.init))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s", tc.init, err, tc.want)
		}
	}
	for _, k := range []string{"x", "X", "%", "ctrl+x", "alt+shift+enter", "ctrl+alt+shift+f12", "pageup", "é"} {
		if !abi.ValidKey(k) {
			t.Errorf("ValidKey(%q) = false", k)
		}
	}
	for _, k := range []string{"", "shift+ctrl+x", "ctrl+", "xy", "f13", "ctrl+\x1b", "paste", "ctrl+ctrl+x"} {
		if abi.ValidKey(k) {
			t.Errorf("ValidKey(%q) = true", k)
		}
	}
}

func TestUI12Dialogs(t *testing.T) {
	var logs logBuffer
	ui := newRecUI()
	_, e := loadUI12(t, ui, true, &logs)
	ts := tools(t, e)
	call := func(in string) string {
		t.Helper()
		r := run(context.Background(), ts, nil, "dialog", in)
		if r.IsError {
			t.Fatalf("dialog %s: %s", in, r.Content[0].Text)
		}
		return r.Content[0].Text
	}
	ui.answer = "beta"
	if got := call(`{"kind":"select","title":"Pick","options":["alpha","beta"]}`); got != `{"Value":"beta","OK":true,"Reason":""}` {
		t.Errorf("select: %s", got)
	}
	ui.answer = ""
	if got := call(`{"kind":"input","title":"Name"}`); got != `{"Value":"","OK":false,"Reason":"cancelled"}` {
		t.Errorf("input cancelled: %s", got)
	}
	ui.answer = "wait"
	start := time.Now()
	if got := call(`{"kind":"editor","title":"Story","timeoutMs":50}`); got != `{"Value":"","OK":false,"Reason":"timeout"}` {
		t.Errorf("editor timeout: %s", got)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("the timeout took %s", time.Since(start))
	}
	want := `select ui12 "Pick" ["alpha" "beta"]
input ui12 "Name" "type here"
editor ui12 "Story" "prefilled"`
	if got := ui.all(); got != want {
		t.Errorf("the UI was asked:\n%s\nwant:\n%s", got, want)
	}
	r := run(context.Background(), ts, nil, "dialog", `{"kind":"select","title":"Pick","options":[]}`)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "ui.select: options must not be empty") {
		t.Errorf("empty options: %+v", r)
	}
}

func TestUI12NoUI(t *testing.T) {
	var logs logBuffer
	h := newHost(t, extensions.Options{Mode: extensions.ModePrint, Logger: newLogger(&logs)})
	e := load(t, h, extensions.Spec{Name: "ui12", Path: goGuest(t, ui12Guest)})
	r := run(context.Background(), tools(t, e), nil, "dialog", `{"kind":"select","title":"Pick","options":["a"]}`)
	if got := r.Content[0].Text; got != `{"Value":"","OK":false,"Reason":"no-ui"}` {
		t.Errorf("select without a UI: %s", got)
	}
	if got := command(t, h, "show"); got != `shown; editor="" tui=false` {
		t.Errorf("/show without a UI: %s", got)
	}
	if got := command(t, h, "counter"); got != "no component (no-tui)" {
		t.Errorf("/counter without a UI: %s", got)
	}
	// A UI without a TUI (line mode, RPC): components are no-tui too.
	ui := newRecUI()
	h2, _ := loadUI12(t, ui, false, &logs)
	if got := command(t, h2, "counter"); got != "no component (no-tui)" {
		t.Errorf("/counter without a TUI: %s", got)
	}
}

func TestUI12Show(t *testing.T) {
	var logs logBuffer
	ui := newRecUI()
	h, _ := loadUI12(t, ui, true, &logs)
	if got := command(t, h, "show"); got != `shown; editor="typed so far" tui=true` {
		t.Errorf("/show: %s", got)
	}
	command(t, h, "clear")
	// The host hands the guest's text on as it came (the runtime
	// redacts, the front end removes control characters).
	want := `status ui12 st [{"text":"status\u001b]0;pwned\u0007\u001b[2J` + "\u009b" + `31mred\rX\ny","style":"warning"}]
widget ui12 wd aboveEditor ["widget one\u001b]0;pwned\u0007\u001b[2J` + "\u009b" + `31mred\rX\ny",[{"text":"widget two","style":"success"}]]
title ui12 "title\x1b]0;pwned\a\x1b[2J\u009b31mred\rX\ny"
working ui12 "grinding\x1b]0;pwned\a\x1b[2J\u009b31mred\rX\ny"
editor-text ui12 "from the extension"
status ui12 st cleared
widget ui12 wd cleared`
	if got := ui.all(); got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
}

func TestUI12Component(t *testing.T) {
	var logs logBuffer
	ui := newRecUI()
	h, _ := loadUI12(t, ui, true, &logs)
	ctx := context.Background()
	if got := command(t, h, "counter"); got != "opened c1" {
		t.Fatalf("/counter: %s", got)
	}
	c := <-ui.opened
	if c.ID != "c1" || c.Slot != abi.SlotOverlay || c.Extension != "ui12" || c.Placement != abi.PlacementAboveEditor {
		t.Errorf("component %+v", c)
	}
	lines, err := c.Render(ctx, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(lines)
	if want := `[[{"text":"Counter\u001b]0;pwned\u0007\u001b[2J` + "\u009b" + `31mred\rX\ny","style":"accent bold"}],"count=0 width=40",[{"text":"up/down, q quits","style":"dim"}]]`; string(b) != want {
		t.Errorf("render: %s\nwant %s", b, want)
	}
	r, err := c.Input(ctx, "up", "")
	if err != nil || !r.Consumed || !r.Rerender || r.Close {
		t.Errorf("up: %+v %v", r, err)
	}
	lines, _ = c.Render(ctx, 40, nil)
	if lines[1].Text() != "count=1 width=40" {
		t.Errorf("after up: %q", lines[1].Text())
	}
	if r, _ := c.Input(ctx, "q", ""); !r.Close {
		t.Errorf("q: %+v", r)
	}
	c.Dispose(abi.DisposeClosed)
	if _, err := c.Render(ctx, 40, nil); !errors.Is(err, extensions.ErrComponentGone) {
		t.Errorf("render after dispose: %v", err)
	}
	waitFor(t, func() bool { return command(t, h, "state") == "key:up;key:q;dispose:closed" }, "the guest told of the disposal")

	// The guest's own ui.close: the UI is told, the guest disposed.
	command(t, h, "counter")
	c2 := <-ui.opened
	if r, err := c2.Input(ctx, "x", ""); err != nil || r.Close {
		t.Errorf("x: %+v %v", r, err)
	}
	if got := <-ui.closed; got != c2 {
		t.Errorf("closed %v", got.ID)
	}
	waitFor(t, func() bool { return strings.HasSuffix(command(t, h, "state"), "key:x;dispose:closed") }, "its own close disposed it")
	// Another extension's id, or a closed one, is refused.
	if _, err := c2.Input(ctx, "up", ""); !errors.Is(err, extensions.ErrComponentGone) {
		t.Errorf("input after close: %v", err)
	}
}

func TestUI12HostileComponents(t *testing.T) {
	var logs logBuffer
	ui := newRecUI()
	h, _ := loadUI12(t, ui, true, &logs)
	ctx := context.Background()

	// A render that never returns: the hook limit ends the instance, the
	// component closes with a log line, and the extension answers again.
	command(t, h, "hang")
	c := <-ui.opened
	start := time.Now()
	_, err := c.Render(ctx, 80, nil)
	if err == nil || !strings.Contains(err.Error(), "timed out after 5s") {
		t.Fatalf("hanging render: %v", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the hanging render took %s", d)
	}
	if got := <-ui.closed; got != c || !c.Closed() {
		t.Error("the hanging component was not closed")
	}
	if !strings.Contains(logs.String(), "component closed: its instance ended: component=c1 slot=overlay") {
		t.Errorf("no log line for the closed component:\n%s", logs.String())
	}
	if got := command(t, h, "state"); got != "" {
		t.Errorf("a fresh instance: state %q", got)
	}

	// A flood of rerenders: logged once; renders run at most 30 a second.
	command(t, h, "flood")
	c = <-ui.opened
	if n := len(ui.rerends); n != 500 {
		t.Errorf("%d rerender requests reached the UI", n)
	}
	if !strings.Contains(logs.String(), "asked to be rendered more than 30 times a second") {
		t.Errorf("no log line for the flood:\n%s", logs.String())
	}
	start = time.Now()
	for range 11 {
		if _, err := c.Render(ctx, 80, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("11 renders took %s, under the 30-a-second cap", d)
	}

	// Components past the most one extension may have open are refused.
	for range len(ui.opened) {
		<-ui.opened
	}
	if got := command(t, h, "many"); got != "opened 15, then: host call ui.component: ui.component: extension ui12 has 16 components open, the most it may; close one first" {
		t.Errorf("/many: %s", got)
	}
	for range len(ui.opened) {
		(<-ui.opened).Dispose(abi.DisposeClosed)
	}

	// A huge render is cut at 1000 lines, with a log line.
	command(t, h, "huge")
	c = <-ui.opened
	lines, err := c.Render(ctx, 80, nil)
	if err != nil || len(lines) != extensions.MaxRenderLines {
		t.Errorf("huge render: %d lines, %v", len(lines), err)
	}
	if !strings.Contains(logs.String(), "the render gave 5000 lines; showing the first 1000") {
		t.Errorf("no log line for the huge render:\n%s", logs.String())
	}
}

func TestUI12Renderers(t *testing.T) {
	var logs logBuffer
	h, _ := loadUI12(t, newRecUI(), true, &logs)
	ctx := context.Background()
	e := h.ToolRenderer("fancy")
	lines, err := e.RenderTool(ctx, "fancy", "t1", json.RawMessage(`{}`), nil, false, false, 80)
	if err != nil || len(lines) != 1 || lines[0][0].Style != "warning" {
		t.Errorf("partial render: %v %v", lines, err)
	}
	lines, err = e.RenderTool(ctx, "fancy", "t1", json.RawMessage(`{}`), &tool.Result{Content: []tool.ContentBlock{tool.Text("fancy done")}}, false, false, 80)
	if err != nil || len(lines) != 2 || lines[0].Text() != "FANCY RESULT fancy done" {
		t.Errorf("result render: %v %v", lines, err)
	}
	lines, err = h.MessageRenderer("note").RenderMessage(ctx, "note", json.RawMessage(`"hi"`), nil, false, 80)
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0].Text(), "NOTE: hi") {
		t.Errorf("message render: %v %v", lines, err)
	}
}

// waitFor polls cond (a condition on the guest's state, which changes in
// another goroutine) until it holds, for at most 10 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkUI12ToolRender: one tool.render round trip through the Go SDK
// guest (request encoded, guest called, two styled lines decoded).
func BenchmarkUI12ToolRender(b *testing.B) {
	var logs logBuffer
	h := newHost(b, extensions.Options{UI: newRecUI(), TUI: true, Mode: extensions.ModeInteractive, Logger: newLogger(&logs)})
	load(b, h, extensions.Spec{Name: "ui12", Path: goGuest(b, ui12Guest)})
	e := h.ToolRenderer("fancy")
	res := &tool.Result{Content: []tool.ContentBlock{tool.Text("fancy done")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if lines, err := e.RenderTool(ctx, "fancy", "t1", json.RawMessage(`{"x":1}`), res, false, false, 80); err != nil || len(lines) != 2 {
			b.Fatal(lines, err)
		}
	}
}

package sdk

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/testkit/abigolden"
)

// arcade is an extension with ABI 1.2's UI declarations: a tool it draws,
// two shortcuts, a message renderer and an open component.
func arcade(t *testing.T, seen *[]string) *registry {
	r := &registry{}
	r.extension("arcade", "1.0.0", "")
	r.addTool(ToolSpec{Name: "score", Description: "Shows the score", Parameters: map[string]any{"type": "object"}}, reflect.TypeFor[map[string]any](),
		func(*Context, json.RawMessage) (Result, error) { return Text("3"), nil })
	r.ui12.toolRenderers = map[string]func(ToolRender) []Line{"score": func(tr ToolRender) []Line {
		*seen = append(*seen, "tool "+tr.ToolName+" "+tr.ToolCallID+" "+string(tr.Args)+" "+tr.Result.Content[0].Text+" "+string(tr.Result.Details))
		return []Line{PlainLine("score 3")}
	}}
	r.ui12.shortcuts = []shortcutEntry{
		{spec: abi.ShortcutSpec{Key: "f5", Description: "open the game"}, run: func() error { return nil }},
		{spec: abi.ShortcutSpec{Key: "alt+s", Description: "show the score"}, run: func() error { *seen = append(*seen, "shortcut"); return nil }},
	}
	r.ui12.messageRenderers = map[string]func(MessageRender) []Line{"arcade-score": func(m MessageRender) []Line {
		*seen = append(*seen, "message "+m.CustomType+" "+string(m.Content)+" "+string(m.Details))
		return nil
	}}
	r.ui12.messageTypes = []string{"arcade-score"}
	r.ui12.components = map[string]*ComponentHandler{"c3": {
		Render: func(width int, ed *EditorState) []Line {
			*seen = append(*seen, "render", ed.Text)
			return []Line{Styled("Snake", "accent bold"), PlainLine("score 3"), {{Text: "q", Style: "dim"}, {Text: " quits"}}}
		},
	}, "c1": {
		Input: func(key, text string) KeyAnswer {
			*seen = append(*seen, key+" "+text)
			return KeyAnswer{Consumed: true, Rerender: true}
		},
		Dispose: func(reason string) { *seen = append(*seen, "dispose "+reason) },
	}}
	return r
}

// TestGoldenUI12: the SDK's init answer with the 1.2 declarations, and its
// answers to the 1.2 guest methods, are the goldens.
func TestGoldenUI12(t *testing.T) {
	var seen []string
	r := arcade(t, &seen)
	abigolden.Match(t, "the SDK", "init.v12.response.json", r.handle(abigolden.Wire(t, "init.request.json")))
	abigolden.Match(t, "the SDK", "component.render.response.json", r.handle(abigolden.Wire(t, "component.render.request.json")))
	abigolden.Match(t, "the SDK", "component.input.response.json", r.handle(abigolden.Wire(t, "component.input.request.json")))
	abigolden.Match(t, "the SDK", "host.empty.response.json", r.handle(abigolden.Wire(t, "shortcut.execute.request.json")))
	abigolden.Match(t, "the SDK", "host.empty.response.json", r.handle(abigolden.Wire(t, "component.dispose.request.json")))
	if got := string(r.handle(abigolden.Wire(t, "tool.render.request.json"))); got != `{"ok":true,"result":{"lines":["score 3"]}}` {
		t.Errorf("tool.render answered %s", got)
	}
	// A renderer's nil is {}: pi's own drawing.
	if got := string(r.handle(abigolden.Wire(t, "message.render.request.json"))); got != `{"ok":true,"result":{}}` {
		t.Errorf("message.render answered %s", got)
	}
	want := []string{"render", "héllo", "paste pasted text", "shortcut", "dispose cancelled", `tool score call_1 {"game":"snake"} 3 {"best":7}`, `message arcade-score "3 points" {"best":7}`}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("the handlers saw %q, want %q", seen, want)
	}
	// A disposed component is gone.
	if got := string(r.handle([]byte(`{"method":"component.input","params":{"id":"c1","key":"x"}}`))); got != `{"ok":false,"error":{"message":"extension \"arcade\" has no component \"c1\""}}` {
		t.Errorf("input after dispose: %s", got)
	}
}

// TestUI12OnAnOlderHost: on a 1.1 host the SDK declares no shortcuts and
// no renderers (the 1.1 host would refuse them).
func TestUI12OnAnOlderHost(t *testing.T) {
	var seen []string
	r := arcade(t, &seen)
	out := string(r.handle([]byte(`{"method":"init","params":{"abi":1,"abiMinor":1,"host":{"name":"pi","version":"0.9"},"cwd":"/p","config":{},"grants":{}}}`)))
	want := `{"ok":true,"result":{"name":"arcade","version":"1.0.0","tools":[{"name":"score","description":"Shows the score","parameters":{"type":"object"}}],"hooks":[]}}`
	if out != want {
		t.Errorf("init on a 1.1 host:\n%s\nwant\n%s", out, want)
	}
}

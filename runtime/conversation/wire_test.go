package conversation

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/llm"
)

// An extension's message delivered by a run (agent.sendMessage with
// steer) and one added while idle reach the streams (WireEvent) as the
// reference's custom message: message_start and message_end with role
// "custom", once each; every other message keeps its shape.
func TestWireEventCustomMessages(t *testing.T) {
	dir, home := project.New(t)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	project.Write(t, filepath.Join(dir, "pi.toml"), project.Extension(t, "conv12", a))
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Mode: app.ModeRPC})
	script, err := llm.ParseScript([]byte(`{"turns":[
		{"toolCalls":[{"name":"conv12_call","arguments":{"method":"agent.sendMessage","params":{"customType":"note","content":"steered note","details":{"n":1}}}}]},
		{"text":"saw it"},
		{"toolCalls":[{"name":"conv12_call","arguments":{"method":"agent.sendMessage","params":{"customType":"note","content":"later note","display":true,"deliverAs":"nextTurn"}}}]},
		{"text":"ok"},
		{"text":"after"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	p := llm.NewScripted(script)
	c := open(t, rt, Options{Provider: p, OnEvent: func(ev agent.Event) {
		if ev.Type != agent.EventMessageStart && ev.Type != agent.EventMessageEnd {
			return
		}
		b, err := json.Marshal(WireEvent(ev))
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		lines = append(lines, string(b))
		mu.Unlock()
	}})
	for _, p := range []string{"go", "again", "third"} {
		if _, err := submit(t, c, p); err != nil {
			t.Fatal(err)
		}
	}
	reqs := p.Requests()
	if got := userTexts(reqs[len(reqs)-1].Messages); !slices.Equal(got[len(got)-2:], []string{"later note", "third"}) {
		t.Errorf("the next-turn note did not come with the next prompt: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	count := func(parts ...string) int {
		n := 0
		for _, l := range lines {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(l, p)
			}
			if all {
				n++
			}
		}
		return n
	}
	for _, typ := range []string{"message_start", "message_end"} {
		if n := count(`"type":"`+typ+`"`, `"role":"custom"`, `"customType":"note"`, `"content":"steered note"`, `"display":false`, `"details":{"n":1}`, `"timestamp":`); n != 1 {
			t.Errorf("%s of the steered note: %d, want 1\n%s", typ, n, strings.Join(lines, "\n"))
		}
		if n := count(`"type":"`+typ+`"`, `"role":"custom"`, `"content":"later note"`, `"display":true`); n != 1 {
			t.Errorf("%s of the next-turn note: %d, want 1\n%s", typ, n, strings.Join(lines, "\n"))
		}
		if n := count(`"type":"`+typ+`"`, `"role":"user"`, `"text":"go"`); n != 1 {
			t.Errorf("%s of the prompt: %d, want 1 as a user message\n%s", typ, n, strings.Join(lines, "\n"))
		}
	}
	if n := count(`"role":"user"`, `note`); n != 0 {
		t.Errorf("a custom message went out as a user message:\n%s", strings.Join(lines, "\n"))
	}
}

// A user message an extension sent (agent.sendUserMessage) reaches the
// streams as a plain user message: its marker is not written.
func TestWireEventExtensionPrompt(t *testing.T) {
	m := &llm.Message{Role: llm.RoleUser, Content: []content.Block{{Type: "text", Text: "hi"}}, Details: &ExtensionPrompt{Extension: "x"}}
	b, err := json.Marshal(WireEvent(agent.Event{Type: agent.EventMessageEnd, Message: m}))
	if err != nil || string(b) != `{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` {
		t.Errorf("wire event %s, %v", b, err)
	}
	if FromExtension(m) != "x" || m.Details == nil {
		t.Errorf("the event's message changed: %+v", m)
	}
}

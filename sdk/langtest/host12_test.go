package langtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// call12 runs guest12's call12 tool with `pi tool call` (tool mode) and
// returns its text and error flag.
func (p *project) call12(in map[string]any, extra ...string) (string, bool) {
	p.t.Helper()
	b, _ := json.Marshal(in)
	out, stderr, code := p.run(string(b), append([]string{"tool", "call", "call12", "-"}, extra...)...)
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 {
		p.t.Fatalf("call12 %s: exit %d, %v\n%s%s", b, code, err, out, stderr)
	}
	return res.Content[0].Text, res.IsError
}

// run12 runs call12 with each input as one tool call of a scripted model
// in --mode json, and returns each result's text (an error's prefixed
// "ERROR: ").
func (p *project) run12(extra []string, ins ...map[string]any) []string {
	p.t.Helper()
	var turns []string
	for _, in := range ins {
		b, _ := json.Marshal(in)
		turns = append(turns, `{"toolCalls":[{"name":"call12","arguments":`+string(b)+`}]}`)
	}
	texts, isErr := p.toolEnds("go", "["+strings.Join(turns, ",")+`,{"text":"done"}]`, extra...)
	for i := range texts {
		if isErr[i] {
			texts[i] = "ERROR: " + texts[i]
		}
	}
	if len(texts) != len(ins) {
		p.t.Fatalf("%d results for %d calls: %q", len(texts), len(ins), texts)
	}
	return texts
}

// TestHostMethods12: every ABI 1.2 host method through pi.h's and pi.rs's
// typed helpers, answered by the real host — in tool mode (no person, no
// session) and in a json run (a session, the model) — with the answers
// the spec gives, and the refusals worded by the host.
func TestHostMethods12(t *testing.T) {
	forEachLang12(t, false, func(t *testing.T, l, wasm string) {
		p := newProject12(t, wasm, entry{grants: `fs = ["rw:."]`})
		for _, tc := range []struct {
			in    map[string]any
			extra []string
			want  string // the text, or its start for an error
			err   bool
		}{
			{map[string]any{"op": "flags.get"}, nil, `{"g12-loud":false,"g12-mode":"calm"}`, false},
			{map[string]any{"op": "ui.select", "a": "Pick", "options": []string{"a", "b"}}, nil, `{"value":null,"reason":"no-ui"}`, false},
			{map[string]any{"op": "ui.input", "a": "Name?", "b": "placeholder"}, nil, `{"value":null,"reason":"no-ui"}`, false},
			{map[string]any{"op": "ui.editor", "a": "Text", "b": "prefill"}, nil, `{"value":null,"reason":"no-ui"}`, false},
			{map[string]any{"op": "ui.setStatus", "a": "k", "spans": []string{"*x"}}, nil, `{}`, false},
			{map[string]any{"op": "ui.setStatus", "a": "k"}, nil, `{}`, false},
			{map[string]any{"op": "ui.setWidget", "a": "w", "lines": []string{"one", "*two"}, "b": "belowEditor"}, nil, `{}`, false},
			{map[string]any{"op": "ui.setWidget", "a": "w"}, nil, `{}`, false},
			{map[string]any{"op": "ui.setTitle", "a": "title"}, nil, `{}`, false},
			{map[string]any{"op": "ui.setWorkingMessage", "a": "working"}, nil, `{}`, false},
			{map[string]any{"op": "ui.setEditorText", "a": "text"}, nil, `{}`, false},
			{map[string]any{"op": "ui.getEditorText"}, nil, `""`, false},
			{map[string]any{"op": "ui.component", "slot": "overlay", "n": 5}, nil, `{"id":""}`, false},
			{map[string]any{"op": "ui.setStatus", "a": "bad key!"}, nil, "host call ui.setStatus: ", true},
			{map[string]any{"op": "timer.set", "n": 50}, nil, `"`, false},
			{map[string]any{"op": "timer.set", "n": 5}, nil, "host call timer.set: ", true},
			{map[string]any{"op": "watch.add", "a": "."}, nil, `"`, false},
			{map[string]any{"op": "watch.add", "a": "/etc"}, nil, "host call watch.add: permission denied: extension guest12 may not watch /etc", true},
			{map[string]any{"op": "bus.emit", "a": "guest12:news", "json": map[string]any{"x": 1}}, nil, `{}`, false},
			{map[string]any{"op": "bus.emit", "a": "Bad Channel", "json": 1}, nil, "host call bus.emit: ", true},
			{map[string]any{"op": "session.info"}, nil, "host call session.info: ", true},
			{map[string]any{"op": "agent.state"}, nil, "host call agent.state: ", true},
			{map[string]any{"op": "pi.shutdown"}, nil, "host call pi.shutdown: pi.shutdown is only allowed in a command or shortcut", true},
			{map[string]any{"op": "pi.reload"}, nil, "host call pi.reload: pi.reload is only allowed in a command or shortcut", true},
			{map[string]any{"op": "session.new"}, nil, "host call session.new: ", true},
			{map[string]any{"op": "llm.complete", "b": "hi"}, nil, "host call llm.complete: ", true},
			{map[string]any{"op": "model.set", "b": "x"}, nil, "host call model.set: ", true},
		} {
			got, isErr := p.call12(tc.in, tc.extra...)
			ok := isErr == tc.err && (got == tc.want || (tc.err || tc.want == `"`) && strings.HasPrefix(got, tc.want))
			if !ok {
				t.Errorf("%v %v = %q (error %v), want %q (error %v)", tc.in, tc.extra, got, isErr, tc.want, tc.err)
			}
		}

		// A conversation: session, agent, tools, model and the model's own call.
		got := p.run12([]string{"--no-session", "--g12-mode", "loud <x>", "--g12-loud"},
			map[string]any{"op": "flags.get"},
			map[string]any{"op": "session.info"},
			map[string]any{"op": "session.setName", "a": "named <by> guest"},
			map[string]any{"op": "session.info"},
			map[string]any{"op": "session.branch", "n": 1},
			map[string]any{"op": "session.contextUsage"},
			map[string]any{"op": "agent.state"},
			map[string]any{"op": "tools.list"},
			map[string]any{"op": "tools.setActive", "names": []string{"read", "call12"}},
			map[string]any{"op": "model.get"},
			map[string]any{"op": "model.list"},
			map[string]any{"op": "model.set", "b": "other"},
			map[string]any{"op": "llm.complete", "b": "hi"},
			map[string]any{"op": "session.compact"},
		)
		checks := []func(string) bool{
			func(s string) bool { return s == `{"g12-loud":true,"g12-mode":"loud \u003cx\u003e"}` },
			func(s string) bool {
				return strings.Contains(s, `"sessionFile":""`) && strings.Contains(s, `"name":""`)
			},
			func(s string) bool { return s == "{}" },
			func(s string) bool { return strings.Contains(s, `"name":"named \u003cby\u003e guest"`) },
			func(s string) bool { return strings.HasPrefix(s, `[{"type":"`) },
			func(s string) bool { return strings.Contains(s, `"contextWindow":`) },
			func(s string) bool {
				return strings.Contains(s, `"idle":false`) && strings.Contains(s, `"systemPrompt":"`)
			},
			func(s string) bool {
				return strings.Contains(s, `{"name":"call12","description":"One 1.2 host call.","source":"extension:guest12","active":true}`)
			},
			func(s string) bool { return s == "{}" },
			func(s string) bool { return strings.Contains(s, `"thinkingLevel":"off"`) },
			func(s string) bool { return strings.HasPrefix(s, "[") },
			func(s string) bool {
				return strings.HasPrefix(s, "ERROR: host call model.set: permission denied: extension guest12 may not change the model (grants.model)")
			},
			func(s string) bool {
				return strings.HasPrefix(s, "ERROR: host call llm.complete: permission denied: extension guest12 may not call the model (grants.llm)")
			},
			func(s string) bool { return s == "{}" },
		}
		for i, c := range checks {
			if !c(got[i]) {
				t.Errorf("json run, call %d: %q", i, got[i])
			}
		}
	})
}

package langtest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// toolEnds runs pi --mode json -p PROMPT with a scripted model and
// returns the text and error flag of each tool result, in order.
func (p *project) toolEnds(prompt, turns string, extra ...string) (texts []string, isErr []bool) {
	p.t.Helper()
	out, stderr, code := p.run("", append([]string{"--mode", "json", "-p", prompt, "--script", p.script(turns)}, extra...)...)
	if code != 0 {
		p.t.Fatalf("pi --mode json: exit %d\n%s%s", code, out, stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		var e struct {
			Type   string
			Result struct {
				Content []struct{ Text string }
				IsError bool
			}
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Type != "tool_execution_end" {
			continue
		}
		text := ""
		if len(e.Result.Content) > 0 {
			text = e.Result.Content[0].Text
		}
		texts, isErr = append(texts, text), append(isErr, e.Result.IsError)
	}
	return texts, isErr
}

// TestConfirmThroughTheLineUI: ui.confirm and ui.notify reach a person
// through pi's line UI (interactive mode); the answer comes back.
func TestConfirmThroughTheLineUI(t *testing.T) {
	turns := `[{"toolCalls":[{"name":"probe","arguments":{"op":"ui.confirm","title":"Deploy","message":"now? \u001b[2K"}}]},` +
		`{"toolCalls":[{"name":"probe","arguments":{"op":"ui.notify","message":"careful <&>","level":"warning"}}]},{"text":"done"}]`
	forEachLang(t, func(t *testing.T, l, wasm string) {
		for _, tc := range []struct{ answer, want string }{
			{"y", `{"confirmed":true,"reason":""}`},
			{"", `{"confirmed":false,"reason":""}`},
			{"no", `{"confirmed":false,"reason":""}`},
		} {
			p := newProject(t, wasm, entry{})
			out, stderr, code := p.run("go\n"+tc.answer+"\n/exit\n", "--interactive", "--script", p.script(turns))
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, stderr)
			}
			if !strings.Contains(out, "? [guest11] Deploy: now? \ufffd[2K [y/N]") || strings.Contains(out, "\x1b") {
				t.Errorf("the question:\n%s", out)
			}
			if !strings.Contains(out, "    "+tc.want+"\n") {
				t.Errorf("answered %q: want %s in\n%s", tc.answer, tc.want, out)
			}
			if !strings.Contains(out, "warning: [guest11] careful <&>\n") {
				t.Errorf("the notice:\n%s", out)
			}
		}
	})
}

// TestSession: session.append and session.entries in a real session, with
// a hostile payload; a bad customType and a run without a session are the
// host's errors.
func TestSession(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{})
		data, _ := json.Marshal(map[string]any{"s": hostile[3] + hostile[5], "n": 1})
		turns := `[{"toolCalls":[{"name":"probe","arguments":{"op":"session.append","customType":"guest11","data":` + string(data) + `}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.append","customType":"other","data":2}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.entries","customType":"guest11"}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.entries"}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.append","customType":"bad type","data":1}}]},{"text":"done"}]`
		texts, isErr := p.toolEnds("go", turns)
		if len(texts) != 5 {
			t.Fatalf("tool results %q", texts)
		}
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(texts[0]) || isErr[0] {
			t.Errorf("session.append = %q", texts[0])
		}
		var entries []struct {
			ID, CustomType string
			Data           json.RawMessage
		}
		if err := json.Unmarshal([]byte(texts[2]), &entries); err != nil || len(entries) != 1 || entries[0].ID != texts[0] || entries[0].CustomType != "guest11" {
			t.Fatalf("session.entries guest11 = %s (%v)", texts[2], err)
		}
		var got map[string]any
		if err := json.Unmarshal(entries[0].Data, &got); err != nil || got["s"] != hostile[3]+hostile[5] {
			t.Errorf("data = %s", entries[0].Data)
		}
		if err := json.Unmarshal([]byte(texts[3]), &entries); err != nil || len(entries) != 2 || entries[1].CustomType != "other" {
			t.Errorf("all entries = %s", texts[3])
		}
		if !isErr[4] || !strings.HasPrefix(texts[4], "host call session.append: session.append: invalid custom entry: customType \"bad type\"") {
			t.Errorf("a bad customType = %q", texts[4])
		}
		// pi tool call has no session.
		if got := p.fails(map[string]any{"op": "session.entries"}); got != "host call session.entries: no session" {
			t.Errorf("without a session = %s", got)
		}
	})
}

// TestCommandsAndHooks: the guest side of 1.1 — commands, the input,
// before_agent_start and stop hooks, an ask from tool_call and the config
// schema — answered by pi.h and pi.rs without JSON written by hand.
func TestCommandsAndHooks(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{config: `greeting = "hi"`})
		model := p.script(`[{"text":"MODEL ANSWERED"}]`)
		print := func(prompt string) (string, string, int) {
			t.Helper()
			return p.run("", "-p", prompt, "--script", model)
		}
		if out, _, code := print("/echo  hi <&> \u2028 there "); code != 0 || out != "echo: hi <&> \u2028 there\n" {
			t.Errorf("/echo: exit %d, %q", code, out)
		}
		if out, stderr, code := print("/echo fail"); code == 0 || !strings.Contains(stderr, `echo failed: "as asked"`) || strings.Contains(out, "MODEL") {
			t.Errorf("/echo fail: exit %d, %q, %q", code, out, stderr)
		}
		if out, _, code := print("/echo ask plan it"); code != 0 || !strings.Contains(out, "echo: ask plan it\n") || !strings.Contains(out, "MODEL ANSWERED") {
			t.Errorf("/echo ask: exit %d, %q", code, out)
		}
		if out, _, code := print("/help"); code != 0 || !strings.Contains(out, "/echo [text]") || !strings.Contains(out, "Show a kv value") {
			t.Errorf("/help: %q", out)
		}
		if out, _, code := print("my key is sk-123"); code != 0 || out != "refused in print mode: the prompt holds a secret\n" {
			t.Errorf("input hook: exit %d, %q", code, out)
		}

		// before_agent_start and stop, seen by a model server.
		srv := openai.NewServer(t, openai.Reply{Text: "first"}, openai.Reply{Text: "second"})
		out, stderr, code := p.run("", "-p", "rewrite:hello there", "--base-url", srv.URL, "--model", "M", "--api-key", "k")
		if code != 0 || !strings.Contains(out, "second") {
			t.Fatalf("exit %d, %q, %s", code, out, stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2", len(reqs))
		}
		first, second := texts(reqs[0]), texts(reqs[1])
		for _, want := range []string{"GUEST11 APPEND <&> for: hello there", "GUEST11 CONTEXT \"\u2028\"", "user: hello there"} {
			if !strings.Contains(first, want) {
				t.Errorf("the first request lacks %q:\n%s", want, first)
			}
		}
		if strings.Contains(first, "rewrite:") {
			t.Errorf("the input hook did not replace the prompt:\n%s", first)
		}
		if !strings.Contains(second, "user: GUEST11 CONTINUE after 1 turn(s)") {
			t.Errorf("the stop hook did not continue:\n%s", second)
		}

		// tool_call: a block and an ask (nobody can answer with -p).
		results, isErr := p.toolEnds("go", `[{"toolCalls":[{"name":"write","arguments":{"path":"x.txt","content":"x"}}]},`+
			`{"toolCalls":[{"name":"find","arguments":{"pattern":"*"}}]},{"text":"done"}]`, "--tools", "write,find")
		if len(results) != 2 || !isErr[0] || !strings.Contains(results[0], "guest11 blocks write") ||
			!isErr[1] || !strings.Contains(results[1], `needs approval: may find run? <"quoted"> (run interactively, or pass --yes)`) {
			t.Errorf("tool_call answers %q", results)
		}

		// The config schema from the declaration is checked at load.
		for bad, want := range map[string]string{
			"greeting = 1": "extensions[0].config.greeting: expected string, got number",
			"nope = true":  "extensions[0].config.nope: unknown key (the extension's configSchema does not allow it)",
		} {
			q := newProject(t, wasm, entry{config: bad})
			out, stderr, code := q.run("{}", "tool", "call", "probe", "-")
			if code != 1 || !strings.Contains(stderr, "config does not match the extension's configSchema") || !strings.Contains(stderr, want) {
				t.Errorf("config %s: exit %d, %s%s", bad, code, out, stderr)
			}
		}
	})
}

// texts is a chat request's messages as "role: text" lines.
func texts(req map[string]any) string {
	var out []string
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		role, _ := mm["role"].(string)
		switch c := mm["content"].(type) {
		case string:
			out = append(out, role+": "+c)
		case []any:
			for _, part := range c {
				if s, ok := part.(map[string]any)["text"].(string); ok {
					out = append(out, role+": "+s)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

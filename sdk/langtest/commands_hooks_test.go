package langtest

import (
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

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
		if out, _, code := print("/echo  hi <&> \u2028 there "); code != 0 || out != "echo: hi <&>  there\n" { // the line separator dropped on output, as every control
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

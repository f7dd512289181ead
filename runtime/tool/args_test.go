package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestArgsHandedOn: the value validation parsed travels with the call:
// Paths and Execute see, through Call.Parsed, the parse of exactly the
// input they get; after a hook's replacement, the replacement's; input
// that validation left to encoding/json (a duplicate key) and a call made
// with NewCall have none.
func TestArgsHandedOn(t *testing.T) {
	type seen struct {
		input  string
		value  any
		parsed bool
	}
	var execs, paths []seen
	def := ToolDefinition{
		Name:       "echo",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`),
		Execute: func(ctx context.Context, call Call, tc Context) (Result, error) {
			v, ok := call.Parsed()
			execs = append(execs, seen{string(call.Input), v, ok})
			return TextResult("ok"), nil
		},
		Paths: func(call Call, cwd string) ([]string, error) {
			v, ok := call.Parsed()
			paths = append(paths, seen{string(call.Input), v, ok})
			return []string{}, nil
		},
	}
	tl, err := Wrap(def, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := func(s seen) string {
		m, _ := s.value.(map[string]any)
		str, _ := m["text"].(string)
		return str
	}

	args := json.RawMessage(`{"text":"a` + strings.Repeat("x", 600) + `","n":3}`)
	if r := Run(context.Background(), []AgentTool{tl}, nil, "echo", "c1", args, nil); r.IsError {
		t.Fatal(r.Text())
	}
	if len(execs) != 1 || !execs[0].parsed || !strings.HasPrefix(text(execs[0]), "ax") || execs[0].value.(map[string]any)["n"] != json.Number("3") {
		t.Fatalf("Execute saw %+v, want the parse of its input with n as json.Number", execs)
	}

	// A hook that replaces the input: Paths (for the hooks after it) and
	// Execute see the replacement's parse.
	repl := json.RawMessage(`{"text":"e"}`)
	hooks := &Hooks{ToolCall: []ToolCallHook{{Name: "swap", Func: func(ctx context.Context, c CallInfo) (ToolCallDecision, error) {
		if string(c.Input) == string(repl) {
			return ToolCallDecision{}, nil
		}
		return ToolCallDecision{Input: repl}, nil
	}}}}
	execs, paths = nil, nil
	final, blocked := Preflight(context.Background(), tl, hooks, "c2", json.RawMessage(`{"text":"d"}`))
	if blocked != nil {
		t.Fatal(blocked.Text())
	}
	if v, ok := final.Parsed(); !ok || v.(map[string]any)["text"] != "e" || string(final.JSON) != string(repl) {
		t.Fatalf("Preflight returned %s parsed as %#v (%v), want the replacement and its parse", final.JSON, v, ok)
	}
	if len(paths) != 2 || text(paths[0]) != "d" || text(paths[1]) != "e" || paths[1].input != string(repl) {
		t.Fatalf("Paths saw %+v, want the original's parse, then the replacement's", paths)
	}
	Execute(context.Background(), tl, nil, "c2", final, nil)
	if len(execs) != 1 || execs[0].input != string(repl) || text(execs[0]) != "e" {
		t.Fatalf("Execute saw %+v, want the replacement and its parse", execs)
	}

	// Duplicate keys: validation leaves them to encoding/json, so the tool
	// decodes the input itself, as encoding/json does.
	execs = nil
	dup := json.RawMessage(`{"text":"x","text":"y"}`)
	if r := Run(context.Background(), []AgentTool{tl}, nil, "echo", "c3", dup, nil); r.IsError {
		t.Fatal(r.Text())
	}
	if len(execs) != 1 || execs[0].parsed {
		t.Fatalf("Execute saw %+v for duplicate keys, want no parse", execs)
	}

	if _, ok := NewCall("c", args, nil).Parsed(); ok {
		t.Fatal("a Call made by NewCall has a parse")
	}
	if _, err := tl.ValidateArgs(json.RawMessage(`{"text":5}`)); err == nil {
		t.Fatal("invalid arguments validated")
	}
}

package tool

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func parsedCount() int {
	parsed.mu.Lock()
	defer parsed.mu.Unlock()
	return len(parsed.entries)
}

// bigArgs is a valid argument object over minParsed bytes.
func bigArgs(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"text": text + strings.Repeat("x", minParsed), "n": 3})
	return b
}

// TestParsedLifecycle: what Execute sees through Parsed is the parse of
// exactly the validated bytes, for exactly as long as the call is in
// flight; a copy of the same bytes, a call turned away, a hook's
// replacement and a finished call leave nothing behind.
func TestParsedLifecycle(t *testing.T) {
	var seen []any
	def := ToolDefinition{
		Name:       "echo",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`),
		Execute: func(ctx context.Context, call Call, tc Context) (Result, error) {
			v, ok := Parsed(call.Input)
			if !ok {
				v = nil
			}
			seen = append(seen, v)
			return TextResult("ok"), nil
		},
	}
	tl, err := Wrap(def, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := parsedCount()

	args := bigArgs("a")
	r := Run(context.Background(), []AgentTool{tl}, nil, "echo", "c1", args, nil)
	if r.IsError {
		t.Fatal(r.Text())
	}
	var want any
	if err := json.Unmarshal(args, &want); err != nil {
		t.Fatal(err)
	}
	got, _ := seen[0].(map[string]any)
	if got == nil || got["text"] != want.(map[string]any)["text"] || got["n"] != json.Number("3") {
		t.Fatalf("Execute saw %#v through Parsed, want the parse of its input with n as json.Number", seen[0])
	}
	if n := parsedCount(); n != base {
		t.Fatalf("%d parses kept after the call ended, want %d", n, base)
	}

	// Validation alone keeps the parse, for these bytes only.
	args = bigArgs("b")
	if err := tl.Validate(args); err != nil {
		t.Fatal(err)
	}
	if _, ok := Parsed(args); !ok {
		t.Fatal("no parse kept after a successful Validate")
	}
	if _, ok := Parsed(append(json.RawMessage(nil), args...)); ok {
		t.Fatal("a copy of the validated bytes found the parse: it is keyed by content, not identity")
	}
	if _, ok := Parsed(args[:len(args)-1]); ok {
		t.Fatal("a shorter slice of the validated bytes found the parse")
	}
	forgetParsed(args)

	// Invalid arguments keep nothing.
	bad := json.RawMessage(`{"text":5,"pad":"` + strings.Repeat("x", minParsed) + `"}`)
	if tl.Validate(bad) == nil {
		t.Fatal("invalid arguments validated")
	}
	if _, ok := Parsed(bad); ok {
		t.Fatal("a parse kept for arguments that failed validation")
	}

	// A call turned away by a hook, and one whose input a hook replaced.
	blockArgs := bigArgs("c")
	hooks := &Hooks{ToolCall: []ToolCallHook{{Name: "no", Func: func(ctx context.Context, c CallInfo) (ToolCallDecision, error) {
		return ToolCallDecision{Block: true}, nil
	}}}}
	if _, blocked := Preflight(context.Background(), tl, hooks, "c2", blockArgs); blocked == nil {
		t.Fatal("hook did not block")
	}
	if _, ok := Parsed(blockArgs); ok {
		t.Fatal("a parse kept for a call that was turned away")
	}
	orig, repl := bigArgs("d"), bigArgs("e")
	hooks = &Hooks{ToolCall: []ToolCallHook{{Name: "swap", Func: func(ctx context.Context, c CallInfo) (ToolCallDecision, error) {
		return ToolCallDecision{Input: repl}, nil
	}}}}
	final, blocked := Preflight(context.Background(), tl, hooks, "c3", orig)
	if blocked != nil {
		t.Fatal(blocked.Text())
	}
	if _, ok := Parsed(orig); ok {
		t.Fatal("the parse of arguments a hook replaced is still kept")
	}
	seen = nil
	Execute(context.Background(), tl, nil, "c3", final, nil)
	if m, _ := seen[0].(map[string]any); m == nil || !strings.HasPrefix(m["text"].(string), "e") {
		t.Fatalf("Execute after a replacement saw %#v, want the replacement's parse", seen[0])
	}
	if n := parsedCount(); n != base {
		t.Fatalf("%d parses kept, want %d", n, base)
	}
}

// TestParsedBounded: validations that no call follows keep at most
// maxParsed parses.
func TestParsedBounded(t *testing.T) {
	v, err := compileSchema("t", nil)
	if err != nil {
		t.Fatal(err)
	}
	var all []json.RawMessage
	for i := range 3 * maxParsed {
		a := bigArgs(strings.Repeat("z", i))
		all = append(all, a)
		if err := v.validate(a); err != nil {
			t.Fatal(err)
		}
	}
	if n := parsedCount(); n > maxParsed {
		t.Fatalf("%d parses kept, want at most %d", n, maxParsed)
	}
	if _, ok := Parsed(all[len(all)-1]); !ok {
		t.Fatal("the newest parse was dropped")
	}
	for _, a := range all {
		forgetParsed(a)
	}
	if _, ok := Parsed(all[0]); ok || !reflect.DeepEqual(parsedCount(), 0) {
		t.Fatalf("parses left after forgetting all: %d", parsedCount())
	}
}

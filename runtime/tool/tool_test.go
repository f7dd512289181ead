package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

func echoDef(name string, src tool.Source) tool.ToolDefinition {
	return tool.ToolDefinition{
		Name:        name,
		Description: "echoes its input",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer","minimum":1}},"required":["text"],"additionalProperties":false}`),
		Source:      src,
		Execute: func(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return tool.Result{}, err
			}
			call.Update(tool.TextResult("working"))
			return tool.TextResult(in.Text + "@" + tc.Cwd), nil
		},
	}
}

func TestRegistryClashAndOverride(t *testing.T) {
	r := tool.NewRegistry()
	if err := r.Register(echoDef("echo", tool.Source{Kind: tool.SourceBuiltin})); err != nil {
		t.Fatal(err)
	}
	ext := tool.Source{Kind: tool.SourceExtension, Name: "loud", Path: "/x/loud.wasm"}
	err := r.Register(echoDef("echo", ext))
	if err == nil {
		t.Fatal("second registration of echo succeeded")
	}
	for _, want := range []string{`"echo"`, "extension loud (/x/loud.wasm)", "builtin", "override"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("clash error %q does not mention %q", err, want)
		}
	}
	d := echoDef("echo", ext)
	d.Override = true
	if err := r.Register(d); err != nil {
		t.Fatalf("override: %v", err)
	}
	got, _ := r.Lookup("echo")
	if got.Source.Name != "loud" {
		t.Fatalf("override did not replace: source %v", got.Source)
	}
	if n := len(r.Definitions()); n != 1 {
		t.Fatalf("override added a second entry: %d definitions", n)
	}
}

func TestRegistrySetActive(t *testing.T) {
	r := tool.NewRegistry()
	for _, n := range []string{"b", "a", "c"} {
		if err := r.Register(echoDef(n, tool.Source{})); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(r.ActiveNames(), ","); got != "b,a,c" {
		t.Fatalf("default active = %s, want every tool in registration order", got)
	}
	if err := r.SetActive([]string{"c", "a", "c"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.ActiveNames(), ","); got != "c,a" {
		t.Fatalf("active = %s, want c,a", got)
	}
	err := r.SetActive([]string{"a", "zzz"})
	if err == nil || !strings.Contains(err.Error(), `"zzz"`) || !strings.Contains(err.Error(), "a, b, c") {
		t.Fatalf("unknown tool error = %v, want it to name zzz and list a, b, c", err)
	}
	if got := strings.Join(r.ActiveNames(), ","); got != "c,a" {
		t.Fatalf("failed SetActive changed the active set to %s", got)
	}
	if r.IsActive("b") || !r.IsActive("a") {
		t.Fatal("IsActive disagrees with ActiveNames")
	}
	tools, err := r.ActiveTools(nil)
	if err != nil || len(tools) != 2 || tools[0].Name() != "c" {
		t.Fatalf("ActiveTools = %v, %v", tools, err)
	}
}

func TestWrapRejectsBadSchema(t *testing.T) {
	d := echoDef("bad", tool.Source{})
	d.Parameters = json.RawMessage(`{"type":"string"}`)
	if _, err := tool.Wrap(d, nil); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("Wrap of a non-object schema: %v", err)
	}
	d.Parameters = json.RawMessage(`{"type":`)
	if _, err := tool.Wrap(d, nil); err == nil {
		t.Fatal("Wrap of broken JSON succeeded")
	}
}

func TestValidationMessages(t *testing.T) {
	at, err := tool.Wrap(echoDef("echo", tool.Source{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args  string
		lines []string
	}{
		{`{}`, []string{"  - text: must have required property 'text'"}},
		{`{"text":null}`, []string{"  - text: must be string (got null)"}},
		{`{"text":"x","n":0}`, []string{"  - n: "}},
		{`{"text":"x","extra":1}`, []string{"  - extra: is not an allowed property"}},
		{`{"text":3,"n":"a"}`, []string{"  - n: must be integer (got string)", "  - text: must be string (got number)"}},
		{`[1]`, []string{"  - root: must be object (got array)"}},
	}
	for _, c := range cases {
		t.Run(c.args, func(t *testing.T) {
			err := at.Validate(json.RawMessage(c.args))
			if err == nil {
				t.Fatal("validation passed")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "Validation failed for tool \"echo\":\n") {
				t.Fatalf("message does not start with the header:\n%s", msg)
			}
			for _, l := range c.lines {
				if !strings.Contains(msg, "\n"+l) {
					t.Errorf("message lacks line %q:\n%s", l, msg)
				}
			}
			if !strings.Contains(msg, "Received arguments:") {
				t.Errorf("message lacks the received arguments:\n%s", msg)
			}
		})
	}
	if err := at.Validate(json.RawMessage(`{"text":"ok","n":2}`)); err != nil {
		t.Fatalf("valid arguments failed: %v", err)
	}
}

func TestRunPipeline(t *testing.T) {
	at, err := tool.Wrap(echoDef("echo", tool.Source{}), func(name string) tool.Context { return tool.Context{Cwd: "/w/" + name} })
	if err != nil {
		t.Fatal(err)
	}
	tools := []tool.AgentTool{at}
	ctx := context.Background()

	if r := tool.Run(ctx, tools, nil, "nope", "c1", nil, nil); !r.IsError || r.Text() != "Tool nope not found" {
		t.Fatalf("unknown tool: %+v", r)
	}
	var updates atomic.Int32
	r := tool.Run(ctx, tools, nil, "echo", "c1", json.RawMessage(`{"text":"hi"}`), func(tool.Result) { updates.Add(1) })
	if r.IsError || r.Text() != "hi@/w/echo" || updates.Load() != 1 {
		t.Fatalf("plain run: %+v, %d updates", r, updates.Load())
	}

	hooks := &tool.Hooks{
		ToolCall: []tool.ToolCallHook{
			{Name: "rewrite", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
				if strings.Contains(string(c.Input), "swap") {
					return tool.ToolCallDecision{Input: json.RawMessage(`{"text":"swapped"}`)}, nil
				}
				return tool.ToolCallDecision{}, nil
			}},
			{Name: "guard", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
				switch {
				case strings.Contains(string(c.Input), "secret"):
					return tool.ToolCallDecision{Block: true, Reason: "no secrets"}, nil
				case strings.Contains(string(c.Input), "silent"):
					return tool.ToolCallDecision{Block: true}, nil
				case strings.Contains(string(c.Input), "broken"):
					return tool.ToolCallDecision{}, errors.New("guest trapped")
				case strings.Contains(string(c.Input), "invalid"):
					return tool.ToolCallDecision{Input: json.RawMessage(`{"text":1}`)}, nil
				}
				return tool.ToolCallDecision{}, nil
			}},
		},
		ToolResult: []tool.ToolResultHook{
			{Name: "upper", Func: func(_ context.Context, c tool.CallInfo, r tool.Result) (tool.ResultPatch, error) {
				return tool.ResultPatch{Content: []tool.ContentBlock{tool.Text(strings.ToUpper(r.Text()))}}, nil
			}},
			{Name: "fails", Func: func(context.Context, tool.CallInfo, tool.Result) (tool.ResultPatch, error) {
				return tool.ResultPatch{}, errors.New("boom")
			}},
			{Name: "flag", Func: func(_ context.Context, c tool.CallInfo, r tool.Result) (tool.ResultPatch, error) {
				yes := true
				if strings.Contains(r.Text(), "SWAPPED") {
					return tool.ResultPatch{IsError: &yes, Details: json.RawMessage(`{"why":"swapped"}`)}, nil
				}
				return tool.ResultPatch{}, nil
			}},
		},
	}
	var hookErrs []string
	hooks.OnHookError = func(h string, err error) { hookErrs = append(hookErrs, h+": "+err.Error()) }

	cases := []struct {
		text, want string
		isErr      bool
	}{
		{"hello", "HELLO@/W/ECHO", false},
		{"swap", "SWAPPED@/W/ECHO", true},
		{"secret", "no secrets", true},
		{"silent", "Tool execution was blocked", true},
		{"broken", "Tool execution was blocked: guard failed: guest trapped", true},
	}
	for _, c := range cases {
		r := tool.Run(ctx, tools, hooks, "echo", "c", json.RawMessage(`{"text":"`+c.text+`"}`), nil)
		if r.Text() != c.want || r.IsError != c.isErr {
			t.Errorf("%s: got %q isError=%v, want %q isError=%v", c.text, r.Text(), r.IsError, c.want, c.isErr)
		}
	}
	r = tool.Run(ctx, tools, hooks, "echo", "c", json.RawMessage(`{"text":"invalid"}`), nil)
	if !r.IsError || !strings.Contains(r.Text(), "Validation failed for tool \"echo\"") || !strings.Contains(r.Text(), "replaced by guard") {
		t.Errorf("replaced input is not re-validated: %q", r.Text())
	}
	if len(hookErrs) == 0 || hookErrs[0] != "fails: boom" {
		t.Errorf("tool_result hook error not reported: %v", hookErrs)
	}
}

func TestExecutePanicBecomesErrorResult(t *testing.T) {
	d := echoDef("boom", tool.Source{})
	d.Execute = func(context.Context, tool.Call, tool.Context) (tool.Result, error) { panic("kaboom") }
	at, err := tool.Wrap(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := tool.Run(context.Background(), []tool.AgentTool{at}, nil, "boom", "c", json.RawMessage(`{"text":"x"}`), nil)
	if !r.IsError || !strings.Contains(r.Text(), "kaboom") {
		t.Fatalf("panic result: %+v", r)
	}
}

func TestResultJSON(t *testing.T) {
	r := tool.Result{Content: []tool.ContentBlock{tool.Text(""), tool.Image("AAA=", "image/png")}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"text","text":""},{"type":"image","data":"AAA=","mimeType":"image/png"}],"isError":false}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}

// Paths come from the definition's PathsFunc with the call's cwd; a tool
// that cannot name its paths is blocked before it runs.
func TestPreflightPaths(t *testing.T) {
	var ran atomic.Int32
	def := echoDef("opener", tool.Source{Kind: tool.SourceBuiltin})
	inner := def.Execute
	def.Execute = func(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
		ran.Add(1)
		return inner(ctx, call, tc)
	}
	def.Paths = func(call tool.Call, cwd string) ([]string, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(call.Input, &in); err != nil {
			return nil, err
		}
		if in.Text == "unnamable" {
			return nil, errors.New("no idea")
		}
		return []string{cwd + "/" + in.Text}, nil
	}
	plain := echoDef("plain", tool.Source{Kind: tool.SourceBuiltin})
	tools, err := tool.WrapAll([]tool.ToolDefinition{def, plain}, func(string) tool.Context { return tool.Context{Cwd: "/w"} })
	if err != nil {
		t.Fatal(err)
	}
	var seen []tool.CallInfo
	hooks := &tool.Hooks{ToolCall: []tool.ToolCallHook{
		{Name: "first", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
			seen = append(seen, c)
			if strings.Contains(string(c.Input), "rewrite") {
				return tool.ToolCallDecision{Input: json.RawMessage(`{"text":"unnamable"}`)}, nil
			}
			return tool.ToolCallDecision{}, nil
		}},
		{Name: "second", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
			seen = append(seen, c)
			return tool.ToolCallDecision{}, nil
		}},
	}}
	ctx := context.Background()

	tool.Run(ctx, tools, hooks, "opener", "c1", json.RawMessage(`{"text":"a.txt"}`), nil)
	if len(seen) != 2 || len(seen[0].Paths) != 1 || seen[0].Paths[0] != "/w/a.txt" || seen[1].Paths[0] != "/w/a.txt" {
		t.Fatalf("hooks saw %+v", seen)
	}
	seen = nil
	tool.Run(ctx, tools, hooks, "plain", "c2", json.RawMessage(`{"text":"a.txt"}`), nil)
	if len(seen) != 2 || seen[0].Paths == nil || len(seen[0].Paths) != 0 {
		t.Fatalf("a tool without Paths: hooks saw %+v, want an empty non-nil list", seen)
	}

	before := ran.Load()
	seen = nil
	r := tool.Run(ctx, tools, hooks, "opener", "c3", json.RawMessage(`{"text":"unnamable"}`), nil)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "cannot tell which paths opener would open: no idea") || len(seen) != 0 {
		t.Errorf("unnamable paths: %+v, hooks ran %d times", r, len(seen))
	}
	seen = nil
	r = tool.Run(ctx, tools, hooks, "opener", "c4", json.RawMessage(`{"text":"rewrite"}`), nil)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "as replaced by first") || len(seen) != 1 {
		t.Errorf("rewrite to unnamable paths: %+v, hooks ran %d times", r, len(seen))
	}
	if ran.Load() != before {
		t.Errorf("a call whose paths could not be named ran")
	}
}

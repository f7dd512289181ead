package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/abi"
)

// call sends one request to r and decodes the envelope.
func call(t *testing.T, r *registry, method string, params any) (ok bool, result json.RawMessage, msg string) {
	t.Helper()
	req, err := json.Marshal(map[string]any{"method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  *abi.Error      `json:"error"`
	}
	out := r.handle(req)
	d := json.NewDecoder(strings.NewReader(string(out)))
	d.DisallowUnknownFields()
	if err := d.Decode(&resp); err != nil {
		t.Fatalf("answer %s is not an envelope: %v", out, err)
	}
	if resp.Error != nil {
		msg = resp.Error.Message
	}
	return resp.OK, resp.Result, msg
}

type greetIn struct {
	Name  string `json:"name" description:"Who to greet"`
	Times int    `json:"times,omitempty"`
}

func greeter() *registry {
	r := &registry{}
	r.extension("greeter", "1.2.3", "Greets")
	r.addTool(ToolSpec{Name: "greet", Description: "Greet someone"}, reflect.TypeFor[greetIn](), func(ctx *Context, raw json.RawMessage) (Result, error) {
		var in greetIn
		if err := decodeStrict(raw, &in); err != nil {
			return Result{}, fmt.Errorf("invalid input for tool %q: %s", "greet", describeDecodeError(err))
		}
		if in.Name == "panic" {
			var m map[string]int
			m["x"]++ // a real runtime panic
		}
		if in.Name == "" {
			return Result{}, errors.New("name is empty")
		}
		return Text(strings.Repeat("Hello, "+in.Name+"! ", max(in.Times, 1)) + "from " + ctx.Cwd), nil
	})
	return r
}

func TestInitDeclaresToolsAndHooks(t *testing.T) {
	r := greeter()
	r.toolCall = append(r.toolCall, func(ToolCall) ToolCallDecision { return ToolCallDecision{} })
	r.events = append(r.events, func(Event) {})
	r.wants = &Grants{FS: []string{"ro:."}}
	ok, res, msg := call(t, r, "init", map[string]any{"abi": 1, "cwd": "/proj", "config": map[string]any{"k": "v"}, "grants": map[string]any{"fs": []string{"ro:/proj"}}})
	if !ok {
		t.Fatalf("init failed: %s", msg)
	}
	var got struct {
		Name, Version, Description string
		Tools                      []struct {
			Name, Description string
			Parameters        map[string]any
		}
		Hooks []string
		Wants Grants
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "greeter" || got.Version != "1.2.3" || len(got.Tools) != 1 || got.Tools[0].Name != "greet" {
		t.Fatalf("init result %s", res)
	}
	if want := []string{"tool_call", "event"}; !reflect.DeepEqual(got.Hooks, want) {
		t.Errorf("hooks %v, want %v", got.Hooks, want)
	}
	if !reflect.DeepEqual(got.Wants.FS, []string{"ro:."}) {
		t.Errorf("wants %+v", got.Wants)
	}
	p := got.Tools[0].Parameters
	if p["type"] != "object" || p["additionalProperties"] != false {
		t.Errorf("derived schema %v", p)
	}
	if req, _ := p["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Errorf("required %v, want [name] (times has omitempty)", p["required"])
	}
	if r.cwd != "/proj" || !reflect.DeepEqual(r.grants.FS, []string{"ro:/proj"}) {
		t.Errorf("init state cwd=%q grants=%+v", r.cwd, r.grants)
	}
}

func TestExecute(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		ok      bool
		want    string // substring of the text or of the error message
		wantNot string
	}{
		{"decoded", `{"name":"Ada","times":2}`, true, "Hello, Ada! Hello, Ada! from /work", ""},
		{"handler error", `{"name":""}`, false, "name is empty", ""},
		{"wrong type names the field", `{"name":3}`, false, `invalid input for tool "greet": field "name" must be string (got number)`, ""},
		{"unknown field", `{"name":"x","nmae":"y"}`, false, `unknown field "nmae"`, ""},
		{"panic becomes an error answer", `{"name":"panic"}`, false, `panic in tool "greet": assignment to entry in nil map`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := greeter()
			ok, res, msg := call(t, r, "tool.execute", map[string]any{"toolName": "greet", "toolCallId": "c1", "input": json.RawMessage(tc.input), "cwd": "/work"})
			if ok != tc.ok {
				t.Fatalf("ok=%v (result %s, error %q), want %v", ok, res, msg, tc.ok)
			}
			text := msg
			if ok {
				var out struct{ Content []Block }
				if err := json.Unmarshal(res, &out); err != nil {
					t.Fatal(err)
				}
				text = out.Content[0].Text
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("got %q, want it to contain %q", text, tc.want)
			}
		})
	}
}

func TestUnknownMethodAndTool(t *testing.T) {
	r := greeter()
	if ok, _, msg := call(t, r, "tool.frobnicate", map[string]any{}); ok || msg != `unknown method "tool.frobnicate"` {
		t.Errorf("unknown method: ok=%v msg=%q", ok, msg)
	}
	if ok, _, msg := call(t, r, "tool.execute", map[string]any{"toolName": "nope"}); ok || !strings.Contains(msg, `no tool "nope"`) {
		t.Errorf("unknown tool: ok=%v msg=%q", ok, msg)
	}
	if out := string(r.handle([]byte("{not json"))); !strings.Contains(out, "malformed request") {
		t.Errorf("malformed request answered %s", out)
	}
}

func TestRegistrationErrorsFailInit(t *testing.T) {
	tests := []struct {
		name  string
		setup func(r *registry)
		want  string
	}{
		{"no extension", func(r *registry) {}, "sdk.Extension was not called"},
		{"bad name", func(r *registry) { r.extension("Bad Name", "1", "") }, `extension name "Bad Name"`},
		{"twice", func(r *registry) {
			r.extension("a", "1", "")
			r.addTool(ToolSpec{Name: "t", Description: "d"}, reflect.TypeFor[greetIn](), nil)
			r.addTool(ToolSpec{Name: "t", Description: "d"}, reflect.TypeFor[greetIn](), nil)
		}, `tool "t" registered twice`},
		{"schema not JSON", func(r *registry) {
			r.extension("a", "1", "")
			r.addTool(ToolSpec{Name: "t", Description: "d", Parameters: "{nope"}, reflect.TypeFor[greetIn](), nil)
		}, `sdk.Tool "t": parameters: not JSON`},
		{"schema not an object", func(r *registry) {
			r.extension("a", "1", "")
			r.addTool(ToolSpec{Name: "t", Description: "d", Parameters: map[string]any{"type": "string"}}, reflect.TypeFor[greetIn](), nil)
		}, "must be a JSON Schema of type object"},
		{"input not a struct", func(r *registry) {
			r.extension("a", "1", "")
			r.addTool(ToolSpec{Name: "t", Description: "d"}, reflect.TypeFor[string](), nil)
		}, "input type string is not a struct"},
		{"on init error", func(r *registry) {
			r.extension("a", "1", "")
			r.onInit = append(r.onInit, func() error { return errors.New("config paths[0]: bad glob") })
		}, "config paths[0]: bad glob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &registry{}
			tc.setup(r)
			ok, _, msg := call(t, r, "init", map[string]any{"abi": 1})
			if ok || !strings.Contains(msg, tc.want) {
				t.Errorf("ok=%v msg=%q, want failure containing %q", ok, msg, tc.want)
			}
		})
	}
}

func TestInitRefusesOtherABI(t *testing.T) {
	r := greeter()
	ok, _, msg := call(t, r, "init", map[string]any{"abi": 2})
	if ok || !strings.Contains(msg, "ABI 2") {
		t.Errorf("ok=%v msg=%q", ok, msg)
	}
}

func TestToolCallHooksChain(t *testing.T) {
	tests := []struct {
		name  string
		hooks []func(ToolCall) ToolCallDecision
		want  string
	}{
		{"pass", []func(ToolCall) ToolCallDecision{func(ToolCall) ToolCallDecision { return ToolCallDecision{} }}, `{}`},
		{"replace then block sees replaced input", []func(ToolCall) ToolCallDecision{
			func(c ToolCall) ToolCallDecision { return ToolCallDecision{Input: map[string]string{"path": "b.txt"}} },
			func(c ToolCall) ToolCallDecision { return Deny("saw " + string(c.Input)) },
		}, `{"block":true,"reason":"saw {\"path\":\"b.txt\"}"}`},
		{"replace", []func(ToolCall) ToolCallDecision{
			func(c ToolCall) ToolCallDecision { return ToolCallDecision{Input: map[string]string{"path": "b.txt"}} },
		}, `{"input":{"path":"b.txt"}}`},
		{"panic fails", []func(ToolCall) ToolCallDecision{
			func(c ToolCall) ToolCallDecision { panic("boom") },
		}, `error: panic in tool_call hook: boom`},
		{"paths arrive", []func(ToolCall) ToolCallDecision{
			func(c ToolCall) ToolCallDecision { return Deny(fmt.Sprintf("%q", c.Paths)) },
		}, `{"block":true,"reason":"[\"/real/a.txt\"]"}`},
		{"paths of the old input are not shown after a replace", []func(ToolCall) ToolCallDecision{
			func(c ToolCall) ToolCallDecision { return ToolCallDecision{Input: map[string]string{"path": "b.txt"}} },
			func(c ToolCall) ToolCallDecision { return Deny(fmt.Sprintf("%q", c.Paths)) },
		}, `{"block":true,"reason":"[]"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := greeter()
			r.toolCall = tc.hooks
			ok, res, msg := call(t, r, "hook.tool_call", map[string]any{"toolName": "write", "toolCallId": "c", "input": map[string]string{"path": "a.txt"}, "paths": []string{"/real/a.txt"}})
			got := string(res)
			if !ok {
				got = "error: " + msg
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestToolResultHooksChain(t *testing.T) {
	r := greeter()
	yes := true
	r.toolResult = []func(ToolResult) ResultPatch{
		func(res ToolResult) ResultPatch {
			return ResultPatch{Content: []Block{TextBlock(strings.ToUpper(res.Text()))}}
		},
		func(res ToolResult) ResultPatch {
			return ResultPatch{Content: []Block{TextBlock(res.Text() + "!")}, IsError: &yes, Details: map[string]int{"n": 1}}
		},
	}
	ok, res, msg := call(t, r, "hook.tool_result", map[string]any{"toolName": "read", "toolCallId": "c", "input": map[string]any{}, "content": []Block{TextBlock("abc")}, "details": nil, "isError": false})
	if !ok {
		t.Fatal(msg)
	}
	var got map[string]any
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"content": []any{map[string]any{"type": "text", "text": "ABC!"}}, "isError": true, "details": map[string]any{"n": 1.0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patch %s, want %v", res, want)
	}
	r.toolResult = []func(ToolResult) ResultPatch{func(ToolResult) ResultPatch { return ResultPatch{} }}
	if _, res, _ := call(t, r, "hook.tool_result", map[string]any{"toolName": "read", "content": []Block{}}); string(res) != "{}" {
		t.Errorf("empty patch answered %s", res)
	}
}

func TestBashSpawnHooksChain(t *testing.T) {
	r := greeter()
	r.bashSpawn = []func(BashSpawn) BashSpawn{
		func(s BashSpawn) BashSpawn { s.Env["A"] = "1"; return s },
		func(s BashSpawn) BashSpawn { return BashSpawn{Command: s.Command + " && echo $A"} }, // empty cwd/env keep
	}
	ok, res, msg := call(t, r, "hook.bash_spawn", map[string]any{"command": "ls", "cwd": "/p", "env": map[string]string{"PATH": "/bin"}})
	if !ok {
		t.Fatal(msg)
	}
	var got BashSpawn
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	want := BashSpawn{Command: "ls && echo $A", Cwd: "/p", Env: map[string]string{"PATH": "/bin", "A": "1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestEvents(t *testing.T) {
	r := greeter()
	var seen []string
	r.events = []func(Event){func(e Event) {
		var v struct {
			Type string `json:"type"`
			Turn int    `json:"turn"`
		}
		if err := e.Decode(&v); err != nil {
			t.Error(err)
		}
		seen = append(seen, fmt.Sprintf("%s/%s/%d", e.Type, v.Type, v.Turn))
	}}
	ok, _, msg := call(t, r, "event", map[string]any{"type": "turn_end", "turn": 3})
	if !ok || !reflect.DeepEqual(seen, []string{"turn_end/turn_end/3"}) {
		t.Errorf("ok=%v msg=%q seen=%v", ok, msg, seen)
	}
}

func TestSchemaOf(t *testing.T) {
	type Inner struct {
		X float64 `json:"x"`
	}
	type Embedded struct {
		E string `json:"e,omitempty"`
	}
	type In struct {
		Embedded
		S     string            `json:"s" description:"a string"`
		B     bool              `json:"b,omitempty"`
		N     *uint8            `json:"n,omitempty"`
		L     []Inner           `json:"l"`
		M     map[string]int    `json:"m,omitempty"`
		Raw   json.RawMessage   `json:"raw,omitempty"`
		Skip  string            `json:"-"`
		Bytes []byte            `json:"bytes,omitempty"`
		Any   any               `json:"any,omitempty"`
		Env   map[string]string `json:"env,omitempty"`
		hide  int
	}
	_ = In{}.hide
	s, err := schemaOf(reflect.TypeFor[In]())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	p := got["properties"].(map[string]any)
	checks := map[string]string{
		"e": `{"type":"string"}`, "s": `{"description":"a string","type":"string"}`, "b": `{"type":"boolean"}`,
		"n": `{"minimum":0,"type":"integer"}`, "l": `{"items":{"additionalProperties":false,"properties":{"x":{"type":"number"}},"required":["x"],"type":"object"},"type":"array"}`,
		"m": `{"additionalProperties":{"type":"integer"},"type":"object"}`, "raw": `{}`,
		"bytes": `{"contentEncoding":"base64","type":"string"}`, "any": `{}`,
	}
	for k, want := range checks {
		gb, _ := json.Marshal(p[k])
		if string(gb) != want {
			t.Errorf("property %s: %s, want %s", k, gb, want)
		}
	}
	for _, k := range []string{"Skip", "hide", "Embedded"} {
		if _, ok := p[k]; ok {
			t.Errorf("property %s should not be in the schema", k)
		}
	}
	if req := fmt.Sprint(got["required"]); req != "[s l]" {
		t.Errorf("required %s, want [s l]", req)
	}
}

func TestBlockJSON(t *testing.T) {
	tests := []struct {
		b    Block
		want string
	}{
		{TextBlock(""), `{"type":"text","text":""}`},
		{TextBlock("hi"), `{"type":"text","text":"hi"}`},
		{ImageBlock("AAAA", "image/png"), `{"type":"image","data":"AAAA","mimeType":"image/png"}`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			b, err := json.Marshal(tc.b)
			if err != nil || string(b) != tc.want {
				t.Errorf("got %s (%v), want %s", b, err, tc.want)
			}
		})
	}
}

func TestRequestShapes(t *testing.T) {
	tests := []struct {
		name, req, want string
	}{
		{"input before toolName", `{"method":"tool.execute","params":{"input":{"name":"Bo"},"toolName":"greet","cwd":"/w"}}`, `{"ok":true,"result":{"content":[{"type":"text","text":"Hello, Bo! from /w"}]}}`},
		{"unknown field in input", `{"method":"tool.execute","params":{"toolName":"greet","input":{"name":"Bo","x":1},"cwd":"/w"}}`, `{"ok":false,"error":{"message":"invalid input for tool \"greet\": unknown field \"x\""}}`},
		{"input not an object", `{"method":"tool.execute","params":{"toolName":"greet","input":[1]}}`, `{"ok":false,"error":{"message":"invalid input for tool \"greet\": must be object (got array)"}}`},
		{"params before method", `{"params":{"toolName":"greet","input":{"name":"Bo"},"cwd":"/w"},"method":"tool.execute"}`, `{"ok":true,"result":{"content":[{"type":"text","text":"Hello, Bo! from /w"}]}}`},
		{"extra envelope fields are ignored", `{"method":"tool.execute","id":7,"params":{"toolName":"greet","input":{"name":"Bo"},"cwd":"/w","future":[1]}}`, `{"ok":true,"result":{"content":[{"type":"text","text":"Hello, Bo! from /w"}]}}`},
		{"no params", `{"method":"event"}`, `{"ok":false,"error":{"message":"malformed event: unexpected end of JSON input"}}`},
		{"params of the wrong shape", `{"method":"tool.execute","params":[1]}`, `{"ok":false,"error":{"message":"malformed request: params of tool.execute: json: cannot unmarshal array into Go value of type abi.ExecuteParams"}}`},
		{"not an object", `[1]`, `{"ok":false,"error":{"message":"malformed request: want an object, got ["}}`},
		{"trailing data", `{"method":"x"} {}`, `{"ok":false,"error":{"message":"malformed request: data after the request"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(greeter().handle([]byte(tc.req))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

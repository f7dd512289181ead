package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/testkit/abigolden"
)

// The golden files of internal/abi/testdata are the wire messages of ABI 1,
// one per kind. This side dispatches each request the host sends through
// the SDK's real dispatcher and checks that the answer is the golden answer
// and that the handlers saw every field of the request; it also checks the
// messages the SDK sends on its own (emit, exec) and decodes the host's
// answers. The extensions package checks the host side against the same
// files.

// seen records what the golden extension's handlers were given.
type seen struct {
	execute    []string
	toolCalls  []ToolCall
	toolResult []ToolResult
	spawns     []BashSpawn
	events     []Event
}

// goldenExtension is the extension the golden answers come from: one tool
// and every kind of hook.
func goldenExtension(s *seen) *registry {
	r := &registry{}
	r.extension("greeter", "1.2.3", "Greets people")
	r.wants = &Grants{FS: []string{"ro:."}, Exec: []string{"git status*"}, Env: []string{"HOME"}}
	spec := ToolSpec{
		Name: "greet", Label: "Greet", Description: "Greet someone by name",
		PromptSnippet:    "greet: say hello to someone",
		PromptGuidelines: []string{"Greet people by the name they gave."},
		ExecutionMode:    Sequential,
	}
	r.addTool(spec, reflect.TypeFor[greetIn](), func(ctx *Context, raw json.RawMessage) (Result, error) {
		var in greetIn
		if err := decodeStrict(raw, &in); err != nil {
			return Result{}, err
		}
		s.execute = append(s.execute, fmt.Sprintf("%s %s %s %+v", ctx.ToolName, ctx.ToolCallID, ctx.Cwd, in))
		return Result{
			Content:   []Block{TextBlock("Hello, " + in.Name + "!"), ImageBlock("iVBORw0KGgo=", "image/png")},
			Details:   map[string]string{"greeted": in.Name},
			IsError:   true,
			Terminate: true,
		}, nil
	})
	r.toolCall = append(r.toolCall, func(c ToolCall) ToolCallDecision {
		s.toolCalls = append(s.toolCalls, c)
		var in struct{ Path string }
		switch {
		case c.ToolName == "write" && c.DecodeInput(&in) == nil && in.Path == ".env":
			return Deny("writing .env is not allowed")
		case c.ToolName == "bash":
			return ToolCallDecision{Input: map[string]string{"command": "rm -rf ./build"}}
		}
		return ToolCallDecision{}
	})
	r.toolResult = append(r.toolResult, func(res ToolResult) ResultPatch {
		s.toolResult = append(s.toolResult, res)
		if !strings.Contains(res.Text(), "sk-live-") {
			return ResultPatch{}
		}
		content := append([]Block(nil), res.Content...)
		for i, b := range content {
			if b.Type == "text" {
				content[i].Text = strings.ReplaceAll(b.Text, "sk-live-123", "[hidden]")
			}
		}
		isError := false
		return ResultPatch{Content: content, Details: map[string]int{"redacted": 1}, IsError: &isError}
	})
	r.bashSpawn = append(r.bashSpawn, func(b BashSpawn) BashSpawn {
		s.spawns = append(s.spawns, b)
		env := map[string]string{"GOFLAGS": "-mod=mod"}
		for k, v := range b.Env {
			env[k] = v
		}
		b.Env = env
		return b
	})
	r.events = append(r.events, func(e Event) { s.events = append(s.events, e) })
	return r
}

// TestGoldenDispatch: each request golden, dispatched by the SDK, is
// answered with its answer golden, and the handlers saw what the request
// says.
func TestGoldenDispatch(t *testing.T) {
	var s seen
	r := goldenExtension(&s)
	for _, kind := range []string{"init", "tool.execute", "hook.tool_call", "hook.tool_call.input", "hook.tool_result", "hook.bash_spawn", "event"} {
		abigolden.Match(t, "the SDK", kind+".response.json", r.handle(abigolden.Wire(t, kind+".request.json")))
	}

	if r.hostName != "pi" || r.hostVersion != "0.9.0" || r.cwd != "/home/ada/project" || string(r.config) != `{"greeting":"Hello","times":2}` {
		t.Errorf("init: host %q %q, cwd %q, config %s", r.hostName, r.hostVersion, r.cwd, r.config)
	}
	if want := (Grants{FS: []string{"ro:/home/ada/project/src", "rw:/home/ada/project/out"}, Exec: []string{"git status*"}, Env: []string{"HOME"},
		HTTP: []string{"https://api.example.com/v1/*"}, Tools: []string{"read", "grep"}}); !reflect.DeepEqual(r.grants, want) {
		t.Errorf("init: grants %+v, want %+v", r.grants, want)
	}
	if r.abiMinor != abi.Minor || r.projectRoot != "/home/ada/project" || !r.trusted || r.mode != "print" || r.hasUI {
		t.Errorf("init facts: abiMinor %d, projectRoot %q, trusted %v, mode %q, hasUI %v", r.abiMinor, r.projectRoot, r.trusted, r.mode, r.hasUI)
	}
	if want := []string{"greet call_1 /home/ada/project {Name:Ada Times:0}"}; !reflect.DeepEqual(s.execute, want) {
		t.Errorf("tool.execute: the tool saw %q, want %q", s.execute, want)
	}
	wantCalls := []ToolCall{
		{ToolName: "write", ToolCallID: "call_2", Input: json.RawMessage(`{"path":".env","content":"TOKEN=x"}`), Paths: []string{"/home/ada/project/.env"}},
		{ToolName: "bash", ToolCallID: "call_3", Input: json.RawMessage(`{"command":"rm -rf build"}`), Paths: []string{}},
	}
	if !reflect.DeepEqual(s.toolCalls, wantCalls) {
		t.Errorf("hook.tool_call: the hook saw\n%+v\nwant\n%+v", s.toolCalls, wantCalls)
	}
	wantResult := []ToolResult{{
		ToolName: "read", ToolCallID: "call_4", Input: json.RawMessage(`{"path":"notes.txt"}`),
		Content: []Block{TextBlock("API_KEY=sk-live-123"), ImageBlock("iVBORw0KGgo=", "image/png")},
		Details: json.RawMessage(`{"lines":1}`),
	}}
	if !reflect.DeepEqual(s.toolResult, wantResult) {
		t.Errorf("hook.tool_result: the hook saw\n%+v\nwant\n%+v", s.toolResult, wantResult)
	}
	if want := []BashSpawn{{Command: "make test", Cwd: "/home/ada/project", Env: map[string]string{"HOME": "/home/ada"}}}; !reflect.DeepEqual(s.spawns, want) {
		t.Errorf("hook.bash_spawn: the hook saw %+v, want %+v", s.spawns, want)
	}
	if len(s.events) != 1 || s.events[0].Type != "tool_execution_start" || string(s.events[0].Raw) != `{"type":"tool_execution_start","toolCallId":"call_1","toolName":"greet","args":{"name":"Ada"}}` {
		t.Errorf("event: the handler saw %+v", s.events)
	}
}

// TestGoldenGuestMessages: what the SDK sends on its own (a partial result,
// an exec request, an error answer) and how it reads the host's exec answer.
func TestGoldenGuestMessages(t *testing.T) {
	b, err := encodePartial(Result{Content: []Block{TextBlock("Greeting 1 of 2")}, Details: map[string]int{"done": 1}})
	if err != nil {
		t.Fatal(err)
	}
	abigolden.Match(t, "the SDK", "emit.partial.json", b)

	b, err = encodeHostRequest("exec", execParamsToABI([]string{"cat"}, ExecOptions{Cwd: "src", Timeout: 5 * time.Second, Stdin: "hello\n"}))
	if err != nil {
		t.Fatal(err)
	}
	abigolden.Match(t, "the SDK", "host.exec.request.json", b)

	abigolden.Match(t, "the SDK", "error.response.json", encodeError(errors.New("name is empty")))

	var res ExecResult
	if err := decodeHostAnswer("exec", abigolden.Wire(t, "host.exec.response.json"), &res); err != nil {
		t.Fatal(err)
	}
	if want := (ExecResult{Stdout: "hello\n"}); res != want {
		t.Errorf("host.exec.response.json decodes to %+v, want %+v", res, want)
	}
	err = decodeHostAnswer("exec", abigolden.Wire(t, "error.response.json"), &res)
	var he *HostError
	if !errors.As(err, &he) || he.Message != "name is empty" || he.Method != "exec" {
		t.Errorf("error.response.json as a host answer = %v, want a HostError", err)
	}
}

// The ABI 1.1 goldens, guest side: an extension using every 1.1 feature
// answers the 1.1 requests with the golden answers, encodes the host
// requests as the goldens spell them, and reads the host's answers.

type gateConfig struct {
	Greeting string `json:"greeting"`
}

// gateExtension registers what init.v11.response.json declares.
func gateExtension(s *seen11) *registry {
	r := &registry{}
	r.extension("gate", "1.2.3", "Greets people")
	r.wants = &Grants{FS: []string{"ro:."}, Exec: []string{"git status*"}, Env: []string{"HOME"}, HTTP: []string{"https://api.example.com/v1/*"}, Tools: []string{"bash"}}
	spec := ToolSpec{
		Name: "greet", Label: "Greet", Description: "Greet someone by name",
		PromptSnippet:    "greet: say hello to someone",
		PromptGuidelines: []string{"Greet people by the name they gave."},
		ExecutionMode:    Sequential,
	}
	r.addTool(spec, reflect.TypeFor[greetIn](), func(*Context, json.RawMessage) (Result, error) { return Text("hi"), nil })
	r.toolCall = append(r.toolCall, func(c ToolCall) ToolCallDecision {
		if c.ToolName == "bash" {
			return Ask("bash runs git push; allow it?")
		}
		return ToolCallDecision{}
	})
	r.input = append(r.input, func(in Input) InputAction {
		s.inputs = append(s.inputs, in)
		if strings.Contains(in.Text, "sk-") {
			return InputHandled("the prompt holds a secret; it was not sent")
		}
		return InputReplace(in.Text + " (run the tests after)")
	})
	r.beforeStart = append(r.beforeStart, func(b BeforeAgentStart) AgentStartChange {
		s.starts = append(s.starts, b)
		return AgentStartChange{SystemPrompt: "You are a careful assistant."}
	}, func(b BeforeAgentStart) AgentStartChange {
		// The second hook sees the first one's system prompt.
		s.starts = append(s.starts, b)
		return AgentStartChange{AppendSystemPrompt: "The project builds with make.", Messages: [][]Block{{TextBlock("Brief: a Go web service.")}}}
	})
	r.stop = append(r.stop, func(st Stop) StopDecision {
		s.stops = append(s.stops, st)
		return Continue("The tests fail:\nFAIL TestParse")
	})
	r.addCommand(CommandSpec{Name: "todo", Description: "Show or add to the todo list", ArgumentHint: "[item]"}, func(args string) (CommandResult, error) {
		s.commands = append(s.commands, args)
		return CommandResult{Text: "added: " + args, Prompt: "Plan how to " + args + "."}, nil
	})
	r.setConfigSchema(gateConfig{})
	r.events = append(r.events, func(e Event) { s.events = append(s.events, e) })
	r.events11 = []string{"agent_end", "message_end"}
	return r
}

type seen11 struct {
	inputs   []Input
	starts   []BeforeAgentStart
	stops    []Stop
	commands []string
	events   []Event
}

// TestGolden11Dispatch: a 1.1 host's requests get the golden answers.
func TestGolden11Dispatch(t *testing.T) {
	var s seen11
	r := gateExtension(&s)
	out := r.handle(abigolden.Wire(t, "init.request.json"))
	abigolden.Match(t, "the SDK", "init.v11.response.json", out)

	abigolden.Match(t, "the SDK", "hook.tool_call.ask.response.json", r.handle([]byte(`{"method":"hook.tool_call","params":{"toolName":"bash","toolCallId":"c","input":{"command":"git push"},"paths":[]}}`)))
	abigolden.Match(t, "the SDK", "hook.input.response.json", r.handle(abigolden.Wire(t, "hook.input.request.json")))
	if len(s.inputs) != 1 || s.inputs[0].Text != "fix the bug in main.go" || s.inputs[0].Mode != "interactive" || len(s.inputs[0].Images) != 1 || s.inputs[0].Images[0].MimeType != "image/png" {
		t.Errorf("the input hook saw %+v", s.inputs)
	}
	secret := strings.Replace(string(abigolden.Wire(t, "hook.input.request.json")), "fix the bug", "sk-123 fix the bug", 1)
	abigolden.Match(t, "the SDK", "hook.input.handled.response.json", r.handle([]byte(secret)))

	abigolden.Match(t, "the SDK", "hook.before_agent_start.response.json", r.handle(abigolden.Wire(t, "hook.before_agent_start.request.json")))
	if want := []BeforeAgentStart{{Prompt: "fix the bug", SystemPrompt: "You are an expert coding assistant."}, {Prompt: "fix the bug", SystemPrompt: "You are a careful assistant."}}; !reflect.DeepEqual(s.starts, want) {
		t.Errorf("the before_agent_start hooks saw %+v, want %+v", s.starts, want)
	}
	abigolden.Match(t, "the SDK", "hook.stop.response.json", r.handle(abigolden.Wire(t, "hook.stop.request.json")))
	if want := []Stop{{Reason: "end_turn", LastText: "Done: the bug is fixed.", Turns: 3}}; !reflect.DeepEqual(s.stops, want) {
		t.Errorf("the stop hook saw %+v", s.stops)
	}
	abigolden.Match(t, "the SDK", "command.execute.response.json", r.handle(abigolden.Wire(t, "command.execute.request.json")))
	if want := []string{"buy milk"}; !reflect.DeepEqual(s.commands, want) {
		t.Errorf("the command saw %q", s.commands)
	}
	abigolden.Match(t, "the SDK", "event.response.json", r.handle(abigolden.Wire(t, "event.message_end.request.json")))
	if len(s.events) != 1 || s.events[0].Type != "message_end" {
		t.Errorf("the event handler saw %+v", s.events)
	}
}

// TestGolden11Handshake: to a 1.0 host (no abiMinor) the SDK sends none of
// 1.1's fields, and an ask becomes a block that says why.
func TestGolden11Handshake(t *testing.T) {
	r := gateExtension(&seen11{})
	req := `{"method":"init","params":{"abi":1,"host":{"name":"pi","version":"0.8"},"cwd":"/p","config":{},"grants":{"fs":null,"exec":null,"env":null}}}`
	out := r.handle([]byte(req))
	var resp abi.Response
	json.Unmarshal(out, &resp)
	// A 1.0 host decodes strictly into its own shape: 1.1 fields would be
	// unknown ones.
	var v10 struct {
		Name, Version, Description string
		Tools                      []json.RawMessage
		Hooks                      []string
		Wants                      *struct{ FS, Exec, Env []string }
	}
	if err := abi.DecodeStrict(resp.Result, &v10); err != nil {
		t.Fatalf("the answer to a 1.0 host has 1.1 fields: %s (%v)", resp.Result, err)
	}
	if want := []string{"tool_call", "event"}; !reflect.DeepEqual(v10.Hooks, want) {
		t.Errorf("hooks to a 1.0 host = %v, want %v", v10.Hooks, want)
	}
	ans := string(r.handle([]byte(`{"method":"hook.tool_call","params":{"toolName":"bash","toolCallId":"c","input":{},"paths":[]}}`)))
	if !strings.Contains(ans, `"block":true`) || !strings.Contains(ans, "needs approval: bash runs git push; allow it?") {
		t.Errorf("ask to a 1.0 host = %s, want a block", ans)
	}
}

// TestAskWithReplacedInputBlocks: an extension whose hooks both replace
// the arguments and ask blocks the call (dropping the new arguments could
// run the old ones).
func TestAskWithReplacedInputBlocks(t *testing.T) {
	r := gateExtension(&seen11{})
	r.handle(abigolden.Wire(t, "init.request.json"))
	r.toolCall = append([]func(ToolCall) ToolCallDecision{func(ToolCall) ToolCallDecision {
		return ToolCallDecision{Input: map[string]string{"command": "git status"}}
	}}, r.toolCall...)
	ans := string(r.handle([]byte(`{"method":"hook.tool_call","params":{"toolName":"bash","toolCallId":"c","input":{},"paths":[]}}`)))
	if !strings.Contains(ans, `"block":true`) || !strings.Contains(ans, "both replaced the arguments and asked") {
		t.Errorf("input + ask = %s, want a block", ans)
	}
}

// TestGolden11GuestMessages: what the SDK's host calls send, and how it
// reads the host's answers.
func TestGolden11GuestMessages(t *testing.T) {
	enc := func(method string, params any) []byte {
		t.Helper()
		b, err := encodeHostRequest(method, params)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	abigolden.Match(t, "the SDK", "host.kv.get.request.json", enc("kv.get", abi.KVGetParams{Key: "todo/items", Scope: ProjectKV.Scope}))
	abigolden.Match(t, "the SDK", "host.kv.set.request.json", enc("kv.set", abi.KVSetParams{Key: "todo/items", Value: json.RawMessage(`["buy milk"]`), Scope: GlobalKV.Scope}))
	abigolden.Match(t, "the SDK", "host.kv.delete.request.json", enc("kv.delete", abi.KVDeleteParams{Key: "todo/items"}))
	abigolden.Match(t, "the SDK", "host.kv.list.request.json", enc("kv.list", abi.KVListParams{Prefix: "todo/"}))
	abigolden.Match(t, "the SDK", "host.http.request.request.json", enc("http.request", httpParamsToABI(HTTPRequest{
		Method: "POST", URL: "https://api.example.com/v1/items?q=1", Headers: map[string]string{"Content-Type": "application/json"},
		Body: []byte(`{"name":"x"}`), Timeout: 5 * time.Second,
	})))
	abigolden.Match(t, "the SDK", "host.tool.call.request.json", enc("tool.call", abi.ToolCallHostParams{Name: "read", Input: json.RawMessage(`{"path":"README.md"}`)}))
	abigolden.Match(t, "the SDK", "host.ui.notify.request.json", enc("ui.notify", abi.NotifyParams{Message: "tests pass", Level: NotifyInfo}))
	abigolden.Match(t, "the SDK", "host.ui.confirm.request.json", enc("ui.confirm", abi.ConfirmParams{Title: "Deploy", Message: "Deploy to production?", TimeoutMS: time.Minute.Milliseconds()}))

	var kv abi.KVGetResult
	if err := decodeHostAnswer("kv.get", abigolden.Wire(t, "host.kv.get.response.json"), &kv); err != nil || string(kv.Value) != `["buy milk",{"done":true}]` {
		t.Errorf("kv.get answer = %s, %v", kv.Value, err)
	}
	var list abi.KVListResult
	if err := decodeHostAnswer("kv.list", abigolden.Wire(t, "host.kv.list.response.json"), &list); err != nil || !reflect.DeepEqual(list.Keys, []string{"todo/count", "todo/items"}) {
		t.Errorf("kv.list answer = %v, %v", list.Keys, err)
	}
	for _, name := range []string{"host.http.request.response.json", "host.http.request.binary.response.json"} {
		var h abi.HTTPResult
		if err := decodeHostAnswer("http.request", abigolden.Wire(t, name), &h); err != nil {
			t.Fatal(err)
		}
		resp, err := httpResultFromABI(h)
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "host.http.request.response.json":
			if resp.Status != 201 || string(resp.Body) != `{"id":7}` || resp.Headers["Set-Cookie"] != "a=1, b=2" {
				t.Errorf("%s = %+v", name, resp)
			}
		default:
			if resp.Status != 200 || string(resp.Body) != "\x89PNG\r\n\x1a\n" {
				t.Errorf("%s = %+v", name, resp)
			}
		}
	}
	var tc abi.ToolCallHostResult
	if err := decodeHostAnswer("tool.call", abigolden.Wire(t, "host.tool.call.response.json"), &tc); err != nil {
		t.Fatal(err)
	}
	if r := (ToolCallResult{Content: blocksFromABI(tc.Content), Details: tc.Details, IsError: tc.IsError}); r.Text() != "# Project" || r.IsError || string(r.Details) != `{"lines":1}` {
		t.Errorf("tool.call answer = %+v", r)
	}
	var c abi.ConfirmResult
	if err := decodeHostAnswer("ui.confirm", abigolden.Wire(t, "host.ui.confirm.response.json"), &c); err != nil || c.Confirmed || c.Reason != "no-ui" {
		t.Errorf("ui.confirm answer = %+v, %v", c, err)
	}
	if err := decodeHostAnswer("ui.notify", abigolden.Wire(t, "host.empty.response.json"), nil); err != nil {
		t.Error(err)
	}
	// A binary body goes as base64.
	p := httpParamsToABI(HTTPRequest{URL: "https://x/", Body: []byte{0xff, 0}})
	if p.Body != nil || p.BodyBase64 == nil || *p.BodyBase64 != "/wA=" {
		t.Errorf("binary body = %+v", p)
	}
	// Denials come back as HostErrors.
	err := decodeHostAnswer("kv.set", []byte(`{"ok":false,"error":{"message":"kv quota exceeded (5 of 4 bytes)"}}`), nil)
	var he *HostError
	if !errors.As(err, &he) || he.Message != "kv quota exceeded (5 of 4 bytes)" {
		t.Errorf("kv.set denial = %v", err)
	}
}

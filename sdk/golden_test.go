package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

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
	if r.abiMinor != 1 || r.projectRoot != "/home/ada/project" || !r.trusted || r.mode != "print" || r.hasUI {
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

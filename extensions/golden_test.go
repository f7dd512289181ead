package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pi-go/pi/internal/testkit/abigolden"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// The golden files of internal/abi/testdata are the wire messages of ABI 1,
// one per kind. This side checks that the host's real encoders (the
// mapping of a runtime/tool value and the envelope) produce each message the
// host sends, and that the host's real (strict) decoders accept each message
// a guest sends, with every field landing where it should. sdk's tests check
// the guest side against the same files.

// TestGoldenHostRequests: every request the host sends, encoded from the
// runtime/tool value it starts from.
func TestGoldenHostRequests(t *testing.T) {
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("init", func(t *testing.T) {
		opts := Options{HostName: "pi", HostVersion: "0.9.0", Cwd: "/home/ada/project", Trusted: true, Mode: "print"}
		grants := Grants{FS: []string{"ro:/home/ada/project/src", "rw:/home/ada/project/out"}, Exec: []string{"git status*"}, Env: []string{"HOME"},
			HTTP: []string{"https://api.example.com/v1/*"}, Tools: []string{"read", "grep"}}
		abigolden.Match(t, "the host", "init.request.json", must(initRequest(opts, map[string]any{"greeting": "Hello", "times": 2}, grants)))
	})
	t.Run("tool.execute", func(t *testing.T) {
		call := tool.Call{ID: "call_1", Input: json.RawMessage(`{"name":"Ada"}`)}
		abigolden.Match(t, "the host", "tool.execute.request.json", must(executeRequest("greet", call, "/home/ada/project")))
	})
	t.Run("hook.tool_call", func(t *testing.T) {
		c := tool.CallInfo{ID: "call_2", Name: "write", Input: json.RawMessage(`{"path":".env","content":"TOKEN=x"}`), Paths: []string{"/home/ada/project/.env"}}
		abigolden.Match(t, "the host", "hook.tool_call.request.json", must(toolCallRequest(c)))
		// No paths: still an array.
		c = tool.CallInfo{ID: "call_3", Name: "bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)}
		abigolden.Match(t, "the host", "hook.tool_call.input.request.json", must(toolCallRequest(c)))
	})
	t.Run("hook.tool_result", func(t *testing.T) {
		c := tool.CallInfo{ID: "call_4", Name: "read", Input: json.RawMessage(`{"path":"notes.txt"}`)}
		r := tool.Result{
			Content: []tool.ContentBlock{tool.Text("API_KEY=sk-live-123"), tool.Image("iVBORw0KGgo=", "image/png")},
			Details: json.RawMessage(`{"lines":1}`),
		}
		abigolden.Match(t, "the host", "hook.tool_result.request.json", must(toolResultRequest(c, r)))
	})
	t.Run("hook.bash_spawn", func(t *testing.T) {
		s := tool.BashSpawn{Command: "make test", Cwd: "/home/ada/project", Env: map[string]string{"HOME": "/home/ada"}}
		abigolden.Match(t, "the host", "hook.bash_spawn.request.json", must(spawnRequest(s)))
	})
	t.Run("event", func(t *testing.T) {
		ev := agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "call_1", ToolName: "greet", Args: json.RawMessage(`{"name":"Ada"}`)}
		req, typ, err := eventRequest(ev)
		if err != nil || typ != "tool_execution_start" {
			t.Fatalf("eventRequest = %q, %v", typ, err)
		}
		abigolden.Match(t, "the host", "event.request.json", req)
	})
	t.Run("error", func(t *testing.T) {
		abigolden.Match(t, "the host", "error.response.json", encodeErr("name is empty"))
	})
}

// TestGoldenHostCall: the exec request golden runs through the host's real
// host_call handler (a real process) and its answer is the exec answer
// golden.
func TestGoldenHostCall(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	e := &Extension{
		name:   "greeter",
		host:   &Host{opts: Options{ProjectRoot: real, Cwd: real}},
		grants: Grants{Exec: []string{"cat"}, FS: []string{"ro:" + real}},
		mounts: []mount{{dir: real, readOnly: true, grant: "ro:."}},
	}
	abigolden.Match(t, "the host", "host.exec.response.json", e.handleHostCall(context.Background(), abigolden.Wire(t, "host.exec.request.json")))
}

// TestGoldenGuestAnswers: every answer a guest sends decodes through the
// host's real decoders into the values the golden file spells.
func TestGoldenGuestAnswers(t *testing.T) {
	result := func(t *testing.T, name string) json.RawMessage {
		t.Helper()
		raw, err := decodeResponse(abigolden.Wire(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return raw
	}
	check := func(t *testing.T, name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s decodes to\n%#v\nwant\n%#v", name, got, want)
		}
	}
	t.Run("init", func(t *testing.T) {
		r, err := decodeInit(result(t, "init.response.json"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "init.response.json", r, initResult{
			Name: "greeter", Version: "1.2.3", Description: "Greets people",
			Tools: []ToolSpec{{
				Name: "greet", Label: "Greet", Description: "Greet someone by name",
				Parameters:       json.RawMessage(`{"additionalProperties":false,"properties":{"name":{"description":"Who to greet","type":"string"},"times":{"type":"integer"}},"required":["name"],"type":"object"}`),
				PromptSnippet:    "greet: say hello to someone",
				PromptGuidelines: []string{"Greet people by the name they gave."},
				ExecutionMode:    "sequential",
			}},
			Hooks: []string{HookToolCall, HookToolResult, HookBashSpawn, HookEvent},
			Wants: &Grants{FS: []string{"ro:."}, Exec: []string{"git status*"}, Env: []string{"HOME"}},
		})
	})
	t.Run("tool.execute", func(t *testing.T) {
		r, err := decodeExecute(result(t, "tool.execute.response.json"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "tool.execute.response.json", r, tool.Result{
			Content:   []tool.ContentBlock{tool.Text("Hello, Ada!"), tool.Image("iVBORw0KGgo=", "image/png")},
			Details:   json.RawMessage(`{"greeted":"Ada"}`),
			IsError:   true,
			Terminate: true,
		})
	})
	t.Run("emit", func(t *testing.T) {
		r, err := decodePartial(abigolden.Wire(t, "emit.partial.json"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "emit.partial.json", r, tool.Result{Content: []tool.ContentBlock{tool.Text("Greeting 1 of 2")}, Details: json.RawMessage(`{"done":1}`)})
	})
	t.Run("hook.tool_call", func(t *testing.T) {
		d, err := decodeToolCall(result(t, "hook.tool_call.response.json"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "hook.tool_call.response.json", d, tool.ToolCallDecision{Block: true, Reason: "writing .env is not allowed"})
		d, err = decodeToolCall(result(t, "hook.tool_call.input.response.json"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, "hook.tool_call.input.response.json", d, tool.ToolCallDecision{Input: json.RawMessage(`{"command":"rm -rf ./build"}`)})
	})
	t.Run("hook.tool_result", func(t *testing.T) {
		p, err := decodeToolResult(result(t, "hook.tool_result.response.json"))
		if err != nil {
			t.Fatal(err)
		}
		isError := false
		check(t, "hook.tool_result.response.json", p, tool.ResultPatch{
			Content: []tool.ContentBlock{tool.Text("API_KEY=[hidden]"), tool.Image("iVBORw0KGgo=", "image/png")},
			Details: json.RawMessage(`{"redacted":1}`),
			IsError: &isError,
		})
	})
	t.Run("hook.bash_spawn", func(t *testing.T) {
		s, err := decodeSpawn(result(t, "hook.bash_spawn.response.json"), tool.BashSpawn{Command: "x", Cwd: "/", Env: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, "hook.bash_spawn.response.json", s, tool.BashSpawn{Command: "make test", Cwd: "/home/ada/project", Env: map[string]string{"HOME": "/home/ada", "GOFLAGS": "-mod=mod"}})
	})
	t.Run("event", func(t *testing.T) {
		result(t, "event.response.json")
	})
	t.Run("error", func(t *testing.T) {
		_, err := decodeResponse(abigolden.Wire(t, "error.response.json"))
		var ge *GuestError
		if !errors.As(err, &ge) || ge.Message != "name is empty" {
			t.Fatalf("error.response.json decodes to %v, want a GuestError %q", err, "name is empty")
		}
	})
}

// TestGolden11HostRequests: every 1.1 request, encoded by the host's real
// encoders.
func TestGolden11HostRequests(t *testing.T) {
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	images := blocksToABI([]tool.ContentBlock{tool.Image("iVBORw0KGgo=", "image/png")})
	abigolden.Match(t, "the host", "hook.input.request.json", must(encodeRequest("hook.input", inputParams("fix the bug in main.go", images, "interactive"))))
	abigolden.Match(t, "the host", "hook.before_agent_start.request.json", must(encodeRequest("hook.before_agent_start", beforeStartParams("fix the bug", "You are an expert coding assistant."))))
	abigolden.Match(t, "the host", "hook.stop.request.json", must(encodeRequest("hook.stop", stopParams(StopRequest{LastText: "Done: the bug is fixed.", Turns: 3}))))
	abigolden.Match(t, "the host", "command.execute.request.json", must(encodeRequest("command.execute", commandParams("todo", "buy milk"))))
	msg := llm.Message{Role: llm.RoleAssistant, Content: []tool.ContentBlock{tool.Text("Reading it.")},
		ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read", Arguments: llm.RawArguments(`{"path":"main.go"}`)}}}
	usage := llm.Usage{InputTokens: 10}
	req, typ, err := eventRequest(agent.Event{Type: agent.EventMessageEnd, Message: &msg, Usage: &usage, StopReason: llm.StopToolUse})
	if err != nil || typ != "message_end" {
		t.Fatalf("eventRequest(message_end) = %q, %v", typ, err)
	}
	abigolden.Match(t, "the host", "event.message_end.request.json", req)
	// A user's or a tool's message_end is not sent.
	for _, role := range []llm.Role{llm.RoleUser, llm.RoleToolResult} {
		m := llm.Message{Role: role, Content: []tool.ContentBlock{tool.Text("x")}}
		if req, _, err := eventRequest(agent.Event{Type: agent.EventMessageEnd, Message: &m}); req != nil || err != nil {
			t.Errorf("message_end of a %s message = %s, %v; want nothing sent", role, req, err)
		}
	}
}

// TestGolden11GuestAnswers: every 1.1 answer a guest sends decodes through
// the host's real decoders.
func TestGolden11GuestAnswers(t *testing.T) {
	result := func(t *testing.T, name string) json.RawMessage {
		t.Helper()
		raw, err := decodeResponse(abigolden.Wire(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return raw
	}
	r, err := decodeInit(result(t, "init.v11.response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []CommandSpec{{Name: "todo", Description: "Show or add to the todo list", ArgumentHint: "[item]"}}; !reflect.DeepEqual(r.Commands, want) {
		t.Errorf("commands %+v, want %+v", r.Commands, want)
	}
	if want := []string{"agent_end", "message_end"}; !reflect.DeepEqual(r.Events, want) {
		t.Errorf("events %v, want %v", r.Events, want)
	}
	if want := `{"additionalProperties":false,"properties":{"greeting":{"type":"string"}},"required":["greeting"],"type":"object"}`; string(compact(t, r.ConfigSchema)) != want {
		t.Errorf("configSchema %s, want %s", r.ConfigSchema, want)
	}
	if want := []string{"tool_call", "event", "input", "before_agent_start", "stop"}; !reflect.DeepEqual(r.Hooks, want) {
		t.Errorf("hooks %v", r.Hooks)
	}
	if want := (&Grants{FS: []string{"ro:."}, Exec: []string{"git status*"}, Env: []string{"HOME"}, HTTP: []string{"https://api.example.com/v1/*"}, Tools: []string{"bash"}}); !reflect.DeepEqual(r.Wants, want) {
		t.Errorf("wants %+v, want %+v", r.Wants, want)
	}

	d, err := decodeToolCall(result(t, "hook.tool_call.ask.response.json"))
	if err != nil || !reflect.DeepEqual(d, tool.ToolCallDecision{Ask: "bash runs git push; allow it?"}) {
		t.Errorf("ask answer = %+v, %v", d, err)
	}
	var in inputAnswer
	if err := decodeObject(result(t, "hook.input.response.json"), "hook.input", &in); err != nil || in.Text == nil || *in.Text != "fix the bug in main.go (run the tests after)" || in.Handled {
		t.Errorf("input answer = %+v, %v", in, err)
	}
	in = inputAnswer{}
	if err := decodeObject(result(t, "hook.input.handled.response.json"), "hook.input", &in); err != nil || !in.Handled || in.Message != "the prompt holds a secret; it was not sent" {
		t.Errorf("handled input answer = %+v, %v", in, err)
	}
	var bs beforeStartAnswer
	if err := decodeObject(result(t, "hook.before_agent_start.response.json"), "hook.before_agent_start", &bs); err != nil ||
		*bs.SystemPrompt != "You are a careful assistant." || bs.AppendSystemPrompt != "The project builds with make." ||
		len(bs.Messages) != 1 || *bs.Messages[0].Content[0].Text != "Brief: a Go web service." {
		t.Errorf("before_agent_start answer = %+v, %v", bs, err)
	}
	var st stopAnswer
	if err := decodeObject(result(t, "hook.stop.response.json"), "hook.stop", &st); err != nil || !st.Continue || st.Message != "The tests fail:\nFAIL TestParse" {
		t.Errorf("stop answer = %+v, %v", st, err)
	}
	var cmd commandAnswer
	if err := decodeObject(result(t, "command.execute.response.json"), "command.execute", &cmd); err != nil || cmd.Text != "added: buy milk" || cmd.Prompt != "Plan how to buy milk." {
		t.Errorf("command answer = %+v, %v", cmd, err)
	}
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return out
}

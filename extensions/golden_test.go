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

package extensions

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/abi/abitest"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// The ABI 1.1 goldens, host side: the requests the host sends, the answers
// it decodes, and the host methods answered by the real handlers.

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
	abitest.Match(t, "the host", "hook.input.request.json", must(encodeRequest("hook.input", inputParams("fix the bug in main.go", images, "interactive"))))
	abitest.Match(t, "the host", "hook.before_agent_start.request.json", must(encodeRequest("hook.before_agent_start", beforeStartParams("fix the bug", "You are an expert coding assistant."))))
	abitest.Match(t, "the host", "hook.stop.request.json", must(encodeRequest("hook.stop", stopParams(StopRequest{LastText: "Done: the bug is fixed.", Turns: 3}))))
	abitest.Match(t, "the host", "command.execute.request.json", must(encodeRequest("command.execute", commandParams("todo", "buy milk"))))
	msg := llm.Message{Role: llm.RoleAssistant, Content: []tool.ContentBlock{tool.Text("Reading it.")},
		ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read", Arguments: llm.RawArguments(`{"path":"main.go"}`)}}}
	usage := llm.Usage{InputTokens: 10}
	req, typ, err := eventRequest(agent.Event{Type: agent.EventMessageEnd, Message: &msg, Usage: &usage, StopReason: llm.StopToolUse})
	if err != nil || typ != "message_end" {
		t.Fatalf("eventRequest(message_end) = %q, %v", typ, err)
	}
	abitest.Match(t, "the host", "event.message_end.request.json", req)
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
		raw, err := decodeResponse(abitest.Wire(t, name))
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

// golden11Ext is an extension value for the host methods, with a real
// host (kv folder, http transport, tool runner) and no instance.
func golden11Ext(t *testing.T, grants Grants) *Extension {
	t.Helper()
	root := t.TempDir()
	h := &Host{opts: Options{ProjectRoot: root, Cwd: root, KVDir: filepath.Join(t.TempDir(), "kv")}, http: newHTTPTransport()}
	e := &Extension{name: "greeter", host: h, grants: grants, logger: hclog.NewNullLogger()}
	e.info.Name = "greeter"
	h.exts = []*Extension{e}
	return e
}

// TestGolden11HostCalls: each 1.1 host request golden runs through the
// real host_call handler and answers its golden.
func TestGolden11HostCalls(t *testing.T) {
	ctx := context.Background()
	e := golden11Ext(t, Grants{HTTP: []string{"https://api.example.com/v1/*"}, Tools: []string{"read"}})

	// kv: set in the global scope, then get it from there.
	abitest.Match(t, "the host", "host.empty.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.kv.set.request.json")))
	get := strings.Replace(string(abitest.Wire(t, "host.kv.get.request.json")), `"project"`, `"global"`, 1)
	if got := string(e.handleHostCall(ctx, []byte(get))); got != `{"ok":true,"result":{"value":["buy milk"]}}` {
		t.Errorf("kv.get after kv.set = %s", got)
	}
	// The golden get, in the project scope, after a project set.
	e.handleHostCall(ctx, []byte(`{"method":"kv.set","params":{"key":"todo/items","value":["buy milk",{"done":true}]}}`))
	e.handleHostCall(ctx, []byte(`{"method":"kv.set","params":{"key":"todo/count","value":1}}`))
	e.handleHostCall(ctx, []byte(`{"method":"kv.set","params":{"key":"other","value":1}}`))
	abitest.Match(t, "the host", "host.kv.get.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.kv.get.request.json")))
	abitest.Match(t, "the host", "host.kv.list.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.kv.list.request.json")))
	abitest.Match(t, "the host", "host.empty.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.kv.delete.request.json")))
	if got := string(e.handleHostCall(ctx, abitest.Wire(t, "host.kv.get.request.json"))); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("kv.get after kv.delete = %s", got)
	}

	// http.request: a real TLS server standing in for api.example.com.
	var seen *http.Request
	var seenBody string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		seen, seenBody = r, string(b[:n])
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusCreated)
		w.(http.Flusher).Flush() // chunked: no Content-Length
		w.Write([]byte(`{"id":7}`))
	}))
	defer srv.Close()
	e.host.http.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	e.host.http.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}
	abitest.Match(t, "the host", "host.http.request.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.http.request.request.json")))
	if seen == nil || seen.Method != "POST" || seen.URL.Path != "/v1/items" || seen.URL.RawQuery != "q=1" || seen.Host != "api.example.com" || seen.Header.Get("Content-Type") != "application/json" || seenBody != `{"name":"x"}` {
		t.Errorf("the server saw %+v with body %q", seen, seenBody)
	}

	// tool.call: a real tool through the real pipeline.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Project"), 0o644)
	read, err := tool.Wrap(tool.ToolDefinition{
		Name: "read", Label: "read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Execute: func(ctx context.Context, c tool.Call, tc tool.Context) (tool.Result, error) {
			var in struct{ Path string }
			json.Unmarshal(c.Input, &in)
			b, err := os.ReadFile(filepath.Join(dir, in.Path))
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Content: []tool.ContentBlock{tool.Text(string(b))}, Details: map[string]int{"lines": 1}}, nil
		},
	}, func(string) tool.Context { return tool.Context{} })
	if err != nil {
		t.Fatal(err)
	}
	e.host.SetToolRunner(func(ctx context.Context, name, callID string, input json.RawMessage) (tool.Result, error) {
		return tool.Run(ctx, []tool.AgentTool{read}, nil, name, callID, input, nil), nil
	})
	abitest.Match(t, "the host", "host.tool.call.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.tool.call.request.json")))

	// ui without a person.
	abitest.Match(t, "the host", "host.empty.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.ui.notify.request.json")))
	abitest.Match(t, "the host", "host.ui.confirm.response.json", e.handleHostCall(ctx, abitest.Wire(t, "host.ui.confirm.request.json")))
}

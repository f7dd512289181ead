package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json from their decoded and re-encoded form")

// roundTrip decodes a golden message strictly into its type and encodes it
// again.
type roundTrip func(b []byte) ([]byte, error)

// request is the round trip of a request envelope with params P.
func request[P any](method string) roundTrip {
	return func(b []byte) ([]byte, error) {
		var r Request[P]
		if err := DecodeStrict(b, &r); err != nil {
			return nil, err
		}
		if r.Method != method {
			return nil, fmt.Errorf("method %q, want %q", r.Method, method)
		}
		return json.Marshal(r)
	}
}

// answer is the round trip of an ok answer whose result is an R.
func answer[R any]() roundTrip {
	return func(b []byte) ([]byte, error) {
		var resp Response
		if err := DecodeStrict(b, &resp); err != nil {
			return nil, err
		}
		if resp.OK == nil || !*resp.OK || resp.Error != nil {
			return nil, errors.New(`not an {"ok": true} answer`)
		}
		var r R
		if err := DecodeStrict(resp.Result, &r); err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		return EncodeOK(r)
	}
}

// value is the round trip of a bare value (emit's payload).
func value[V any]() roundTrip {
	return func(b []byte) ([]byte, error) {
		var v V
		if err := DecodeStrict(b, &v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
}

// goldens maps every file of testdata to the type of its message.
var goldens = map[string]roundTrip{
	"init.request.json":                  request[InitParams](MethodInit),
	"init.response.json":                 answer[InitResult](),
	"tool.execute.request.json":          request[ExecuteParams](MethodExecute),
	"tool.execute.response.json":         answer[ExecuteResult](),
	"emit.partial.json":                  value[Partial](),
	"hook.tool_call.request.json":        request[ToolCallParams](MethodToolCall),
	"hook.tool_call.response.json":       answer[ToolCallResult](),
	"hook.tool_call.input.request.json":  request[ToolCallParams](MethodToolCall),
	"hook.tool_call.input.response.json": answer[ToolCallResult](),
	"hook.tool_result.request.json":      request[ToolResultParams](MethodToolResult),
	"hook.tool_result.response.json":     answer[ToolResultPatch](),
	"hook.bash_spawn.request.json":       request[BashSpawnParams](MethodBashSpawn),
	"hook.bash_spawn.response.json":      answer[BashSpawnResult](),
	"event.request.json": func(b []byte) ([]byte, error) {
		var r Request[json.RawMessage]
		if err := DecodeStrict(b, &r); err != nil {
			return nil, err
		}
		var head EventHead
		if err := json.Unmarshal(r.Params, &head); err != nil || !IsEventType(head.Type) {
			return nil, fmt.Errorf("params %s: not an event of a type sent to guests (%v)", r.Params, err)
		}
		return json.Marshal(r)
	},
	"event.response.json":     answer[EventResult](),
	"host.exec.request.json":  request[ExecParams](HostMethodExec),
	"host.exec.response.json": answer[ExecResult](),

	// ABI 1.1.
	"init.v11.response.json":                 answer[InitResult](),
	"hook.tool_call.ask.response.json":       answer[ToolCallResult](),
	"hook.input.request.json":                request[InputParams](MethodInput),
	"hook.input.response.json":               answer[InputResult](),
	"hook.input.handled.response.json":       answer[InputResult](),
	"hook.before_agent_start.request.json":   request[BeforeAgentStartParams](MethodBeforeAgentStart),
	"hook.before_agent_start.response.json":  answer[BeforeAgentStartResult](),
	"hook.stop.request.json":                 request[StopParams](MethodStop),
	"hook.stop.response.json":                answer[StopResult](),
	"command.execute.request.json":           request[CommandParams](MethodCommand),
	"command.execute.response.json":          answer[CommandResult](),
	"event.message_end.request.json":         request[MessageEndEvent](MethodEvent),
	"host.kv.get.request.json":               request[KVGetParams](HostMethodKVGet),
	"host.kv.get.response.json":              answer[KVGetResult](),
	"host.kv.set.request.json":               request[KVSetParams](HostMethodKVSet),
	"host.kv.delete.request.json":            request[KVDeleteParams](HostMethodKVDelete),
	"host.kv.list.request.json":              request[KVListParams](HostMethodKVList),
	"host.kv.list.response.json":             answer[KVListResult](),
	"host.empty.response.json":               answer[EmptyResult](),
	"host.http.request.request.json":         request[HTTPParams](HostMethodHTTP),
	"host.http.request.response.json":        answer[HTTPResult](),
	"host.http.request.binary.response.json": answer[HTTPResult](),
	"host.tool.call.request.json":            request[ToolCallHostParams](HostMethodToolCall),
	"host.tool.call.response.json":           answer[ToolCallHostResult](),
	"host.ui.notify.request.json":            request[NotifyParams](HostMethodNotify),
	"host.ui.confirm.request.json":           request[ConfirmParams](HostMethodConfirm),
	"host.ui.confirm.response.json":          answer[ConfirmResult](),
	// ABI 1.2's UI (ui12.go).
	"init.v12.response.json":                 answer[InitResult](),
	"host.ui.select.request.json":            request[SelectParams](HostMethodSelect),
	"host.ui.input.request.json":             request[InputDialogParams](HostMethodInputDialog),
	"host.ui.editor.request.json":            request[EditorParams](HostMethodEditor),
	"host.ui.dialog.response.json":           answer[DialogResult](),
	"host.ui.dialog.cancelled.response.json": answer[DialogResult](),
	"host.ui.setStatus.request.json":         request[SetStatusParams](HostMethodSetStatus),
	"host.ui.setWidget.request.json":         request[SetWidgetParams](HostMethodSetWidget),
	"host.ui.component.request.json":         request[ComponentParams](HostMethodComponent),
	"host.ui.component.response.json":        answer[ComponentResult](),
	"host.ui.component.notui.response.json":  answer[ComponentResult](),
	"component.render.request.json":          request[ComponentRenderParams](MethodComponentRender),
	"component.render.response.json":         answer[LinesResult](),
	"component.input.request.json":           request[ComponentInputParams](MethodComponentInput),
	"component.input.response.json":          answer[ComponentInputResult](),
	"component.dispose.request.json":         request[ComponentDisposeParams](MethodComponentDispose),
	"tool.render.request.json":               request[ToolRenderParams](MethodToolRender),
	"message.render.request.json":            request[MessageRenderParams](MethodMessageRender),
	"shortcut.execute.request.json":          request[ShortcutParams](MethodShortcut),
	"error.response.json": func(b []byte) ([]byte, error) {
		var resp Response
		if err := DecodeStrict(b, &resp); err != nil {
			return nil, err
		}
		if resp.OK == nil || *resp.OK || resp.Error == nil || resp.Result != nil {
			return nil, errors.New(`not an {"ok": false} answer`)
		}
		return EncodeError(resp.Error.Message), nil
	},
}

// indent is how a golden file holds a message.
func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatalf("indent %q: %v", b, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestGoldenRoundTrip: every golden message decodes strictly into its type
// and encodes back to the same bytes.
func TestGoldenRoundTrip(t *testing.T) {
	for name, rt := range goldens {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("golden file %s: %v (every message kind of ABI 1 has one)", path, err)
			}
			var wire bytes.Buffer
			if err := json.Compact(&wire, b); err != nil {
				t.Fatalf("%s is not JSON: %v", path, err)
			}
			out, err := rt(wire.Bytes())
			if err != nil {
				t.Fatalf("%s does not decode into its type: %v", path, err)
			}
			got := indent(t, out)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, b) {
				t.Errorf("%s re-encodes as\n%s\nthe file holds\n%s", path, got, b)
			}
		})
	}
}

// TestEveryGoldenIsChecked: no file in testdata escapes the round trip.
func TestEveryGoldenIsChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if goldens[filepath.Base(f)] == nil {
			t.Errorf("%s has no entry in goldens: say which type it holds", f)
		}
	}
	if len(files) != len(goldens) {
		t.Errorf("%d golden files, %d entries", len(files), len(goldens))
	}
}

// TestEncodeOK: the shortcut writes what encoding a Response writes.
func TestEncodeOK(t *testing.T) {
	for _, result := range []any{
		struct{}{},
		ExecResult{Stdout: "<a & b>\n", ExitCode: 2},
		[]Block{TextBlock(""), ImageBlock("AA==", "image/png")},
		nil,
	} {
		got, err := EncodeOK(result)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(result)
		ok := true
		want, _ := json.Marshal(Response{OK: &ok, Result: raw})
		if !bytes.Equal(got, want) {
			t.Errorf("EncodeOK(%#v) = %s, want %s", result, got, want)
		}
	}
	if _, err := EncodeOK(make(chan int)); err == nil {
		t.Error("EncodeOK of a channel succeeded")
	}
	if got := string(EncodeError(`a "quoted" <msg>`)); got != `{"ok":false,"error":{"message":"a \"quoted\" \u003cmsg\u003e"}}` {
		t.Errorf("EncodeError = %s", got)
	}
}

// TestBlockShape: a text block always has "text", an image block never.
func TestBlockShape(t *testing.T) {
	for _, tc := range []struct {
		b    Block
		want string
	}{
		{TextBlock(""), `{"type":"text","text":""}`},
		{TextBlock("hi"), `{"type":"text","text":"hi"}`},
		{ImageBlock("AA==", "image/png"), `{"type":"image","data":"AA==","mimeType":"image/png"}`},
	} {
		if got, _ := json.Marshal(tc.b); string(got) != tc.want {
			t.Errorf("Marshal(%+v) = %s, want %s", tc.b, got, tc.want)
		}
	}
}

// TestDecodeStrict: unknown fields, wrong types and trailing data are
// refused; white space around the value is not.
func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{` {"stdout":"a","stderr":"","exitCode":1} ` + "\n", ""},
		{`{"stdout":"a","extra":1}`, `unknown field "extra"`},
		{`{"exitCode":"1"}`, "cannot unmarshal string"},
		{`{"stdout":"a"} {}`, "trailing data"},
		{`{"stdout":"a"}}`, "trailing data"},
		{`{"stdout":"a"`, "unexpected EOF"},
		{``, "EOF"},
	} {
		var r ExecResult
		err := DecodeStrict([]byte(tc.in), &r)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("DecodeStrict(%q) = %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("DecodeStrict(%q) = %v, want an error with %q", tc.in, err, tc.err)
		}
	}
}

// TestEventTypes11: the types a 1.1 guest may subscribe to are the six of
// 1.0, message_end and the session and compaction events; the default is
// the six.
func TestEventTypes11(t *testing.T) {
	all := append(slices.Clone(DefaultEvents), "message_end", "session_start", "session_shutdown", "compaction_start", "compaction_end")
	for _, typ := range append(slices.Clone(all), "message_update", "message_start", "tool_execution_update", "", "MESSAGE_END") {
		if got, want := IsEventType11(typ), slices.Contains(all, typ); got != want {
			t.Errorf("IsEventType11(%q) = %v, want %v", typ, got, want)
		}
	}
	for _, typ := range DefaultEvents {
		if !IsEventType(typ) {
			t.Errorf("default event %q is not a 1.0 event type", typ)
		}
	}
	if len(DefaultEvents) != 6 {
		t.Errorf("DefaultEvents = %v, want the six of 1.0", DefaultEvents)
	}
}

// TestEventTypes: the event types sent to guests, and no other.
func TestEventTypes(t *testing.T) {
	sent := []string{"agent_start", "agent_end", "turn_start", "turn_end", "tool_execution_start", "tool_execution_end"}
	for _, typ := range append(slices.Clone(sent), "message_update", "tool_execution_update", "message_start", "", "AGENT_START") {
		if got, want := IsEventType(typ), slices.Contains(sent, typ); got != want {
			t.Errorf("IsEventType(%q) = %v, want %v", typ, got, want)
		}
	}
}

package extensions

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// FuzzDecodeResponse feeds arbitrary bytes, as a guest's pi_call answer, to
// the envelope decoder and every result decoder: none may panic, and an
// accepted answer must be self-consistent.
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"ok":true,"result":{}}`,
		`{"ok":false,"error":{"message":"no"}}`,
		`{"ok":true,"result":{"name":"x","version":"1","tools":[{"name":"t","description":"d","parameters":{"type":"object"}}],"hooks":["event"]}}`,
		`{"ok":true,"result":{"content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}],"details":{"a":1},"isError":true,"terminate":true}}`,
		`{"ok":true,"result":{"block":true,"reason":"r"}}`,
		`{"ok":true,"result":{"input":{"a":[1,2]}}}`,
		`{"ok":true,"result":{"content":null,"details":null,"isError":false}}`,
		`{"ok":true,"result":{"command":"c","env":{"K":"V"}}}`,
		`{"ok":true}`, `{"ok":null}`, `{"ok":true,"result":{}} trailing`, `[]`, `null`, ``, `{"ok":true,"result":"str"}`,
		"\xff\xfe", `{"ok":true,"result":{"content":[{"type":"video"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := decodeResponse(b)
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if ir, err := decodeInit(raw); err == nil {
			if !extNameRE.MatchString(ir.Name) || ir.Tools == nil {
				t.Fatalf("accepted init %+v", ir)
			}
		}
		if r, err := decodeExecute(raw); err == nil {
			if r.Content == nil || checkBlocks(r.Content) != nil {
				t.Fatalf("accepted execute %+v", r)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("accepted execute result does not marshal: %v", err)
			}
		}
		if _, err := decodePartial(raw); err != nil {
			_ = err
		}
		if d, err := decodeToolCall(raw); err == nil && d.Input != nil && !json.Valid(d.Input) {
			t.Fatalf("accepted replacement input %q", d.Input)
		}
		if p, err := decodeToolResult(raw); err == nil {
			_ = p.Apply(tool.TextResult("x"))
		}
		in := tool.BashSpawn{Command: "c", Cwd: "/", Env: map[string]string{}}
		if s, err := decodeSpawn(raw, in); err != nil && (s.Command != in.Command || s.Cwd != in.Cwd) {
			t.Fatalf("a refused spawn patch changed the spawn: %+v", s)
		}
	})
}

// FuzzHostCall feeds arbitrary host_call envelopes to the host's handler:
// it must never panic and must always answer a well-formed envelope. The
// extension has no exec grants, so nothing runs.
func FuzzHostCall(f *testing.F) {
	for _, s := range []string{
		`{"method":"exec","params":{"argv":["echo","x"]}}`,
		`{"method":"exec","params":{"argv":[]}}`,
		`{"method":"exec","params":null}`,
		`{"method":"exec","params":{"argv":["sh"],"timeoutMs":-1,"cwd":"rel","stdin":"x"}}`,
		`{"method":"nosuch","params":{}}`,
		`{"method":1}`, `{}`, `not json`, ``,
	} {
		f.Add([]byte(s))
	}
	e := &Extension{name: "fuzz", host: &Host{opts: Options{Cwd: "/"}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		resp := e.handleHostCall(context.Background(), b)
		var env abi.Response
		if err := decodeStrict(resp, &env); err != nil || env.OK == nil {
			t.Fatalf("answer %q is not an envelope: %v", resp, err)
		}
		if *env.OK {
			t.Fatalf("a request was granted without grants: %q -> %q", b, resp)
		}
	})
}

package langtest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/abi"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// guest is a guest module driven straight through its exports, as a host
// of another version would drive it.
type guest struct {
	t     *testing.T
	ctx   context.Context
	mod   api.Module
	logs  []string
	emits []string // the payloads of emit
}

// instantiate loads wasm in a bare wazero runtime whose pi module has
// log, emit (recorded; it answers 0), and a host_call that answers -2 (no
// call in progress).
func instantiate(t *testing.T, wasm string) *guest {
	t.Helper()
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	g := &guest{t: t, ctx: context.Background()}
	r := wazero.NewRuntime(g.ctx)
	t.Cleanup(func() { r.Close(g.ctx) })
	wasi_snapshot_preview1.MustInstantiate(g.ctx, r)
	_, err = r.NewHostModuleBuilder("pi").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, level, ptr, n uint32) {
		line, _ := m.Memory().Read(ptr, n)
		g.logs = append(g.logs, string(line))
	}).Export("log").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, ptr, n uint32) int32 {
		b, _ := m.Memory().Read(ptr, n)
		g.emits = append(g.emits, string(b))
		return 0
	}).Export("emit").
		NewFunctionBuilder().WithFunc(func(context.Context, uint32, uint32, uint32, uint32) int64 { return -2 }).Export("host_call").
		NewFunctionBuilder().WithFunc(func(context.Context, uint32, uint32) int64 { return -3 }).Export("host_take").
		Instantiate(g.ctx)
	if err != nil {
		t.Fatal(err)
	}
	g.mod, err = r.InstantiateWithConfig(g.ctx, b, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// call sends one request through pi_alloc, pi_call and pi_free and
// returns the answer's result (or fails the test on an ok:false answer
// unless wantErr).
func (g *guest) call(req string) (json.RawMessage, string) {
	g.t.Helper()
	res, err := g.mod.ExportedFunction("pi_alloc").Call(g.ctx, uint64(len(req)))
	if err != nil {
		g.t.Fatal(err)
	}
	ptr := uint32(res[0])
	g.mod.Memory().Write(ptr, []byte(req))
	res, err = g.mod.ExportedFunction("pi_call").Call(g.ctx, uint64(ptr), uint64(len(req)))
	if err != nil {
		g.t.Fatal(err)
	}
	rp, rl := uint32(res[0]>>32), uint32(res[0])
	b, ok := g.mod.Memory().Read(rp, rl)
	if !ok {
		g.t.Fatalf("answer %d+%d outside memory", rp, rl)
	}
	answer := append([]byte(nil), b...)
	g.mod.ExportedFunction("pi_free").Call(g.ctx, uint64(rp), uint64(rl))
	g.mod.ExportedFunction("pi_free").Call(g.ctx, uint64(ptr), uint64(len(req)))
	var resp abi.Response
	if err := abi.DecodeStrict(answer, &resp); err != nil || resp.OK == nil {
		g.t.Fatalf("malformed answer %s: %v", answer, err)
	}
	if !*resp.OK {
		return nil, resp.Error.Message
	}
	return resp.Result, ""
}

const init10 = `{"method":"init","params":{"abi":1,"host":{"name":"pi","version":"0.8"},"cwd":"/p","config":{},"grants":{"fs":null,"exec":null,"env":null}}}`
const init11 = `{"method":"init","params":{"abi":1,"abiMinor":1,"host":{"name":"pi","version":"0.9"},"cwd":"/p","config":{},"grants":{},"projectRoot":"/p","trusted":true,"mode":"rpc","hasUI":true}}`

// TestOneZeroHost: to a 1.0 host (no abiMinor in init) pi.h and pi.rs send
// none of 1.1's fields (a 1.0 host decodes strictly and would refuse the
// load), say so in the log, and turn an ask into a block that says why; to
// a 1.1 host they send them all, in the host's exact shape.
func TestOneZeroHost(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		g := instantiate(t, wasm)
		res, msg := g.call(init10)
		if msg != "" {
			t.Fatal(msg)
		}
		var v10 struct {
			Name, Version, Description string
			Tools                      []json.RawMessage
			Hooks                      []string
			Wants                      *struct{ FS, Exec, Env []string }
		}
		if err := abi.DecodeStrict(res, &v10); err != nil {
			t.Fatalf("the answer to a 1.0 host has 1.1 fields: %s (%v)", res, err)
		}
		if strings.Join(v10.Hooks, ",") != "tool_call" || v10.Wants == nil || len(v10.Tools) != 3 {
			t.Errorf("init to a 1.0 host = %s", res)
		}
		if len(g.logs) != 1 || !strings.Contains(g.logs[0], "the host speaks ABI 1.0: those parts stay unused") {
			t.Errorf("logs %q", g.logs)
		}
		res, _ = g.call(`{"method":"hook.tool_call","params":{"toolName":"find","toolCallId":"c","input":{},"paths":[]}}`)
		if string(res) != `{"block":true,"reason":"needs approval: may find run? \u003c\"quoted\"\u003e (this pi cannot ask: it speaks extension ABI 1.0)"}` {
			t.Errorf("an ask to a 1.0 host = %s", res)
		}
		// A host call with no call in progress: the ABI's -2, as an error.
		res, _ = g.call(`{"method":"tool.execute","params":{"toolName":"probe","toolCallId":"c","input":{"op":"kv.get","key":"a"},"cwd":"/p"}}`)
		if !strings.Contains(string(res), `"text":"host call kv.get: host_call returned -2 (called outside a call from pi)"`) {
			t.Errorf("host_call -2 = %s", res)
		}

		g = instantiate(t, wasm)
		res, msg = g.call(init11)
		if msg != "" {
			t.Fatal(msg)
		}
		var v11 abi.InitResult
		if err := abi.DecodeStrict(res, &v11); err != nil {
			t.Fatalf("init to a 1.1 host: %s (%v)", res, err)
		}
		if strings.Join(v11.Hooks, ",") != "tool_call,input,before_agent_start,stop" || len(v11.Commands) != 2 ||
			v11.Commands[0] != (abi.CommandSpec{Name: "echo", Description: "Echo the arguments", ArgumentHint: "[text]"}) ||
			len(v11.ConfigSchema) == 0 || strings.Join(v11.Wants.HTTP, ",") != "http://127.0.0.1/*" || strings.Join(v11.Wants.Tools, ",") != "read" {
			t.Errorf("init to a 1.1 host = %s", res)
		}
		res, _ = g.call(`{"method":"tool.execute","params":{"toolName":"probe","toolCallId":"c","input":{"op":"facts"},"cwd":"/p"}}`)
		if !strings.Contains(string(res), `{\"abiMinor\":1,\"trusted\":true,\"hasUI\":true,\"mode\":\"rpc\",\"projectRoot\":\"/p\"}`) {
			t.Errorf("facts = %s", res)
		}
		// Every 1.1 answer decodes strictly into the host's type.
		for _, tc := range []struct {
			req  string
			into any
			want string
		}{
			{`{"method":"hook.tool_call","params":{"toolName":"find","toolCallId":"c","input":{},"paths":[]}}`, new(abi.ToolCallResult), `{"ask":"may find run? \u003c\"quoted\"\u003e"}`},
			{`{"method":"hook.input","params":{"text":"rewrite:x","images":[],"mode":"rpc"}}`, new(abi.InputResult), `{"text":"x"}`},
			{`{"method":"hook.input","params":{"text":"sk-1","images":[],"mode":"rpc"}}`, new(abi.InputResult), `{"handled":true,"message":"refused in rpc mode: the prompt holds a secret"}`},
			{`{"method":"hook.input","params":{"text":"hello","images":[],"mode":"rpc"}}`, new(abi.InputResult), `{}`},
			{`{"method":"hook.before_agent_start","params":{"prompt":"p\u0001","systemPrompt":"s"}}`, new(abi.BeforeAgentStartResult), `{"appendSystemPrompt":"GUEST11 APPEND \u003c\u0026\u003e for: p\u0001","messages":[{"content":[{"type":"text","text":"GUEST11 CONTEXT \"\u2028\""}]}]}`},
			{`{"method":"hook.stop","params":{"reason":"end_turn","lastText":"first","turns":3}}`, new(abi.StopResult), `{"continue":true,"message":"GUEST11 CONTINUE after 3 turn(s)"}`},
			{`{"method":"hook.stop","params":{"reason":"end_turn","lastText":"first","turns":4}}`, new(abi.StopResult), `{}`},
			{`{"method":"command.execute","params":{"name":"echo","args":"ask <it>"}}`, new(abi.CommandResult), `{"text":"echo: ask \u003cit\u003e","prompt":"\u003cit\u003e"}`},
			{`{"method":"command.execute","params":{"name":"echo","args":""}}`, new(abi.CommandResult), `{"text":"echo: "}`},
		} {
			res, msg := g.call(tc.req)
			if msg != "" || string(res) != tc.want || abi.DecodeStrict(res, tc.into) != nil {
				t.Errorf("%s = %s %s, want %s", tc.req, res, msg, tc.want)
			}
		}
		for req, want := range map[string]string{
			`{"method":"command.execute","params":{"name":"nope","args":""}}`:     "no command /nope",
			`{"method":"command.execute","params":{"name":"echo","args":"fail"}}`: `echo failed: "as asked"`,
		} {
			if _, msg := g.call(req); msg != want {
				t.Errorf("%s: error %q, want %q", req, msg, want)
			}
		}
	})
}

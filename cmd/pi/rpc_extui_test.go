package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// TestReferenceRPCClientUI12 is RPC mode's acceptance for ABI 1.2's UI:
// the reference agent's own RpcClient gets statuses, widgets, the title,
// the editor text and the three dialogs in its own shapes, with every
// control character a guest sent removed (testdata/rpc/client_ui12.mjs
// holds the checks). It skips only when node or npm is missing.
func TestReferenceRPCClientUI12(t *testing.T) {
	wasm := plugin.BuildGo(t, ui12Guest)
	srv := openai.NewServer(t, openai.Reply{Text: "unused"})
	runRefClient(t, "client_ui12.mjs", srv.URL, t.TempDir(), t.TempDir(), "EXT_WASM="+wasm)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests, want none (commands only)", n)
	}
}

// TestRPCExtensionRun: a run an extension started (a command's
// agent.sendUserMessage) is busy for RPC as its own runs are: a prompt
// without streamingBehavior is refused, get_state says isStreaming, abort
// stops it, and the next prompt runs.
func TestRPCExtensionRun(t *testing.T) {
	wasm := plugin.BuildGo(t, ui12Guest)
	srv := openai.NewServer(t, openai.Reply{Text: "streamed by the extension run", StallAfter: 2}, openai.Reply{Text: "the second answer"})
	p := startRPC(t, "", "--no-session", "--base-url", srv.URL, "--model", "m", "--cwd", t.TempDir(), "-e", wasm)
	p.expect("session_start", isType("session_start"))
	p.send(`{"type":"prompt","id":"c","message":"/later from the command"}`)
	if r := p.response("c"); r["success"] != true {
		t.Fatalf("the command: %v", r)
	}
	p.expect("the extension run streaming", isType("message_update"))
	p.send(`{"type":"prompt","id":"p","message":"typed meanwhile"}`)
	if r := p.response("p"); r["success"] != false || !strings.Contains(fmt.Sprint(r["error"]), "already processing") {
		t.Errorf("a prompt during the extension's run: %v", r)
	}
	p.send(`{"type":"get_state","id":"s"}`)
	if r := p.response("s"); r["data"].(map[string]any)["isStreaming"] != true {
		t.Errorf("get_state during the extension's run: %v", r)
	}
	p.send(`{"type":"abort","id":"a"}`)
	p.response("a")
	p.expect("agent_end", isType("agent_end"))
	p.send(`{"type":"prompt","id":"p2","message":"now you"}`)
	if r := p.response("p2"); r["success"] != true {
		t.Fatalf("the prompt after the extension's run: %v", r)
	}
	p.expect("the second answer", func(m map[string]any) bool {
		return m["type"] == "agent_end" && strings.Contains(fmt.Sprint(m["messages"]), "the second answer")
	})
}

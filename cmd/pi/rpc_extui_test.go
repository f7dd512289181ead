package main

import (
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

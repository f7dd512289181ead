//go:build !wasip1

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
)

// TestAskMode: with mode = "ask" a protected call asks the person instead
// of blocking: without anyone to ask (pi -p) it is blocked with "needs
// approval"; approved it runs; declined it is blocked; an unprotected call
// asks nothing.
func TestAskMode(t *testing.T) {
	root := t.TempDir()
	l := load(t, root, map[string]any{"mode": "ask", "bash": []any{`git\s+push`}})
	tools := builtins(t, root)
	const question = `protect-paths: write of .env matches the protected path rule ".env"; allow it?`

	r := plugin.RunWith(t, tools, l.Hooks, "write", map[string]any{"path": ".env", "content": "A=1\n"})
	if !r.IsError || r.Text() != "needs approval: "+question+" (run interactively, or pass --yes)" {
		t.Errorf("no one to ask: %q", r.Text())
	}
	if _, err := os.Stat(filepath.Join(root, ".env")); err == nil {
		t.Fatal(".env was written without approval")
	}

	var asked [][]string
	approve := func(answer bool) *tool.Hooks {
		h := *l.Hooks
		h.Approve = func(_ context.Context, req tool.ApprovalRequest) (bool, error) {
			asked = append(asked, req.Questions)
			return answer, nil
		}
		return &h
	}
	r = plugin.RunWith(t, tools, approve(false), "write", map[string]any{"path": ".env", "content": "A=1\n"})
	if !r.IsError || !strings.Contains(r.Text(), "the user did not approve it ("+question+")") {
		t.Errorf("declined: %q", r.Text())
	}
	r = plugin.RunWith(t, tools, approve(true), "write", map[string]any{"path": ".env", "content": "A=1\n"})
	if r.IsError {
		t.Errorf("approved: %q", r.Text())
	}
	if b, err := os.ReadFile(filepath.Join(root, ".env")); err != nil || string(b) != "A=1\n" {
		t.Errorf("approved write: %q, %v", b, err)
	}
	r = plugin.RunWith(t, tools, approve(false), "bash", map[string]any{"command": "git  push origin"})
	if !r.IsError || !strings.Contains(r.Text(), `protect-paths: the bash command matches the protected rule "git\s+push"; allow it?`) {
		t.Errorf("bash in ask mode: %q", r.Text())
	}
	n := len(asked)
	if r := plugin.RunWith(t, tools, approve(false), "write", map[string]any{"path": "main.go", "content": "x"}); r.IsError || len(asked) != n {
		t.Errorf("an unprotected write asked or failed: %q", r.Text())
	}
	if len(asked) != 3 || len(asked[0]) != 1 || asked[0][0] != question {
		t.Errorf("the person was asked %q", asked)
	}
}

func TestModeIsChecked(t *testing.T) {
	wasm := plugin.BuildGo(t, "examples/plugins/protect-paths")
	err := plugin.LoadErr(t, wasm, t.TempDir(), extensionsSpec(map[string]any{"mode": "maybe"}))
	if !strings.Contains(err.Error(), `config mode "maybe" must be "block" or "ask"`) {
		t.Errorf("bad mode: %v", err)
	}
}

func extensionsSpec(config map[string]any) extensions.Spec {
	return extensions.Spec{Name: "protect-paths", Config: config}
}

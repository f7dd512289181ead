package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// TestAskPermissionApprove walks the order the ABI fixes: tool_call hooks
// (first block wins, asks are remembered), then the permission check on the
// final arguments, then one approval with every question.
func TestAskPermissionApprove(t *testing.T) {
	at, err := tool.Wrap(echoDef("echo", tool.Source{}), func(string) tool.Context { return tool.Context{} })
	if err != nil {
		t.Fatal(err)
	}
	tools := []tool.AgentTool{at}
	askHook := tool.ToolCallHook{Name: "asker", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
		if strings.Contains(string(c.Input), "risky") {
			return tool.ToolCallDecision{Ask: "run the risky echo?"}, nil
		}
		return tool.ToolCallDecision{}, nil
	}}
	blockHook := tool.ToolCallHook{Name: "blocker", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
		if strings.Contains(string(c.Input), "forbidden") {
			return tool.ToolCallDecision{Block: true, Reason: "forbidden by hook"}, nil
		}
		if strings.Contains(string(c.Input), "rewrite") {
			return tool.ToolCallDecision{Input: json.RawMessage(`{"text":"deny-me"}`)}, nil
		}
		return tool.ToolCallDecision{}, nil
	}}
	var seen []string // what the permission check saw
	perm := func(_ context.Context, c tool.CallInfo) (tool.PermissionDecision, error) {
		seen = append(seen, string(c.Input))
		switch {
		case strings.Contains(string(c.Input), "deny-me"):
			return tool.PermissionDecision{Verdict: tool.Deny, Rule: "pi.toml:3 echo", Reason: "no"}, nil
		case strings.Contains(string(c.Input), "check"):
			return tool.PermissionDecision{Verdict: tool.Ask, Rule: "pi.toml:7 echo", Reason: "look first"}, nil
		case strings.Contains(string(c.Input), "broken"):
			return tool.PermissionDecision{}, errors.New("rules unreadable")
		}
		return tool.PermissionDecision{Verdict: tool.Allow}, nil
	}
	var asked [][]string
	approveAll := func(_ context.Context, r tool.ApprovalRequest) (bool, error) {
		asked = append(asked, r.Questions)
		return !strings.Contains(string(r.Call.Input), "decline"), nil
	}
	tests := []struct {
		name      string
		input     string
		approve   tool.ApproveFunc
		want      string
		isError   bool
		wantAsked []string
	}{
		{"plain call passes", `{"text":"hi"}`, approveAll, "hi@", false, nil},
		{"hook ask approved", `{"text":"risky"}`, approveAll, "risky@", false, []string{"run the risky echo?"}},
		{"hook ask declined", `{"text":"risky decline"}`, approveAll, "the user did not approve it (run the risky echo?)", true, []string{"run the risky echo?"}},
		{"an ask then a block: blocked, nobody asked", `{"text":"risky forbidden"}`, approveAll, "forbidden by hook", true, nil},
		{"rule sees the rewritten input and denies", `{"text":"rewrite"}`, approveAll, "Blocked by permissions: pi.toml:3 echo (no)", true, nil},
		{"hook and rule asks: one approval, both questions", `{"text":"risky check"}`, approveAll, "risky check@", false, []string{"run the risky echo?", "pi.toml:7 echo (look first)"}},
		{"no person: needs approval", `{"text":"risky check"}`, nil, "needs approval: run the risky echo?; pi.toml:7 echo (look first) (run interactively, or pass --yes)", true, nil},
		{"permission error fails closed", `{"text":"broken"}`, approveAll, "Blocked by permissions: rules unreadable", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			hooks := &tool.Hooks{ToolCall: []tool.ToolCallHook{askHook, blockHook}, Permission: perm, Approve: tt.approve}
			r := tool.Run(context.Background(), tools, hooks, "echo", "c1", json.RawMessage(tt.input), nil)
			if r.IsError != tt.isError || !strings.Contains(r.Text(), tt.want) {
				t.Errorf("result %q (isError %v), want %q (isError %v)", r.Text(), r.IsError, tt.want, tt.isError)
			}
			var flat []string
			for _, q := range asked {
				flat = append(flat, q...)
			}
			if !slices.Equal(flat, tt.wantAsked) {
				t.Errorf("asked %q, want %q", flat, tt.wantAsked)
			}
		})
	}
	if !slices.Contains(seen, `{"text":"deny-me"}`) {
		t.Errorf("the permission check never saw the hook's rewrite: %q", seen)
	}
}

// TestPermissionWithoutHooks: the check runs even when no extension hooks,
// and sees the paths a tool reports.
func TestPermissionWithoutHooks(t *testing.T) {
	def := echoDef("echo", tool.Source{})
	def.Paths = func(tool.Call, string) ([]string, error) { return []string{"/real/x"}, nil }
	at, err := tool.Wrap(def, func(string) tool.Context { return tool.Context{} })
	if err != nil {
		t.Fatal(err)
	}
	var got tool.CallInfo
	hooks := &tool.Hooks{Permission: func(_ context.Context, c tool.CallInfo) (tool.PermissionDecision, error) {
		got = c
		return tool.PermissionDecision{Verdict: tool.Deny}, nil
	}}
	r := tool.Run(context.Background(), []tool.AgentTool{at}, hooks, "echo", "c9", json.RawMessage(`{"text":"x"}`), nil)
	if !r.IsError || r.Text() != "Blocked by permissions: the default rule" {
		t.Errorf("result %+v", r)
	}
	if got.ID != "c9" || got.Name != "echo" || !slices.Equal(got.Paths, []string{"/real/x"}) {
		t.Errorf("permission saw %+v", got)
	}
}

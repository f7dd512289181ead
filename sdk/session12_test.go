package sdk

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/abi"
)

// conv12Registry is a guest with every ABI 1.2 conversation hook and the
// session events.
func conv12Registry() *registry {
	r := &registry{}
	r.extension("conv", "1.0.0", "conversation hooks")
	r.events = append(r.events, func(Event) {})
	r.events11 = []string{"agent_end", abi.EventSessionSwitch, abi.EventSessionCompact}
	r.s12.context = append(r.s12.context, func(m []json.RawMessage) []json.RawMessage { return m[1:] })
	r.s12.userBash = append(r.s12.userBash, func(u UserBash) UserBashAction { return UserBashAction{Command: u.Command + " --dry-run"} },
		func(u UserBash) UserBashAction {
			if strings.Contains(u.Command, "rm") {
				return UserBashAction{Block: true, Reason: "no rm"}
			}
			return UserBashAction{}
		})
	r.s12.beforeSwitch = append(r.s12.beforeSwitch, func(s SessionBeforeSwitch) SessionDecision {
		return SessionDecision{Cancel: s.Reason == "new", Reason: "busy"}
	})
	r.s12.beforeCompact = append(r.s12.beforeCompact, func(c SessionBeforeCompact) SessionDecision {
		return SessionDecision{Summary: c.Reason + " summary", Details: map[string]int{"n": len(c.Messages)}}
	})
	r.s12.beforeTree = append(r.s12.beforeTree, func(SessionBeforeTree) SessionDecision { return SessionDecision{} })
	return r
}

// A 1.2 host is told the hooks and the session events; a 1.1 host gets
// neither (its strict decoding would refuse them), and a warning is
// logged.
func TestSession12Handshake(t *testing.T) {
	for _, minor := range []int{1, 2} {
		r := conv12Registry()
		ok, raw, msg := call(t, r, abi.MethodInit, abi.InitParams{ABI: 1, ABIMinor: minor, Config: json.RawMessage(`{}`)})
		if !ok {
			t.Fatalf("init: %s", msg)
		}
		var res abi.InitResult
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		has := slices.Contains(res.Hooks, abi.HookContext) && slices.Contains(res.Hooks, abi.HookSessionBeforeCompact) && slices.Contains(res.Events, abi.EventSessionSwitch)
		if minor == 2 && (!has || slices.Contains(res.Hooks, abi.HookSessionBeforeFork)) {
			t.Errorf("1.2 host: hooks %v events %v", res.Hooks, res.Events)
		}
		if minor == 1 && (slices.ContainsFunc(res.Hooks, abi.IsConversationHook12) || !slices.Equal(res.Events, []string{"agent_end"})) {
			t.Errorf("1.1 host: hooks %v events %v", res.Hooks, res.Events)
		}
	}
}

// The hooks' answers, chained as the ABI says.
func TestSession12Hooks(t *testing.T) {
	r := conv12Registry()
	for _, tc := range []struct {
		method string
		params any
		want   string
	}{
		{abi.MethodContext, abi.ContextParams{Messages: []json.RawMessage{json.RawMessage(`{"role":"user"}`), json.RawMessage(`{"role":"assistant"}`)}}, `{"messages":[{"role":"assistant"}]}`},
		{abi.MethodUserBash, abi.UserBashParams{Command: "ls", Cwd: "/p"}, `{"command":"ls --dry-run"}`},
		{abi.MethodUserBash, abi.UserBashParams{Command: "rm x", Cwd: "/p"}, `{"block":true,"reason":"no rm"}`},
		{abi.MethodSessionBeforeSwitch, abi.SessionBeforeSwitchParams{Reason: "new"}, `{"cancel":true,"reason":"busy"}`},
		{abi.MethodSessionBeforeSwitch, abi.SessionBeforeSwitchParams{Reason: "resume", TargetSessionFile: "/s.jsonl"}, `{}`},
		{abi.MethodSessionBeforeCompact, abi.SessionBeforeCompactParams{Reason: "manual", Messages: []json.RawMessage{json.RawMessage(`{}`)}}, `{"compaction":{"summary":"manual summary","details":{"n":1}}}`},
		{abi.MethodSessionBeforeTree, abi.SessionBeforeTreeParams{TargetID: "a", OldLeafID: "b"}, `{}`},
		{abi.MethodSessionBeforeFork, abi.SessionBeforeForkParams{EntryID: "a"}, `{}`},
	} {
		ok, raw, msg := call(t, r, tc.method, tc.params)
		if !ok || string(raw) != tc.want {
			t.Errorf("%s %+v = %s %s, want %s", tc.method, tc.params, raw, msg, tc.want)
		}
	}
}

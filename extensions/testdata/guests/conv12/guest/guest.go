//go:build wasip1

// Package guest is a test guest of ABI 1.2's conversation side, built
// with the Go SDK; the commands conv12/a and conv12/b register it as
// "conv12" and "conv12b" (two extensions, for the hooks of one seeing the
// calls of the other). Its config ([extensions.config]) says what it does:
//
//	cancel         hooks that cancel: "switch", "fork", "tree", "compact"
//	compactSummary a summary its session_before_compact hook gives
//	treeSummary    a summary its session_before_tree hook gives
//	context        "drop" keeps only the last message; "break" adds a tool
//	               result without its call; "hang" never returns
//	userBash       "block", "result" or "rewrite"
//	hangSwitch     its session_before_switch hook never returns
//	initCall       a host method it calls in init (recorded as "init")
//
// The tool NAME_call takes {"method", "params"} and answers the host's
// answer ({"result"} or {"error"}) as text; the command /NAME-call
// METHOD PARAMS does the same from a command; NAME_seen answers the
// hooks' requests and the events it got (every session event), one JSON
// line each. The SDK's typed helpers are reached through the command
// /NAME-typed OP ARGS.
package guest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/pi-go/pi/sdk"
)

type config struct {
	Cancel         []string `json:"cancel"`
	CompactSummary string   `json:"compactSummary"`
	TreeSummary    string   `json:"treeSummary"`
	Context        string   `json:"context"`
	UserBash       string   `json:"userBash"`
	HangSwitch     bool     `json:"hangSwitch"`
	InitCall       string   `json:"initCall"`
}

var (
	cfg  config
	seen []string
)

func record(kind string, v any) {
	b, _ := json.Marshal(v)
	seen = append(seen, kind+" "+string(b))
}

// call makes a host call and answers it as JSON text.
func call(method string, params json.RawMessage) string {
	var res json.RawMessage
	err := sdk.HostCall(method, params, &res)
	if err != nil {
		var he *sdk.HostError
		if errors.As(err, &he) {
			b, _ := json.Marshal(map[string]string{"error": he.Message})
			return string(b)
		}
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return string(b)
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"result": res})
	return string(b)
}

type callInput struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Register registers the guest as the extension name.
func Register(name string) {
	sdk.Extension(name, "0.1.0", "ABI 1.2 conversation test guest")
	sdk.OnInit(func() error {
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		if cfg.InitCall != "" {
			seen = append(seen, "init "+call(cfg.InitCall, json.RawMessage(`{}`)))
		}
		return nil
	})
	sdk.Tool(sdk.ToolSpec{Name: name + "_call", Description: "Makes a host call.", Parameters: json.RawMessage(`{"type":"object"}`)},
		func(_ *sdk.Context, in callInput) (sdk.Result, error) {
			return sdk.Text(call(in.Method, in.Params)), nil
		})
	sdk.Tool(sdk.ToolSpec{Name: name + "_seen", Description: "What the hooks and events saw.", Parameters: json.RawMessage(`{"type":"object"}`)},
		func(_ *sdk.Context, _ struct{}) (sdk.Result, error) {
			return sdk.Text(strings.Join(seen, "\n")), nil
		})
	sdk.Command(sdk.CommandSpec{Name: name + "-call", Description: "Makes a host call from a command."}, func(args string) (sdk.CommandResult, error) {
		method, params, _ := strings.Cut(args, " ")
		if params == "" {
			params = "{}"
		}
		return sdk.CommandResult{Text: call(method, json.RawMessage(params))}, nil
	})
	sdk.Command(sdk.CommandSpec{Name: name + "-typed", Description: "Uses the SDK's typed helpers."}, typed)
	sdk.OnSessionBeforeSwitch(func(s sdk.SessionBeforeSwitch) sdk.SessionDecision {
		record("before_switch", s)
		if cfg.HangSwitch {
			for {
			}
		}
		if slices.Contains(cfg.Cancel, "switch") {
			return sdk.SessionDecision{Cancel: true, Reason: "not now"}
		}
		return sdk.SessionDecision{}
	})
	sdk.OnSessionBeforeFork(func(s sdk.SessionBeforeFork) sdk.SessionDecision {
		record("before_fork", s)
		return sdk.SessionDecision{Cancel: slices.Contains(cfg.Cancel, "fork"), Reason: "no forks"}
	})
	sdk.OnSessionBeforeTree(func(s sdk.SessionBeforeTree) sdk.SessionDecision {
		record("before_tree", s)
		if slices.Contains(cfg.Cancel, "tree") {
			return sdk.SessionDecision{Cancel: true}
		}
		return sdk.SessionDecision{Summary: cfg.TreeSummary, Details: map[string]string{"by": "conv12"}}
	})
	sdk.OnSessionBeforeCompact(func(s sdk.SessionBeforeCompact) sdk.SessionDecision {
		record("before_compact", map[string]any{"reason": s.Reason, "firstKept": s.FirstKeptEntryID, "messages": len(s.Messages), "instructions": s.CustomInstructions})
		if slices.Contains(cfg.Cancel, "compact") {
			return sdk.SessionDecision{Cancel: true}
		}
		return sdk.SessionDecision{Summary: cfg.CompactSummary}
	})
	sdk.OnContext(func(msgs []json.RawMessage) []json.RawMessage {
		record("context", len(msgs))
		switch cfg.Context {
		case "drop":
			return msgs[len(msgs)-1:]
		case "break":
			return append([]json.RawMessage{json.RawMessage(`{"role":"toolResult","toolCallId":"ghost","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":1}`)}, msgs...)
		case "hang":
			for {
			}
		}
		return nil
	})
	sdk.OnUserBash(func(u sdk.UserBash) sdk.UserBashAction {
		record("user_bash", u)
		switch cfg.UserBash {
		case "block":
			return sdk.UserBashAction{Block: true, Reason: "no shell today"}
		case "result":
			return sdk.UserBashAction{Result: &sdk.UserBashResult{Output: "pretend output", ExitCode: 3}}
		case "rewrite":
			return sdk.UserBashAction{Command: "echo rewritten"}
		}
		return sdk.UserBashAction{}
	})
	sdk.OnEvent(func(ev sdk.Event) { record("event", json.RawMessage(ev.Raw)) })
	sdk.Events("session_start", "session_switch", "session_fork", "session_compact", "session_tree")
}

// typed runs one of the SDK's typed helpers: OP ARGS.
func typed(args string) (sdk.CommandResult, error) {
	op, rest, _ := strings.Cut(args, " ")
	out := func(v any, err error) (sdk.CommandResult, error) {
		if err != nil {
			return sdk.CommandResult{}, err
		}
		b, _ := json.Marshal(v)
		return sdk.CommandResult{Text: string(b)}, nil
	}
	switch op {
	case "info":
		return out(sdk.GetSessionInfo())
	case "branch":
		ents, err := sdk.SessionBranch(0)
		types := []string{}
		for _, e := range ents {
			types = append(types, e.Type)
		}
		return out(types, err)
	case "append":
		return out(sdk.SessionAppend("conv12", map[string]string{"note": rest}))
	case "entries":
		return out(sdk.SessionEntries("conv12"))
	case "name":
		return out(nil, sdk.SetSessionName(rest))
	case "usage":
		return out(sdk.GetContextUsage())
	case "state":
		return out(sdk.GetAgentState())
	case "new":
		return out(sdk.NewSession())
	case "send":
		return out(nil, sdk.SendUserMessage(rest, nil, ""))
	case "sendmsg":
		return out(nil, sdk.SendMessage(sdk.Message{CustomType: "conv12", Text: rest, Display: true, Details: map[string]int{"n": 1}}))
	case "trigger":
		return out(nil, sdk.SendMessage(sdk.Message{CustomType: "conv12", Text: rest, TriggerTurn: true}))
	case "compact":
		return out(nil, sdk.Compact(rest))
	case "flood":
		// 100 messages: the host takes what it queues and refuses the
		// rest; the answer counts both.
		okN, refused := 0, ""
		for i := 0; i < 100; i++ {
			if err := sdk.SendUserMessage("flood", nil, ""); err != nil {
				refused = err.Error()
				continue
			}
			okN++
		}
		return out(map[string]any{"ok": okN, "refused": refused}, nil)
	}
	return sdk.CommandResult{}, errors.New("unknown op " + op)
}

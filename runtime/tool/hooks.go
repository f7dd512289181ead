package tool

import (
	"context"
	"encoding/json"
)

// CallInfo is what hooks see of a tool call.
type CallInfo struct {
	ID    string          `json:"toolCallId"`
	Name  string          `json:"toolName"`
	Input json.RawMessage `json:"input"`
	// Paths are, for tool_call hooks, the absolute real paths the call will
	// open (see PathsFunc), recomputed after every hook that replaced Input;
	// empty for a tool that opens none or does not say. tool_result hooks
	// get none.
	Paths []string `json:"paths"`
}

// PathLister is an AgentTool that can say which paths a call will open.
// Tools made by Wrap implement it through ToolDefinition.Paths.
type PathLister interface {
	CallPaths(args json.RawMessage) ([]string, error)
}

// callPaths asks t for the paths of a call with validated args (a tool
// made by Wrap gets their parse); a tool that is no PathLister opens none
// that it names.
func callPaths(t AgentTool, args Args) ([]string, error) {
	if w, ok := t.(*wrapped); ok {
		return w.callPaths(args)
	}
	pl, ok := t.(PathLister)
	if !ok {
		return []string{}, nil
	}
	return pl.CallPaths(args.JSON)
}

// ToolCallDecision is a tool_call hook's answer: the zero value lets the call
// through; Block stops it with Reason; a non-nil Input replaces the arguments
// (which are then validated again); a non-empty Ask asks the person Ask
// before the call runs (see Hooks.Approve). A hook answers one of these.
type ToolCallDecision struct {
	Block  bool
	Reason string
	Input  json.RawMessage
	Ask    string
}

// ToolCallHook runs before a tool executes. Name says whose hook it is
// ("extension protect-paths") for messages. An error blocks the call (fail
// closed) with a reason naming the hook.
type ToolCallHook struct {
	Name string
	Func func(ctx context.Context, call CallInfo) (ToolCallDecision, error)
}

// ResultPatch is a tool_result hook's answer. Nil fields keep the value.
type ResultPatch struct {
	Content []ContentBlock
	Details json.RawMessage
	IsError *bool
}

// Apply returns r with the patch applied.
func (p ResultPatch) Apply(r Result) Result {
	if p.Content != nil {
		r.Content = p.Content
	}
	if p.Details != nil {
		r.Details = p.Details
	}
	if p.IsError != nil {
		r.IsError = *p.IsError
	}
	return r
}

// ToolResultHook runs after a tool executes; patches chain in order. An error
// is logged and leaves the result unchanged.
type ToolResultHook struct {
	Name string
	Func func(ctx context.Context, call CallInfo, r Result) (ResultPatch, error)
}

// BashSpawn is how bash is about to start a command: the full command line
// (after the configured prefix), the directory and the environment.
type BashSpawn struct {
	Command string            `json:"command"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
}

// SpawnHook rewrites a BashSpawn; hooks chain in order. An error means the
// command does not run, and the bash call fails with that reason.
type SpawnHook struct {
	Name string
	Func func(ctx context.Context, s BashSpawn) (BashSpawn, error)
}

// Verdict is what a permission check decides about a call.
type Verdict string

// The verdicts, from the weakest to the strictest.
const (
	Allow Verdict = "allow"
	Ask   Verdict = "ask"
	Deny  Verdict = "deny"
)

// PermissionDecision is a permission check's answer for one call. Rule names
// the rule that decided (e.g. "pi.toml:12 bash git push"), Reason says why
// in the user's words; both may be empty for the default.
type PermissionDecision struct {
	Verdict Verdict
	Rule    string
	Reason  string
}

// describe is the rule and the reason as messages show them: "RULE
// (REASON)", or whichever is set.
func (d PermissionDecision) describe() string {
	switch {
	case d.Rule != "" && d.Reason != "":
		return d.Rule + " (" + d.Reason + ")"
	case d.Rule != "":
		return d.Rule
	case d.Reason != "":
		return d.Reason
	}
	return "the default rule"
}

// PermissionFunc decides a call on its final arguments (after every
// tool_call hook), with the real paths it will open. An error blocks the
// call (fail closed).
type PermissionFunc func(ctx context.Context, call CallInfo) (PermissionDecision, error)

// ApprovalRequest is what the person is asked before a call runs: every
// question that tool_call hooks and the permission check raised for it.
type ApprovalRequest struct {
	Call      CallInfo
	Questions []string
}

// ApproveFunc asks the person whether a call may run; false blocks it. An
// error blocks it too, with the error in the reason.
type ApproveFunc func(ctx context.Context, req ApprovalRequest) (bool, error)

// Hooks are the hooks the call pipeline runs, in order: the tool_call hooks,
// the permission check, the approval of what they asked, and after the tool
// ran, the tool_result hooks.
type Hooks struct {
	ToolCall []ToolCallHook
	// Permission, when set, decides every call after the tool_call hooks:
	// Deny blocks it ("Blocked by permissions: RULE (REASON)"), Ask adds a
	// question for the person, Allow lets it through.
	Permission PermissionFunc
	// Approve asks the person the questions hooks and the permission check
	// raised. Nil means nobody can be asked (print, json and tool modes):
	// such a call is blocked with "needs approval: QUESTION (run
	// interactively, or pass --yes)". A front end run with --yes sets an
	// Approve that always approves.
	Approve    ApproveFunc
	ToolResult []ToolResultHook
	// OnHookError, when set, is told of tool_result hook failures (which do
	// not change the result).
	OnHookError func(hook string, err error)
}

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

// callPaths asks t for the paths of a call; a tool that is no PathLister
// opens none that it names.
func callPaths(t AgentTool, args json.RawMessage) ([]string, error) {
	pl, ok := t.(PathLister)
	if !ok {
		return []string{}, nil
	}
	return pl.CallPaths(args)
}

// ToolCallDecision is a tool_call hook's answer: the zero value lets the call
// through; Block stops it with Reason; a non-nil Input replaces the arguments
// (which are then validated again).
type ToolCallDecision struct {
	Block  bool
	Reason string
	Input  json.RawMessage
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

// Hooks are the hooks the call pipeline runs, in order.
type Hooks struct {
	ToolCall   []ToolCallHook
	ToolResult []ToolResultHook
	// OnHookError, when set, is told of tool_result hook failures (which do
	// not change the result).
	OnHookError func(hook string, err error)
}

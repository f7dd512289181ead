package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// MaxToolCallDepth is how deep tool.call may nest: a guest's tool.call
// runs a tool whose extension calls tool.call, and so on.
const MaxToolCallDepth = 3

// ToolRunner runs one tool call for an extension's tool.call through the
// whole pipeline the model's calls go through (preparation, validation,
// every extension's tool_call hooks, the permission rules, execution,
// tool_result hooks), with asks treated as non-interactive. ctx carries
// which extension made the call: its own hooks skip it, every other
// extension's hooks see it (hookCall). A runner returns an error only for
// a tool it does not know; a blocked call is an isError result with the
// reason.
type ToolRunner func(ctx context.Context, name, callID string, input json.RawMessage) (tool.Result, error)

// SetToolRunner gives the host the runner of tool.call (the assembled
// runtime's, once its registry is built). Without one, tool.call answers
// an error.
func (h *Host) SetToolRunner(run ToolRunner) { h.tools.Store(&run) }

// chainKey carries the names of the extensions whose instance is inside a
// call up the stack (a tool.call waits in them); callerKey the name of the
// extension whose tool.call the pipeline runs; depthKey how many
// tool.calls are nested.
type (
	chainKey  struct{}
	callerKey struct{}
	depthKey  struct{}
)

// withChain adds an extension to the chain of ctx.
func withChain(ctx context.Context, name string) context.Context {
	chain, _ := ctx.Value(chainKey{}).([]string)
	if slices.Contains(chain, name) {
		return ctx
	}
	return context.WithValue(ctx, chainKey{}, append(slices.Clip(chain), name))
}

// inChain reports whether the extension name waits in a call up the stack
// of ctx (its instance is busy: a hook of it runs in a side instance, see
// hookCall).
func inChain(ctx context.Context, name string) bool {
	chain, _ := ctx.Value(chainKey{}).([]string)
	return slices.Contains(chain, name)
}

// ownCall reports whether ctx is the pipeline of a tool.call that the
// extension name made itself: the one case its tool_call, tool_result and
// bash_spawn hooks skip (ABI 1.1). Every other extension's hooks run,
// those of the extensions waiting up the chain included, so a guard whose
// command delegates to another extension still checks what that extension
// calls.
func ownCall(ctx context.Context, name string) bool {
	caller, _ := ctx.Value(callerKey{}).(string)
	return caller == name
}

// hookCall sends a hook request: through the extension's live instance, or,
// when that instance waits up the chain of ctx for this very call (a
// tool.call made by an extension it delegated to), through a side instance
// that lives for this one hook (sideCall): skipping the hook would let the
// delegate bypass it, and waiting for the busy instance would never end.
func (e *Extension) hookCall(ctx context.Context, method string, req []byte, decode func(json.RawMessage) error) error {
	if inChain(ctx, e.name) {
		return e.sideCall(ctx, method, req, e.hookTO, decode)
	}
	return e.call(ctx, method, req, e.hookTO, nil, decode)
}

// toolCall answers tool.call.
func (e *Extension) toolCall(ctx context.Context, p abi.ToolCallHostParams) (abi.ToolCallHostResult, error) {
	depth, _ := ctx.Value(depthKey{}).(int)
	if depth >= MaxToolCallDepth {
		return abi.ToolCallHostResult{}, fmt.Errorf("tool.call nested deeper than %d", MaxToolCallDepth)
	}
	if p.Name == "" {
		return abi.ToolCallHostResult{}, errors.New("tool.call: params need a tool name")
	}
	if !slices.Contains(e.grants.Tools, p.Name) {
		granted := "none"
		if len(e.grants.Tools) > 0 {
			granted = strings.Join(e.grants.Tools, ", ")
		}
		return abi.ToolCallHostResult{}, fmt.Errorf("permission denied: extension %s may not call tool %q (grants.tools: %s)", e.name, p.Name, granted)
	}
	for _, o := range e.host.Extensions() {
		for _, t := range o.info.Tools {
			if t.Name != p.Name {
				continue
			}
			if o == e {
				return abi.ToolCallHostResult{}, fmt.Errorf("extension %s cannot call its own tool %q", e.name, p.Name)
			}
			if inChain(ctx, o.name) {
				return abi.ToolCallHostResult{}, fmt.Errorf("extension %s cannot call tool %q: its extension %s is waiting for this call", e.name, p.Name, o.name)
			}
		}
	}
	run := e.host.tools.Load()
	if run == nil {
		return abi.ToolCallHostResult{}, errors.New("tool.call: this host runs no tools")
	}
	input := p.Input
	if isNull(input) {
		input = json.RawMessage("{}")
	} else if !isObject(input) {
		return abi.ToolCallHostResult{}, errors.New("tool.call: input must be a JSON object")
	}
	callID := fmt.Sprintf("%s_call_%d", e.name, e.callSeq.Add(1))
	rctx := context.WithValue(context.WithValue(ctx, depthKey{}, depth+1), callerKey{}, e.name)
	res, err := (*run)(rctx, p.Name, callID, input)
	if err != nil {
		return abi.ToolCallHostResult{}, fmt.Errorf("tool.call: %w", err)
	}
	out := abi.ToolCallHostResult{Content: blocksToABI(res.Content), IsError: res.IsError}
	if out.Content == nil {
		out.Content = []abi.Block{}
	}
	if res.Details != nil {
		d, err := json.Marshal(res.Details)
		if err == nil && !isNull(d) {
			out.Details = d
		}
	}
	return out, nil
}

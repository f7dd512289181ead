package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/pi-go/pi/runtime/tool"
)

// toolMeta is what the model sees of a built-in tool (the reference
// agent's texts, pinned by the contract tests) and how its arguments are
// read.
type toolMeta struct {
	name        string // also the label
	description string
	parameters  string // the JSON Schema
	snippet     string
	guidelines  []string
	prepare     tool.PrepareFunc
	// strict refuses unknown fields when decoding (for the tools that
	// always did; the others, like the reference agent's, let extra
	// properties through).
	strict bool
}

// define builds a built-in tool's definition from its texts, its execute
// function over the decoded arguments A, and target, which names the one
// file or folder a call opens (nil: the tool opens no path of its own, as
// bash). Every built-in tool runs in parallel. Its Paths, for tool_call
// hooks, are the real path (every symlink followed) of target, decoded from
// the validated input the same way Execute decodes it.
func define[A any](m toolMeta, execute func(ctx context.Context, call tool.Call, tc tool.Context, args A) (tool.Result, error), target func(cwd string, args *A) string) tool.ToolDefinition {
	decode := func(call tool.Call) (A, error) {
		var args A
		if tree, ok := call.Parsed(); ok && fromTree(tree, &args, m.strict) {
			return args, nil
		}
		var zero A
		args = zero
		err := decodeArgs(call.Input, &args, m.strict)
		return args, err
	}
	d := tool.ToolDefinition{
		Name:             m.name,
		Label:            m.name,
		Description:      m.description,
		Parameters:       json.RawMessage(m.parameters),
		PromptSnippet:    m.snippet,
		PromptGuidelines: m.guidelines,
		ExecutionMode:    tool.Parallel,
		PrepareArguments: m.prepare,
		Source:           tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
			args, err := decode(call)
			if err != nil {
				return tool.Result{}, fmt.Errorf("%s: %w", m.name, err)
			}
			return execute(ctx, call, tc, args)
		},
	}
	if target != nil {
		d.Paths = func(call tool.Call, cwd string) ([]string, error) {
			args, err := decode(call)
			if err != nil {
				return nil, err
			}
			return []string{realPath(target(cwd, &args))}, nil
		}
	}
	return d
}

// decodeArgs decodes validated arguments (an empty input is {}). strict
// refuses unknown fields.
func decodeArgs(raw json.RawMessage, v any, strict bool) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode arguments: %w", err)
	}
	return nil
}

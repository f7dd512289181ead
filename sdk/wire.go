package sdk

import (
	"encoding/json"

	"github.com/pi-go/pi/internal/abi"
)

// This file is the SDK's edge of the wire: every mapping between the public
// types guest authors use and internal/abi's messages, which the host
// shares. Nothing else in the package builds or reads a message's fields;
// the JSON tags of the public types play no part in the wire.

// Guest to host.

// blocksToABI maps content blocks: an image block is {type, data,
// mimeType}, any other is a text block that always has its text. The
// result is never nil, so no content is written [].
func blocksToABI(bs []Block) []abi.Block {
	out := make([]abi.Block, len(bs))
	for i := range bs {
		if bs[i].Type == "image" {
			out[i] = abi.ImageBlock(bs[i].Data, bs[i].MimeType)
		} else {
			out[i] = abi.Block{Type: "text", Text: &bs[i].Text}
		}
	}
	return out
}

// grantsToABI maps the extension's wants.
func grantsToABI(g Grants) abi.Grants {
	return abi.Grants{FS: g.FS, Exec: g.Exec, Env: g.Env, HTTP: g.HTTP, Tools: g.Tools, LLM: g.LLM, Model: g.Model}
}

// detailsToABI encodes a result's details; nil is none.
func detailsToABI(details any) (json.RawMessage, error) {
	if details == nil {
		return nil, nil
	}
	return json.Marshal(details)
}

// initResult is the answer to init: the registered extension, its tools and
// the hooks it has handlers for.
func (r *registry) initResult() abi.InitResult {
	res := abi.InitResult{Name: r.name, Version: r.version, Description: r.description, Tools: []abi.ToolSpec{}, Hooks: []string{}}
	if r.wants != nil {
		w := grantsToABI(*r.wants)
		res.Wants = &w
	}
	for _, t := range r.tools {
		if t.late {
			continue
		}
		res.Tools = append(res.Tools, abi.ToolSpec{
			Name: t.spec.Name, Label: t.spec.Label, Description: t.spec.Description, Parameters: t.params,
			PromptSnippet: t.spec.PromptSnippet, PromptGuidelines: t.spec.PromptGuidelines, ExecutionMode: string(t.spec.ExecutionMode),
		})
	}
	if len(r.toolCall) > 0 {
		res.Hooks = append(res.Hooks, abi.HookToolCall)
	}
	if len(r.toolResult) > 0 {
		res.Hooks = append(res.Hooks, abi.HookToolResult)
	}
	if len(r.bashSpawn) > 0 {
		res.Hooks = append(res.Hooks, abi.HookBashSpawn)
	}
	if len(r.events) > 0 {
		res.Hooks = append(res.Hooks, abi.HookEvent)
	}
	r.initResult11(&res)
	r.initResultUI12(&res)
	r.initResult12(&res)
	r.initResultRun12(&res)
	return res
}

// resultToABI maps a tool's result.
func resultToABI(r Result) (abi.ExecuteResult, error) {
	details, err := detailsToABI(r.Details)
	if err != nil {
		return abi.ExecuteResult{}, err
	}
	return abi.ExecuteResult{Content: blocksToABI(r.Content), Details: details, IsError: r.IsError, Terminate: r.Terminate}, nil
}

// partialToABI maps a partial result (emit's payload).
func partialToABI(r Result) (abi.Partial, error) {
	details, err := detailsToABI(r.Details)
	if err != nil {
		return abi.Partial{}, err
	}
	return abi.Partial{Content: blocksToABI(r.Content), Details: details}, nil
}

// bashSpawnToABI maps the bash_spawn hooks' answer: every field is sent.
func bashSpawnToABI(s BashSpawn) abi.BashSpawnResult {
	return abi.BashSpawnResult{Command: &s.Command, Cwd: &s.Cwd, Env: &s.Env}
}

// execParamsToABI maps Exec's arguments.
func execParamsToABI(argv []string, opts ExecOptions) abi.ExecParams {
	return abi.ExecParams{Argv: argv, Cwd: opts.Cwd, TimeoutMS: opts.Timeout.Milliseconds(), Stdin: opts.Stdin}
}

// Host to guest.

// blocksFromABI maps content blocks; nil stays nil.
func blocksFromABI(bs []abi.Block) []Block {
	if bs == nil {
		return nil
	}
	out := make([]Block, len(bs))
	for i, b := range bs {
		out[i] = Block{Type: b.Type, Data: b.Data, MimeType: b.MimeType}
		if b.Text != nil {
			out[i].Text = *b.Text
		}
	}
	return out
}

// grantsFromABI maps the grants init carries.
func grantsFromABI(g abi.Grants) Grants {
	return Grants{FS: g.FS, Exec: g.Exec, Env: g.Env, HTTP: g.HTTP, Tools: g.Tools, LLM: g.LLM, Model: g.Model}
}

// toolCallFromABI maps hook.tool_call's params.
func toolCallFromABI(p *abi.ToolCallParams) ToolCall {
	return ToolCall{ToolName: p.ToolName, ToolCallID: p.ToolCallID, Input: p.Input, Paths: p.Paths}
}

// toolResultFromABI maps hook.tool_result's params.
func toolResultFromABI(p *abi.ToolResultParams) ToolResult {
	return ToolResult{ToolName: p.ToolName, ToolCallID: p.ToolCallID, Input: p.Input, Content: blocksFromABI(p.Content), Details: p.Details, IsError: p.IsError}
}

// bashSpawnFromABI maps hook.bash_spawn's params.
func bashSpawnFromABI(p *abi.BashSpawnParams) BashSpawn {
	return BashSpawn{Command: p.Command, Cwd: p.Cwd, Env: p.Env}
}

// execResultFromABI maps exec's result.
func execResultFromABI(r abi.ExecResult) ExecResult {
	return ExecResult{Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode}
}

package extensions

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is the host's edge of the wire: every mapping between the
// host's values (runtime/tool's, and this package's Grants and ToolSpec)
// and internal/abi's messages, one function per message and direction.
// Nothing else in the package builds or reads a message's fields, and no
// runtime/tool value is marshalled onto the wire directly.

// Host to guest.

// blocksToABI maps content blocks; nil stays nil.
func blocksToABI(bs []tool.ContentBlock) []abi.Block {
	if bs == nil {
		return nil
	}
	out := make([]abi.Block, len(bs))
	for i, b := range bs {
		if b.Type == "image" {
			out[i] = abi.Block{Type: b.Type, Data: b.Data, MimeType: b.MimeType}
		} else {
			out[i] = abi.Block{Type: b.Type, Text: &bs[i].Text}
		}
	}
	return out
}

// grantsToABI maps resolved grants.
func grantsToABI(g Grants) abi.Grants {
	return abi.Grants{FS: g.FS, Exec: g.Exec, Env: g.Env, HTTP: g.HTTP, Tools: g.Tools, LLM: g.LLM, Model: g.Model}
}

// initParams are init's params: the host's name, version and working
// directory, the extension's config ({} when none) and its resolved grants.
func initParams(opts Options, config map[string]any, grants Grants) (abi.InitParams, error) {
	if config == nil {
		config = map[string]any{}
	}
	cfg, err := json.Marshal(config)
	if err != nil {
		return abi.InitParams{}, err
	}
	return abi.InitParams{
		ABI:    abi.Version,
		Host:   abi.HostInfo{Name: opts.HostName, Version: opts.HostVersion},
		Cwd:    opts.Cwd,
		Config: cfg,
		Grants: grantsToABI(grants),
	}, nil
}

// executeParams are tool.execute's params; no input is {}.
func executeParams(name string, call tool.Call, cwd string) abi.ExecuteParams {
	input := call.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return abi.ExecuteParams{ToolName: name, ToolCallID: call.ID, Input: input, Cwd: cwd}
}

// toolCallParams are hook.tool_call's params; no input is {}, and paths are
// always an array ([] is "names no path").
func toolCallParams(c tool.CallInfo) abi.ToolCallParams {
	p := abi.ToolCallParams{ToolCallID: c.ID, ToolName: c.Name, Input: c.Input, Paths: c.Paths}
	if len(p.Input) == 0 {
		p.Input = json.RawMessage("{}")
	}
	if p.Paths == nil {
		p.Paths = []string{}
	}
	return p
}

// toolResultParams are hook.tool_result's params: the call and its result,
// content always an array and details as JSON (null when none).
func toolResultParams(c tool.CallInfo, r tool.Result) (abi.ToolResultParams, error) {
	details, err := json.Marshal(r.Details)
	if err != nil {
		return abi.ToolResultParams{}, err
	}
	p := abi.ToolResultParams{
		ToolName: c.Name, ToolCallID: c.ID, Input: c.Input,
		Content: blocksToABI(r.Content), Details: details, IsError: r.IsError,
	}
	if len(p.Input) == 0 {
		p.Input = json.RawMessage("{}")
	}
	if p.Content == nil {
		p.Content = []abi.Block{}
	}
	return p, nil
}

// messageEndEvent maps a message_end event as the agent loop writes it
// ({"type", "message": {"role", "content", "toolCalls", ...}, "usage", ...})
// to the event guests get; ok is false for a message that is not the
// assistant's.
func messageEndEvent(raw json.RawMessage) (abi.MessageEndEvent, bool, error) {
	var ev struct {
		Message *struct {
			Role      string              `json:"role"`
			Content   []tool.ContentBlock `json:"content"`
			ToolCalls []struct {
				ID        string `json:"id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"toolCalls"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return abi.MessageEndEvent{}, false, fmt.Errorf("message_end event: %w", err)
	}
	if ev.Message == nil || ev.Message.Role != "assistant" {
		return abi.MessageEndEvent{}, false, nil
	}
	m := abi.EventMessage{Role: ev.Message.Role, Content: blocksToABI(ev.Message.Content)}
	if m.Content == nil {
		m.Content = []abi.Block{}
	}
	for _, c := range ev.Message.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, abi.EventToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return abi.MessageEndEvent{Type: abi.EventMessageEnd, Message: m}, true, nil
}

// spawnParams are hook.bash_spawn's params (s holds only what the guest may
// see).
func spawnParams(s tool.BashSpawn) abi.BashSpawnParams {
	return abi.BashSpawnParams{Command: s.Command, Cwd: s.Cwd, Env: s.Env}
}

// Guest to host.

// blocksFromABI maps content blocks; nil stays nil.
func blocksFromABI(bs []abi.Block) []tool.ContentBlock {
	if bs == nil {
		return nil
	}
	out := make([]tool.ContentBlock, len(bs))
	for i, b := range bs {
		out[i] = tool.ContentBlock{Type: b.Type, Data: b.Data, MimeType: b.MimeType}
		if b.Text != nil {
			out[i].Text = *b.Text
		}
	}
	return out
}

// grantsFromABI maps an extension's wants.
func grantsFromABI(g abi.Grants) Grants {
	return Grants{FS: g.FS, Exec: g.Exec, Env: g.Env, HTTP: g.HTTP, Tools: g.Tools, LLM: g.LLM, Model: g.Model}
}

// initFromABI maps init's (checked) result; no tools is an empty list.
func initFromABI(r abi.InitResult) initResult {
	out := initResult{Name: r.Name, Version: r.Version, Description: r.Description, Hooks: r.Hooks, Tools: make([]ToolSpec, 0, len(r.Tools))}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, ToolSpec{
			Name: t.Name, Label: t.Label, Description: t.Description, Parameters: t.Parameters,
			PromptSnippet: t.PromptSnippet, PromptGuidelines: t.PromptGuidelines, ExecutionMode: t.ExecutionMode,
			Render: t.Render,
		})
	}
	if r.Wants != nil {
		w := grantsFromABI(*r.Wants)
		out.Wants = &w
	}
	for _, c := range r.Commands {
		out.Commands = append(out.Commands, CommandSpec{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
	}
	if !isNull(r.ConfigSchema) {
		out.ConfigSchema = bytes.TrimSpace(r.ConfigSchema)
	}
	out.Events = r.Events
	out.Shortcuts, out.MessageRenderers = shortcutsFromABI(r.Shortcuts), r.MessageRenderers
	out.Flags, out.Channels = flagsFromABI(r.Flags), r.Channels
	return out
}

// resultFromABI maps tool.execute's result; no content is an empty list,
// null details are none.
func resultFromABI(r abi.ExecuteResult) tool.Result {
	res := tool.Result{Content: blocksFromABI(r.Content), IsError: r.IsError, Terminate: r.Terminate}
	if res.Content == nil {
		res.Content = []tool.ContentBlock{}
	}
	if !isNull(r.Details) {
		res.Details = r.Details
	}
	return res
}

// partialFromABI maps emit's payload like a result.
func partialFromABI(p abi.Partial) tool.Result {
	return resultFromABI(abi.ExecuteResult{Content: p.Content, Details: p.Details})
}

// decisionFromABI maps hook.tool_call's result; a replaced input counts only
// when the call is not blocked.
func decisionFromABI(r abi.ToolCallResult) tool.ToolCallDecision {
	d := tool.ToolCallDecision{Block: r.Block, Reason: r.Reason, Ask: r.Ask}
	if !r.Block && !isNull(r.Input) {
		d.Input = bytes.TrimSpace(r.Input)
	}
	return d
}

// patchFromABI maps hook.tool_result's result: absent fields change
// nothing; a present content (even []) replaces.
func patchFromABI(r abi.ToolResultPatch) tool.ResultPatch {
	p := tool.ResultPatch{IsError: r.IsError}
	if r.Content != nil {
		p.Content = blocksFromABI(*r.Content)
		if p.Content == nil {
			p.Content = []tool.ContentBlock{}
		}
	}
	if len(r.Details) > 0 {
		p.Details = bytes.TrimSpace(r.Details)
	}
	return p
}

// spawnFromABI applies hook.bash_spawn's result to s: absent (or null)
// fields keep their value.
func spawnFromABI(r abi.BashSpawnResult, s tool.BashSpawn) tool.BashSpawn {
	if r.Command != nil {
		s.Command = *r.Command
	}
	if r.Cwd != nil {
		s.Cwd = *r.Cwd
	}
	if r.Env != nil && *r.Env != nil {
		s.Env = *r.Env
	}
	return s
}

// ABI 1.1: the prompt hooks and commands. Their answers are decoded into
// internal/abi's types as they are (named here for the decoders).

type (
	inputAnswer       = abi.InputResult
	beforeStartAnswer = abi.BeforeAgentStartResult
	stopAnswer        = abi.StopResult
	commandAnswer     = abi.CommandResult
)

// inputParams are hook.input's params; images always an array.
func inputParams(text string, images []abi.Block, mode string) abi.InputParams {
	if images == nil {
		images = []abi.Block{}
	}
	return abi.InputParams{Text: text, Images: images, Mode: mode}
}

// beforeStartParams are hook.before_agent_start's params.
func beforeStartParams(prompt, systemPrompt string) abi.BeforeAgentStartParams {
	return abi.BeforeAgentStartParams{Prompt: prompt, SystemPrompt: systemPrompt}
}

// stopParams are hook.stop's params.
func stopParams(s StopRequest) abi.StopParams {
	return abi.StopParams{Reason: abi.StopReasonEndTurn, LastText: s.LastText, Turns: s.Turns}
}

// commandParams are command.execute's params.
func commandParams(name, args string) abi.CommandParams {
	return abi.CommandParams{Name: name, Args: args}
}

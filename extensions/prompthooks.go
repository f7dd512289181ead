package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds the prompt hooks (ABI 1.1): input, before_agent_start
// and stop, each run in load order around a prompt. What init tells an
// extension and how its 1.1 answer is taken are in initfacts.go, slash
// commands in commands.go, event subscriptions in hooks.go; the host
// methods are in kv.go, http.go, toolcall.go and ui.go.

// InputRequest is what hook.input is told.
type InputRequest struct {
	Text   string
	Images []tool.ContentBlock
	// Mode is the run's mode (interactive, print, json, rpc).
	Mode string
}

// InputResult is what the input hooks made of a prompt.
type InputResult struct {
	// Text is the prompt as the hooks left it.
	Text string
	// Handled means the prompt does not go to the model; Message is shown
	// to the user, By names the extension that handled it.
	Handled     bool
	Message, By string
}

// Input runs the input hooks in load order on text a person sent: each
// sees the text as the ones before it left it; after a handled answer
// later hooks do not run.
//
// # Errors
//
// A hook that faults or answers an error: the prompt must not be sent
// (fail closed). The error names the extension.
func (h *Host) Input(ctx context.Context, in InputRequest) (InputResult, error) {
	out := InputResult{Text: in.Text}
	for _, e := range h.Extensions() {
		if !e.hookInput {
			continue
		}
		const method = abi.MethodInput
		req, err := encodeRequest(method, inputParams(out.Text, blocksToABI(in.Images), in.Mode))
		if err != nil {
			return out, err
		}
		var r inputAnswer
		err = e.call(ctx, method, req, e.hookTO, nil, func(raw json.RawMessage) error {
			return decodeObject(raw, method, &r)
		})
		if err != nil {
			return out, fmt.Errorf("the prompt was not sent: %w", e.hookError(method, err))
		}
		if r.Handled {
			out.Handled, out.Message, out.By = true, r.Message, e.info.Name
			return out, nil
		}
		if r.Text != nil {
			out.Text = *r.Text
		}
	}
	return out, nil
}

// BeforeStart is what the before_agent_start hooks made of a run.
type BeforeStart struct {
	// SystemPrompt is the system prompt for the run.
	SystemPrompt string
	// Messages are user-role context messages to add before the prompt.
	Messages [][]tool.ContentBlock
}

// BeforeAgentStart runs the before_agent_start hooks in load order: each
// sees the system prompt as the ones before it left it; an
// appendSystemPrompt is joined with a blank line. A hook that fails is
// logged and changes nothing.
func (h *Host) BeforeAgentStart(ctx context.Context, prompt, systemPrompt string) BeforeStart {
	out := BeforeStart{SystemPrompt: systemPrompt}
	for _, e := range h.Extensions() {
		if !e.hookBeforeStart {
			continue
		}
		const method = abi.MethodBeforeAgentStart
		req, err := encodeRequest(method, beforeStartParams(prompt, out.SystemPrompt))
		if err != nil {
			e.logger.Warn("before_agent_start hook not called", "error", err.Error())
			continue
		}
		var r beforeStartAnswer
		err = e.call(ctx, method, req, e.hookTO, nil, func(raw json.RawMessage) error {
			if err := decodeObject(raw, method, &r); err != nil {
				return err
			}
			for i, m := range r.Messages {
				if err := checkBlocks(blocksFromABI(m.Content)); err != nil {
					return fmt.Errorf("%s result: messages[%d]: %w", method, i, err)
				}
			}
			return nil
		})
		if err != nil {
			e.logger.Warn("before_agent_start hook failed; the prompt is unchanged", "error", e.hookError(method, err).Error())
			continue
		}
		if r.SystemPrompt != nil {
			out.SystemPrompt = *r.SystemPrompt
		}
		if r.AppendSystemPrompt != "" {
			out.SystemPrompt = strings.TrimRight(out.SystemPrompt, "\n") + "\n\n" + r.AppendSystemPrompt
		}
		for _, m := range r.Messages {
			if c := blocksFromABI(m.Content); len(c) > 0 {
				out.Messages = append(out.Messages, c)
			}
		}
	}
	return out
}

// StopRequest is what hook.stop is told.
type StopRequest struct {
	LastText string
	Turns    int
}

// StopAnswer is a stop hook's request to go on.
type StopAnswer struct {
	// Continue keeps the run going with Message as a user message; By
	// names the extension that asked.
	Continue    bool
	Message, By string
}

// Stop runs the stop hooks in load order until one asks to continue. A
// hook that fails is logged; the run then ends as far as it is
// concerned. Stop hooks are bounded by the extension's limits.timeout_ms,
// as they may run tests through tool.call.
func (h *Host) Stop(ctx context.Context, s StopRequest) StopAnswer {
	for _, e := range h.Extensions() {
		if !e.hookStop {
			continue
		}
		const method = abi.MethodStop
		req, err := encodeRequest(method, stopParams(s))
		if err != nil {
			e.logger.Warn("stop hook not called", "error", err.Error())
			continue
		}
		var r stopAnswer
		err = e.call(ctx, method, req, e.execTO, nil, func(raw json.RawMessage) error {
			if err := decodeObject(raw, method, &r); err != nil {
				return err
			}
			if r.Continue && strings.TrimSpace(r.Message) == "" {
				return fmt.Errorf("%s result: continue needs a message", method)
			}
			return nil
		})
		if err != nil {
			e.logger.Warn("stop hook failed; the run ends", "error", e.hookError(method, err).Error())
			continue
		}
		if r.Continue {
			return StopAnswer{Continue: true, Message: r.Message, By: e.info.Name}
		}
	}
	return StopAnswer{}
}

// HasHooks reports which prompt hooks the loaded extensions have, so a
// caller can skip wiring the others.
func (h *Host) HasHooks() (input, beforeStart, stop bool) {
	for _, e := range h.Extensions() {
		input = input || e.hookInput
		beforeStart = beforeStart || e.hookBeforeStart
		stop = stop || e.hookStop
	}
	return input, beforeStart, stop
}

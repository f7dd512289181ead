package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/extspec"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds the host side of ABI 1.1's additions to init and the
// guest methods it adds: slash commands, the input, before_agent_start and
// stop hooks, and event subscriptions. The host methods are in kv.go,
// http.go, toolcall.go and ui.go.

// UI is the person behind a front end, for ui.notify and ui.confirm (and
// nothing else: asks of tool_call hooks go through the tool pipeline's
// approval). Implementations must be safe for concurrent use.
type UI interface {
	// Notify shows a message from an extension; level is info, warning or
	// error.
	Notify(extension, message, level string)
	// Confirm asks the person a yes/no question; it gives up when ctx
	// ends (the host then answers "timeout").
	Confirm(ctx context.Context, extension, title, message string) (bool, error)
}

// Session is where session.append and session.entries go: the current
// session's branch. It is a seam for the sessions package; a host without
// one answers "no session".
type Session interface {
	// AppendCustom adds a custom entry on the current branch and returns
	// its id.
	AppendCustom(ctx context.Context, extension, customType string, data json.RawMessage) (string, error)
	// CustomEntries lists the custom entries along the current branch,
	// oldest first; customType "" is every type.
	CustomEntries(ctx context.Context, extension, customType string) ([]SessionEntry, error)
}

// SessionEntry is one custom entry of a session.
type SessionEntry struct {
	ID         string
	CustomType string
	Data       json.RawMessage
}

// The modes an extension's init is told (Options.Mode), the wire's values.
const (
	ModeInteractive = abi.ModeInteractive
	ModePrint       = abi.ModePrint
	ModeJSON        = abi.ModeJSON
	ModeRPC         = abi.ModeRPC
	ModeTool        = abi.ModeTool
	ModeInspect     = abi.ModeInspect
)

// BuiltinCommands are the names of pi's own slash commands; an extension
// command with one of these names is a load error.
var BuiltinCommands = []string{"help", "exit", "quit", "new", "resume", "session", "name", "fork", "compact", "model", "tools", "ext", "permissions"}

// ext11 is an extension's ABI 1.1 state, set once by initialize11.
type ext11 struct {
	hookInput, hookBeforeStart, hookStop bool
	events                               map[string]bool // subscribed event types (with the event hook)
	callSeq                              atomic.Int64    // ids of tool.call calls
}

// initFacts adds ABI 1.1's facts to init's params.
func initFacts(p abi.InitParams, opts Options) abi.InitParams {
	p.ABIMinor = abi.Minor
	p.ProjectRoot = opts.ProjectRoot
	if p.ProjectRoot == "" {
		p.ProjectRoot = opts.Cwd
	}
	p.Trusted = opts.Trusted
	p.Mode = opts.Mode
	if p.Mode == "" {
		p.Mode = abi.ModePrint
	}
	p.HasUI = opts.UI != nil
	return p
}

// checkInit11 checks init's 1.1 fields: command names (well formed, not
// twice, not built in), event types, and that configSchema compiles.
func checkInit11(r abi.InitResult) error {
	seen := map[string]bool{}
	for i, c := range r.Commands {
		switch {
		case !extspec.ValidCommandName(c.Name):
			return fmt.Errorf("commands[%d]: name %q must match [a-z][a-z0-9-]* (without the slash)", i, c.Name)
		case seen[c.Name]:
			return fmt.Errorf("commands[%d]: command /%s declared twice", i, c.Name)
		case slices.Contains(BuiltinCommands, c.Name):
			return fmt.Errorf("command /%s clashes with the built-in command /%s", c.Name, c.Name)
		}
		seen[c.Name] = true
	}
	for i, t := range r.Events {
		if !abi.IsEventType11(t) {
			return fmt.Errorf("events[%d]: unknown event type %q (known: %s, message_end, session_start, session_shutdown, compaction_start, compaction_end)", i, t, strings.Join(abi.DefaultEvents, ", "))
		}
	}
	if !isNull(r.ConfigSchema) {
		if _, err := compileConfigSchema(r.ConfigSchema); err != nil {
			return err
		}
	}
	return nil
}

// initialize11 takes init's 1.1 answer: the new hooks, the event
// subscription, the commands (refusing the host's reserved names), and
// checks the config against the configSchema.
func (e *Extension) initialize11(res initResult) error {
	for _, hk := range res.Hooks {
		switch hk {
		case HookInput:
			e.hookInput = true
		case HookBeforeAgentStart:
			e.hookBeforeStart = true
		case HookStop:
			e.hookStop = true
		}
	}
	if e.hookEvent {
		types := res.Events
		if types == nil {
			types = abi.DefaultEvents
		}
		e.events = map[string]bool{}
		for _, t := range types {
			e.events[t] = true
			e.info.Events = append(e.info.Events, t)
		}
	}
	for _, c := range res.Commands {
		if slices.Contains(e.host.opts.ReservedCommands, c.Name) {
			return fmt.Errorf("command /%s clashes with the built-in command /%s", c.Name, c.Name)
		}
	}
	e.info.Commands = res.Commands
	e.info.ConfigSchema = res.ConfigSchema
	if res.ConfigSchema != nil {
		if err := ValidateConfig(res.ConfigSchema, e.spec.Config, e.spec.ConfigKey); err != nil {
			return err
		}
	}
	return nil
}

// commandClash refuses an extension whose command another loaded one has.
func commandClash(e *Extension, loaded []*Extension) error {
	for _, c := range e.info.Commands {
		for _, o := range loaded {
			for _, oc := range o.info.Commands {
				if oc.Name == c.Name {
					return fmt.Errorf("command /%s of extension %s clashes with command /%s of extension %s (%s)", c.Name, e.name, oc.Name, o.name, o.spec.Path)
				}
			}
		}
	}
	return nil
}

// Command is a slash command of a loaded extension.
type Command struct {
	CommandSpec
	// Extension is the name of the extension that offers it.
	Extension string
}

// Commands lists the slash commands of the loaded extensions, in load
// order.
func (h *Host) Commands() []Command {
	var out []Command
	for _, e := range h.Extensions() {
		for _, c := range e.info.Commands {
			out = append(out, Command{CommandSpec: c, Extension: e.info.Name})
		}
	}
	return out
}

// CommandResult is what a command answered.
type CommandResult struct {
	// Text is shown to the user; Prompt is sent to the model as the
	// user's message. Either may be empty.
	Text, Prompt string
}

// ErrUnknownCommand is returned (wrapped) by ExecuteCommand for a name no
// extension offers.
var ErrUnknownCommand = errors.New("unknown command")

// ExecuteCommand runs /name args in the extension that offers it, bounded
// by its limits.timeout_ms.
//
// # Errors
//
// ErrUnknownCommand; the extension's error answer or fault, with its
// name.
func (h *Host) ExecuteCommand(ctx context.Context, name, args string) (CommandResult, error) {
	for _, e := range h.Extensions() {
		for _, c := range e.info.Commands {
			if c.Name == name {
				return e.executeCommand(ctx, name, args)
			}
		}
	}
	return CommandResult{}, fmt.Errorf("%w /%s", ErrUnknownCommand, name)
}

func (e *Extension) executeCommand(ctx context.Context, name, args string) (CommandResult, error) {
	const method = abi.MethodCommand
	req, err := encodeRequest(method, commandParams(name, args))
	if err != nil {
		return CommandResult{}, err
	}
	var r commandAnswer
	err = e.call(ctx, method, req, e.execTO, nil, func(raw json.RawMessage) error {
		return decodeObject(raw, method, &r)
	})
	if err != nil {
		return CommandResult{}, e.hookError("/"+name, err)
	}
	return CommandResult{Text: r.Text, Prompt: r.Prompt}, nil
}

// decodeObject decodes a guest's result strictly; null is {}.
func decodeObject(raw json.RawMessage, method string, v any) error {
	if isNull(raw) {
		return nil
	}
	if !isObject(raw) {
		return fmt.Errorf("%s result is not a JSON object", method)
	}
	if err := decodeStrict(raw, v); err != nil {
		return fmt.Errorf("%s result: %w", method, err)
	}
	return nil
}

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

// TakesEvent reports whether some loaded extension subscribed to events of
// type t, so a caller can skip preparing the others (it is asked for every
// streamed token, so it reads a set kept up to date by register).
func (h *Host) TakesEvent(t string) bool {
	m := h.subscribed.Load()
	return m != nil && (*m)[t]
}

// updateSubscribed rebuilds the set of subscribed event types. h.mu must
// be held.
func (h *Host) updateSubscribed() {
	m := map[string]bool{}
	for _, e := range h.exts {
		for t := range e.events {
			m[t] = true
		}
	}
	h.subscribed.Store(&m)
}

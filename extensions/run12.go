package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds ABI 1.2's part for the running extension (docs/abi.md,
// "ABI 1.2"): the host methods flags.get, tools.*, model.*, llm.complete,
// pi.shutdown and pi.reload (timers, watches and the bus are in timers.go,
// watch.go and bus.go; flags in flags.go), the before_provider_request
// hook, and the seam (Controls) through which the runtime answers what the
// host cannot know itself: the tool registry, the model, the provider.

// Controls is what the runtime behind the host does for ABI 1.2's tools.*,
// model.*, llm.complete, pi.shutdown and pi.reload. A host without
// Controls (tool and inspect modes, tests) answers those methods
// "not available in mode MODE". Implementations must be safe for
// concurrent use.
type Controls interface {
	// ListTools lists every registered tool with whether it is active.
	ListTools() []ToolState
	// SetActiveTools makes names the active set from the next model
	// request; own are the caller's own tools (which it may always add).
	SetActiveTools(extension string, own []string, names []string) error
	// RegisterTools adds the definitions, active at once.
	RegisterTools(defs []tool.ToolDefinition) error
	// UnregisterTools removes the named tools.
	UnregisterTools(names []string)
	// Model is the current model and thinking level.
	Model() (ModelState, error)
	// Models lists the models the person could switch to.
	Models() ([]ModelRef, error)
	// SetModel switches the model as RPC set_model does (model_select
	// with source "set").
	SetModel(provider, id string) error
	// SetThinkingLevel sets the level, clamped to the model's; it returns
	// the level applied.
	SetThinkingLevel(level string) (string, error)
	// Complete sends exactly req (no tools) to the configured model
	// through pi's provider, within ctx; nothing is saved or shown. The
	// answer is redacted.
	Complete(ctx context.Context, req LLMRequest) (LLMResponse, error)
	// Shutdown ends pi once the current command returns, as the end of
	// input does.
	Shutdown(extension string)
	// Reload re-reads pi.toml and loads every extension again once the
	// current command returns and the agent is idle.
	Reload(extension string)
}

// ToolState is one tool as tools.list shows it.
type ToolState struct {
	Name, Description string
	// Source is "builtin", "extension:NAME" or "mcp:SERVER".
	Source string
	Active bool
}

// ModelRef names a model.
type ModelRef struct{ Provider, ID string }

// ModelState is the current model.
type ModelState struct {
	Provider, ID  string
	ContextWindow int
	ThinkingLevel string
}

// LLMRequest is one llm.complete.
type LLMRequest struct {
	SystemPrompt string
	Messages     []LLMMessage
	MaxTokens    int
}

// LLMMessage is one message of an LLMRequest: Role "user" or "assistant".
type LLMMessage struct {
	Role    string
	Content []tool.ContentBlock
}

// LLMResponse is the model's answer to an LLMRequest, with the tokens it
// cost as the provider counted them (0 when it did not say).
type LLMResponse struct {
	Content       []tool.ContentBlock
	StopReason    string
	Input, Output int
}

// MaxRegisteredTools is how many tools one extension may add with
// tools.register (each one lengthens every model request).
const MaxRegisteredTools = 128

// wantKey carries the instance a call must reach (a timer's, a watch's):
// when it is gone the call is not made (errInstanceGone).
type wantKey struct{}

var errInstanceGone = errors.New("the instance that set it is gone")

// checkWanted is called by call with e.mu held: a call for an instance
// that is gone fails without starting a fresh one.
func (e *Extension) checkWanted(ctx context.Context) error {
	if w, ok := ctx.Value(wantKey{}).(*instance); ok && e.inst != w {
		return errInstanceGone
	}
	return nil
}

// run12 is an extension's ABI 1.2 running state (timers, watches, the bus,
// flags, the llm quota, registered tools).
type run12 struct {
	hookProviderRequest bool
	flags               []FlagSpec
	channels            []string

	runMu      sync.Mutex
	timers     map[string]*timer
	watches    map[string]*watch
	seq        int
	registered []string // names of the tools it registered with tools.register
	llmUsed    atomic.Int64
	bus        *busQueue
}

// FlagSpec is one command-line flag an extension declares (ABI 1.2).
type FlagSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Type is "boolean" or "string".
	Type string `json:"type"`
	// Default is the value when not given (nil: false or null).
	Default json.RawMessage `json:"default,omitempty"`
}

// hostMethodsRun12 are the host methods of this file and its siblings.
var hostMethodsRun12 = []string{
	abi.HostMethodFlagsGet, abi.HostMethodToolsList, abi.HostMethodToolsSetActive, abi.HostMethodToolsRegister,
	abi.HostMethodToolsUnregister, abi.HostMethodModelGet, abi.HostMethodModelList, abi.HostMethodModelSet,
	abi.HostMethodModelSetThinkingLevel, abi.HostMethodLLMComplete, abi.HostMethodTimerSet, abi.HostMethodTimerClear,
	abi.HostMethodWatchAdd, abi.HostMethodWatchRemove, abi.HostMethodBusEmit, abi.HostMethodShutdown, abi.HostMethodReload,
}

// handleHostCallRun12 answers the host methods of hostMethodsRun12; ok is
// false for another method.
func (e *Extension) handleHostCallRun12(ctx context.Context, method string, params []byte) (out []byte, ok bool) {
	if !slices.Contains(hostMethodsRun12, method) {
		return nil, false
	}
	res, err := e.run12Call(ctx, method, params)
	if err != nil {
		return encodeErr(err.Error()), true
	}
	return encodeOK(res), true
}

func (e *Extension) run12Call(ctx context.Context, method string, params []byte) (any, error) {
	decode := func(v any) error {
		if isNull(params) {
			return fmt.Errorf("%s: params must be an object", method)
		}
		return decodeParams(method, params, v)
	}
	switch method {
	case abi.HostMethodFlagsGet:
		return abi.FlagsGetResult{Flags: e.flagValues()}, nil
	case abi.HostMethodTimerSet:
		var p abi.TimerSetParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		id, err := e.setTimer(ctx, p)
		return abi.IDResult{ID: id}, err
	case abi.HostMethodTimerClear:
		var p abi.IDParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return abi.EmptyResult{}, e.clearTimer(p.ID)
	case abi.HostMethodWatchAdd:
		var p abi.WatchAddParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		id, err := e.addWatch(ctx, p)
		return abi.IDResult{ID: id}, err
	case abi.HostMethodWatchRemove:
		var p abi.IDParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return abi.EmptyResult{}, e.removeWatch(p.ID)
	case abi.HostMethodBusEmit:
		var p abi.BusEmitParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return abi.EmptyResult{}, e.busEmit(p)
	}
	c := e.host.opts.Controls
	mode := e.host.opts.Mode
	if c == nil {
		return nil, fmt.Errorf("%s: not available in mode %s", method, mode)
	}
	switch method {
	case abi.HostMethodToolsList:
		out := abi.ToolsListResult{Tools: []abi.ToolState{}}
		for _, t := range c.ListTools() {
			out.Tools = append(out.Tools, abi.ToolState{Name: t.Name, Description: t.Description, Source: t.Source, Active: t.Active})
		}
		return out, nil
	case abi.HostMethodToolsSetActive:
		var p abi.ToolNamesParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return abi.EmptyResult{}, c.SetActiveTools(e.name, e.ownTools(), p.Names)
	case abi.HostMethodToolsRegister:
		var p abi.ToolsRegisterParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return abi.EmptyResult{}, e.registerTools(c, p.Tools)
	case abi.HostMethodToolsUnregister:
		var p abi.ToolNamesParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return abi.EmptyResult{}, e.unregisterTools(c, p.Names)
	case abi.HostMethodModelGet:
		m, err := c.Model()
		if err != nil {
			return nil, fmt.Errorf("model.get: %w", err)
		}
		return abi.ModelGetResult{Provider: m.Provider, ID: m.ID, ContextWindow: m.ContextWindow, ThinkingLevel: m.ThinkingLevel}, nil
	case abi.HostMethodModelList:
		ms, err := c.Models()
		if err != nil {
			return nil, fmt.Errorf("model.list: %w", err)
		}
		out := abi.ModelListResult{Models: []abi.ModelRef{}}
		for _, m := range ms {
			out.Models = append(out.Models, abi.ModelRef{Provider: m.Provider, ID: m.ID})
		}
		return out, nil
	case abi.HostMethodModelSet:
		var p abi.ModelSetParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		if err := e.modelGrant(method); err != nil {
			return nil, err
		}
		if p.ID == "" {
			return nil, errors.New("model.set: params need an id")
		}
		return abi.EmptyResult{}, c.SetModel(p.Provider, p.ID)
	case abi.HostMethodModelSetThinkingLevel:
		var p abi.ThinkingLevelParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		if err := e.modelGrant(method); err != nil {
			return nil, err
		}
		if !slices.Contains([]string{"off", "minimal", "low", "medium", "high", "xhigh"}, p.Level) {
			return nil, fmt.Errorf("model.setThinkingLevel: level %q must be off, minimal, low, medium, high or xhigh", p.Level)
		}
		lv, err := c.SetThinkingLevel(p.Level)
		return abi.ThinkingLevelParams{Level: lv}, err
	case abi.HostMethodLLMComplete:
		var p abi.LLMCompleteParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return e.llmComplete(ctx, c, p)
	case abi.HostMethodShutdown, abi.HostMethodReload:
		if err := e.CheckWhere(ctx, method, true, false); err != nil {
			return nil, err
		}
		if method == abi.HostMethodShutdown {
			c.Shutdown(e.name)
		} else {
			c.Reload(e.name)
		}
		return abi.EmptyResult{}, nil
	}
	return nil, fmt.Errorf("unknown host method %q", method)
}

// sessionMode refuses model.set* (and model.get, which has no model there)
// in the tool and inspect modes.
func (e *Extension) sessionMode(method string) error {
	return e.CheckWhere(context.Background(), method, false, true)
}

// modelGrant checks grants.model (and the mode) for model.set and
// model.setThinkingLevel.
func (e *Extension) modelGrant(method string) error {
	if err := e.sessionMode(method); err != nil {
		return err
	}
	if !e.grants.Model {
		return fmt.Errorf("permission denied: extension %s may not change the model (grants.model); to allow it, grant it at install with --grant model=true (or set model = true in its [extensions.grants])", e.name)
	}
	return nil
}

// ownTools are the names of the extension's tools: declared at init and
// registered since.
func (e *Extension) ownTools() []string {
	var out []string
	for _, t := range e.info.Tools {
		out = append(out, t.Name)
	}
	e.runMu.Lock()
	defer e.runMu.Unlock()
	return append(out, e.registered...)
}

// registerTools checks specs by init's ToolSpec rules and registers them
// through c, active at once, for the rest of the process.
func (e *Extension) registerTools(c Controls, specs []abi.ToolSpec) error {
	if len(specs) == 0 {
		return errors.New("tools.register: tools is empty")
	}
	own := e.ownTools()
	if n := len(own) - len(e.info.Tools) + len(specs); n > MaxRegisteredTools {
		e.logger.Warn("tools.register refused: too many tools", "limit", MaxRegisteredTools)
		return fmt.Errorf("tools.register: extension %s would have %d registered tools, over the %d it may have", e.name, n, MaxRegisteredTools)
	}
	defs := make([]tool.ToolDefinition, 0, len(specs))
	src := tool.Source{Kind: tool.SourceExtension, Name: e.info.Name, Version: e.info.Version, Path: e.info.Path, SHA256: e.info.SHA256}
	var names []string
	for i, t := range specs {
		if err := checkToolSpec(t); err != nil {
			return fmt.Errorf("tools.register: tools[%d]: %w", i, err)
		}
		if slices.Contains(own, t.Name) || slices.Contains(names, t.Name) {
			return fmt.Errorf("tools.register: tools[%d]: extension %s already has a tool %q", i, e.name, t.Name)
		}
		names = append(names, t.Name)
		label := cmpOr(t.Label, t.Name)
		defs = append(defs, tool.ToolDefinition{
			Name: t.Name, Label: label, Description: t.Description,
			Parameters: append(json.RawMessage(nil), t.Parameters...), PromptSnippet: t.PromptSnippet,
			PromptGuidelines: append([]string(nil), t.PromptGuidelines...), ExecutionMode: tool.ExecutionMode(t.ExecutionMode),
			Source: src, Override: false, Execute: e.executeFunc(t.Name),
		})
	}
	if err := c.RegisterTools(defs); err != nil {
		return fmt.Errorf("tools.register: %w", err)
	}
	e.runMu.Lock()
	e.registered = append(e.registered, names...)
	e.runMu.Unlock()
	e.logger.Info("registered tools", "tools", strings.Join(names, ", "))
	return nil
}

// unregisterTools removes tools the extension registered with
// tools.register; another's, a built-in or one of its init's is refused.
func (e *Extension) unregisterTools(c Controls, names []string) error {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	for _, n := range names {
		if !slices.Contains(e.registered, n) {
			return fmt.Errorf("tools.unregister: %q is not a tool extension %s registered (registered: %s)", n, e.name, listOrNone(e.registered))
		}
	}
	c.UnregisterTools(names)
	e.registered = slices.DeleteFunc(e.registered, func(n string) bool { return slices.Contains(names, n) })
	return nil
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// checkToolSpec checks one ToolSpec by init's rules.
func checkToolSpec(t abi.ToolSpec) error {
	switch {
	case !toolNameRE.MatchString(t.Name):
		return fmt.Errorf("name %q must match [a-zA-Z0-9_-]{1,64}", t.Name)
	case t.Description == "":
		return fmt.Errorf("tool %q: empty description", t.Name)
	case !isObject(t.Parameters):
		return fmt.Errorf("tool %q: parameters must be a JSON Schema object", t.Name)
	}
	switch tool.ExecutionMode(t.ExecutionMode) {
	case "", tool.Parallel, tool.Sequential:
	default:
		return fmt.Errorf("tool %q: executionMode %q must be parallel or sequential", t.Name, t.ExecutionMode)
	}
	return nil
}

// llmComplete answers llm.complete: grants.llm, the quota, the messages'
// shape; then the model through Controls, its usage charged to the quota.
func (e *Extension) llmComplete(ctx context.Context, c Controls, p abi.LLMCompleteParams) (any, error) {
	if !e.grants.LLM {
		return nil, fmt.Errorf("permission denied: extension %s may not call the model (grants.llm); to allow it, grant it at install with --grant llm=true (or set llm = true in its [extensions.grants])", e.name)
	}
	quota := e.spec.Limits.LLMTokenQuota()
	if used := e.llmUsed.Load(); used >= quota {
		e.logger.Warn("llm.complete refused: quota exceeded", "used", used, "quota", quota)
		return nil, fmt.Errorf("llm quota exceeded (%d of %d tokens)", used, quota)
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("llm.complete: messages is empty")
	}
	if p.MaxTokens < 0 {
		return nil, errors.New("llm.complete: maxTokens must not be negative")
	}
	req := LLMRequest{SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens}
	chars := len(p.SystemPrompt)
	for i, m := range p.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("llm.complete: messages[%d]: role %q must be user or assistant", i, m.Role)
		}
		blocks, err := llmContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("llm.complete: messages[%d]: %w", i, err)
		}
		for _, b := range blocks {
			chars += len(b.Text) + len(b.Data)
		}
		req.Messages = append(req.Messages, LLMMessage{Role: m.Role, Content: blocks})
	}
	res, err := c.Complete(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("llm.complete: %w", err)
	}
	spent := int64(res.Input + res.Output)
	if spent == 0 {
		for _, b := range res.Content {
			chars += len(b.Text)
		}
		spent = int64(chars / 4)
	}
	used := e.llmUsed.Add(spent)
	e.logger.Debug("llm.complete", "tokens", spent, "used", used, "quota", quota)
	return abi.LLMCompleteResult{Content: blocksToABI(res.Content), StopReason: res.StopReason, Usage: abi.LLMUsage{Input: res.Input, Output: res.Output}}, nil
}

// llmContent reads a message's content: a string, or an array of blocks.
func llmContent(raw json.RawMessage) ([]tool.ContentBlock, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []tool.ContentBlock{tool.Text(s)}, nil
	}
	var blocks []abi.Block
	if err := decodeStrict(raw, &blocks); err != nil {
		return nil, errors.New("content must be a string or an array of blocks")
	}
	out := blocksFromABI(blocks)
	if err := checkBlocks(out); err != nil {
		return nil, err
	}
	return out, nil
}

// ProviderRequestHook returns the chained before_provider_request hook of
// the loaded extensions (nil when none declares it): each sees the body as
// the ones before it left it; a replacement counts only from an extension
// granted grants.model, must be an object, and keeps pi's "stream".
// Failures and refused replacements are logged; the body goes on as it
// was.
func (h *Host) ProviderRequestHook() func(ctx context.Context, body []byte) []byte {
	var exts []*Extension
	for _, e := range h.Extensions() {
		if e.hookProviderRequest {
			exts = append(exts, e)
		}
	}
	if len(exts) == 0 {
		return nil
	}
	return func(ctx context.Context, body []byte) []byte {
		for _, e := range exts {
			body = e.providerRequest(ctx, body)
		}
		return body
	}
}

// providerRequest runs one extension's before_provider_request hook.
func (e *Extension) providerRequest(ctx context.Context, body []byte) []byte {
	req, err := encodeRequest(abi.MethodBeforeProviderRequest, json.RawMessage(mustJSON(abi.ProviderRequestParams{Payload: body})))
	if err != nil {
		e.logger.Warn("before_provider_request: " + err.Error())
		return body
	}
	var res abi.ProviderRequestParams
	err = e.call(ctx, abi.MethodBeforeProviderRequest, req, e.hookTO, nil, func(raw json.RawMessage) error {
		if isNull(raw) {
			return nil
		}
		return decodeStrict(raw, &res)
	})
	switch {
	case err != nil:
		e.logger.Warn("before_provider_request hook failed; the request goes as it was", "error", firstLine(err))
		return body
	case isNull(res.Payload):
		return body
	case !e.grants.Model:
		e.logger.Warn("before_provider_request: the replacement is ignored: extension may not change the provider request without grants.model")
		return body
	case !isObject(res.Payload):
		e.logger.Warn("before_provider_request: the replacement is ignored: payload must be a JSON object")
		return body
	}
	return keepStream(body, res.Payload, e)
}

// keepStream returns repl with body's "stream" (or none, when body has
// none): pi decides whether it reads a stream.
func keepStream(body, repl []byte, e *Extension) []byte {
	var orig, next map[string]json.RawMessage
	if json.Unmarshal(body, &orig) != nil || json.Unmarshal(repl, &next) != nil {
		return body
	}
	s, had := orig["stream"]
	if ns, has := next["stream"]; has != had || (had && string(ns) != string(s)) {
		e.logger.Warn("before_provider_request: the replacement's \"stream\" is ignored: pi keeps its own")
	}
	delete(next, "stream")
	if had {
		next["stream"] = s
	}
	out, err := json.Marshal(next)
	if err != nil {
		return body
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own types, which always marshal
	}
	return b
}

// guestCallAsync sends method to the extension as an ordinary serialized
// call with the hook time limit, logging what fails. want, when not nil,
// is the instance the call must reach: when it is gone, nothing is sent
// and false is returned.
func (e *Extension) guestCallAsync(ctx context.Context, method string, params any, want *instance) bool {
	if !e.host.bgEnter() {
		return false // the host closes
	}
	defer e.host.bgLeave()
	req, err := encodeRequest(method, json.RawMessage(mustJSON(params)))
	if err != nil {
		e.logger.Warn(method + ": " + err.Error())
		return true
	}
	if want != nil {
		ctx = context.WithValue(ctx, wantKey{}, want)
	}
	err = e.call(ctx, method, req, e.hookTO, nil, nil)
	switch {
	case errors.Is(err, errInstanceGone):
		return false
	case err != nil:
		e.logger.Warn(method+" failed", "error", firstLine(err))
	}
	return true
}

// ABIMinor is the minor version of the ABI this host speaks, told to
// every guest in init.
const ABIMinor = abi.Minor

// ModelSelected sends the model_select event (the model changed to next;
// prev nil when there was none; source "set", "cycle" or "restore") to the
// extensions that listen for it, without waiting for them: an extension
// whose own model.set caused it gets it once its call returns.
func (h *Host) ModelSelected(prev *ModelRef, next ModelRef, source string) {
	if !h.TakesEvent(abi.EventModelSelect) {
		return
	}
	ev := abi.ModelSelectEvent{Type: abi.EventModelSelect, Model: abi.ModelRef{Provider: next.Provider, ID: next.ID}, Source: source}
	if prev != nil {
		ev.PreviousModel = &abi.ModelRef{Provider: prev.Provider, ID: prev.ID}
	}
	raw := json.RawMessage(mustJSON(ev))
	go func() {
		if !h.bgEnter() {
			return
		}
		defer h.bgLeave()
		h.Event(h.runContext(), raw)
	}()
}

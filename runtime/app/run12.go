package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is the runtime's side of ABI 1.2 for the running extension
// (docs/abi.md, "ABI 1.2"): the extensions.Controls behind tools.*,
// model.*, llm.complete, pi.shutdown and pi.reload; the
// before_provider_request hook on every provider the runtime builds; the
// model_select event; pi's own flags, which an extension's may not take.

// ModelControl is what the conversation does for extensions' model.* and
// llm.complete (the conversation owns the model and thinking level). It is
// bound with BindModelControl.
type ModelControl interface {
	// ExtModel is the current model and thinking level.
	ExtModel() (extensions.ModelState, error)
	// ExtModels lists the models that can be used now.
	ExtModels() ([]extensions.ModelRef, error)
	// ExtSetModel switches the model as RPC set_model does.
	ExtSetModel(provider, id string) error
	// ExtSetThinkingLevel sets the level, clamped; it returns the level
	// applied.
	ExtSetThinkingLevel(level string) (string, error)
	// ExtProvider is the provider of the current model.
	ExtProvider() (llm.Provider, error)
}

// run12State is the runtime's ABI 1.2 state.
type run12State struct {
	model atomic.Pointer[ModelControl]
	// startActive is the active set pi.toml, --tools or the default made
	// at start (nil: the default, where MCP tools count too).
	startActive []string
	explicit    bool

	lifeMu    sync.Mutex
	lifecycle func(action, extension string)
	pending   []string
}

// BindModelControl makes mc answer extensions' model.* and llm.complete;
// nil unbinds it (they answer "no model").
func (r *Runtime) BindModelControl(mc ModelControl) {
	if mc == nil {
		r.run12.model.Store(nil)
		return
	}
	r.run12.model.Store(&mc)
}

// Lifecycle actions an extension asks for with pi.shutdown and pi.reload.
const (
	ActionShutdown = "shutdown"
	ActionReload   = "reload"
)

// OnLifecycle makes fn the receiver of extensions' pi.shutdown and
// pi.reload (action is ActionShutdown or ActionReload, extension who
// asked). It is called from the extension's command call: fn must not
// block, and acts once the command returns. Requests made before a
// receiver is set wait in TakeLifecycle. The front end (or the
// conversation) sets it; it is the one seam for both.
func (r *Runtime) OnLifecycle(fn func(action, extension string)) {
	r.run12.lifeMu.Lock()
	defer r.run12.lifeMu.Unlock()
	r.run12.lifecycle = fn
}

// TakeLifecycle returns and forgets the actions asked for while no
// receiver was set (ActionShutdown, ActionReload), oldest first.
func (r *Runtime) TakeLifecycle() []string {
	r.run12.lifeMu.Lock()
	defer r.run12.lifeMu.Unlock()
	out := r.run12.pending
	r.run12.pending = nil
	return out
}

func (r *Runtime) lifecycleAsk(action, ext string) {
	r.run12.lifeMu.Lock()
	fn := r.run12.lifecycle
	if fn == nil {
		r.run12.pending = append(r.run12.pending, action)
	}
	r.run12.lifeMu.Unlock()
	r.logger.Info("extension asks pi to "+action, "extension", ext)
	if fn != nil {
		fn(action, ext)
	}
}

// recordStartActive remembers the active set of the start, the widest an
// extension's tools.setActive may ask for (besides its own tools).
func (r *Runtime) recordStartActive() {
	r.mcpMu.Lock() // extensions' tools.setActive read it (pi.reload runs beside them)
	defer r.mcpMu.Unlock()
	r.run12.explicit = r.wantActive != nil
	if r.run12.explicit {
		r.run12.startActive = slices.Clone(r.wantActive)
	} else {
		r.run12.startActive = slices.Clone(r.baseActive)
	}
}

// ExtensionFlags lists the flags the loaded extensions declare.
func (r *Runtime) ExtensionFlags() []extensions.ExtensionFlag {
	host := r.extHost()
	if host == nil {
		return nil
	}
	return host.Flags()
}

// SetExtensionFlags gives the extensions the values of their flags on the
// command line (by name without dashes; "true"/"false" for a boolean).
//
// # Errors
//
// A flag no extension declares (errors.Is extensions.ErrUnknownFlag), a
// boolean flag's value that is not true or false.
func (r *Runtime) SetExtensionFlags(vals map[string]string) error {
	r.reload.mu.Lock()
	r.reload.flags = maps.Clone(vals)
	r.reload.mu.Unlock()
	host := r.extHost()
	if host == nil {
		if len(vals) == 0 {
			return nil
		}
		for n := range vals {
			return fmt.Errorf("%w --%s", extensions.ErrUnknownFlag, n)
		}
	}
	return host.SetFlagValues(vals)
}

// extControls is the runtime as extensions.Controls.
type extControls struct{ r *Runtime }

var _ extensions.Controls = extControls{}

func (c extControls) ListTools() []extensions.ToolState {
	r := c.r
	r.syncMCP()
	var out []extensions.ToolState
	for _, d := range r.registry.Definitions() {
		src := string(d.Source.Kind)
		if d.Source.Kind != tool.SourceBuiltin && d.Source.Name != "" {
			src += ":" + d.Source.Name
		}
		out = append(out, extensions.ToolState{Name: d.Name, Description: d.Description, Source: src, Active: r.registry.IsActive(d.Name)})
	}
	slices.SortFunc(out, func(a, b extensions.ToolState) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

func (c extControls) SetActiveTools(ext string, own, names []string) error {
	r := c.r
	r.mcpMu.Lock()
	defer r.mcpMu.Unlock()
	for _, n := range names {
		if _, ok := r.registry.Lookup(n); !ok {
			return fmt.Errorf("tools.setActive: no tool %q (tools.list lists them)", n)
		}
		allowed := slices.Contains(r.run12.startActive, n) || slices.Contains(own, n) ||
			!r.run12.explicit && slices.Contains(r.mcpNames, n)
		if !allowed {
			return fmt.Errorf("extension %s may not activate tool %q (not active at start)", ext, n)
		}
	}
	r.wantActive = slices.Clone(names)
	if _, err := r.applyActive(); err != nil {
		return fmt.Errorf("tools.setActive: %w", err)
	}
	r.toolsGen.Add(1)
	return nil
}

func (c extControls) RegisterTools(defs []tool.ToolDefinition) error {
	r := c.r
	r.mcpMu.Lock()
	defer r.mcpMu.Unlock()
	var done []string
	for _, d := range defs {
		if err := r.registry.Register(d); err != nil {
			r.registry.Unregister(done...)
			return err
		}
		done = append(done, d.Name)
	}
	r.baseActive = append(r.baseActive, done...)
	if r.wantActive != nil {
		r.wantActive = append(r.wantActive, done...)
	}
	if _, err := r.applyActive(); err != nil {
		return err
	}
	r.toolsGen.Add(1)
	return nil
}

func (c extControls) UnregisterTools(names []string) {
	r := c.r
	r.mcpMu.Lock()
	defer r.mcpMu.Unlock()
	r.registry.Unregister(names...)
	drop := func(l []string) []string {
		return slices.DeleteFunc(l, func(n string) bool { return slices.Contains(names, n) })
	}
	r.baseActive = drop(r.baseActive)
	if r.wantActive != nil {
		r.wantActive = drop(r.wantActive)
	}
	r.toolsGen.Add(1)
}

// errNoModel answers model.* and llm.complete where no conversation holds
// a model (pi tool call).
var errNoModel = errors.New("no model: pi runs no conversation here")

func (c extControls) modelControl() (ModelControl, error) {
	mc := c.r.run12.model.Load()
	if mc == nil {
		return nil, errNoModel
	}
	return *mc, nil
}

func (c extControls) Model() (extensions.ModelState, error) {
	mc, err := c.modelControl()
	if err != nil {
		return extensions.ModelState{}, err
	}
	return mc.ExtModel()
}

func (c extControls) Models() ([]extensions.ModelRef, error) {
	mc, err := c.modelControl()
	if err != nil {
		return nil, err
	}
	return mc.ExtModels()
}

func (c extControls) SetModel(provider, id string) error {
	mc, err := c.modelControl()
	if err != nil {
		return err
	}
	return mc.ExtSetModel(provider, id)
}

func (c extControls) SetThinkingLevel(level string) (string, error) {
	mc, err := c.modelControl()
	if err != nil {
		return "", err
	}
	return mc.ExtSetThinkingLevel(level)
}

// Complete sends exactly the request, no tools, through the current
// model's provider (endpoint, key, retries); the answer is redacted.
func (c extControls) Complete(ctx context.Context, req extensions.LLMRequest) (extensions.LLMResponse, error) {
	mc, err := c.modelControl()
	if err != nil {
		return extensions.LLMResponse{}, err
	}
	p, err := mc.ExtProvider()
	if err != nil {
		return extensions.LLMResponse{}, err
	}
	lreq := llm.Request{SystemPrompt: req.SystemPrompt, MaxTokens: req.MaxTokens}
	for _, m := range req.Messages {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		lreq.Messages = append(lreq.Messages, llm.Message{Role: role, Content: m.Content})
	}
	res, err := p.Stream(ctx, lreq, nil)
	if err != nil {
		return extensions.LLMResponse{}, errors.New(c.r.redactor.String(err.Error()))
	}
	out := extensions.LLMResponse{StopReason: string(res.StopReason), Input: res.Usage.InputTokens, Output: res.Usage.OutputTokens}
	for _, b := range res.Message.Content {
		if b.Type == "text" || b.Type == "image" {
			b.Text = c.r.redactor.String(b.Text)
			out.Content = append(out.Content, b)
		}
	}
	return out, nil
}

func (c extControls) Shutdown(ext string) { c.r.lifecycleAsk(ActionShutdown, ext) }
func (c extControls) Reload(ext string)   { c.r.lifecycleAsk(ActionReload, ext) }

// ModelSelected tells the extensions that listen for model_select that the
// model changed (source "set", "cycle" or "restore"); prev is nil when
// there was none. It does not wait for them.
func (r *Runtime) ModelSelected(prevProvider, prevID, provider, id, source string) {
	host := r.extHost()
	if host == nil {
		return
	}
	var prev *extensions.ModelRef
	if prevID != "" {
		prev = &extensions.ModelRef{Provider: prevProvider, ID: prevID}
	}
	host.ModelSelected(prev, extensions.ModelRef{Provider: provider, ID: id}, source)
}

// hookedProvider runs the extensions' before_provider_request hooks on
// each body the provider posts, except for requests an extension makes
// itself (llm.complete), whose own hook could not run while it waits. The
// hooks are those of the extensions loaded when the request is made
// (pi.reload may change them).
type hookedProvider struct {
	llm.Provider
	r *Runtime
}

func (p hookedProvider) Stream(ctx context.Context, req llm.Request, onEvent func(llm.StreamEvent)) (*llm.Response, error) {
	if h := p.r.extHost(); h != nil && extensions.CallMethod(ctx) == "" {
		if hook := h.ProviderRequestHook(); hook != nil {
			ctx = llm.WithBodyHook(ctx, hook)
		}
	}
	return p.Provider.Stream(ctx, req, onEvent)
}

// withProviderHook wraps p with the extensions' before_provider_request
// hooks.
func (r *Runtime) withProviderHook(p llm.Provider) llm.Provider {
	return hookedProvider{Provider: p, r: r}
}

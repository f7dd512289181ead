package conversation

import (
	"context"
	"errors"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
)

// This file is the conversation's side of ABI 1.2's model.* and
// llm.complete: the model and thinking level as extensions see and change
// them (app.ModelControl), and the sources of model_select.

// The sources of a model_select event.
const (
	sourceSet     = "set"
	sourceCycle   = "cycle"
	sourceRestore = "restore"
)

// extModel is the conversation as app.ModelControl.
type extModel struct{ c *Conversation }

var _ app.ModelControl = extModel{}

func (m extModel) ExtModel() (extensions.ModelState, error) {
	cur, err := m.c.Model()
	if err != nil {
		return extensions.ModelState{}, err
	}
	return extensions.ModelState{Provider: cur.Provider, ID: cur.ID, ContextWindow: m.c.ContextWindow(), ThinkingLevel: string(m.c.ThinkingLevel())}, nil
}

func (m extModel) ExtModels() ([]extensions.ModelRef, error) {
	avail, err := m.c.AvailableModels()
	if err != nil {
		return nil, err
	}
	out := make([]extensions.ModelRef, 0, len(avail))
	for _, a := range avail {
		out = append(out, extensions.ModelRef{Provider: a.Provider, ID: a.ID})
	}
	return out, nil
}

func (m extModel) ExtSetModel(provider, id string) error { return m.c.SetModel(provider, id) }

func (m extModel) ExtSetThinkingLevel(level string) (string, error) {
	l, err := m.c.SetThinkingLevel(level)
	if err != nil {
		return "", err
	}
	if l == "" {
		l = llm.ThinkingOff
	}
	return string(l), nil
}

// ExtProvider is the provider of the current model: the front end's
// (scripted) one, else the one the settings resolve to.
func (m extModel) ExtProvider() (llm.Provider, error) {
	c := m.c
	if c.opts.Provider != nil {
		return c.opts.Provider, nil
	}
	c.mu.Lock()
	mo := c.model
	c.mu.Unlock()
	s, err := c.resolve(mo)
	if err != nil {
		return nil, err
	}
	return c.rt.ProviderFor(s)
}

// lifecycleAfterCommand acts on what an extension's command asked with
// pi.shutdown and pi.reload (when no front end took them with
// app.Runtime.OnLifecycle): true means leave pi, as the end of input
// does. A reload waits in the queue of extensions' runs, so it happens
// once the conversation is idle (reloadExtensions).
func (c *Conversation) lifecycleAfterCommand() (exit bool) {
	for _, a := range c.rt.TakeLifecycle() {
		switch a {
		case app.ActionShutdown:
			exit = true
		case app.ActionReload:
			if err := c.queueExtensionRun(extRun{reload: true}); err != nil {
				c.rt.Warn("pi.reload: " + err.Error())
			}
		}
	}
	return exit
}

// ExecuteShortcut runs an extension's shortcut (shortcut.execute) and
// then what it asked with pi.shutdown and pi.reload, as after a command:
// exit is true when it asked pi to end; a reload waits until idle.
//
// # Errors
//
// The shortcut's failure or fault (app.Runtime.ExecuteShortcut).
func (c *Conversation) ExecuteShortcut(ctx context.Context, extension, key string) (exit bool, err error) {
	err = c.rt.ExecuteShortcut(ctx, extension, key)
	return c.lifecycleAfterCommand(), err
}

// reloadExtensions is pi.reload once idle (Reload); a failure is shown
// to the person as an error notice (the command that asked has returned):
// the TUI's and line mode's notice, RPC's notify, the log without a UI.
// agent.ErrBusy while a run goes on (the queue tries again after it).
func (c *Conversation) reloadExtensions(ctx context.Context) error {
	err := c.Reload(ctx)
	if err != nil && !errors.Is(err, agent.ErrBusy) {
		c.rt.UI().Notify("pi.reload: "+c.rt.Redactor().String(err.Error()), app.NotifyError)
		return nil
	}
	return err
}

// Reload reads pi.toml and the extensions' modules again and puts the new
// set of extensions in place of the old (app.Runtime.Reload: the old ones
// get session_shutdown and end), then builds the agent again on the same
// session (its messages, model, thinking level and queued messages stay)
// with the new tools and hooks, and sends session_start with reason
// "reload". /reload and pi.reload come here.
//
// # Errors
//
// agent.ErrBusy while a run goes on; app.Runtime.Reload's errors (a
// pi.toml or an extension that does not load), after which the old
// extensions go on as they were and nothing is sent.
func (c *Conversation) Reload(ctx context.Context) error {
	ctx, end, err := c.begin(ctx, "reload")
	if err != nil {
		return err
	}
	s := c.Session()
	bye := agent.Event{Type: agent.EventSessionShutdown, SessionID: s.ID(), SessionFile: c.sessionFile()}
	err = c.rt.Reload(ctx, &bye)
	end()
	if err != nil {
		return err
	}
	c.loadResources() // skills and templates too; the next agent's prompt lists them
	c.dropAgent()
	c.EmitSessionStart("reload")
	return nil
}

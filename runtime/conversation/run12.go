package conversation

import (
	"context"

	"github.com/pi-go/pi/extensions"
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

// reloadExtensions is pi.reload once idle: every extension starts afresh
// (app.Runtime.ReloadExtensions: fresh instances of the modules loaded at
// start; pi.toml is not read again), then session_start with reason
// reload. agent.ErrBusy while a run goes on (the queue tries again after
// it).
func (c *Conversation) reloadExtensions(ctx context.Context) error {
	ctx, end, err := c.begin(ctx, "reload")
	if err != nil {
		return err
	}
	err = c.rt.ReloadExtensions(ctx)
	end()
	if err != nil {
		c.rt.Warn("pi.reload: " + err.Error())
	}
	c.EmitSessionStart("reload")
	return nil
}

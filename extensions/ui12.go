package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/tool"
)

// This file holds ABI 1.2's extension UI on the host side (docs/abi.md,
// "ABI 1.2"): the ui.* host methods beyond notify and confirm, components
// and the guest calls that draw them and hand them keys, tool and message
// renderers, and shortcuts. What a guest sends for display goes to the
// front end through UIExtended; the front end (through the runtime, which
// redacts the key) removes control characters and cuts lines to its width.

// Line and Span are what a guest sends for display (abi.Line).
type (
	Line = abi.Line
	Span = abi.Span
)

// ShortcutSpec is a TUI key an extension's init declares.
type ShortcutSpec = abi.ShortcutSpec

// KeyAnswer is a component's answer to a key; EditorState the editor's
// text and cursor (a rune offset) for an editor component's render.
type (
	KeyAnswer   = abi.ComponentInputResult
	EditorState = abi.EditorState
)

// The component slots, widget placements and dispose reasons.
const (
	SlotOverlay          = abi.SlotOverlay
	SlotWidget           = abi.SlotWidget
	SlotHeader           = abi.SlotHeader
	SlotFooter           = abi.SlotFooter
	SlotEditor           = abi.SlotEditor
	PlacementAboveEditor = abi.PlacementAboveEditor
	PlacementBelowEditor = abi.PlacementBelowEditor
	DisposeClosed        = abi.DisposeClosed
	DisposeCancelled     = abi.DisposeCancelled
	DisposeReplaced      = abi.DisposeReplaced
	DisposeShutdown      = abi.DisposeShutdown
)

// ValidKey says key is in the extension key grammar (docs/abi.md).
func ValidKey(key string) bool { return abi.ValidKey(key) }

// Limits of what a guest shows.
const (
	// MaxRenderLines is the most lines a render shows; the rest is cut
	// (with a log line).
	MaxRenderLines = 1000
	// MaxRendersPerSecond is the most renders of one component a second.
	MaxRendersPerSecond = 30
	// MaxWidgetLines is the most lines a widget (ui.setWidget) shows.
	MaxWidgetLines = 10
	// MaxTitleRunes is the longest title ui.setTitle sets.
	MaxTitleRunes = 100
	// MaxOpenComponents is how many components one extension may have
	// open at once.
	MaxOpenComponents = 16
)

// ErrComponentGone is the answer of a component's calls once it was
// closed or its instance ended (a fault, a timeout, pi closing).
var ErrComponentGone = errors.New("the component is closed (its instance ended or it was closed)")

// UIExtended is the rest of ABI 1.2's ui methods, implemented by a UI
// (Options.UI) that can show them. A UI that does not implement it
// answers dialogs "no-ui" (none is asked), components "no-tui", and the
// rest {} (getEditorText {text: ""}). Implementations must be safe for
// concurrent use and must not call back into the extension from these
// methods (its instance is busy with the call that asked).
type UIExtended interface {
	// Select, Input and Editor ask the person; ok is false when they
	// cancel. They give up when ctx ends (the host answers "timeout").
	Select(ctx context.Context, extension, title string, options []string) (value string, ok bool, err error)
	Input(ctx context.Context, extension, title, placeholder string) (value string, ok bool, err error)
	Editor(ctx context.Context, extension, title, prefill string) (value string, ok bool, err error)
	// SetStatus shows or (text nil) clears a status under key.
	SetStatus(extension, key string, text Line)
	// SetWidget shows or (lines nil) clears a widget under key;
	// placement is abi.PlacementAboveEditor or abi.PlacementBelowEditor.
	SetWidget(extension, key string, lines []Line, placement string)
	// SetTitle sets the terminal's title.
	SetTitle(extension, title string)
	// SetWorkingMessage sets the message shown while the agent works;
	// nil is pi's own.
	SetWorkingMessage(extension string, text *string)
	// SetEditorText puts text in the editor.
	SetEditorText(extension, text string)
	// EditorText is the editor's text; ok is false where there is none.
	EditorText() (text string, ok bool)
	// OpenComponent shows c; false when there is no terminal UI (the
	// guest is answered "no-tui"). The UI renders it (off its own
	// goroutine: the guest is busy until this call returns), hands it
	// keys, and calls Dispose when it goes away.
	OpenComponent(c *Component) bool
	// RerenderComponent asks for c to be rendered again.
	RerenderComponent(c *Component)
	// CloseComponent removes c (the guest's ui.close, or its instance
	// ended); the host disposes of it.
	CloseComponent(c *Component)
}

// Component is one component a guest opened with ui.component. Its
// methods call the guest; they may block for up to the hook limit (5 s),
// so a front end calls them off its drawing goroutine.
type Component struct {
	// ID is the id the guest got; Extension its extension's name.
	ID, Extension string
	// Slot is abi.SlotOverlay, SlotWidget, SlotHeader, SlotFooter or
	// SlotEditor; Key (widgets) and Placement as the guest asked;
	// MaxHeight is 0 when it gave none.
	Slot, Key, Placement string
	MaxHeight            int

	ext      *Extension
	inst     *instance
	done     atomic.Bool
	once     sync.Once
	rate     sync.Mutex
	last     time.Time // the last render's start (rate)
	asked    atomic.Int64
	askedSec atomic.Int64
	warned   atomic.Bool
}

// componentSet is a host's open components.
type componentSet struct {
	mu   sync.Mutex
	seq  int64
	open map[string]*Component
}

func (s *componentSet) add(c *Component) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[string]*Component{}
	}
	s.open[c.ID] = c
}

func (s *componentSet) nextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return "c" + strconv.FormatInt(s.seq, 10)
}

// count is how many components of e are open.
func (s *componentSet) count(e *Extension) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.open {
		if c.ext == e {
			n++
		}
	}
	return n
}

func (s *componentSet) get(id string) *Component {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[id]
}

func (s *componentSet) remove(c *Component) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, c.ID)
}

// instanceGone closes the components of an instance that ended (called
// with its extension's lock held: the UI is told, the guest is not
// called).
func (s *componentSet) instanceGone(inst *instance) {
	s.mu.Lock()
	var gone []*Component
	for _, c := range s.open {
		if c.inst == inst {
			gone = append(gone, c)
			delete(s.open, c.ID)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(gone, func(a, b *Component) int { return strings.Compare(a.ID, b.ID) })
	for _, c := range gone {
		c.done.Store(true)
		c.ext.logger.Warn("component closed: its instance ended", "component", c.ID, "slot", c.Slot)
		if ui := c.ext.uiExtended(); ui != nil {
			ui.CloseComponent(c)
		}
	}
}

// componentInstKey carries the instance a component call must go to.
type componentInstKey struct{}

// onInstance reports whether a call with ctx may go to inst, the live
// instance: a component's calls go only to the instance that opened it.
func onInstance(ctx context.Context, inst *instance) bool {
	want, ok := ctx.Value(componentInstKey{}).(*instance)
	return !ok || want == inst
}

// Closed reports whether the component is gone.
func (c *Component) Closed() bool { return c.done.Load() }

// Render asks the guest for the component's lines at width (editor: the
// editor's state, for the editor slot). At most MaxRendersPerSecond
// renders a second run (a faster caller waits its turn); at most
// MaxRenderLines lines are kept (the cut is logged).
//
// # Errors
//
// ErrComponentGone; the guest's error answer or fault (a fault ends its
// instance, which closes the component).
func (c *Component) Render(ctx context.Context, width int, editor *EditorState) ([]Line, error) {
	if c.done.Load() {
		return nil, ErrComponentGone
	}
	if err := c.wait(ctx); err != nil {
		return nil, err
	}
	var r abi.LinesResult
	err := c.call(ctx, abi.MethodComponentRender, abi.ComponentRenderParams{ID: c.ID, Width: width, Editor: editor}, &r)
	if err != nil {
		return nil, err
	}
	return c.ext.capLines("component "+c.ID, r.Lines), nil
}

// wait holds a render until its turn: one every 1/MaxRendersPerSecond s.
func (c *Component) wait(ctx context.Context) error {
	c.rate.Lock()
	defer c.rate.Unlock()
	next := c.last.Add(time.Second / MaxRendersPerSecond)
	if d := time.Until(next); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	c.last = time.Now()
	return nil
}

// Input hands the guest a key (the key grammar; "paste" with text). An
// error answer or a fault closes the component: the result then has
// Close set, with the error.
func (c *Component) Input(ctx context.Context, key, text string) (KeyAnswer, error) {
	if c.done.Load() {
		return abi.ComponentInputResult{Close: true}, ErrComponentGone
	}
	var r abi.ComponentInputResult
	if err := c.call(ctx, abi.MethodComponentInput, abi.ComponentInputParams{ID: c.ID, Key: key, Text: text}, &r); err != nil {
		return abi.ComponentInputResult{Close: true}, err
	}
	return r, nil
}

// Dispose ends the component (reason: abi.DisposeClosed, Cancelled,
// Replaced, Shutdown) and, later and once, tells the guest with
// component.dispose when its instance still lives. It returns at once
// and may be called more than once.
func (c *Component) Dispose(reason string) {
	c.once.Do(func() {
		alive := !c.done.Swap(true)
		c.ext.host.components.remove(c)
		if !alive || reason == abi.DisposeShutdown {
			return
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), c.ext.hookTO+time.Second)
			defer cancel()
			err := c.callAny(ctx, abi.MethodComponentDispose, abi.ComponentDisposeParams{ID: c.ID, Reason: reason}, nil)
			if err != nil && !errors.Is(err, ErrComponentGone) {
				c.ext.logger.Warn("component.dispose failed", "component", c.ID, "error", err.Error())
			}
		}()
	})
}

// askedRerender counts the guest's ui.rerender calls; past
// MaxRendersPerSecond in a second it logs once that renders are capped.
func (c *Component) askedRerender() {
	now := time.Now().Unix()
	if c.askedSec.Swap(now) != now {
		c.asked.Store(0)
	}
	if c.asked.Add(1) > MaxRendersPerSecond && !c.warned.Swap(true) {
		c.ext.logger.Warn(fmt.Sprintf("component %s asked to be rendered more than %d times a second; it is rendered at most %d times a second", c.ID, MaxRendersPerSecond, MaxRendersPerSecond))
	}
}

func (c *Component) call(ctx context.Context, method string, p any, out any) error {
	if c.done.Load() {
		return ErrComponentGone
	}
	return c.callAny(ctx, method, p, out)
}

// callAny sends a component request to the instance that opened it.
func (c *Component) callAny(ctx context.Context, method string, p any, out any) error {
	ctx = context.WithValue(ctx, componentInstKey{}, c.inst)
	err := c.ext.guestCall(ctx, method, p, c.ext.hookTO, out)
	if errors.Is(err, ErrComponentGone) {
		return ErrComponentGone
	}
	return err
}

// guestCall sends one of ABI 1.2's UI requests and decodes the answer
// into out (nil: ignored).
func (e *Extension) guestCall(ctx context.Context, method string, p any, timeout time.Duration, out any) error {
	var req []byte
	var err error
	switch p := p.(type) {
	case abi.ComponentRenderParams:
		req, err = encodeRequest(method, p)
	case abi.ComponentInputParams:
		req, err = encodeRequest(method, p)
	case abi.ComponentDisposeParams:
		req, err = encodeRequest(method, p)
	case abi.ToolRenderParams:
		req, err = encodeRequest(method, p)
	case abi.MessageRenderParams:
		req, err = encodeRequest(method, p)
	case abi.ShortcutParams:
		req, err = encodeRequest(method, p)
	default:
		return fmt.Errorf("%s: params of type %T", method, p)
	}
	if err != nil {
		return err
	}
	err = e.call(ctx, method, req, timeout, nil, func(raw json.RawMessage) error {
		if out == nil {
			return nil
		}
		return decodeObject(raw, method, out)
	})
	if err != nil {
		return e.hookError(method, err)
	}
	return nil
}

// capLines keeps at most MaxRenderLines lines of what a render gave,
// logging a cut.
func (e *Extension) capLines(what string, lines []Line) []Line {
	if len(lines) > MaxRenderLines {
		e.logger.Warn(fmt.Sprintf("%s: the render gave %d lines; showing the first %d", what, len(lines), MaxRenderLines))
		lines = lines[:MaxRenderLines]
	}
	return lines
}

// uiExtended is the front end's UIExtended, nil when it has none.
func (e *Extension) uiExtended() UIExtended {
	ui, _ := e.host.opts.UI.(UIExtended)
	return ui
}

// hostMethodsUI12 are the host methods of ABI 1.2's UI.
var hostMethodsUI12 = []string{
	abi.HostMethodSelect, abi.HostMethodInputDialog, abi.HostMethodEditor,
	abi.HostMethodSetStatus, abi.HostMethodSetWidget, abi.HostMethodSetTitle,
	abi.HostMethodSetWorkingMessage, abi.HostMethodSetEditorText, abi.HostMethodGetEditorText,
	abi.HostMethodComponent, abi.HostMethodRerender, abi.HostMethodClose,
}

// handleHostCallUI12 answers the ui host methods of ABI 1.2; ok is false
// for another method. Every problem is an error answer, never a trap.
func (e *Extension) handleHostCallUI12(ctx context.Context, method string, params []byte) (out []byte, ok bool) {
	if !slices.Contains(hostMethodsUI12, method) {
		return nil, false
	}
	res, err := e.uiCall12(ctx, method, params)
	if err != nil {
		return encodeErr(err.Error()), true
	}
	return encodeOK(res), true
}

func (e *Extension) uiCall12(ctx context.Context, method string, params []byte) (any, error) {
	ui := e.uiExtended()
	switch method {
	case abi.HostMethodSelect:
		var p abi.SelectParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if len(p.Options) == 0 {
			return nil, errors.New("ui.select: options must not be empty")
		}
		return e.dialog(ctx, method, p.TimeoutMS, func(ctx context.Context) (string, bool, error) {
			return ui.Select(ctx, e.name, p.Title, p.Options)
		})
	case abi.HostMethodInputDialog:
		var p abi.InputDialogParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		return e.dialog(ctx, method, p.TimeoutMS, func(ctx context.Context) (string, bool, error) {
			return ui.Input(ctx, e.name, p.Title, p.Placeholder)
		})
	case abi.HostMethodEditor:
		var p abi.EditorParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		return e.dialog(ctx, method, p.TimeoutMS, func(ctx context.Context) (string, bool, error) {
			return ui.Editor(ctx, e.name, p.Title, p.Prefill)
		})
	case abi.HostMethodSetStatus:
		var p abi.SetStatusParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if err := checkUIKey(method, p.Key); err != nil {
			return nil, err
		}
		if ui != nil {
			var text Line
			if p.Text != nil {
				text = append(Line{}, *p.Text...)
			}
			ui.SetStatus(e.name, p.Key, text)
		}
	case abi.HostMethodSetWidget:
		var p abi.SetWidgetParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if err := checkUIKey(method, p.Key); err != nil {
			return nil, err
		}
		placement, err := checkPlacement(method, p.Placement)
		if err != nil {
			return nil, err
		}
		if ui != nil {
			lines := p.Lines
			if lines != nil && len(lines) > MaxWidgetLines {
				e.logger.Warn(fmt.Sprintf("widget %s: %d lines; showing the first %d", p.Key, len(lines), MaxWidgetLines))
				lines = lines[:MaxWidgetLines]
			}
			ui.SetWidget(e.name, p.Key, lines, placement)
		}
	case abi.HostMethodSetTitle:
		var p abi.SetTitleParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if ui != nil {
			if r := []rune(p.Title); len(r) > MaxTitleRunes {
				p.Title = string(r[:MaxTitleRunes])
			}
			ui.SetTitle(e.name, p.Title)
		}
	case abi.HostMethodSetWorkingMessage:
		var p abi.SetWorkingMessageParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if ui != nil {
			ui.SetWorkingMessage(e.name, p.Text)
		}
	case abi.HostMethodSetEditorText:
		var p abi.EditorTextParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		if ui != nil {
			ui.SetEditorText(e.name, p.Text)
		}
	case abi.HostMethodGetEditorText:
		if ui != nil {
			if text, ok := ui.EditorText(); ok {
				return abi.EditorTextParams{Text: text}, nil
			}
		}
		return abi.EditorTextParams{Text: ""}, nil
	case abi.HostMethodComponent:
		var p abi.ComponentParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		return e.openComponent(ctx, ui, p)
	case abi.HostMethodRerender, abi.HostMethodClose:
		var p abi.ComponentIDParams
		if err := decodeParams(method, params, &p); err != nil {
			return nil, err
		}
		c := e.host.components.get(p.ID)
		if c == nil || c.ext != e {
			return nil, fmt.Errorf("%s: extension %s has no open component %q", method, e.name, p.ID)
		}
		if method == abi.HostMethodRerender {
			c.askedRerender()
			ui.RerenderComponent(c)
		} else {
			ui.CloseComponent(c)
			c.Dispose(abi.DisposeClosed)
		}
	}
	return abi.EmptyResult{}, nil
}

// dialog runs a select, input or editor dialog: "no-ui" at once without a
// person, else the answer, "cancelled", or "timeout" at timeoutMs or
// shortly before the call's deadline.
func (e *Extension) dialog(ctx context.Context, method string, timeoutMS int64, ask func(context.Context) (string, bool, error)) (abi.DialogResult, error) {
	if e.uiExtended() == nil {
		return abi.DialogResult{Reason: abi.ReasonNoUI}, nil
	}
	if timeoutMS < 0 {
		return abi.DialogResult{}, fmt.Errorf("%s: timeoutMs must not be negative", method)
	}
	cctx, cancel := dialogContext(ctx, timeoutMS)
	defer cancel()
	v, ok, err := ask(cctx)
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		return abi.DialogResult{Reason: abi.ReasonTimeout}, nil
	case err != nil:
		return abi.DialogResult{}, fmt.Errorf("%s: %w", method, err)
	case !ok:
		return abi.DialogResult{Reason: abi.ReasonCancelled}, nil
	}
	return abi.DialogResult{Value: &v}, nil
}

// openComponent answers ui.component.
func (e *Extension) openComponent(ctx context.Context, ui UIExtended, p abi.ComponentParams) (abi.ComponentResult, error) {
	const method = abi.HostMethodComponent
	switch p.Slot {
	case abi.SlotOverlay, abi.SlotHeader, abi.SlotFooter, abi.SlotEditor:
	case abi.SlotWidget:
		if p.Key == "" {
			p.Key = "default"
		}
	default:
		return abi.ComponentResult{}, fmt.Errorf("%s: slot %q must be overlay, widget, header, footer or editor", method, p.Slot)
	}
	if p.Key != "" {
		if err := checkUIKey(method, p.Key); err != nil {
			return abi.ComponentResult{}, err
		}
	}
	placement, err := checkPlacement(method, p.Placement)
	if err != nil {
		return abi.ComponentResult{}, err
	}
	if p.MaxHeight < 0 {
		return abi.ComponentResult{}, fmt.Errorf("%s: maxHeight must not be negative", method)
	}
	inst, _ := ctx.Value(ctxKey{}).(*instance)
	if ui == nil || !e.host.opts.TUI || inst == nil {
		return abi.ComponentResult{Reason: abi.ReasonNoTUI}, nil
	}
	if e.host.components.count(e) >= MaxOpenComponents {
		return abi.ComponentResult{}, fmt.Errorf("%s: extension %s has %d components open, the most it may; close one first", method, e.name, MaxOpenComponents)
	}
	c := &Component{
		ID: e.host.components.nextID(), Extension: e.name,
		Slot: p.Slot, Key: p.Key, Placement: placement, MaxHeight: p.MaxHeight,
		ext: e, inst: inst,
	}
	e.host.components.add(c)
	if !ui.OpenComponent(c) {
		e.host.components.remove(c)
		return abi.ComponentResult{Reason: abi.ReasonNoTUI}, nil
	}
	id := c.ID
	return abi.ComponentResult{ID: &id}, nil
}

func checkUIKey(method, key string) error {
	if !abi.ValidUIKey(key) {
		return fmt.Errorf("%s: key %q must match [A-Za-z0-9._-]{1,64}", method, key)
	}
	return nil
}

func checkPlacement(method, p string) (string, error) {
	switch p {
	case "":
		return abi.PlacementAboveEditor, nil
	case abi.PlacementAboveEditor, abi.PlacementBelowEditor:
		return p, nil
	}
	return "", fmt.Errorf("%s: placement %q must be aboveEditor or belowEditor", method, p)
}

// checkInitUI12 checks init's 1.2 UI fields: shortcut keys in the key
// grammar, not twice; message renderer types not empty, not twice.
func checkInitUI12(r abi.InitResult) error {
	seen := map[string]bool{}
	for i, s := range r.Shortcuts {
		switch {
		case !abi.ValidKey(s.Key):
			return fmt.Errorf("shortcuts[%d]: key %q is not a key (ctrl+, alt+, shift+ in that order, then a character or a key name such as enter, f5)", i, s.Key)
		case seen[s.Key]:
			return fmt.Errorf("shortcuts[%d]: key %q declared twice", i, s.Key)
		}
		seen[s.Key] = true
	}
	types := map[string]bool{}
	for i, t := range r.MessageRenderers {
		switch {
		case t == "":
			return fmt.Errorf("messageRenderers[%d]: empty custom type", i)
		case types[t]:
			return fmt.Errorf("messageRenderers[%d]: custom type %q declared twice", i, t)
		}
		types[t] = true
	}
	return nil
}

func shortcutsFromABI(s []abi.ShortcutSpec) []ShortcutSpec {
	if len(s) == 0 {
		return nil
	}
	return append([]ShortcutSpec(nil), s...)
}

// Shortcut is a TUI key an extension declared.
type Shortcut struct {
	ShortcutSpec
	// Extension is the name of the extension that declared it.
	Extension string
}

// BindShortcuts decides which of the loaded extensions' shortcuts a TUI
// binds: in load order, a key in taken (pi's own keys, with what each
// does) or taken by an earlier extension is not bound, and a warning
// names both.
func (h *Host) BindShortcuts(taken map[string]string) (bound []Shortcut, warnings []string) {
	owner := map[string]string{}
	for _, e := range h.Extensions() {
		for _, s := range e.info.Shortcuts {
			if what, ok := taken[s.Key]; ok {
				warnings = append(warnings, fmt.Sprintf("extension %s: shortcut %s is not bound: pi binds it (%s)", e.name, s.Key, what))
				continue
			}
			if o, ok := owner[s.Key]; ok {
				warnings = append(warnings, fmt.Sprintf("extension %s: shortcut %s is not bound: extension %s took it first", e.name, s.Key, o))
				continue
			}
			owner[s.Key] = e.name
			bound = append(bound, Shortcut{ShortcutSpec: s, Extension: e.name})
		}
	}
	return bound, warnings
}

// ExecuteShortcut runs shortcut.execute {key} in the named extension,
// bounded by its command limit (limits.timeout_ms).
//
// # Errors
//
// An unknown extension; its error answer or fault, with its name.
func (h *Host) ExecuteShortcut(ctx context.Context, extension, key string) error {
	e := h.byName(extension)
	if e == nil || !slices.ContainsFunc(e.info.Shortcuts, func(s ShortcutSpec) bool { return s.Key == key }) {
		return fmt.Errorf("no extension %q with shortcut %s", extension, key)
	}
	return e.guestCall(ctx, abi.MethodShortcut, abi.ShortcutParams{Key: key}, e.execTO, nil)
}

func (h *Host) byName(name string) *Extension {
	for _, e := range h.Extensions() {
		if e.name == name {
			return e
		}
	}
	return nil
}

// ToolRenderer is the extension that draws the calls of tool name
// (its ToolSpec has render: true), nil when pi draws them.
func (h *Host) ToolRenderer(name string) *Extension {
	for _, e := range h.Extensions() {
		for _, t := range e.info.Tools {
			if t.Name == name && t.Render {
				return e
			}
		}
	}
	return nil
}

// MessageRenderer is the first extension, in load order, that draws custom
// messages of customType; nil when none does.
func (h *Host) MessageRenderer(customType string) *Extension {
	for _, e := range h.Extensions() {
		if slices.Contains(e.info.MessageRenderers, customType) {
			return e
		}
	}
	return nil
}

// RenderTool asks the extension for the lines of a call of its tool name
// (tool.render): result is nil while the call runs without output; nil
// lines mean pi's own drawing. An error (logged by the caller) also means
// pi's drawing.
func (e *Extension) RenderTool(ctx context.Context, name, callID string, args json.RawMessage, result *tool.Result, partial, expanded bool, width int) ([]Line, error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	p := abi.ToolRenderParams{ToolName: name, ToolCallID: callID, Args: args, IsPartial: partial, Expanded: expanded, Width: width}
	if result != nil {
		rp, err := toolResultParams(tool.CallInfo{Name: name, ID: callID, Input: args}, *result)
		if err != nil {
			return nil, err
		}
		p.Result = &abi.RenderToolResult{Content: rp.Content, Details: rp.Details, IsError: rp.IsError}
	}
	return e.renderTool(ctx, p)
}

func (e *Extension) renderTool(ctx context.Context, p abi.ToolRenderParams) ([]Line, error) {
	var r abi.LinesResult
	if err := e.guestCall(ctx, abi.MethodToolRender, p, e.hookTO, &r); err != nil {
		return nil, err
	}
	return e.capLines("tool.render "+p.ToolName, r.Lines), nil
}

// RenderMessage asks the extension for the lines of a custom message
// (message.render); nil lines mean pi's own drawing.
func (e *Extension) RenderMessage(ctx context.Context, customType string, content, details json.RawMessage, expanded bool, width int) ([]Line, error) {
	if len(content) == 0 {
		content = json.RawMessage(`""`)
	}
	p := abi.MessageRenderParams{CustomType: customType, Content: content, Details: details, Expanded: expanded, Width: width}
	var r abi.LinesResult
	if err := e.guestCall(ctx, abi.MethodMessageRender, p, e.hookTO, &r); err != nil {
		return nil, err
	}
	return e.capLines("message.render "+p.CustomType, r.Lines), nil
}

package sdk

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pi-go/pi/internal/abi"
)

// ABI 1.2's extension UI: dialogs (Select, InputDialog, EditorDialog),
// statuses, widgets, the title, the working message and the editor's text,
// components (OpenComponent), tool and message renderers and shortcuts.
// What an extension shows is Lines: plain text or styled spans, which the
// host draws in its theme (raw escape sequences never reach the terminal:
// the host removes control characters). The SDK declares renderers and
// shortcuts in init's answer only when the host speaks 1.2
// (ABIMinor() >= 2).

// Span is a run of text in one style: Style is space-separated names of
// accent, muted, dim, success, warning, error, border, selected, bold,
// italic, underline, inverse.
type Span = abi.Span

// Line is one line to show: spans (PlainLine makes a plain one).
type Line = abi.Line

// PlainLine is a plain line.
func PlainLine(s string) Line { return abi.TextLine(s) }

// Styled is a line of one span in style.
func Styled(text, style string) Line { return Line{{Text: text, Style: style}} }

// TUI reports whether pi's terminal UI runs (components, shortcuts and
// renderers show only there); false for an older host.
func TUI() bool { return std.ui12.tui }

// DialogResult is a dialog's answer: OK with the Value, or Reason
// ("cancelled", "timeout", "no-ui").
type DialogResult struct {
	Value  string
	OK     bool
	Reason string
}

func dialogResult(r abi.DialogResult) DialogResult {
	if r.Value == nil {
		return DialogResult{Reason: r.Reason}
	}
	return DialogResult{Value: *r.Value, OK: true}
}

// Select asks the person to pick one of options (timeout 0: the current
// call's deadline).
//
// # Errors
//
// A *HostError (no options, a negative timeout).
func Select(title string, options []string, timeout time.Duration) (DialogResult, error) {
	var r abi.DialogResult
	err := HostCall(abi.HostMethodSelect, abi.SelectParams{Title: title, Options: options, TimeoutMS: timeout.Milliseconds()}, &r)
	return dialogResult(r), err
}

// InputDialog asks the person for a line of text.
func InputDialog(title, placeholder string, timeout time.Duration) (DialogResult, error) {
	var r abi.DialogResult
	err := HostCall(abi.HostMethodInputDialog, abi.InputDialogParams{Title: title, Placeholder: placeholder, TimeoutMS: timeout.Milliseconds()}, &r)
	return dialogResult(r), err
}

// EditorDialog asks the person for text of several lines, starting from
// prefill.
func EditorDialog(title, prefill string, timeout time.Duration) (DialogResult, error) {
	var r abi.DialogResult
	err := HostCall(abi.HostMethodEditor, abi.EditorParams{Title: title, Prefill: prefill, TimeoutMS: timeout.Milliseconds()}, &r)
	return dialogResult(r), err
}

// SetStatus shows text under key ([A-Za-z0-9._-]{1,64}) on the status
// line; nil clears it.
func SetStatus(key string, text Line) error {
	p := abi.SetStatusParams{Key: key}
	if text != nil {
		p.Text = &text
	}
	return HostCall(abi.HostMethodSetStatus, p, nil)
}

// Widget placements.
const (
	AboveEditor = abi.PlacementAboveEditor
	BelowEditor = abi.PlacementBelowEditor
)

// SetWidget shows lines (at most 10) under key above or below the editor
// (placement "" is above); nil clears it.
func SetWidget(key string, lines []Line, placement string) error {
	return HostCall(abi.HostMethodSetWidget, abi.SetWidgetParams{Key: key, Lines: lines, Placement: placement}, nil)
}

// SetTitle sets the terminal's title (at most 100 characters are kept).
func SetTitle(title string) error {
	return HostCall(abi.HostMethodSetTitle, abi.SetTitleParams{Title: title}, nil)
}

// SetWorkingMessage sets what the TUI shows while the agent works; ""
// restores pi's own.
func SetWorkingMessage(text string) error {
	p := abi.SetWorkingMessageParams{}
	if text != "" {
		p.Text = &text
	}
	return HostCall(abi.HostMethodSetWorkingMessage, p, nil)
}

// SetEditorText replaces the text in the person's editor.
func SetEditorText(text string) error {
	return HostCall(abi.HostMethodSetEditorText, abi.EditorTextParams{Text: text}, nil)
}

// EditorText is the text in the person's editor ("" where there is none).
func EditorText() (string, error) {
	var r abi.EditorTextParams
	err := HostCall(abi.HostMethodGetEditorText, struct{}{}, &r)
	return r.Text, err
}

// Component slots.
const (
	SlotOverlay = abi.SlotOverlay
	SlotWidget  = abi.SlotWidget
	SlotHeader  = abi.SlotHeader
	SlotFooter  = abi.SlotFooter
	SlotEditor  = abi.SlotEditor
)

// ComponentOptions say where a component goes.
type ComponentOptions struct {
	// Slot is SlotOverlay, SlotWidget, SlotHeader, SlotFooter or
	// SlotEditor.
	Slot string
	// Key names a widget (one per key).
	Key string
	// Placement is AboveEditor (default) or BelowEditor, for widgets.
	Placement string
	// MaxHeight caps an overlay's lines (0: half the screen).
	MaxHeight int
}

// EditorState is the editor's text and cursor (a rune offset), given to
// an editor component's Render.
type EditorState = abi.EditorState

// KeyAnswer is what a component says to a key: Consumed (false hands an
// editor component's key to pi's editor), Close, Rerender.
type KeyAnswer = abi.ComponentInputResult

// ComponentHandler draws a component and takes its keys. Keys are in the
// key grammar ("x", "ctrl+x", "enter", "up", ...); a paste is key "paste"
// with text. Dispose is told why it went away (closed, cancelled,
// replaced).
type ComponentHandler struct {
	Render  func(width int, editor *EditorState) []Line
	Input   func(key, text string) KeyAnswer
	Dispose func(reason string)
}

// OpenComponent shows a component drawn by h. Without pi's terminal UI
// it answers ok false (reason "no-tui") and h is never called.
//
// # Errors
//
// A *HostError (a bad slot, key or placement).
func OpenComponent(opts ComponentOptions, h ComponentHandler) (id string, ok bool, err error) {
	var r abi.ComponentResult
	err = HostCall(abi.HostMethodComponent, abi.ComponentParams{Slot: opts.Slot, Key: opts.Key, Placement: opts.Placement, MaxHeight: opts.MaxHeight}, &r)
	if err != nil || r.ID == nil {
		return "", false, err
	}
	if std.ui12.components == nil {
		std.ui12.components = map[string]*ComponentHandler{}
	}
	std.ui12.components[*r.ID] = &h
	return *r.ID, true, nil
}

// Rerender asks for a component of this extension to be drawn again.
func Rerender(id string) error {
	return HostCall(abi.HostMethodRerender, abi.ComponentIDParams{ID: id}, nil)
}

// CloseComponent closes a component of this extension (its Dispose is
// called later with "closed").
func CloseComponent(id string) error {
	return HostCall(abi.HostMethodClose, abi.ComponentIDParams{ID: id}, nil)
}

// ToolRender is what a tool renderer is given: the call, and its result
// once there is one.
type ToolRender struct {
	ToolName, ToolCallID string
	Args                 json.RawMessage
	// Result is nil until the tool answered; IsPartial marks a progress
	// update.
	Result    *ToolResultView
	IsPartial bool
	Expanded  bool
	Width     int
}

// ToolResultView is a tool result as a renderer sees it.
type ToolResultView struct {
	Content []Block
	Details json.RawMessage
	IsError bool
}

// RenderTool makes the TUI draw the calls of this extension's tool name
// with fn under pi's own first line (nil lines: pi's drawing).
func RenderTool(name string, fn func(ToolRender) []Line) {
	if std.ui12.toolRenderers == nil {
		std.ui12.toolRenderers = map[string]func(ToolRender) []Line{}
	}
	std.ui12.toolRenderers[name] = fn
}

// MessageRender is what a message renderer is given.
type MessageRender struct {
	CustomType string
	Content    json.RawMessage
	Details    json.RawMessage
	Expanded   bool
	Width      int
}

// RenderMessage makes the TUI draw custom messages of customType with fn
// under a "[customType]" line (nil lines: pi's drawing).
func RenderMessage(customType string, fn func(MessageRender) []Line) {
	if std.ui12.messageRenderers == nil {
		std.ui12.messageRenderers = map[string]func(MessageRender) []Line{}
	}
	if _, dup := std.ui12.messageRenderers[customType]; !dup {
		std.ui12.messageTypes = append(std.ui12.messageTypes, customType)
	}
	std.ui12.messageRenderers[customType] = fn
}

// Shortcut binds a TUI key (the key grammar: "ctrl+shift+p", "f5", "alt+x")
// to fn, called while the editor has the focus and no dialog or overlay
// is open. pi does not bind a key it uses itself or another extension took
// first (a warning names both). fn's error is shown.
func Shortcut(key, description string, fn func() error) {
	if !abi.ValidKey(key) {
		std.fail("sdk.Shortcut: %q is not a key (ctrl+, alt+, shift+ in that order, then a character or a key name such as enter, f5)", key)
		return
	}
	for _, s := range std.ui12.shortcuts {
		if s.spec.Key == key {
			std.fail("sdk.Shortcut: key %s bound twice", key)
			return
		}
	}
	std.ui12.shortcuts = append(std.ui12.shortcuts, shortcutEntry{spec: abi.ShortcutSpec{Key: key, Description: description}, run: fn})
}

// registryUI12 is a registry's 1.2 UI state.
type registryUI12 struct {
	tui              bool
	components       map[string]*ComponentHandler
	toolRenderers    map[string]func(ToolRender) []Line
	messageRenderers map[string]func(MessageRender) []Line
	messageTypes     []string
	shortcuts        []shortcutEntry
}

type shortcutEntry struct {
	spec abi.ShortcutSpec
	run  func() error
}

// initResultUI12 adds the 1.2 UI declarations to init's answer (only for
// a 1.2 host).
func (r *registry) initResultUI12(res *abi.InitResult) {
	u := &r.ui12
	if r.abiMinor < 2 {
		if len(u.shortcuts) > 0 || len(u.toolRenderers) > 0 || len(u.messageTypes) > 0 {
			Logf(LevelWarn, "extension %s uses ABI 1.2 (shortcuts, renderers), but the host speaks ABI 1.%d: those parts stay unused", r.name, r.abiMinor)
		}
		return
	}
	for i := range res.Tools {
		if u.toolRenderers[res.Tools[i].Name] != nil {
			res.Tools[i].Render = true
		}
	}
	for _, s := range u.shortcuts {
		res.Shortcuts = append(res.Shortcuts, s.spec)
	}
	res.MessageRenderers = append(res.MessageRenderers, u.messageTypes...)
}

func (r *registry) componentHandler(id string) (*ComponentHandler, error) {
	h := r.ui12.components[id]
	if h == nil {
		return nil, fmt.Errorf("extension %q has no component %q", r.name, id)
	}
	return h, nil
}

func (r *registry) componentRender(p *abi.ComponentRenderParams) (any, error) {
	h, err := r.componentHandler(p.ID)
	if err != nil {
		return nil, err
	}
	var lines []Line
	if h.Render != nil {
		lines = h.Render(p.Width, p.Editor)
	}
	if lines == nil {
		lines = []Line{}
	}
	return struct {
		Lines []Line `json:"lines"`
	}{lines}, nil
}

func (r *registry) componentInput(p *abi.ComponentInputParams) (any, error) {
	h, err := r.componentHandler(p.ID)
	if err != nil {
		return nil, err
	}
	if h.Input == nil {
		return abi.ComponentInputResult{}, nil
	}
	return h.Input(p.Key, p.Text), nil
}

func (r *registry) componentDispose(p *abi.ComponentDisposeParams) (any, error) {
	h := r.ui12.components[p.ID]
	delete(r.ui12.components, p.ID)
	if h != nil && h.Dispose != nil {
		h.Dispose(p.Reason)
	}
	return abi.EmptyResult{}, nil
}

func (r *registry) toolRender(p *abi.ToolRenderParams) (any, error) {
	fn := r.ui12.toolRenderers[p.ToolName]
	if fn == nil {
		return abi.LinesResult{}, nil
	}
	v := ToolRender{ToolName: p.ToolName, ToolCallID: p.ToolCallID, Args: p.Args, IsPartial: p.IsPartial, Expanded: p.Expanded, Width: p.Width}
	if p.Result != nil {
		v.Result = &ToolResultView{Content: blocksFromABI(p.Result.Content), Details: p.Result.Details, IsError: p.Result.IsError}
	}
	return abi.LinesResult{Lines: fn(v)}, nil
}

func (r *registry) messageRender(p *abi.MessageRenderParams) (any, error) {
	fn := r.ui12.messageRenderers[p.CustomType]
	if fn == nil {
		return abi.LinesResult{}, nil
	}
	return abi.LinesResult{Lines: fn(MessageRender{CustomType: p.CustomType, Content: p.Content, Details: p.Details, Expanded: p.Expanded, Width: p.Width})}, nil
}

func (r *registry) shortcut(p *abi.ShortcutParams) (any, error) {
	for _, s := range r.ui12.shortcuts {
		if s.spec.Key == p.Key {
			if err := s.run(); err != nil {
				return nil, err
			}
			return abi.EmptyResult{}, nil
		}
	}
	return nil, fmt.Errorf("extension %q has no shortcut %s", r.name, p.Key)
}

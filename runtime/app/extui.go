package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is the seam of ABI 1.2's extension UI between the extension
// host and the front ends (docs/abi.md, "ABI 1.2", "Front ends"): a front
// end's UI that also implements ExtensionUI gets dialogs (Editor beside
// UI's Select and Input), statuses, widgets, the title, the working
// message, the editor's text and components; the runtime redacts the key
// from everything a guest shows before the front end sees it. The front
// end removes control characters (termtext) and cuts lines to its width.

// Line and Span are a line an extension shows: styled spans (style names
// as docs/abi.md lists them).
type (
	Line = extensions.Line
	Span = extensions.Span
)

// ExtensionUI is the rest of the extension UI, for a UI (Options.UI) that
// can show it. Extension names the extension; texts come redacted, with
// control characters still in them. Its methods may be called from any
// goroutine and must not block on the person (except Editor).
type ExtensionUI interface {
	// Editor asks for text of several lines, starting from prefill; ok
	// is false when the person cancels or ctx ends.
	Editor(ctx context.Context, title, prefill string) (value string, ok bool, err error)
	// SetStatus shows (text nil: clears) an extension's status under key.
	SetStatus(extension, key string, text Line)
	// SetWidget shows (lines nil: clears) an extension's widget.
	SetWidget(extension, key string, lines []Line, placement string)
	// SetTitle sets the terminal's title.
	SetTitle(extension, title string)
	// SetWorkingMessage sets what shows while the agent works (nil: pi's).
	SetWorkingMessage(extension string, text *string)
	// SetEditorText puts text in the editor.
	SetEditorText(extension, text string)
	// EditorText is the editor's text; ok false where there is none.
	EditorText() (text string, ok bool)
	// OpenComponent shows c (false: no terminal UI); RerenderComponent
	// asks for it to be drawn again; CloseComponent removes it (the
	// front end then calls c.Dispose).
	OpenComponent(c *Component) bool
	RerenderComponent(c *Component)
	CloseComponent(c *Component)
}

// Component is an extension's component as a front end sees it: its
// lines come redacted. Its calls into the extension may take up to the
// hook limit (5 s): call them off the drawing goroutine.
type Component struct {
	// ID, Extension, Slot, Key, Placement, MaxHeight: as the extension
	// opened it.
	ID, Extension, Slot, Key, Placement string
	MaxHeight                           int

	c *extensions.Component
	r *redact.Redactor
}

// Render asks for the component's lines at width; editor is the editor's
// state for the editor slot.
func (c *Component) Render(ctx context.Context, width int, editor *EditorState) ([]Line, error) {
	lines, err := c.c.Render(ctx, width, editor)
	return redactLines(c.r, lines), err
}

// Input hands a key to the component (the key grammar: KeyName).
func (c *Component) Input(ctx context.Context, key, text string) (KeyAnswer, error) {
	return c.c.Input(ctx, key, text)
}

// Dispose ends the component (abi.DisposeClosed, DisposeCancelled,
// DisposeReplaced, DisposeShutdown); the extension is told later.
func (c *Component) Dispose(reason string) { c.c.Dispose(reason) }

// Closed says the component is gone.
func (c *Component) Closed() bool { return c.c.Closed() }

func redactLines(r *redact.Redactor, lines []Line) []Line {
	if !r.Active() || lines == nil {
		return lines
	}
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = redactLine(r, l)
	}
	return out
}

func redactLine(r *redact.Redactor, l Line) Line {
	if !r.Active() || l == nil {
		return l
	}
	out := make(Line, len(l))
	for i, s := range l {
		out[i] = Span{Text: r.String(s.Text), Style: s.Style}
	}
	// A key split over spans is found in the whole line, which then
	// becomes one span in the first span's style.
	if whole := out.Text(); r.Contains(whole) {
		return Line{{Text: r.String(whole), Style: l[0].Style}}
	}
	return out
}

// componentMap maps the host's components to the front end's.
type componentMap struct {
	mu sync.Mutex
	m  map[*extensions.Component]*Component
}

func (cm *componentMap) put(c *extensions.Component, fc *Component) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.m == nil {
		cm.m = map[*extensions.Component]*Component{}
	}
	cm.m[c] = fc
}

func (cm *componentMap) get(c *extensions.Component) *Component {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	return cm.m[c]
}

func (cm *componentMap) drop(c *extensions.Component) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	delete(cm.m, c)
}

// extUI12 is the extension host's UI when the front end shows the whole
// extension UI: dialogs titled "[NAME] TITLE", texts redacted.
type extUI12 struct {
	extUI
	x  ExtensionUI
	rt *Runtime
	// comps maps the host's components to the front end's.
	comps *componentMap
}

var _ extensions.UIExtended = extUI12{}

func (u extUI12) red() *redact.Redactor { return u.rt.redactor }

func (u extUI12) Select(ctx context.Context, ext, title string, options []string) (string, bool, error) {
	r := u.red()
	opts := make([]string, len(options))
	for i, o := range options {
		opts[i] = r.String(o)
	}
	v, ok, err := u.ui.Select(ctx, "["+ext+"] "+r.String(title), opts)
	if ok {
		// The answer is the option the guest gave, not its redacted copy.
		for i, o := range opts {
			if o == v {
				v = options[i]
				break
			}
		}
	}
	return v, ok, err
}

func (u extUI12) Input(ctx context.Context, ext, title, placeholder string) (string, bool, error) {
	return u.ui.Input(ctx, "["+ext+"] "+u.red().String(title), u.red().String(placeholder))
}

func (u extUI12) Editor(ctx context.Context, ext, title, prefill string) (string, bool, error) {
	return u.x.Editor(ctx, "["+ext+"] "+u.red().String(title), u.red().String(prefill))
}

func (u extUI12) SetStatus(ext, key string, text Line) {
	u.x.SetStatus(ext, key, redactLine(u.red(), text))
}

func (u extUI12) SetWidget(ext, key string, lines []Line, placement string) {
	u.x.SetWidget(ext, key, redactLines(u.red(), lines), placement)
}

func (u extUI12) SetTitle(ext, title string) { u.x.SetTitle(ext, u.red().String(title)) }

func (u extUI12) SetWorkingMessage(ext string, text *string) {
	if text != nil {
		s := u.red().String(*text)
		text = &s
	}
	u.x.SetWorkingMessage(ext, text)
}

func (u extUI12) SetEditorText(ext, text string) { u.x.SetEditorText(ext, u.red().String(text)) }

func (u extUI12) EditorText() (string, bool) { return u.x.EditorText() }

func (u extUI12) OpenComponent(c *extensions.Component) bool {
	fc := &Component{ID: c.ID, Extension: c.Extension, Slot: c.Slot, Key: c.Key, Placement: c.Placement, MaxHeight: c.MaxHeight, c: c, r: u.red()}
	u.comps.put(c, fc)
	if !u.x.OpenComponent(fc) {
		u.comps.drop(c)
		return false
	}
	return true
}

func (u extUI12) RerenderComponent(c *extensions.Component) {
	if fc := u.comps.get(c); fc != nil {
		u.x.RerenderComponent(fc)
	}
}

func (u extUI12) CloseComponent(c *extensions.Component) {
	if fc := u.comps.get(c); fc != nil {
		u.comps.drop(c)
		u.x.CloseComponent(fc)
	}
}

// ExtensionShortcuts are the extensions' TUI shortcuts a front end binds,
// given the keys it binds itself (with what each does), and a warning for
// each one not bound.
func (r *Runtime) ExtensionShortcuts(taken map[string]string) ([]extensions.Shortcut, []string) {
	host := r.extHost()
	if host == nil {
		return nil, nil
	}
	return host.BindShortcuts(taken)
}

// ExecuteShortcut runs an extension's shortcut (shortcut.execute).
func (r *Runtime) ExecuteShortcut(ctx context.Context, extension, key string) error {
	host := r.extHost()
	if host == nil {
		return fmt.Errorf("no extension %q", extension)
	}
	return host.ExecuteShortcut(ctx, extension, key)
}

// HasToolRenderer says an extension draws the calls of tool name.
func (r *Runtime) HasToolRenderer(name string) bool {
	host := r.extHost()
	return host != nil && host.ToolRenderer(name) != nil
}

// HasMessageRenderer says an extension draws custom messages of
// customType (its init's messageRenderers).
func (r *Runtime) HasMessageRenderer(customType string) bool {
	host := r.extHost()
	return host != nil && host.MessageRenderer(customType) != nil
}

// RenderToolCall asks the extension that draws tool name's calls for
// their lines (redacted); nil when pi draws them (no renderer, or it
// failed: logged). The extension sees the result redacted.
func (r *Runtime) RenderToolCall(ctx context.Context, name, callID string, args json.RawMessage, result *tool.Result, partial, expanded bool, width int) []Line {
	host := r.extHost()
	if host == nil {
		return nil
	}
	e := host.ToolRenderer(name)
	if e == nil {
		return nil
	}
	if result != nil && r.redactor.Active() {
		var red tool.Result
		if json.Unmarshal([]byte(r.redactor.String(string(mustMarshal(result)))), &red) == nil {
			result = &red
		}
	}
	lines, err := e.RenderTool(ctx, name, callID, json.RawMessage(r.redactor.String(string(args))), result, partial, expanded, width)
	if err != nil {
		r.logger.Warn("tool.render failed; pi draws the call", "tool", name, "error", err.Error())
		return nil
	}
	return redactLines(r.redactor, lines)
}

// RenderCustomMessage asks the extension that draws customType for the
// lines of a custom message (redacted); nil when pi draws it.
func (r *Runtime) RenderCustomMessage(ctx context.Context, customType string, content, details json.RawMessage, expanded bool, width int) []Line {
	host := r.extHost()
	if host == nil {
		return nil
	}
	e := host.MessageRenderer(customType)
	if e == nil {
		return nil
	}
	lines, err := e.RenderMessage(ctx, customType, content, details, expanded, width)
	if err != nil {
		r.logger.Warn("message.render failed; pi draws the message", "customType", customType, "error", err.Error())
		return nil
	}
	return redactLines(r.redactor, lines)
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// KeyAnswer is a component's answer to a key; EditorState the editor's
// text and cursor (a rune offset) for an editor component's render.
type (
	KeyAnswer   = extensions.KeyAnswer
	EditorState = extensions.EditorState
)

// The component slots, widget placements and dispose reasons (docs/abi.md).
const (
	SlotOverlay          = extensions.SlotOverlay
	SlotWidget           = extensions.SlotWidget
	SlotHeader           = extensions.SlotHeader
	SlotFooter           = extensions.SlotFooter
	SlotEditor           = extensions.SlotEditor
	PlacementAboveEditor = extensions.PlacementAboveEditor
	PlacementBelowEditor = extensions.PlacementBelowEditor
	DisposeClosed        = extensions.DisposeClosed
	DisposeCancelled     = extensions.DisposeCancelled
	DisposeReplaced      = extensions.DisposeReplaced
	DisposeShutdown      = extensions.DisposeShutdown
)

// ValidKey says key is in the extension key grammar (docs/abi.md).
func ValidKey(key string) bool { return extensions.ValidKey(key) }

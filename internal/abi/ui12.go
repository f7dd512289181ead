package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// This file declares ABI 1.2's extension UI (docs/abi.md, "ABI 1.2"): the
// ui.* host methods beyond notify and confirm, the guest methods that draw
// and take keys (component.*, tool.render, message.render,
// shortcut.execute), Lines and styles, and the key grammar.

// Host methods of ABI 1.2's UI.
const (
	HostMethodSelect            = "ui.select"
	HostMethodInputDialog       = "ui.input"
	HostMethodEditor            = "ui.editor"
	HostMethodSetStatus         = "ui.setStatus"
	HostMethodSetWidget         = "ui.setWidget"
	HostMethodSetTitle          = "ui.setTitle"
	HostMethodSetWorkingMessage = "ui.setWorkingMessage"
	HostMethodSetEditorText     = "ui.setEditorText"
	HostMethodGetEditorText     = "ui.getEditorText"
	HostMethodComponent         = "ui.component"
	HostMethodRerender          = "ui.rerender"
	HostMethodClose             = "ui.close"
)

// Guest methods of ABI 1.2's UI.
const (
	MethodComponentRender  = "component.render"
	MethodComponentInput   = "component.input"
	MethodComponentDispose = "component.dispose"
	MethodToolRender       = "tool.render"
	MethodMessageRender    = "message.render"
	MethodShortcut         = "shortcut.execute"
)

// Dialog reasons: why a dialog's value is null.
const (
	ReasonCancelled = "cancelled"
	ReasonTimeout   = "timeout"
	ReasonNoUI      = "no-ui"
	ReasonNoTUI     = "no-tui"
)

// Component slots.
const (
	SlotOverlay = "overlay"
	SlotWidget  = "widget"
	SlotHeader  = "header"
	SlotFooter  = "footer"
	SlotEditor  = "editor"
)

// Widget placements.
const (
	PlacementAboveEditor = "aboveEditor"
	PlacementBelowEditor = "belowEditor"
)

// Dispose reasons.
const (
	DisposeClosed    = "closed"
	DisposeCancelled = "cancelled"
	DisposeReplaced  = "replaced"
	DisposeShutdown  = "shutdown"
)

// Styles are the style names a Span may carry; others are ignored.
var Styles = []string{"accent", "muted", "dim", "success", "warning", "error", "border", "selected", "bold", "italic", "underline", "inverse"}

// Span is a run of text in one style: Style is space-separated names of
// Styles ("" for the default).
type Span struct {
	Text  string `json:"text"`
	Style string `json:"style,omitempty"`
}

// Line is one line a guest sends for display: on the wire a string or an
// array of spans. A plain string decodes to one unstyled span, and a line
// of one unstyled span encodes as a string.
type Line []Span

// Text is the line's text without styles.
func (l Line) Text() string {
	if len(l) == 1 {
		return l[0].Text
	}
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// TextLine is a Line of one unstyled span.
func TextLine(s string) Line { return Line{{Text: s}} }

// MarshalJSON writes a string for one unstyled span, else the spans.
func (l Line) MarshalJSON() ([]byte, error) {
	if len(l) == 1 && l[0].Style == "" {
		return json.Marshal(l[0].Text)
	}
	if l == nil {
		return []byte(`""`), nil
	}
	return json.Marshal([]Span(l))
}

// UnmarshalJSON reads a string or an array of spans.
func (l *Line) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = Line{{Text: s}}
		return nil
	}
	if len(b) > 0 && b[0] == '[' {
		var spans []Span
		if err := json.Unmarshal(b, &spans); err != nil {
			return err
		}
		*l = spans
		return nil
	}
	return errors.New("a line is a string or an array of {text, style} spans")
}

// SelectParams are ui.select's params.
type SelectParams struct {
	Title   string   `json:"title"`
	Options []string `json:"options"`
	// TimeoutMS gives up after this many milliseconds (omitted: the
	// current call's deadline).
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
}

// InputDialogParams are ui.input's params.
type InputDialogParams struct {
	Title       string `json:"title"`
	Placeholder string `json:"placeholder,omitempty"`
	TimeoutMS   int64  `json:"timeoutMs,omitempty"`
}

// EditorParams are ui.editor's params.
type EditorParams struct {
	Title     string `json:"title"`
	Prefill   string `json:"prefill,omitempty"`
	TimeoutMS int64  `json:"timeoutMs,omitempty"`
}

// DialogResult is the answer of ui.select, ui.input and ui.editor: Value
// (always present) is null when Reason says why.
type DialogResult struct {
	Value  *string `json:"value"`
	Reason string  `json:"reason,omitempty"`
}

// SetStatusParams are ui.setStatus's params; a null Text clears.
type SetStatusParams struct {
	Key  string `json:"key"`
	Text *Line  `json:"text"`
}

// SetWidgetParams are ui.setWidget's params; null Lines clear.
type SetWidgetParams struct {
	Key       string `json:"key"`
	Lines     []Line `json:"lines"`
	Placement string `json:"placement,omitempty"`
}

// SetTitleParams are ui.setTitle's params.
type SetTitleParams struct {
	Title string `json:"title"`
}

// SetWorkingMessageParams are ui.setWorkingMessage's params; null is pi's
// own message.
type SetWorkingMessageParams struct {
	Text *string `json:"text"`
}

// EditorTextParams are ui.setEditorText's params and ui.getEditorText's
// result.
type EditorTextParams struct {
	Text string `json:"text"`
}

// ComponentParams are ui.component's params.
type ComponentParams struct {
	Slot      string `json:"slot"`
	Key       string `json:"key,omitempty"`
	Placement string `json:"placement,omitempty"`
	MaxHeight int    `json:"maxHeight,omitempty"`
}

// ComponentResult is ui.component's answer: ID, or null with Reason
// "no-tui".
type ComponentResult struct {
	ID     *string `json:"id"`
	Reason string  `json:"reason,omitempty"`
}

// ComponentIDParams are ui.rerender's and ui.close's params.
type ComponentIDParams struct {
	ID string `json:"id"`
}

// EditorState is the editor's text and cursor (a rune offset), sent to an
// editor component's render.
type EditorState struct {
	Text   string `json:"text"`
	Cursor int    `json:"cursor"`
}

// ComponentRenderParams are component.render's params.
type ComponentRenderParams struct {
	ID     string       `json:"id"`
	Width  int          `json:"width"`
	Editor *EditorState `json:"editor,omitempty"`
}

// LinesResult is the answer of component.render, tool.render and
// message.render. For the renderers, no lines (`{}`) asks for pi's own
// drawing.
type LinesResult struct {
	Lines []Line `json:"lines,omitempty"`
}

// ComponentInputParams are component.input's params: Key in the key
// grammar (ValidKey), Text with key "paste".
type ComponentInputParams struct {
	ID   string `json:"id"`
	Key  string `json:"key"`
	Text string `json:"text,omitempty"`
}

// ComponentInputResult is component.input's answer.
type ComponentInputResult struct {
	Consumed bool `json:"consumed,omitempty"`
	Close    bool `json:"close,omitempty"`
	Rerender bool `json:"rerender,omitempty"`
}

// ComponentDisposeParams are component.dispose's params.
type ComponentDisposeParams struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// RenderToolResult is the result part of tool.render's params.
type RenderToolResult struct {
	Content []Block         `json:"content"`
	Details json.RawMessage `json:"details,omitempty"`
	IsError bool            `json:"isError"`
}

// ToolRenderParams are tool.render's params.
type ToolRenderParams struct {
	ToolName   string            `json:"toolName"`
	ToolCallID string            `json:"toolCallId"`
	Args       json.RawMessage   `json:"args"`
	Result     *RenderToolResult `json:"result,omitempty"`
	IsPartial  bool              `json:"isPartial"`
	Expanded   bool              `json:"expanded"`
	Width      int               `json:"width"`
}

// MessageRenderParams are message.render's params.
type MessageRenderParams struct {
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	Expanded   bool            `json:"expanded"`
	Width      int             `json:"width"`
}

// ShortcutParams are shortcut.execute's params.
type ShortcutParams struct {
	Key string `json:"key"`
}

// ShortcutSpec declares a TUI shortcut in InitResult.Shortcuts.
type ShortcutSpec struct {
	Key         string `json:"key"`
	Description string `json:"description"`
}

// namedKeys are the key names of the grammar besides printable characters.
var namedKeys = map[string]bool{
	"enter": true, "escape": true, "tab": true, "backspace": true, "delete": true, "insert": true,
	"space": true, "up": true, "down": true, "left": true, "right": true, "home": true, "end": true,
	"pageup": true, "pagedown": true,
	"f1": true, "f2": true, "f3": true, "f4": true, "f5": true, "f6": true,
	"f7": true, "f8": true, "f9": true, "f10": true, "f11": true, "f12": true,
}

// ValidKey reports whether s is a key of the grammar: "ctrl+", "alt+",
// "shift+" in that order (each at most once), then one printable
// character or a named key ("enter", "f5", ...). "paste" is not a key a
// shortcut may take.
func ValidKey(s string) bool {
	for _, m := range []string{"ctrl+", "alt+", "shift+"} {
		s = strings.TrimPrefix(s, m)
	}
	if namedKeys[s] {
		return true
	}
	r := []rune(s)
	return len(r) == 1 && r[0] > 0x20 && r[0] != 0x7f && !(r[0] >= 0x80 && r[0] < 0xa0)
}

// ValidUIKey reports whether s is a status, widget or component key:
// [A-Za-z0-9._-]{1,64}.
func ValidUIKey(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/tool"
)

// The TUI's share of ABI 1.2's extension UI (docs/abi.md, "Front ends";
// docs/interactive.md, "Extensions on screen"): the editor dialog,
// statuses (a line under pi's status line), widgets above or below the
// editor, the terminal's title, the working message, the editor's text,
// components (overlay, widget, header, footer, editor), shortcuts and tool
// renderers.
//
// Other goroutines (an extension's host call) hand the loop an operation
// (extOp) through the UI; operations of one target (a status, a widget,
// a component's rerender) replace each other while they wait, so a flood
// costs one update. A guest's lines are drawn span by span in the TUI's
// theme, each span's text with every control character removed, and cut
// to the width. Components are rendered and handed keys off the loop (a
// render may take up to the 5 s hook limit); keys go to a component one
// at a time, in order. Ctrl+C never reaches a component: it closes the
// focused overlay.

var _ app.ExtensionUI = (*UI)(nil)

// Limits of what extensions show in the TUI.
const (
	maxWidgetLines = 10
	maxStatusLine  = 400
)

// extOp is an operation for the loop, posted by another goroutine.
type extOp func(m *model)

// extQueue is the UI's waiting operations: keyed ones replace an earlier
// one of the same key in its place.
type extQueue struct {
	keys []string
	ops  map[string]extOp
	seq  int
	// editorText mirrors the editor's text for EditorText (the loop
	// writes it after each message).
	editorText string
}

// postExt queues op under key ("" for one that never coalesces) and wakes
// the loop; ops posted before Run wait for it, after it they are dropped.
func (u *UI) postExt(key string, op extOp) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ended {
		return
	}
	q := &u.ext
	if q.ops == nil {
		q.ops = map[string]extOp{}
	}
	if key == "" {
		q.seq++
		key = fmt.Sprintf("\x00%d", q.seq)
	}
	if _, ok := q.ops[key]; !ok {
		q.keys = append(q.keys, key)
	}
	q.ops[key] = op
	if u.wake || u.send == nil {
		return
	}
	u.wake = true
	go u.send(wakeMsg{})
}

// takeExt empties the queue for the loop.
func (u *UI) takeExt() []extOp {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := &u.ext
	ops := make([]extOp, 0, len(q.keys))
	for _, k := range q.keys {
		ops = append(ops, q.ops[k])
	}
	q.keys, q.ops = nil, nil
	return ops
}

// Editor asks for text of several lines in a box: Enter submits, Alt+Enter
// adds a line, Esc cancels.
func (u *UI) Editor(ctx context.Context, title, prefill string) (string, bool, error) {
	a, _ := u.ask(ctx, &dialog{kind: dialogEditor, title: title, placeholder: prefill})
	return a.value, a.ok, nil
}

// SetStatus shows an extension's status on the line under pi's status line.
func (u *UI) SetStatus(extension, key string, text app.Line) {
	u.postExt("status\x00"+extension+"\x00"+key, func(m *model) { m.ext.setStatus(extension+"\x00"+key, text) })
}

// SetWidget shows an extension's widget above or below the editor.
func (u *UI) SetWidget(extension, key string, lines []app.Line, placement string) {
	u.postExt("widget\x00"+extension+"\x00"+key, func(m *model) {
		m.ext.setWidget(extension+"\x00"+key, &extWidget{lines: lines, below: placement == app.PlacementBelowEditor}, m)
	})
}

// SetTitle sets the terminal's title.
func (u *UI) SetTitle(extension, title string) {
	u.postExt("title", func(m *model) {
		m.ext.cmds = append(m.ext.cmds, tea.SetWindowTitle(termtext.Flat(title)))
	})
}

// SetWorkingMessage replaces "working…" on the status line (nil: pi's).
func (u *UI) SetWorkingMessage(extension string, text *string) {
	u.postExt("working", func(m *model) { m.ext.working = text })
}

// SetEditorText puts text in the editor.
func (u *UI) SetEditorText(extension, text string) {
	u.postExt("", func(m *model) {
		m.editor.SetValue(termtext.Printable(text))
		m.fitEditor()
	})
}

// EditorText is the editor's text as the loop last left it.
func (u *UI) EditorText() (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ended {
		return "", false
	}
	return u.ext.editorText, true
}

// mirrorEditor records the editor's text for EditorText.
func (u *UI) mirrorEditor(text string) {
	u.mu.Lock()
	u.ext.editorText = text
	u.mu.Unlock()
}

// OpenComponent shows c when the TUI starts or runs; false after it ended.
func (u *UI) OpenComponent(c *app.Component) bool {
	u.mu.Lock()
	ended := u.ended
	u.mu.Unlock()
	if ended {
		return false
	}
	u.postExt("", func(m *model) { m.openComponent(c) })
	return true
}

// RerenderComponent asks for c to be drawn again (requests coalesce).
func (u *UI) RerenderComponent(c *app.Component) {
	u.postExt("rerender\x00"+c.ID, func(m *model) {
		if v := m.ext.view(c); v != nil {
			m.renderComponent(v)
		}
	})
}

// CloseComponent removes c (the extension's ui.close, or its instance
// ended).
func (u *UI) CloseComponent(c *app.Component) {
	u.postExt("", func(m *model) { m.closeComponent(c, app.DisposeClosed, "") })
}

// extState is what extensions show in the TUI (owned by the loop).
type extState struct {
	statusKeys []string
	statuses   map[string]app.Line
	widgetKeys []string
	widgets    map[string]*extWidget
	working    *string
	overlays   []*compView // the newest last: it has the keys
	header     *compView
	footer     *compView
	editor     *compView
	// shortcuts are the bound ones (key → extension).
	shortcuts map[string]string
	cmds      []tea.Cmd
}

// extWidget is a widget: lines set with ui.setWidget, or a component.
type extWidget struct {
	lines []app.Line
	below bool
	comp  *compView
}

// compView is a component on screen.
type compView struct {
	c     *app.Component
	lines []app.Line
	// rendering: a render runs; again: another was asked meanwhile.
	rendering, again bool
	width            int
	// keys wait for the component, one in flight at a time.
	keys     []tea.KeyMsg
	inputing bool
}

// reloadedMsg says the extensions were loaded again (pi.reload, /reload).
type reloadedMsg struct{}

type (
	compRenderedMsg struct {
		v     *compView
		lines []app.Line
		err   error
	}
	compInputMsg struct {
		v   *compView
		k   tea.KeyMsg
		a   app.KeyAnswer
		err error
	}
	shortcutDoneMsg struct {
		key, ext string
		err      error
		// exit: the shortcut asked pi.shutdown.
		exit bool
	}
)

func (s *extState) setStatus(id string, text app.Line) {
	if s.statuses == nil {
		s.statuses = map[string]app.Line{}
	}
	if text == nil {
		delete(s.statuses, id)
		s.statusKeys = remove(s.statusKeys, id)
		return
	}
	if _, ok := s.statuses[id]; !ok {
		s.statusKeys = append(s.statusKeys, id)
	}
	s.statuses[id] = text
}

func (s *extState) setWidget(id string, w *extWidget, m *model) {
	if s.widgets == nil {
		s.widgets = map[string]*extWidget{}
	}
	if old := s.widgets[id]; old != nil && old.comp != nil && (w == nil || old.comp != w.comp) {
		old.comp.c.Dispose(app.DisposeReplaced)
	}
	if w == nil || (w.lines == nil && w.comp == nil) {
		delete(s.widgets, id)
		s.widgetKeys = remove(s.widgetKeys, id)
		return
	}
	if _, ok := s.widgets[id]; !ok {
		s.widgetKeys = append(s.widgetKeys, id)
	}
	s.widgets[id] = w
}

func remove(keys []string, k string) []string {
	for i, x := range keys {
		if x == k {
			return append(keys[:i:i], keys[i+1:]...)
		}
	}
	return keys
}

// view is the compView of c, nil when it is not on screen.
func (s *extState) view(c *app.Component) *compView {
	for _, v := range s.all() {
		if v.c == c {
			return v
		}
	}
	return nil
}

// all is every component on screen.
func (s *extState) all() []*compView {
	out := append([]*compView(nil), s.overlays...)
	for _, v := range []*compView{s.header, s.footer, s.editor} {
		if v != nil {
			out = append(out, v)
		}
	}
	for _, k := range s.widgetKeys {
		if w := s.widgets[k]; w.comp != nil {
			out = append(out, w.comp)
		}
	}
	return out
}

// drainExt runs what other goroutines posted.
func (m *model) drainExt() {
	for _, op := range m.ui.takeExt() {
		op(m)
	}
}

// takeExtCmds are the commands the operations made (a title change, renders).
func (m *model) takeExtCmds() tea.Cmd {
	cmds := m.ext.cmds
	m.ext.cmds = nil
	return tea.Batch(cmds...)
}

// openComponent puts c in its slot (a newer one replaces the one there)
// and renders it.
func (m *model) openComponent(c *app.Component) {
	if c.Closed() {
		return
	}
	v := &compView{c: c}
	s := &m.ext
	replace := func(old *compView) {
		if old != nil {
			old.c.Dispose(app.DisposeReplaced)
		}
	}
	switch c.Slot {
	case app.SlotOverlay:
		s.overlays = append(s.overlays, v)
	case app.SlotHeader:
		replace(s.header)
		s.header = v
	case app.SlotFooter:
		replace(s.footer)
		s.footer = v
	case app.SlotEditor:
		replace(s.editor)
		s.editor = v
	default:
		s.setWidget(c.Extension+"\x00"+c.Key, &extWidget{comp: v, below: c.Placement == app.PlacementBelowEditor}, m)
	}
	m.renderComponent(v)
}

// closeComponent takes c off the screen and disposes of it; why, when not
// empty, is printed.
func (m *model) closeComponent(c *app.Component, reason, why string) {
	s := &m.ext
	for i, v := range s.overlays {
		if v.c == c {
			s.overlays = append(s.overlays[:i:i], s.overlays[i+1:]...)
		}
	}
	for _, p := range []**compView{&s.header, &s.footer, &s.editor} {
		if *p != nil && (*p).c == c {
			*p = nil
		}
	}
	for _, k := range append([]string(nil), s.widgetKeys...) {
		if w := s.widgets[k]; w.comp != nil && w.comp.c == c {
			delete(s.widgets, k)
			s.widgetKeys = remove(s.widgetKeys, k)
		}
	}
	c.Dispose(reason)
	if why != "" {
		m.print(m.noticeLine(fmt.Sprintf("[%s] component closed: %s", c.Extension, why), app.NotifyWarning))
	}
}

// renderComponent starts a render of v at the screen's width, or marks
// one to run after the one running.
func (m *model) renderComponent(v *compView) {
	if v.rendering {
		v.again = true
		return
	}
	v.rendering, v.again = true, false
	width := max(m.width, 20)
	v.width = width
	var ed *app.EditorState
	if v.c.Slot == app.SlotEditor {
		ed = &app.EditorState{Text: m.editor.Value(), Cursor: editorCursor(m.editor.Value(), m.editor.Line(), m.editor.LineInfo().CharOffset)}
	}
	ctx := m.ctx
	m.ext.cmds = append(m.ext.cmds, func() tea.Msg {
		lines, err := v.c.Render(ctx, width, ed)
		return compRenderedMsg{v: v, lines: lines, err: err}
	})
}

// editorCursor is the rune offset of row, col in text.
func editorCursor(text string, row, col int) int {
	off := 0
	for i, l := range strings.Split(text, "\n") {
		if i == row {
			return off + min(col, utf8.RuneCountInString(l))
		}
		off += utf8.RuneCountInString(l) + 1
	}
	return off
}

// componentRendered takes a render's lines; a failed render closes the
// component (the log has why).
func (m *model) componentRendered(msg compRenderedMsg) {
	v := msg.v
	v.rendering = false
	if m.ext.view(v.c) == nil {
		return
	}
	if msg.err != nil {
		m.closeComponent(v.c, app.DisposeClosed, cleanErr(msg.err))
		return
	}
	v.lines = msg.lines
	if v.again || v.width != max(m.width, 20) {
		m.renderComponent(v)
	}
}

func cleanErr(err error) string {
	s := err.Error()
	if errors.Is(err, context.Canceled) {
		s = "cancelled"
	}
	return cut(oneLine(clean(s)), 300)
}

// componentKey queues a key for v; keys go one at a time, in order.
func (m *model) componentKey(v *compView, k tea.KeyMsg) {
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste {
		// One key per typed character (typing fast may bring several).
		for _, r := range k.Runes {
			v.keys = append(v.keys, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt})
		}
		m.nextComponentKey(v)
		return
	}
	v.keys = append(v.keys, k)
	m.nextComponentKey(v)
}

func (m *model) nextComponentKey(v *compView) {
	if v.inputing || len(v.keys) == 0 {
		return
	}
	k := v.keys[0]
	v.keys = v.keys[1:]
	key, text, ok := keyName(k)
	if !ok {
		m.nextComponentKey(v)
		return
	}
	v.inputing = true
	ctx := m.ctx
	m.ext.cmds = append(m.ext.cmds, func() tea.Msg {
		a, err := v.c.Input(ctx, key, text)
		return compInputMsg{v: v, k: k, a: a, err: err}
	})
}

// componentInput takes a component's answer to a key: an editor
// component's unconsumed key goes to pi's editor.
func (m *model) componentInput(msg compInputMsg) tea.Cmd {
	v := msg.v
	v.inputing = false
	if m.ext.view(v.c) == nil {
		return nil
	}
	var cmd tea.Cmd
	switch {
	case msg.err != nil || msg.a.Close:
		why := ""
		if msg.err != nil {
			why = cleanErr(msg.err)
		}
		m.closeComponent(v.c, app.DisposeClosed, why)
		if v.c.Slot == app.SlotEditor && !msg.a.Consumed {
			cmd = m.onEditorKey(msg.k)
		}
		return cmd
	case v.c.Slot == app.SlotEditor && !msg.a.Consumed:
		before := m.editor.Value()
		cmd = m.onEditorKey(msg.k)
		if m.editor.Value() != before {
			m.renderComponent(v)
		}
	}
	if msg.a.Rerender {
		m.renderComponent(v)
	}
	m.nextComponentKey(v)
	return cmd
}

// onExtKey handles a key while an overlay is open (it has every key;
// Ctrl+C closes it) or an editor component is (it sees each key first).
// ok is false when neither is open.
func (m *model) onExtKey(k tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	if n := len(m.ext.overlays); n > 0 {
		v := m.ext.overlays[n-1]
		if k.String() == "ctrl+c" {
			m.closeComponent(v.c, app.DisposeCancelled, "")
			return nil, true
		}
		m.componentKey(v, k)
		return nil, true
	}
	if v := m.ext.editor; v != nil && k.String() != "ctrl+c" && k.String() != "ctrl+d" {
		m.componentKey(v, k)
		return nil, true
	}
	return nil, false
}

// piKeys are the keys pi binds at the editor (docs/interactive.md): an
// extension's shortcut on one of them is not bound.
var piKeys = map[string]string{
	"enter": "send", "alt+enter": "new line", "ctrl+j": "new line", "escape": "cancel the turn",
	"ctrl+c": "cancel, clear, exit", "ctrl+d": "exit", "tab": "complete", "shift+tab": "thinking level",
	"ctrl+t": "show thinking", "ctrl+p": "next model", "up": "history", "down": "history",
	"left": "move", "right": "move", "home": "move", "end": "move", "ctrl+a": "move", "ctrl+e": "move",
	"alt+left": "move", "alt+right": "move", "ctrl+w": "delete a word", "ctrl+k": "delete to the end",
	"ctrl+u": "delete to the start", "backspace": "delete", "delete": "delete", "ctrl+n": "menu",
}

// bindShortcuts binds the extensions' shortcuts, warning about the ones
// not bound.
func (m *model) bindShortcuts() {
	bound, warnings := m.rt.ExtensionShortcuts(piKeys)
	m.ext.shortcuts = map[string]string{}
	for _, s := range bound {
		m.ext.shortcuts[s.Key] = s.Extension
	}
	for _, w := range warnings {
		m.print(m.noticeLine(w, app.NotifyWarning))
	}
}

// shortcut runs an extension's shortcut for k; ok is false when k is none.
func (m *model) shortcut(k tea.KeyMsg) (tea.Cmd, bool) {
	if len(m.ext.shortcuts) == 0 {
		return nil, false
	}
	key, _, ok := keyName(k)
	if !ok {
		return nil, false
	}
	ext, ok := m.ext.shortcuts[key]
	if !ok {
		return nil, false
	}
	ctx, conv := m.ctx, m.conv
	return func() tea.Msg {
		exit, err := conv.ExecuteShortcut(ctx, ext, key)
		return shortcutDoneMsg{key: key, ext: ext, err: err, exit: exit}
	}, true
}

// keyName is k in the extension key grammar (docs/abi.md): modifiers
// ctrl+, alt+, shift+ in that order, then a character or a key name; a
// paste is "paste" with its text. ok is false for a key the grammar has
// no name for.
func keyName(k tea.KeyMsg) (key, text string, ok bool) {
	if k.Paste {
		return "paste", string(k.Runes), true
	}
	var base string
	var ctrl, shift bool
	switch k.Type {
	case tea.KeyRunes:
		if len(k.Runes) != 1 {
			return "", "", false
		}
		base = string(k.Runes)
	case tea.KeySpace:
		base = "space"
	default:
		parts := strings.Split(tea.Key{Type: k.Type}.String(), "+")
		base = parts[len(parts)-1]
		for _, p := range parts[:len(parts)-1] {
			switch p {
			case "ctrl":
				ctrl = true
			case "shift":
				shift = true
			}
		}
		switch base {
		case "esc":
			base = "escape"
		case "pgup":
			base = "pageup"
		case "pgdown":
			base = "pagedown"
		case " ":
			base = "space"
		}
	}
	var b strings.Builder
	if ctrl {
		b.WriteString("ctrl+")
	}
	if k.Alt {
		b.WriteString("alt+")
	}
	if shift {
		b.WriteString("shift+")
	}
	b.WriteString(base)
	key = b.String()
	if !app.ValidKey(key) {
		return "", "", false
	}
	return key, "", true
}

// spanStyle is the TUI's style for a span's style names.
func (m *model) spanStyle(names string) lipgloss.Style {
	st := m.lr.NewStyle()
	for _, n := range strings.Fields(names) {
		switch n {
		case "accent":
			st = st.Inherit(m.st.accent)
		case "muted", "dim":
			st = st.Inherit(m.st.dim)
		case "success":
			st = st.Inherit(m.st.ok)
		case "warning":
			st = st.Inherit(m.st.warn)
		case "error":
			st = st.Inherit(m.st.fail)
		case "border":
			st = st.Inherit(m.st.hunk)
		case "selected":
			st = st.Reverse(true)
		case "bold":
			st = st.Bold(true)
		case "italic":
			st = st.Italic(true)
		case "underline":
			st = st.Underline(true)
		case "inverse":
			st = st.Reverse(true)
		}
	}
	return st
}

// extLine draws a guest's line: each span's text with every control
// character removed, in its style, cut to width.
func (m *model) extLine(l app.Line, width int) string {
	var b strings.Builder
	for _, s := range l {
		t := termtext.Flat(s.Text)
		if t == "" {
			continue
		}
		if s.Style == "" {
			b.WriteString(t)
		} else {
			b.WriteString(m.spanStyle(s.Style).Render(t))
		}
	}
	return ansi.Truncate(b.String(), max(width, 10), "…")
}

// extLines draws lines, at most limit (0: all).
func (m *model) extLines(lines []app.Line, limit int) string {
	if limit > 0 && len(lines) > limit {
		lines = lines[:limit]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(m.extLine(l, m.width))
		b.WriteString("\n")
	}
	return b.String()
}

// extWidgets draws the widgets above (below false) or below the editor.
func (m *model) extWidgets(below bool) string {
	var b strings.Builder
	for _, k := range m.ext.widgetKeys {
		w := m.ext.widgets[k]
		if w.below != below {
			continue
		}
		lines := w.lines
		if w.comp != nil {
			lines = w.comp.lines
		}
		b.WriteString(m.extLines(lines, maxWidgetLines))
	}
	return b.String()
}

// extOverlay draws the focused overlay: its lines (at most maxHeight,
// default half the screen) in a border.
func (m *model) extOverlay() string {
	n := len(m.ext.overlays)
	if n == 0 {
		return ""
	}
	v := m.ext.overlays[n-1]
	limit := v.c.MaxHeight
	if limit <= 0 {
		limit = max(m.height/2, 3)
	}
	lines := v.lines
	if len(lines) > limit {
		lines = lines[:limit]
	}
	var b strings.Builder
	rule := m.st.hunk.Render(strings.Repeat("─", max(m.width-1, 10)))
	b.WriteString(rule + "\n")
	b.WriteString(m.extLines(lines, 0))
	b.WriteString(m.st.dim.Render(fmt.Sprintf("[%s] Ctrl+C closes", v.c.Extension)) + "\n")
	return b.String()
}

// extStatusLine is the extensions' statuses, one line, after pi's own.
func (m *model) extStatusLine() string {
	if len(m.ext.statusKeys) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m.ext.statusKeys))
	for _, k := range m.ext.statusKeys {
		parts = append(parts, m.extLine(m.ext.statuses[k], maxStatusLine))
	}
	return ansi.Truncate(strings.Join(parts, m.st.status.Render(" · ")), max(m.width-1, 10), "…")
}

// workingState is the status line's "working…" or the extension's
// working message.
func (m *model) workingState(state string) string {
	if m.ext.working == nil || (m.busy != "turn" && m.busy != "command") {
		return state
	}
	return termtext.Flat(*m.ext.working) + " (Esc cancels)"
}

// shutdownComponents disposes of every component when the TUI ends.
func (m *model) shutdownComponents() {
	for _, v := range m.ext.all() {
		v.c.Dispose(app.DisposeShutdown)
	}
}

// toolRenderedMsg is an extension's drawing of a finished call of one of
// its tools: printed under pi's first line, or pi's own block when the
// guest drew nothing. (While the call runs the extension's instance runs
// it, so pi draws the running call itself.)
type toolRenderedMsg struct {
	lines    []app.Line
	head     string
	fallback string
}

// renderToolEnd draws a finished call of a tool an extension draws: pi's
// first line (mark, tool name: a guest cannot pass its output off as
// another tool's), then the guest's lines. ok is false for a tool pi draws.
func (m *model) renderToolEnd(id, name string, args json.RawMessage, summary string, res *tool.Result, failed bool, took time.Duration) bool {
	if !m.rt.HasToolRenderer(name) {
		return false
	}
	head := m.st.toolBlock(name, summary, nil, failed, took)
	fallback := m.st.toolBlock(name, summary, res, failed, took)
	ctx, rt, width := m.ctx, m.rt, max(m.width-2, 10)
	m.ext.cmds = append(m.ext.cmds, func() tea.Msg {
		lines := rt.RenderToolCall(ctx, name, id, args, res, false, false, width)
		return toolRenderedMsg{lines: lines, head: head, fallback: fallback}
	})
	return true
}

// toolRendered takes an extension's drawing of a tool call.
func (m *model) toolRendered(msg toolRenderedMsg) {
	if msg.lines == nil {
		m.print(msg.fallback)
		return
	}
	var b strings.Builder
	b.WriteString(msg.head)
	for _, l := range msg.lines {
		b.WriteString("\n  " + m.extLine(l, m.width-2))
	}
	m.print(b.String())
}

// showCustom shows an extension's message (agent.sendMessage with
// display: true): "[customType]", then the lines of the extension's
// message renderer when it declared one, else the content's text. The
// renderer runs off the loop (a guest may hang); what it sends is cleaned
// as every guest line is.
func (m *model) showCustom(cm *conversation.CustomMessage, text string) {
	head := m.st.accent.Render("[" + cut(oneLine(clean(cm.CustomType)), 64) + "]")
	var b strings.Builder
	b.WriteString(head)
	for _, l := range strings.Split(strings.TrimRight(clean(text), "\n"), "\n") {
		b.WriteString("\n  " + l)
	}
	fallback := b.String()
	if !m.rt.HasMessageRenderer(cm.CustomType) {
		m.print(fallback)
		return
	}
	ctx, rt, width := m.ctx, m.rt, max(m.width-2, 10)
	typ, content, details := cm.CustomType, cm.Content, cm.Details
	m.ext.cmds = append(m.ext.cmds, func() tea.Msg {
		lines := rt.RenderCustomMessage(ctx, typ, content, details, false, width)
		return toolRenderedMsg{lines: lines, head: head, fallback: fallback}
	})
}

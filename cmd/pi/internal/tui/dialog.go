package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/tool"
)

// The TUI is the app.UI of the runtime while it runs: questions (a call's
// approval, app.UI's Confirm, Select and Input) wait in one queue and are
// shown one at a time in place of the editor; notices and the runtime's
// log lines are printed in the transcript.
//
// Everything that other goroutines hand the loop goes through the UI's
// inbox, which never blocks: the runtime may log, notify or even ask from
// the loop's own goroutine (a /new that starts a session runs the
// extensions' session_start handlers there), where a blocking send to the
// program would wait for itself forever. The loop takes the inbox before
// each message it handles, so what was posted before a message was sent
// is shown before it.

var _ app.UI = (*UI)(nil)

// Limits of what the inbox and a dialog hold, against a flood.
const (
	// maxInboxLogs is how many log lines and notices may wait for the
	// loop; more are dropped and counted.
	maxInboxLogs = 1000
	// maxLogLine is the longest log line shown (bytes); the rest is cut.
	maxLogLine = 2000
	// maxDialogLines is how many lines of a question's message are shown.
	maxDialogLines = 15
	// selectRows is how many options of a list are shown at once.
	selectRows = 10
)

// dialogKind is what a dialog asks.
type dialogKind int

const (
	dialogApproval dialogKind = iota // a call's approval: y, n, a
	dialogConfirm                    // yes or no
	dialogSelect                     // one of a list
	dialogInput                      // a line of text
	dialogEditor                     // text of several lines (an extension's ui.editor)
)

// dialog is a question waiting for the person.
type dialog struct {
	id      uint64
	kind    dialogKind
	req     tool.ApprovalRequest // dialogApproval
	title   string
	message string   // dialogConfirm
	options []string // dialogSelect
	// placeholder is the hint of dialogInput.
	placeholder string
	reply       chan dialogAnswer // buffered: the loop never waits on it

	// State while shown: the list's filter and cursor (an index into
	// the filtered options), the input line.
	filter    string
	filtering bool
	pos       int
	input     *textinput.Model
	box       *textarea.Model // dialogEditor
}

// dialogAnswer is the person's answer; ok false is a dismissal.
type dialogAnswer struct {
	approval app.ApprovalAnswer
	ok       bool
	value    string
}

// inboxItem is one thing posted to the loop.
type inboxItem struct {
	dialog *dialog // a question to queue
	gone   uint64  // the id of a question whose asker stopped waiting
	reason string  // why it stopped
	notice string  // a notice (with level) or a log line (level "")
	level  app.NotifyLevel
	log    bool
}

// wakeMsg tells the loop that the inbox holds something.
type wakeMsg struct{}

// post adds it to the inbox; false when the TUI is not running.
func (u *UI) post(it inboxItem) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.send == nil {
		return false
	}
	u.postLocked(it)
	return true
}

// postLocked adds it to the inbox (bounded for notices and log lines) and
// wakes the loop. u.mu is held.
func (u *UI) postLocked(it inboxItem) {
	if it.dialog == nil && it.gone == 0 {
		if u.inboxLogs >= maxInboxLogs {
			u.dropped++
			return
		}
		u.inboxLogs++
	}
	u.inbox = append(u.inbox, it)
	if u.wake || u.send == nil {
		return
	}
	u.wake = true
	// A goroutine, so that posting never waits for the loop; Send
	// returns at once after the program ended.
	go u.send(wakeMsg{})
}

// take empties the inbox for the loop; dropped counts the notices and log
// lines that did not fit since the last take.
func (u *UI) take() (items []inboxItem, dropped int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	items, dropped = u.inbox, u.dropped
	u.inbox, u.dropped, u.inboxLogs, u.wake = nil, 0, 0, false
	return items, dropped
}

// ask queues d and waits for the person's answer. answered is false when
// the TUI is not running, ctx ended first or the TUI ended: the asker
// then takes the default (no, dismissed, declined).
func (u *UI) ask(ctx context.Context, d *dialog) (a dialogAnswer, answered bool) {
	if ctx.Err() != nil {
		return dialogAnswer{}, false
	}
	d.reply = make(chan dialogAnswer, 1)
	u.mu.Lock()
	if u.send == nil {
		u.mu.Unlock()
		return dialogAnswer{}, false
	}
	u.nextID++
	d.id = u.nextID
	done := u.done
	u.postLocked(inboxItem{dialog: d})
	u.mu.Unlock()
	select {
	case a := <-d.reply:
		return a, true
	case <-ctx.Done():
		select {
		case a := <-d.reply: // answered at the same moment: keep it
			return a, true
		default:
		}
		why := "no answer: cancelled"
		if ctx.Err() == context.DeadlineExceeded {
			why = "no answer in time"
		}
		u.post(inboxItem{gone: d.id, reason: why})
		return dialogAnswer{}, false
	case <-done:
		return dialogAnswer{}, false
	}
}

// Confirm asks a yes/no question in the TUI: y says yes; n, Enter or Esc
// say no. Before Run, after the TUI ended or when ctx ends first, the
// answer is no.
func (u *UI) Confirm(ctx context.Context, title, message string) (bool, error) {
	a, _ := u.ask(ctx, &dialog{kind: dialogConfirm, title: title, message: message})
	return a.ok, nil
}

// Select asks the person to pick one of options: ↑/↓ (or k/j) move, /
// filters, Enter picks, Esc dismisses. Before Run, after the TUI ended or
// when ctx ends first, ok is false.
func (u *UI) Select(ctx context.Context, title string, options []string) (string, bool, error) {
	a, _ := u.ask(ctx, &dialog{kind: dialogSelect, title: title, options: options})
	return a.value, a.ok, nil
}

// Input asks for a line of text: Enter submits it, Esc dismisses. Before
// Run, after the TUI ended or when ctx ends first, ok is false.
func (u *UI) Input(ctx context.Context, title, placeholder string) (string, bool, error) {
	a, _ := u.ask(ctx, &dialog{kind: dialogInput, title: title, placeholder: placeholder})
	return a.value, a.ok, nil
}

// Notify prints the message in the transcript (a warning or an error
// styled as such) and returns at once. Before Run it waits in the inbox
// and is printed when the TUI starts; after the TUI ended it goes to the
// runtime's log, as without a UI.
func (u *UI) Notify(message string, level app.NotifyLevel) {
	u.mu.Lock()
	if !u.ended {
		u.postLocked(inboxItem{notice: message, level: level})
		u.mu.Unlock()
		return
	}
	conv := u.conv
	u.mu.Unlock()
	if conv == nil {
		return
	}
	rt := conv.Runtime()
	switch level {
	case app.NotifyError:
		rt.Logger().Error(message)
	case app.NotifyWarning:
		rt.Logger().Warn(message)
	default:
		rt.Logger().Info(message)
	}
}

// LogWriter is where the runtime's log lines go (app.Options.LogOutput):
// while the TUI runs, each line is printed dim in the transcript (never
// raw on the terminal under the TUI's screen); before Run and after the
// TUI ended it writes to fallback (stderr). It never blocks on the TUI.
func (u *UI) LogWriter(fallback io.Writer) io.Writer {
	u.mu.Lock()
	u.logFallback = fallback
	u.mu.Unlock()
	return logWriter{u}
}

// Running says whether the TUI runs now (what LogWriter writes goes to
// the transcript).
func (u *UI) Running() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.send != nil
}

type logWriter struct{ u *UI }

func (w logWriter) Write(p []byte) (int, error) {
	u := w.u
	u.mu.Lock()
	if u.send == nil {
		fb := u.logFallback
		u.mu.Unlock()
		if fb == nil {
			return len(p), nil
		}
		return fb.Write(p)
	}
	defer u.mu.Unlock()
	buf := append(u.logPartial, p...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		u.postLocked(inboxItem{notice: logLine(buf[:i]), log: true})
		buf = buf[i+1:]
	}
	if len(buf) > maxLogLine {
		u.postLocked(inboxItem{notice: logLine(buf), log: true})
		buf = nil
	}
	u.logPartial = append([]byte(nil), buf...)
	return len(p), nil
}

// logLine is a log line as shown: without hclog's timestamp, cut at
// maxLogLine bytes.
func logLine(b []byte) string {
	s := strings.TrimRight(string(b), "\r")
	// "2006-01-02T15:04:05.000Z [WARN]  pi: ..." → "[WARN]  pi: ..."
	if ts, rest, ok := strings.Cut(s, " "); ok && len(ts) >= 10 && ts[4] == '-' && ts[7] == '-' && strings.HasPrefix(rest, "[") {
		s = rest
	}
	return cut(s, maxLogLine)
}

// ended is called when Run returns: what is still in the inbox goes where
// it goes without a TUI, and waiting askers return the default.
func (u *UI) end() {
	u.mu.Lock()
	u.send, u.ended = nil, true
	close(u.done)
	items := u.inbox
	u.inbox = nil
	fb, rest := u.logFallback, u.logPartial
	u.logPartial = nil
	u.mu.Unlock()
	for _, it := range items {
		switch {
		case it.log && fb != nil:
			fmt.Fprintln(fb, it.notice)
		case it.notice != "" && !it.log:
			u.Notify(it.notice, it.level)
		}
	}
	if len(rest) > 0 && fb != nil {
		fb.Write(rest)
	}
}

// drain shows what the inbox holds: notices and log lines are printed,
// questions queued, questions whose askers left removed.
func (m *model) drain() {
	items, dropped := m.ui.take()
	for _, it := range items {
		switch {
		case it.dialog != nil:
			m.dialogs = append(m.dialogs, it.dialog)
			if len(m.dialogs) == 1 {
				m.openDialog()
			}
		case it.gone != 0:
			m.dropDialog(it.gone, it.reason)
		case it.log:
			m.print(m.st.dim.Render(clean(it.notice)))
		default:
			m.print(m.noticeLine(it.notice, it.level))
		}
	}
	if dropped > 0 {
		m.print(m.st.dim.Render(fmt.Sprintf("(%s or notices not shown: too many at once)", plural.Count(dropped, "log line"))))
	}
}

// noticeLine is a notice as printed: its lines after the first are
// indented, so that a notice cannot pass for a prompt (›) or a tool line.
func (m *model) noticeLine(msg string, level app.NotifyLevel) string {
	msg = termtext.IndentLater(clean(msg))
	switch level {
	case app.NotifyError:
		return m.st.fail.Render("✗ error: " + msg)
	case app.NotifyWarning:
		return m.st.warn.Render("! warning: " + msg)
	}
	return m.st.accent.Render("• ") + msg
}

// openDialog readies the first question to be shown.
func (m *model) openDialog() {
	d := m.dialogs[0]
	if d.kind == dialogInput && d.input == nil {
		ti := textinput.New()
		ti.Prompt = "> "
		ti.Placeholder = clean(oneLine(d.placeholder))
		ti.CharLimit = 4096
		ti.Cursor.SetMode(cursor.CursorStatic)
		plain := m.lr.NewStyle()
		ti.PromptStyle, ti.TextStyle, ti.CompletionStyle, ti.PlaceholderStyle = plain, plain, plain, m.st.dim
		ti.Cursor.Style, ti.Cursor.TextStyle = m.cursorLR.NewStyle(), plain
		ti.Width = max(m.width-8, 10)
		ti.Focus()
		d.input = &ti
	}
	if d.kind == dialogEditor && d.box == nil {
		box := newEditor(m.lr, m.cursorLR)
		box.Placeholder = ""
		box.SetWidth(max(m.width-4, 10))
		box.SetValue(clean(d.placeholder))
		box.SetHeight(min(max(box.LineCount(), 3), max(m.height/3, 3)))
		d.box = &box
	}
}

// answerDialog answers the first question and prints what was asked and
// answered.
func (m *model) answerDialog(a dialogAnswer) {
	d := m.dialogs[0]
	m.dialogs = m.dialogs[1:]
	d.reply <- a
	m.print(m.st.dim.Render(m.dialogTitle(d) + " → " + answerText(d, a)))
	if len(m.dialogs) > 0 {
		m.openDialog()
	}
}

// dropDialog removes the question id (its asker stopped waiting).
func (m *model) dropDialog(id uint64, why string) {
	for i, d := range m.dialogs {
		if d.id == id {
			m.dialogs = append(m.dialogs[:i], m.dialogs[i+1:]...)
			m.print(m.st.dim.Render(m.dialogTitle(d) + " → (" + why + ")"))
			if i == 0 && len(m.dialogs) > 0 {
				m.openDialog()
			}
			return
		}
	}
}

// dialogTitle is the question in one line, for the transcript.
func (m *model) dialogTitle(d *dialog) string {
	if d.kind == dialogApproval {
		return "? " + clean(d.req.Call.Name) + " " + argSummary(d.req.Call.Name, d.req.Call.Input, 120)
	}
	return "? " + cut(oneLine(clean(d.title)), 120)
}

func answerText(d *dialog, a dialogAnswer) string {
	switch d.kind {
	case dialogApproval:
		return map[app.ApprovalAnswer]string{app.ApproveOnce: "allowed", app.ApproveAlways: "allowed for this session", app.Decline: "declined"}[a.approval]
	case dialogConfirm:
		if a.ok {
			return "yes"
		}
		return "no"
	}
	if !a.ok {
		return "dismissed"
	}
	return fmt.Sprintf("%q", cut(clean(a.value), 200))
}

// dialogView is the first question, in place of the editor.
func (m *model) dialogView() string {
	d := m.dialogs[0]
	var b strings.Builder
	if d.kind == dialogApproval {
		fmt.Fprintf(&b, "%s %s %s\n", m.st.warn.Render("?"), m.st.tool.Render(clean(d.req.Call.Name)), argSummary(d.req.Call.Name, d.req.Call.Input, 300))
		for _, q := range d.req.Questions {
			fmt.Fprintf(&b, "  %s\n", clean(q))
		}
		b.WriteString("  allow? [y]es / [n]o / [a]lways for this session\n")
	} else {
		fmt.Fprintf(&b, "%s %s\n", m.st.warn.Render("?"), m.st.tool.Render(cut(oneLine(clean(d.title)), 300)))
		if d.message != "" {
			ls := lines(clean(d.message))
			if len(ls) > maxDialogLines {
				ls = append(ls[:maxDialogLines], "…")
			}
			for _, l := range ls {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
		switch d.kind {
		case dialogConfirm:
			b.WriteString("  [y]es / [n]o (Enter or Esc: no)\n")
		case dialogSelect:
			m.selectView(&b, d)
		case dialogInput:
			b.WriteString("  " + d.input.View() + "\n")
			b.WriteString(m.st.dim.Render("  Enter submits · Esc dismisses") + "\n")
		case dialogEditor:
			b.WriteString(d.box.View() + "\n")
			b.WriteString(m.st.dim.Render("  Enter submits · Alt+Enter new line · Esc cancels") + "\n")
		}
	}
	if n := len(m.dialogs) - 1; n > 0 {
		b.WriteString(m.st.dim.Render(fmt.Sprintf("  (%d more question%s waiting)", n, map[bool]string{true: "s"}[n > 1])) + "\n")
	}
	// What untrusted text says is redacted here too: the view is drawn
	// without print's redaction.
	return m.rt.Redactor().String(b.String())
}

// selectView lists the options around the cursor.
func (m *model) selectView(b *strings.Builder, d *dialog) {
	opts := d.filtered()
	start := max(0, min(d.pos-selectRows/2, len(opts)-selectRows))
	end := min(len(opts), start+selectRows)
	if start > 0 {
		b.WriteString(m.st.dim.Render(fmt.Sprintf("    … %d above", start)) + "\n")
	}
	for i := start; i < end; i++ {
		o := cut(oneLine(clean(d.options[opts[i]])), 200)
		if i == d.pos {
			b.WriteString(m.st.accent.Render("  ▸ "+o) + "\n")
		} else {
			b.WriteString("    " + o + "\n")
		}
	}
	if end < len(opts) {
		b.WriteString(m.st.dim.Render(fmt.Sprintf("    … %d below", len(opts)-end)) + "\n")
	}
	if len(opts) == 0 {
		b.WriteString(m.st.dim.Render("    (no option matches)") + "\n")
	}
	hint := "  ↑↓ move · Enter picks · / filters · Esc dismisses"
	if d.filtering {
		hint = "  filter: " + d.filter + "▏ (↑↓ move · Enter picks · Esc clears)"
	}
	b.WriteString(m.st.dim.Render(hint) + "\n")
}

// filtered are the indexes of the options that contain the filter (case
// folded).
func (d *dialog) filtered() []int {
	f := strings.ToLower(d.filter)
	out := make([]int, 0, len(d.options))
	for i, o := range d.options {
		if f == "" || strings.Contains(strings.ToLower(o), f) {
			out = append(out, i)
		}
	}
	return out
}

// onDialogKey answers or moves in the first question. Ctrl-C declines or
// dismisses it and cancels the running work.
func (m *model) onDialogKey(k tea.KeyMsg) tea.Cmd {
	d := m.dialogs[0]
	if k.String() == "ctrl+c" {
		m.stopWork()
		m.notice = "cancelling…"
		m.answerDialog(dialogAnswer{approval: app.Decline})
		return nil
	}
	switch d.kind {
	case dialogApproval:
		switch strings.ToLower(k.String()) {
		case "y":
			m.answerDialog(dialogAnswer{approval: app.ApproveOnce, ok: true})
		case "a":
			m.answerDialog(dialogAnswer{approval: app.ApproveAlways, ok: true})
		case "n", "esc", "enter":
			m.answerDialog(dialogAnswer{approval: app.Decline})
		}
	case dialogConfirm:
		switch strings.ToLower(k.String()) {
		case "y":
			m.answerDialog(dialogAnswer{ok: true})
		case "n", "esc", "enter":
			m.answerDialog(dialogAnswer{})
		}
	case dialogSelect:
		m.onSelectKey(d, k)
	case dialogEditor:
		switch k.String() {
		case "esc":
			m.answerDialog(dialogAnswer{})
			return nil
		case "enter":
			if !k.Paste {
				m.answerDialog(dialogAnswer{ok: true, value: d.box.Value()})
				return nil
			}
		}
		box, cmd := d.box.Update(k)
		box.SetHeight(min(max(box.LineCount(), 3), max(m.height/3, 3)))
		d.box = &box
		return cmd
	case dialogInput:
		switch k.String() {
		case "esc":
			m.answerDialog(dialogAnswer{})
			return nil
		case "enter":
			if !k.Paste {
				m.answerDialog(dialogAnswer{ok: true, value: d.input.Value()})
				return nil
			}
		}
		if k.Paste {
			// One line: a pasted line break is a space.
			k.Runes = []rune(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(string(k.Runes)))
		}
		in, cmd := d.input.Update(k)
		d.input = &in
		return cmd
	}
	return nil
}

func (m *model) onSelectKey(d *dialog, k tea.KeyMsg) {
	opts := d.filtered()
	switch s := k.String(); {
	case s == "up" || s == "ctrl+p" || (s == "k" && !d.filtering):
		d.pos = max(0, d.pos-1)
	case s == "down" || s == "ctrl+n" || (s == "j" && !d.filtering):
		d.pos = max(0, min(len(opts)-1, d.pos+1))
	case s == "enter":
		if len(opts) > 0 {
			m.answerDialog(dialogAnswer{ok: true, value: d.options[opts[d.pos]]})
		}
	case s == "esc" && d.filtering:
		d.filtering, d.filter, d.pos = false, "", 0
	case s == "esc" || (s == "q" && !d.filtering):
		m.answerDialog(dialogAnswer{})
	case s == "/" && !d.filtering:
		d.filtering = true
	case s == "backspace" && d.filtering:
		if r := []rune(d.filter); len(r) > 0 {
			d.filter, d.pos = string(r[:len(r)-1]), 0
		}
	case k.Type == tea.KeyRunes && d.filtering && !k.Paste:
		d.filter, d.pos = d.filter+clean(string(k.Runes)), 0
	case k.Type == tea.KeySpace && d.filtering:
		d.filter, d.pos = d.filter+" ", 0
	}
}

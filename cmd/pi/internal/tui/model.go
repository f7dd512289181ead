package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
)

// Messages the model receives from its work goroutines.
type (
	eventMsg struct{ ev agent.Event }
	// runDoneMsg ends a turn (a line the conversation took: a prompt or a
	// command).
	runDoneMsg struct {
		out conversation.Submitted
		err error
		// cancelled says the turn was cancelled (Esc, Ctrl-C).
		cancelled bool
	}
	bashUpdateMsg struct{ partial tool.Result }
	bashDoneMsg   struct {
		run *conversation.BashRun
		err error
	}
	// steerDoneMsg: a line typed during a run passed the input hooks
	// and was queued (or not, with the hook's message shown).
	steerDoneMsg struct {
		text   string
		queued bool
		err    error
	}
	showMsg struct{ text string }
	// liveRenderedMsg is a live render of the streaming answer.
	liveRenderedMsg struct {
		out     string
		skipped bool
		gen     int
		cost    time.Duration
	}
	printedMsg struct{}
	submitMsg  struct{ line string }
	renderTick struct{}
)

// runningTool is a tool call in progress.
type runningTool struct {
	id, name, args string
	tail           []string
	start          time.Time
	// input is the call's arguments (for tool.render when it ends).
	input json.RawMessage
}

// model is the bubbletea model. It is used through a pointer: Update
// changes it in place.
type model struct {
	ctx context.Context
	ui  *UI
	cfg Config
	// conv is the conversation; rt its runtime (the working directory,
	// the redaction); unsubscribe ends the events' delivery.
	conv        *conversation.Conversation
	rt          *app.Runtime
	unsubscribe func()
	st          styles
	md          *markdown
	// lr renders every style of the TUI (colours); cursorLR the editors'
	// cursors (reverse video, which NO_COLOR keeps).
	lr, cursorLR *lipgloss.Renderer

	width, height int
	editor        textarea.Model
	hist          *History
	histPos       int // index into hist entries; len means "not browsing"
	histDraft     string

	// busy says what runs: "" (idle), "turn" (a prompt or a command),
	// "bash".
	busy   string
	cancel context.CancelFunc
	// agentRuns counts the runs and compactions going on, by their
	// agent_start/agent_end and compaction_start/compaction_end events:
	// the TUI's own and those an extension started (ABI 1.2
	// agent.sendUserMessage, sendMessage with triggerTurn,
	// session.compact). extRun says the work shown is an extension's
	// run: busy "turn" with no work goroutine of the TUI's; it ends when
	// agentRuns is back at 0. noEcho counts prompts of the TUI's that
	// steered such a run (conversation.Submitted.Steered): printed when
	// typed, not again when delivered.
	agentRuns int
	extRun    bool
	noEcho    int
	// live is the assistant text streaming now; rendered is its markdown,
	// renderedAt when it was made, dirty that text changed since.
	live strings.Builder
	// thinking is the model's reasoning streaming now (a thinking block);
	// showThinking shows thinking whole instead of one dim line (Ctrl+T).
	thinking     strings.Builder
	showThinking bool
	rendered     string
	renderedAt   time.Time
	renderCost   time.Duration
	dirty        bool
	// rendering: a live render runs (liveMD, on a work goroutine);
	// liveGen counts answers, so a render of an ended one is dropped.
	rendering bool
	liveGen   int
	liveMD    *markdown
	ticking   bool
	tools     []*runningTool
	bashTail  []string
	bashStart time.Time // when the !command started
	// steered are queued lines the agent took (shown until delivered);
	// later are lines to run when the work ends.
	steered []string
	later   []string
	// sent is the line of the running turn as typed (it goes back to the
	// editor when the turn fails); failShown says an error of the running
	// work was printed from its events (the work's own error, the same
	// failure, is then not printed again).
	sent      string
	failShown bool
	// dialogs are the questions waiting for the person, the first one
	// shown (dialog.go).
	dialogs []*dialog
	pick    *picker
	tpick   *treePicker
	// menu is the dropdown of slash commands (cmdmenu.go); menuOff says
	// Esc closed it for the command name being typed.
	menu    *cmdMenu
	menuOff bool
	compl   []string
	notice  string
	ctrlC   bool
	// foot is what the footer shows (refreshFooter).
	foot Footer

	// ext is what extensions show (extui.go).
	ext extState

	outbox   []string
	printing bool
	quitting bool
	exitCode int
}

func newModel(ctx context.Context, u *UI, cfg Config) (*model, error) {
	if cfg.Conversation == nil {
		return nil, fmt.Errorf("tui: a Conversation is required")
	}
	hist, err := LoadHistory(cfg.HistoryFile)
	m := &model{ctx: ctx, ui: u, cfg: cfg, conv: cfg.Conversation, rt: cfg.Conversation.Runtime(), hist: hist, width: 80, height: 24}
	m.lr, m.cursorLR = renderers(cfg)
	m.st = newStylesWith(m.lr)
	if err != nil {
		m.print(m.st.warn.Render(fmt.Sprintf("pi: %v (history not loaded)", err)))
	}
	m.histPos = len(hist.Entries())
	m.editor = newEditor(m.lr, m.cursorLR)
	m.md, m.liveMD = newMarkdownWith(m.width, m.lr), newMarkdownWith(m.width, m.lr)
	m.unsubscribe = m.conv.Subscribe(m.onEvent)
	m.refreshFooter()
	return m, nil
}

// renderers are the lipgloss renderers of the TUI: its colours as the
// output's terminal has them (Config.profile in tests), none when NO_COLOR
// is set (to anything but ""); the cursor's is the same but under NO_COLOR
// still shows reverse video (no colour), so that the cursor stays
// visible.
func renderers(cfg Config) (styles, cursor *lipgloss.Renderer) {
	var out io.Writer = os.Stdout
	if cfg.Output != nil {
		out = cfg.Output
	}
	styles = lipgloss.NewRenderer(out)
	if cfg.profile != nil {
		styles.SetColorProfile(*cfg.profile)
	}
	if os.Getenv("NO_COLOR") == "" {
		return styles, styles
	}
	styles.SetColorProfile(termenv.Ascii)
	cursor = lipgloss.NewRenderer(out)
	cursor.SetColorProfile(termenv.ANSI)
	return styles, cursor
}

// newEditor is the prompt editor: Enter is not a new line here (it
// sends); Alt+Enter and Ctrl+J are. Its styles come from lr, its cursor's
// from cursorLR.
func newEditor(lr, cursorLR *lipgloss.Renderer) textarea.Model {
	ta := textarea.New()
	plain := lr.NewStyle()
	ta.FocusedStyle = textarea.Style{Base: plain, CursorLine: plain, CursorLineNumber: plain, EndOfBuffer: plain,
		LineNumber: plain, Placeholder: newStylesWith(lr).dim, Prompt: plain, Text: plain}
	ta.BlurredStyle = ta.FocusedStyle
	ta.Cursor.Style = cursorLR.NewStyle()
	ta.Cursor.TextStyle = plain
	ta.Prompt = "> "
	ta.Placeholder = "Type a request; Enter sends, Alt+Enter adds a line, /help lists commands"
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetHeight(1)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	ta.Focus()
	return ta
}

// onEvent runs on the goroutine that emits the event: it hands it to the
// loop. Session and queue events are not shown: they are also sent from
// calls the loop itself makes (ClearQueues), where a send would wait for
// the loop forever. The TUI keeps its own list of what it queued.
//
// A session_start of a reload is sent on as reloadedMsg: a reload runs
// outside the loop (a command's or an extension run's goroutine), and the
// loop binds the new extensions' shortcuts.
func (m *model) onEvent(ev agent.Event) {
	switch ev.Type {
	case agent.EventSessionStart:
		if ev.Reason == "reload" {
			m.sendMsg(reloadedMsg{})
		}
		return
	case agent.EventSessionShutdown, agent.EventQueueUpdate:
		return
	}
	m.ui.mu.Lock()
	send := m.ui.send
	m.ui.mu.Unlock()
	if send != nil {
		send(eventMsg{ev})
	}
}

func (m *model) sendMsg(msg tea.Msg) {
	m.ui.mu.Lock()
	send := m.ui.send
	m.ui.mu.Unlock()
	if send != nil {
		send(msg)
	}
}

// Init prints the greeting and sends the first prompt.
func (m *model) Init() tea.Cmd {
	m.drainExt()
	m.bindShortcuts()
	if m.ext.header == nil {
		m.print(m.st.dim.Render("pi · Enter sends · Alt+Enter new line · /help · Esc cancels · Ctrl-D exits"))
	}
	if m.conv.Resumed() {
		m.replay()
	}
	cmds := []tea.Cmd{textarea.Blink, m.flush(), m.takeExtCmds()}
	if m.cfg.FirstPrompt != "" {
		first := m.cfg.FirstPrompt
		cmds = append(cmds, func() tea.Msg { return submitMsg{first} })
	}
	return tea.Batch(cmds...)
}

// print queues text to be printed above the live area, in order.
func (m *model) print(s string) { m.outbox = append(m.outbox, m.rt.Redactor().String(s)) }

// flush prints the queued text: one print at a time, the next after the
// renderer took the last (printedMsg), so the order holds.
func (m *model) flush() tea.Cmd {
	if m.printing || len(m.outbox) == 0 {
		return nil
	}
	// Lines are wrapped to the width here: the renderer counts a printed
	// line as one row, and a row the terminal wrapped would keep what the
	// live area drew there before.
	text := ansi.Hardwrap(strings.Join(m.outbox, "\n"), max(m.width, 20), true)
	m.outbox = nil
	m.printing = true
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

// Update handles a message and flushes what it printed.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	cmd = tea.Batch(cmd, m.takeExtCmds())
	m.ui.mirrorEditor(m.editor.Value())
	if m.quitting {
		var rest tea.Cmd
		if len(m.outbox) > 0 {
			rest = tea.Println(strings.Join(m.outbox, "\n"))
			m.outbox = nil
		}
		return m, tea.Sequence(rest, tea.Quit)
	}
	return m, tea.Batch(cmd, m.flush())
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	// What was posted before msg was sent is shown before it.
	m.drain()
	m.drainExt()
	switch msg := msg.(type) {
	case wakeMsg:
		return nil
	case compRenderedMsg:
		m.componentRendered(msg)
		return nil
	case compInputMsg:
		return m.componentInput(msg)
	case toolRenderedMsg:
		m.toolRendered(msg)
		return nil
	case reloadedMsg:
		// As the reference resets its extension UI on reload: what the
		// old set showed goes (its instances are gone), the new set's
		// keys are bound.
		m.shutdownComponents()
		m.ext = extState{cmds: m.ext.cmds}
		m.bindShortcuts()
		m.fitEditor()
		return nil
	case shortcutDoneMsg:
		if msg.err != nil {
			m.print(m.noticeLine(fmt.Sprintf("[%s] shortcut %s: %s", msg.ext, msg.key, msg.err), app.NotifyError))
		}
		if msg.exit { // pi.shutdown from the shortcut
			m.quitting = true
		}
		return nil
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.editor.SetWidth(max(msg.Width-1, 10))
		m.fitEditor()
		for _, d := range m.dialogs {
			if d.input != nil {
				d.input.Width = max(msg.Width-8, 10)
			}
		}
		m.md, m.liveMD = newMarkdownWith(msg.Width, m.lr), newMarkdownWith(msg.Width, m.lr)
		m.liveGen++ // a render for the old width is dropped
		m.rendered = ""
		m.dirty = m.live.Len() > 0
		for _, v := range m.ext.all() {
			m.renderComponent(v)
		}
		return m.renderLive()
	case printedMsg:
		m.printing = false
		return nil
	case renderTick:
		m.ticking = false
		return m.renderLive()
	case liveRenderedMsg:
		return m.liveRendered(msg)
	case submitMsg:
		return m.submit(msg.line)
	case eventMsg:
		return m.onAgentEvent(msg.ev)
	case showMsg:
		m.print(clean(msg.text))
		return nil
	case runDoneMsg:
		return m.runDone(msg)
	case bashUpdateMsg:
		m.bashTail = tailOf(msg.partial.Text(), tailLines)
		return nil
	case bashDoneMsg:
		return m.bashDone(msg)
	case steerDoneMsg:
		return m.steerDone(msg)
	case tea.KeyMsg:
		return m.onKey(msg)
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(msg)
	return cmd
}

// onKey handles a key: the question first (an approval, an extension's
// question), then the session picker, then the editor's keys.
func (m *model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.String() != "ctrl+c" {
		m.ctrlC = false
	}
	if len(m.dialogs) > 0 {
		return m.onDialogKey(k)
	}
	if cmd, ok := m.onExtKey(k); ok {
		return cmd
	}
	if m.pick != nil {
		return m.onPickKey(k)
	}
	if m.tpick != nil {
		return m.onTreeKey(k)
	}
	if m.menu != nil {
		if cmd, ok := m.onMenuKey(k); ok {
			return cmd
		}
	}
	if cmd, ok := m.shortcut(k); ok {
		return cmd
	}
	cmd := m.onEditorKey(k)
	m.updateMenu()
	return cmd
}

// onEditorKey handles a key at the editor.
func (m *model) onEditorKey(k tea.KeyMsg) tea.Cmd {
	switch k.String() {
	case "ctrl+c":
		return m.interrupt()
	case "ctrl+d":
		if m.editor.Value() == "" {
			m.stopWork()
			m.quitting = true
			return nil
		}
	case "esc":
		m.compl = nil
		if m.busy != "" && m.cancel != nil {
			m.stopWork()
			m.notice = "cancelling…"
		}
		return nil
	case "enter":
		if k.Paste {
			break
		}
		line := m.editor.Value()
		if strings.TrimSpace(line) == "" {
			return nil
		}
		m.editor.Reset()
		m.editor.SetHeight(1)
		m.compl = nil
		m.notice = ""
		m.histPos = len(m.hist.Entries())
		return m.submit(line)
	case "up":
		if m.editor.Line() == 0 && m.historyMove(-1) {
			return nil
		}
	case "down":
		if m.editor.Line() == m.editor.LineCount()-1 && m.historyMove(1) {
			return nil
		}
	case "tab":
		m.complete()
		return nil
	case "shift+tab":
		// The model's next thinking level, wrapping (the reference's key).
		if l, ok := m.conv.CycleThinkingLevel(); ok {
			m.notice = "thinking " + string(l)
		} else {
			m.notice = "the model has no thinking levels"
		}
		m.refreshFooter()
		return nil
	case "ctrl+t":
		// Thinking whole or as one line, from now on (the reference's key).
		m.showThinking = !m.showThinking
		if m.showThinking {
			m.notice = "thinking shown whole (Ctrl+T: one line)"
		} else {
			m.notice = "thinking shown as one line (Ctrl+T: whole)"
		}
		return nil
	case "ctrl+p":
		// The next model of --models (else of the usable ones).
		if m.busy != "" {
			m.notice = "wait for the turn to end to change the model"
			return nil
		}
		switch res, err := m.conv.CycleModel(); {
		case err != nil:
			m.notice = clean(err.Error())
		case res == nil:
			m.notice = "no other model to switch to (--models A,B lists some)"
		default:
			m.notice = "model " + clean(res.Model.Ref())
		}
		m.refreshFooter()
		return nil
	}
	if k.Paste {
		// A paste keeps its line breaks as new lines of the one prompt.
		text := strings.ReplaceAll(string(k.Runes), "\r\n", "\n")
		k.Runes = []rune(strings.ReplaceAll(text, "\r", "\n"))
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(k)
	m.fitEditor()
	if !k.Paste && k.Type == tea.KeyRunes {
		m.compl = nil
	}
	return cmd
}

// fitEditor grows the editor with its lines, up to a third of the screen.
func (m *model) fitEditor() { fitEditor(&m.editor, max(m.height/3, 3)) }

// fitEditor makes ed as tall as its rows (lines as wrapped), at most
// limit, and scrolls it so that it shows as many rows as fit, the cursor's
// among them: all from the first when they fit, else the last ones or
// those from the cursor's up. The textarea only ever scrolls as far as
// its cursor moves, and keeps its scroll when it grows (a second line
// typed into a one-row editor hid the first); so the cursor is walked to
// the first row, to the last (counting the rows), and back.
func fitEditor(ed *textarea.Model, limit int) {
	row := ed.Line()
	li := ed.LineInfo()
	col := li.StartColumn + li.ColumnOffset
	at := func() [2]int { return [2]int{ed.Line(), ed.LineInfo().RowOffset} }
	reposition := func() { *ed, _ = ed.Update(nil) }
	ed.SetHeight(limit)
	for p := at(); p != [2]int{0, 0}; p = at() {
		ed.CursorUp()
		if at() == p {
			break
		}
	}
	reposition()
	rows := 1
	for {
		p := at()
		ed.CursorDown()
		if at() == p {
			break
		}
		rows++
	}
	ed.SetHeight(min(rows, limit))
	reposition()
	for ed.Line() > row {
		p := at()
		ed.CursorUp()
		if at() == p {
			break
		}
	}
	ed.SetCursor(col)
	reposition()
}

// interrupt is Ctrl-C: cancel what runs; else clear the editor; else, the
// second time at an empty idle prompt, exit.
func (m *model) interrupt() tea.Cmd {
	switch {
	case m.busy != "" && m.cancel != nil:
		m.stopWork()
		m.notice = "cancelling…"
	case m.editor.Value() != "":
		m.editor.Reset()
		m.editor.SetHeight(1)
		m.compl = nil
	case m.ctrlC:
		m.quitting = true
	default:
		m.ctrlC = true
		m.notice = "Press Ctrl-C again to exit (or Ctrl-D)."
	}
	return nil
}

// stopWork cancels the running turn, command or bash call.
func (m *model) stopWork() {
	if m.cancel != nil {
		m.cancel()
	}
}

// historyMove shows the previous (-1) or next (+1) prompt of the history;
// it reports whether it moved.
func (m *model) historyMove(d int) bool {
	entries := m.hist.Entries()
	pos := m.histPos + d
	if pos < 0 || pos > len(entries) || m.histPos > len(entries) {
		return false
	}
	if m.histPos == len(entries) {
		m.histDraft = m.editor.Value()
	}
	m.histPos = pos
	if pos == len(entries) {
		m.editor.SetValue(m.histDraft)
	} else {
		m.editor.SetValue(entries[pos])
	}
	m.fitEditor()
	return true
}

// complete is Tab: complete the @path or /command before the cursor.
func (m *model) complete() {
	value := m.editor.Value()
	// Only the text before the cursor on the last line is completed when
	// the cursor is at the end (the usual case).
	if m.editor.Line() != m.editor.LineCount()-1 {
		return
	}
	li := m.editor.LineInfo()
	lines := strings.Split(value, "\n")
	cur := lines[len(lines)-1]
	col := li.StartColumn + li.ColumnOffset
	if col != len([]rune(cur)) {
		return
	}
	word := cur
	if i := strings.LastIndexAny(cur, " \t"); i >= 0 {
		word = cur[i+1:]
	}
	var typed string
	var cands []string
	switch {
	case strings.HasPrefix(word, "@"):
		typed = word[1:]
		cands = completePath(m.rt.Cwd(), typed)
	case strings.HasPrefix(word, "/") && len(lines) == 1 && word == cur:
		typed = word[1:]
		for _, c := range m.commandNames() {
			if strings.HasPrefix(c, typed) {
				cands = append(cands, c)
			}
		}
	default:
		return
	}
	if len(cands) == 0 {
		m.compl = nil
		m.notice = "no completion for " + word
		return
	}
	p := commonPrefix(cands)
	if len(cands) == 1 && !strings.HasSuffix(p, "/") && strings.HasPrefix(word, "/") {
		p += " "
	} else if len(cands) == 1 && !strings.HasSuffix(p, "/") {
		p += " "
	}
	if len(p) > len(typed) {
		m.editor.InsertString(p[len(typed):])
	}
	if len(cands) > 1 {
		m.compl = cands
	} else {
		m.compl = nil
	}
}

// submit runs a line, or queues it while work runs: plain text goes to
// the agent's steering queue (sent after the current tool batch); a
// command, !cmd or exit runs when the work has ended.
func (m *model) submit(line string) tea.Cmd {
	if err := m.hist.Add(m.rt.Redactor().String(line)); err != nil {
		m.notice = err.Error()
	}
	m.histPos = len(m.hist.Entries())
	trimmed := strings.TrimSpace(line)
	if m.busy != "" {
		if m.busy == "turn" && !isLocal(trimmed) {
			p, err := m.prompt(line)
			if err != nil {
				m.print(m.st.fail.Render("✗ " + clean(err.Error())))
				return nil
			}
			// The input hooks see the line first (they may ask the person,
			// so not on the loop); steerDone shows it queued.
			conv := m.conv
			m.ui.work.Add(1)
			return func() tea.Msg {
				defer m.ui.work.Done()
				show := func(s string) { m.sendMsg(showMsg{s}) }
				sub, err := conv.Steer(m.ctx, conversation.Prompt{Text: p.Text, Images: p.Images}, conversation.SubmitOptions{Show: show})
				return steerDoneMsg{text: p.Text, queued: err == nil && sub.Handled == "", err: err}
			}
		}
		m.later = append(m.later, line)
		return nil
	}
	return m.run(line)
}

// isLocal says a line is run by the TUI (a command, !cmd, exit) rather
// than sent to the model.
func isLocal(s string) bool {
	if s == "exit" || s == "quit" || strings.HasPrefix(s, "!") {
		return true
	}
	_, _, ok := conversation.ParseCommand(s)
	return ok
}

// steerDone shows a line typed during a run as queued.
func (m *model) steerDone(msg steerDoneMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		m.print(m.st.fail.Render("✗ " + clean(msg.err.Error())))
	case msg.queued:
		m.steered = append(m.steered, msg.text)
	}
	return nil
}

// prompt reads the @path attachments of a line (conversation.Attach, as
// the line mode and -p's @FILE arguments read them).
func (m *model) prompt(line string) (Prompt, error) {
	p, err := conversation.Attach(m.rt.Cwd(), line)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{Text: p.Text, Images: p.Images}, nil
}

// run runs a line at an idle prompt.
func (m *model) run(line string) tea.Cmd {
	trimmed := strings.TrimSpace(line)
	switch {
	case trimmed == "exit" || trimmed == "quit":
		m.quitting = true
		return nil
	case strings.HasPrefix(trimmed, "!"):
		return m.runBash(strings.TrimSpace(trimmed[1:]))
	}
	if name, args, ok := conversation.ParseCommand(trimmed); ok {
		m.print(m.st.user.Render("› ") + clean(trimmed))
		if name == "resume" && args == "" {
			return m.pickSession()
		}
		if name == "model" && args == "" {
			return m.pickModel()
		}
		if name == "tree" && args == "" {
			return m.pickTree()
		}
		return m.startWork("command", Prompt{Text: trimmed})
	}
	p, err := m.prompt(line)
	if err != nil {
		m.print(m.st.fail.Render("✗ " + clean(err.Error())))
		return nil
	}
	m.print(m.userBlock(line))
	for _, img := range p.Images {
		m.print(m.st.dim.Render(fmt.Sprintf("  (image attached: %s)", img.MimeType)))
	}
	m.sent = line
	return m.startWork("turn", p)
}

// userBlock is a prompt as printed: each line after a marker.
func (m *model) userBlock(text string) string {
	ls := strings.Split(strings.TrimRight(clean(text), "\n"), "\n")
	for i, l := range ls {
		mark := "  "
		if i == 0 {
			mark = "› "
		}
		ls[i] = m.st.user.Render(mark) + l
	}
	return strings.Join(ls, "\n")
}

// startWork hands a line to the conversation on a work goroutine (the
// input hooks, a slash command — which may change the session, whose
// extensions' session_start handlers may ask the person, so never on the
// loop — or the model). busy is "turn" for a prompt (lines typed meanwhile
// steer it) or "command" (they wait for it to end).
func (m *model) startWork(busy string, p Prompt) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel = busy, cancel
	m.failShown = false
	conv := m.conv
	show := func(s string) { m.sendMsg(showMsg{s}) }
	m.ui.work.Add(1)
	return func() tea.Msg {
		defer m.ui.work.Done()
		defer cancel()
		out, err := conv.Submit(ctx, conversation.Prompt{Text: p.Text, Images: p.Images}, conversation.SubmitOptions{Interactive: true, Builtins: true, Show: show})
		return runDoneMsg{out: out, err: err, cancelled: ctx.Err() != nil}
	}
}

// pickModel is /model without a name: a list of the usable models to
// pick from (/ filters it), then /model with the one picked.
func (m *model) pickModel() tea.Cmd {
	avail, err := m.conv.AvailableModels()
	if err != nil || len(avail) < 2 {
		return m.startWork("command", Prompt{Text: "/model"})
	}
	cur, _ := m.conv.Model()
	opts := make([]string, len(avail))
	for i, a := range avail {
		opts[i] = a.Ref()
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel = "command", cancel
	m.failShown = false
	conv, ui := m.conv, m.ui
	show := func(s string) { m.sendMsg(showMsg{s}) }
	m.ui.work.Add(1)
	return func() tea.Msg {
		defer m.ui.work.Done()
		defer cancel()
		choice, ok, err := ui.Select(ctx, "Switch the model (now "+cur.Ref()+"; / filters)", opts)
		if err != nil || !ok {
			show("(model unchanged)")
			return runDoneMsg{cancelled: true}
		}
		out, err := conv.Submit(ctx, conversation.Prompt{Text: "/model " + choice}, conversation.SubmitOptions{Interactive: true, Builtins: true, Show: show})
		return runDoneMsg{out: out, err: err, cancelled: ctx.Err() != nil}
	}
}

// endWork returns to the idle prompt and runs the next line queued.
func (m *model) endWork() tea.Cmd {
	m.busy, m.cancel = "", nil
	m.notice = ""
	m.tools = nil
	m.bashTail = nil
	m.refreshFooter()
	if m.agentRuns > 0 {
		// A run an extension started began before this work's end was
		// seen: it is shown as a run, and the queued lines wait for it.
		m.startExtRun()
		return nil
	}
	if len(m.later) == 0 || m.quitting {
		return nil
	}
	next := m.later[0]
	m.later = m.later[1:]
	return m.run(next)
}

func (m *model) runDone(msg runDoneMsg) tea.Cmd {
	m.finishLive()
	res := msg.out.Result
	sent := m.sent
	m.sent = ""
	failed := msg.err != nil || (res != nil && res.StopReason == llm.StopError)
	switch {
	case msg.err != nil && !m.failShown:
		m.print(m.st.fail.Render("✗ " + clean(msg.err.Error())))
	case msg.err != nil:
		// The model's error was printed when its answer ended.
	case res != nil && res.StopReason == llm.StopAborted:
		m.print(m.st.warn.Render("(turn cancelled)"))
	case res != nil && res.StopReason == agent.StopMaxTurns:
		m.print(m.st.warn.Render("(stopped: the turn limit was reached)"))
	case msg.out.Resumed:
		m.replay()
	case msg.out.Command == "help":
		m.print(keysHelp())
	}
	var back []string
	var notice string
	if failed && sent != "" && !msg.cancelled {
		// The failed prompt goes back to the editor, to be sent again.
		back = append(back, sent)
		notice = "the prompt is back in the editor: Enter sends it again"
	}
	if msg.out.Steered {
		// The prompt steers a run an extension started (printed when typed).
		m.noEcho++
	}
	if n := m.takeBackQueued(back); n != "" {
		notice = n
	}
	if msg.out.Exit {
		m.quitting = true
		return nil
	}
	cmd := m.endWork()
	if notice != "" && m.notice == "" {
		m.notice = notice
	}
	return cmd
}

// takeBackQueued puts back lines (a failed prompt) and the queued
// messages the run did not deliver into the editor, and says so (the
// notice, "" for none). While another run goes on (an extension's) the
// queue is its: only lines are put back.
func (m *model) takeBackQueued(back []string) (notice string) {
	if m.agentRuns == 0 {
		if steering, followUp := m.conv.ClearQueues(); len(steering)+len(followUp) > 0 {
			// Queued messages the run did not deliver go back too.
			for _, u := range append(steering, followUp...) {
				for _, b := range u.Content {
					if b.Type == "text" {
						back = append(back, b.Text)
					}
				}
			}
			notice = "queued messages were not sent; they are back in the editor"
		}
		m.steered = nil
		m.noEcho = 0
	}
	if len(back) > 0 {
		if m.editor.Value() != "" {
			back = append(back, m.editor.Value())
		}
		m.editor.SetValue(strings.Join(back, "\n"))
		m.fitEditor()
	}
	return notice
}

// startExtRun shows a run an extension started as the TUI's own: busy
// (the working indicator), Esc and Ctrl+C abort it, lines typed meanwhile
// steer it or wait for its end.
func (m *model) startExtRun() {
	m.busy, m.extRun = "turn", true
	m.cancel = m.conv.Abort
	m.failShown = false
}

// extRunDone ends a run an extension started: as runDone for the TUI's.
func (m *model) extRunDone(ev agent.Event) tea.Cmd {
	m.finishThinking()
	m.finishLive()
	m.extRun = false
	switch {
	case ev.Error != "" && !m.failShown:
		m.print(m.st.fail.Render("✗ " + clean(ev.Error)))
	case ev.StopReason == llm.StopAborted:
		m.print(m.st.warn.Render("(turn cancelled)"))
	case ev.StopReason == agent.StopMaxTurns:
		m.print(m.st.warn.Render("(stopped: the turn limit was reached)"))
	}
	notice := m.takeBackQueued(nil)
	cmd := m.endWork()
	if notice != "" && m.notice == "" {
		m.notice = notice
	}
	return cmd
}

// onAgentEvent shows one event of a run; a compaction an extension asked
// for (session.compact) ends as its run.
func (m *model) onAgentEvent(ev agent.Event) tea.Cmd {
	cmd := m.showAgentEvent(ev)
	if ev.Type == agent.EventCompactionEnd && m.extRun && m.agentRuns == 0 {
		return tea.Batch(cmd, m.extRunDone(agent.Event{}))
	}
	return cmd
}

func (m *model) showAgentEvent(ev agent.Event) tea.Cmd {
	switch ev.Type {
	case conversation.EventCustomMessage:
		if cm := conversation.DeliveredCustom(ev.Message); cm != nil {
			m.finishThinking()
			m.finishLive()
			m.showCustom(cm, messageText(*ev.Message))
		}
	case agent.EventAgentStart:
		m.agentRuns++
		if m.busy == "" {
			m.startExtRun()
		}
	case agent.EventAgentEnd:
		m.agentRuns = max(m.agentRuns-1, 0)
		if m.extRun && m.agentRuns == 0 {
			return m.extRunDone(ev)
		}
	case agent.EventMessageUpdate:
		d := ev.AssistantMessageEvent
		switch {
		case d == nil:
		case d.Type == llm.EventThinkingDelta:
			m.thinking.WriteString(d.Delta)
		case d.Type == llm.EventThinkingEnd:
			m.finishThinking()
		case d.Type == llm.EventTextDelta:
			m.finishThinking()
			m.live.WriteString(d.Delta)
			m.dirty = true
			return m.renderLive()
		}
	case agent.EventMessageEnd:
		if ev.Message == nil {
			return nil
		}
		switch ev.Message.Role {
		case llm.RoleAssistant:
			m.finishThinking()
			m.finishLive()
			if ev.Error != "" {
				m.print(m.st.fail.Render("✗ " + clean(ev.Error)))
				m.failShown = true
			}
			if u := ev.Usage; u != nil {
				m.foot.Input += u.InputTokens
				m.foot.Output += u.OutputTokens
				m.foot.Cost += u.Cost.Total
				if n := u.TotalTokens; n > 0 {
					m.foot.ContextTokens = n
				} else if n := u.InputTokens + u.OutputTokens; n > 0 {
					m.foot.ContextTokens = n
				}
			}
		case llm.RoleUser:
			switch {
			case conversation.DeliveredCustom(ev.Message) != nil:
				// An extension's message: shown by its EventCustomMessage.
			case len(m.steered) > 0 && messageText(*ev.Message) == m.steered[0]:
				m.print(m.userBlock(m.steered[0]))
				m.steered = m.steered[1:]
			case m.extRun && m.noEcho > 0:
				m.noEcho--
			case m.extRun:
				// An extension's message (agent.sendUserMessage).
				m.print(m.userBlock(messageText(*ev.Message)))
			}
		}
	case agent.EventToolExecutionStart:
		m.finishThinking()
		m.finishLive()
		m.tools = append(m.tools, &runningTool{id: ev.ToolCallID, name: ev.ToolName, args: argSummary(ev.ToolName, ev.Args, 160), start: time.Now()})
		m.tools[len(m.tools)-1].input = ev.Args
	case agent.EventToolExecutionUpdate:
		if t := m.tool(ev.ToolCallID); t != nil && ev.PartialResult != nil {
			t.tail = tailOf(ev.PartialResult.Text(), tailLines)
		}
	case agent.EventToolExecutionEnd:
		args := argSummary(ev.ToolName, nil, 160)
		var took time.Duration
		input := ev.Args
		for i, t := range m.tools {
			if t.id == ev.ToolCallID {
				args, took = t.args, time.Since(t.start)
				input = t.input
				m.tools = append(m.tools[:i], m.tools[i+1:]...)
				break
			}
		}
		if m.renderToolEnd(ev.ToolCallID, ev.ToolName, input, args, ev.Result, ev.Failed(), took) {
			return nil
		}
		m.print(m.st.toolBlock(ev.ToolName, args, ev.Result, ev.Failed(), took))
	case agent.EventCompactionStart:
		m.agentRuns++
		if m.busy == "" {
			m.startExtRun() // session.compact
		}
		m.finishLive()
		m.notice = fmt.Sprintf("compacting the conversation (%s)…", ev.Reason)
	case agent.EventCompactionEnd:
		m.agentRuns = max(m.agentRuns-1, 0)
		m.notice = ""
		if ev.Reason == agent.CompactManual && !m.extRun {
			return nil // /compact says how it went, once (session.compact's is shown here)
		}
		switch {
		case ev.ErrorMessage != "":
			m.print(m.st.fail.Render("✗ " + clean(ev.ErrorMessage)))
			m.failShown = true
		case ev.Compaction != nil:
			m.print(m.st.ok.Render("✓ ") + fmt.Sprintf("compacted %s tokens of conversation into a summary", conversation.HumanTokens(ev.Compaction.TokensBefore)))
			m.refreshFooter()
		}
	}
	return nil
}

func (m *model) tool(id string) *runningTool {
	for _, t := range m.tools {
		if t.id == id {
			return t
		}
	}
	return nil
}

// renderLive renders the end of the streaming text as markdown on a
// work goroutine (rendering is slow enough to stall typing if the loop did
// it), one render at a time, at most every 50 ms and never more often than
// twice the time the last render took.
func (m *model) renderLive() tea.Cmd {
	if !m.dirty || m.rendering {
		return nil
	}
	gap := max(50*time.Millisecond, 2*m.renderCost)
	if wait := gap - time.Since(m.renderedAt); wait > 0 {
		if m.ticking {
			return nil
		}
		m.ticking = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return renderTick{} })
	}
	m.rendering, m.dirty = true, false
	text, md, gen := m.live.String(), m.liveMD, m.liveGen
	return func() tea.Msg {
		start := time.Now()
		tail, skipped := liveTail(text)
		out := md.render(tail)
		return liveRenderedMsg{out: out, skipped: skipped, gen: gen, cost: time.Since(start)}
	}
}

func (m *model) liveRendered(msg liveRenderedMsg) tea.Cmd {
	m.rendering = false
	if msg.gen != m.liveGen {
		// Made for an answer that has ended, or for another width.
		return m.renderLive()
	}
	m.rendered = msg.out
	if msg.skipped {
		m.rendered = m.st.dim.Render("…") + "\n" + m.rendered
	}
	m.renderedAt, m.renderCost = time.Now(), msg.cost
	return m.renderLive()
}

// finishThinking prints the streamed thinking block and clears it.
func (m *model) finishThinking() {
	text := m.thinking.String()
	m.thinking.Reset()
	if b := m.st.thinkingBlock(text, m.showThinking); b != "" {
		m.print(b)
	}
}

// finishLive prints the streamed text, rendered, and clears it.
func (m *model) finishLive() {
	text := m.live.String()
	m.live.Reset()
	m.rendered, m.dirty = "", false
	m.liveGen++
	if strings.TrimSpace(text) == "" {
		return
	}
	m.print(m.md.render(text))
}

func messageText(msg llm.Message) string {
	for _, b := range msg.Content {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

func tailOf(text string, n int) []string {
	ls := lines(clean(text))
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	for i, l := range ls {
		ls[i] = cut(l, lineWidth)
	}
	return ls
}

// runBash runs !cmd through the runtime's bash tool; its output joins the
// conversation.
func (m *model) runBash(command string) tea.Cmd {
	if command == "" {
		m.notice = "!COMMAND runs COMMAND in the shell and adds its output to the conversation"
		return nil
	}
	m.print(m.st.user.Render("› ") + "!" + clean(command))
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel = "bash", cancel
	m.bashTail, m.bashStart = nil, time.Now()
	m.ui.work.Add(1)
	conv := m.conv
	return func() tea.Msg {
		defer m.ui.work.Done()
		defer cancel()
		run, err := conv.RunShellCommand(ctx, command, func(p tool.Result) { m.sendMsg(bashUpdateMsg{p}) })
		return bashDoneMsg{run: run, err: err}
	}
}

func (m *model) bashDone(msg bashDoneMsg) tea.Cmd {
	if msg.run != nil {
		res := msg.run.Result
		m.print(m.st.toolBlock("bash", argSummary("bash", mustJSON(map[string]string{"command": msg.run.Command}), 160), &res, res.IsError, time.Since(m.bashStart)))
	}
	if msg.err != nil {
		m.print(m.st.fail.Render("✗ " + clean(msg.err.Error())))
	} else {
		m.print(m.st.dim.Render("(the command and its output are now part of the conversation)"))
	}
	return m.endWork()
}

// replay prints the end of a resumed session's conversation.
func (m *model) replay() {
	msgs := m.conv.Messages()
	const last = 10
	if len(msgs) > last {
		m.print(m.st.dim.Render("… " + plural.Count(len(msgs)-last, "earlier message")))
		msgs = msgs[len(msgs)-last:]
	}
	for _, sm := range msgs {
		if sm.Role == session.RoleCustom {
			// An extension's message: shown when it asked (display).
			if sm.Display {
				m.showCustom(&conversation.CustomMessage{CustomType: sm.CustomType, Content: customContent(sm.Content), Details: sm.Details, Display: true}, blocksText(sm.Content))
			}
			continue
		}
		lm := session.ToLLM([]session.Message{sm})
		if len(lm) != 1 {
			continue
		}
		msg := lm[0]
		text := messageText(msg)
		switch msg.Role {
		case llm.RoleUser:
			ls := lines(text)
			if len(ls) > 5 {
				ls = append(ls[:5], "…")
			}
			m.print(m.userBlock(strings.Join(ls, "\n")))
		case llm.RoleAssistant:
			for _, b := range msg.Content {
				if b.Type == "thinking" {
					if t := m.st.thinkingBlock(b.Thinking, m.showThinking); t != "" {
						m.print(t)
					}
				}
			}
			if strings.TrimSpace(text) != "" {
				m.print(m.md.render(text))
			}
			for _, c := range msg.ToolCalls {
				m.print(m.st.dim.Render("→ " + clean(c.Name) + " " + argSummary(c.Name, []byte(c.Arguments), 120)))
			}
		}
	}
	name := clean(m.conv.SessionName())
	if name == "" {
		name = m.conv.ShortID(m.conv.Session().ID())
	}
	m.print(m.st.dim.Render(fmt.Sprintf("(resumed session %s)", name)))
}

// customContent is a custom message's content as the extension sent it
// (message.render's content): a string for one text block, else blocks.
func customContent(blocks []session.Block) json.RawMessage {
	var b []byte
	if len(blocks) == 1 && blocks[0].Type == "text" {
		b, _ = json.Marshal(blocks[0].Text)
	} else {
		b, _ = json.Marshal(blocks)
	}
	return b
}

// blocksText is the first text of blocks.
func blocksText(blocks []session.Block) string {
	for _, b := range blocks {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// View is the live area: the streaming answer, the running tools, the
// queued lines, a question or picker, the editor and the status line.
func (m *model) View() string {
	if m.quitting {
		return ""
	}
	var b strings.Builder
	if m.ext.header != nil {
		b.WriteString(m.extLines(m.ext.header.lines, maxWidgetLines))
	}
	if m.thinking.Len() > 0 {
		b.WriteString(m.st.thinkingLive(m.thinking.String(), m.showThinking))
	}
	if m.live.Len() > 0 {
		if m.rendered != "" {
			b.WriteString(m.rendered)
		} else {
			// Until the first render arrives: the last lines as they are.
			b.WriteString(strings.Join(tailOf(m.live.String(), 10), "\n"))
		}
		b.WriteString("\n")
	}
	for _, t := range m.tools {
		fmt.Fprintf(&b, "%s %s %s\n", m.st.accent.Render("⋯"), m.st.tool.Render(clean(t.name)), t.args)
		for _, l := range t.tail {
			fmt.Fprintf(&b, "  %s\n", m.st.dim.Render(l))
		}
	}
	if m.busy == "bash" {
		fmt.Fprintf(&b, "%s %s\n", m.st.accent.Render("⋯"), m.st.tool.Render("bash"))
		for _, l := range m.bashTail {
			fmt.Fprintf(&b, "  %s\n", m.st.dim.Render(l))
		}
	}
	for _, s := range m.steered {
		fmt.Fprintf(&b, "%s %s\n", m.st.warn.Render("queued:"), cut(oneLine(clean(s)), 200))
	}
	for _, s := range m.later {
		fmt.Fprintf(&b, "%s %s\n", m.st.warn.Render("queued:"), cut(oneLine(clean(s)), 200))
	}
	switch {
	case len(m.dialogs) > 0:
		b.WriteString(m.dialogView())
	case len(m.ext.overlays) > 0:
		// The overlay has the keys (onKey), so it is what shows.
		b.WriteString(m.extOverlay())
	case m.pick != nil:
		b.WriteString(m.pick.view(m.st))
	case m.tpick != nil:
		b.WriteString(m.tpick.view(m.st))
	default:
		b.WriteString(m.extWidgets(false))
		if m.ext.editor != nil {
			b.WriteString(m.extLines(m.ext.editor.lines, max(m.height/2, 3)))
		} else {
			b.WriteString(m.editor.View())
			b.WriteString("\n")
		}
		b.WriteString(m.extWidgets(true))
		if m.menu != nil {
			b.WriteString(m.menu.view(m.st, m.width))
		}
		if len(m.compl) > 0 {
			b.WriteString(m.st.dim.Render(cut(strings.Join(m.compl, "  "), max(m.width-1, 20))))
			b.WriteString("\n")
		}
	}
	if m.notice != "" {
		b.WriteString(m.st.warn.Render(m.notice))
		b.WriteString("\n")
	}
	if m.ext.footer != nil {
		b.WriteString(strings.TrimSuffix(m.extLines(m.ext.footer.lines, maxWidgetLines), "\n"))
	} else {
		b.WriteString(m.statusLine())
	}
	if s := m.extStatusLine(); s != "" {
		b.WriteString("\n" + s)
	}
	// Each line of the live area fits the width (see flush).
	ls := strings.Split(b.String(), "\n")
	for i, l := range ls {
		ls[i] = ansi.Truncate(l, max(m.width, 20), "…")
	}
	return strings.Join(ls, "\n")
}

// refreshFooter reads the footer's data again (at the start and when
// work ends: a turn, a command, a switch).
func (m *model) refreshFooter() { m.foot = footerData(m.conv) }

// statusLine is the footer with what runs now.
func (m *model) statusLine() string {
	var state string
	switch m.busy {
	case "turn", "command":
		state = "working… (Esc cancels)"
	case "bash":
		state = "running !command… (Esc cancels)"
	}
	state = m.workingState(state)
	return m.foot.render(m.st, m.width, state)
}

// picker is the /resume list; short are the ids shown, unique prefixes
// among the sessions of the folder.
type picker struct {
	infos []session.Info
	short []string
	pos   int
}

// newPicker lists the sessions of all but the current one (cur).
func newPicker(all []session.Info, cur string) *picker {
	ids := make([]string, len(all))
	for i, in := range all {
		ids[i] = in.ID
	}
	short := session.ShortIDs(ids, session.ShortIDLen)
	p := &picker{}
	for i, in := range all {
		if in.ID != cur {
			p.infos = append(p.infos, in)
			p.short = append(p.short, short[i])
		}
	}
	return p
}

func (p *picker) view(st styles) string {
	var b strings.Builder
	b.WriteString("Resume a session (↑↓ move, Enter resumes, Esc cancels):\n")
	start := max(0, p.pos-7)
	end := min(len(p.infos), start+15)
	idw := 0
	for _, id := range p.short {
		idw = max(idw, len(id))
	}
	for i := start; i < end; i++ {
		in := p.infos[i]
		title := clean(in.Name)
		if title == "" {
			title = oneLine(clean(in.FirstMessage))
		}
		// The title last: a narrow terminal cuts it, not the id.
		line := fmt.Sprintf("%-*s  %s  %3d msgs  %s", idw, p.short[i], in.Modified.Local().Format("2006-01-02 15:04"), in.MessageCount, cut(title, 60))
		if i == p.pos {
			b.WriteString(st.accent.Render("▸ " + line))
		} else {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (m *model) onPickKey(k tea.KeyMsg) tea.Cmd {
	p := m.pick
	switch k.String() {
	case "up", "k":
		p.pos = max(0, p.pos-1)
	case "down", "j":
		p.pos = min(len(p.infos)-1, p.pos+1)
	case "esc", "ctrl+c", "q":
		m.pick = nil
		m.print(m.st.dim.Render("(no session resumed)"))
	case "enter":
		m.pick = nil
		return m.resume(p.infos[p.pos].Path)
	}
	return nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pi-go/pi/internal/plural"
)

// command is one of the TUI's own slash commands.
type command struct {
	name, args, help string
	run              func(m *model, args string) tea.Cmd
}

// commands are the TUI's slash commands, in /help order. Lines with any
// other /name go to Dispatch (extension commands).
var commands []command

func init() {
	commands = []command{
		{"help", "", "list the commands and keys", (*model).cmdHelp},
		{"exit", "", "leave pi (also: quit, exit, Ctrl-D)", func(m *model, _ string) tea.Cmd { m.quitting = true; return nil }},
		{"quit", "", "leave pi", func(m *model, _ string) tea.Cmd { m.quitting = true; return nil }},
		{"new", "", "start a new session", (*model).cmdNew},
		{"resume", "[ID]", "resume a session: pick one from a list, or by id prefix", (*model).cmdResume},
		{"session", "", "show the session: file, id, name, messages, context", (*model).cmdSession},
		{"name", "[NAME]", "name the session (shown in lists and the status line)", (*model).cmdName},
		{"fork", "", "go on in a copy of this session (the original stays as it is)", (*model).cmdFork},
		{"compact", "[INSTRUCTIONS]", "summarize the conversation so far to free context", (*model).cmdCompact},
		{"model", "[NAME]", "show or change the model (same endpoint and key)", (*model).cmdModel},
		{"tools", "", "list the tools, active and not", (*model).cmdTools},
		{"ext", "", "list the loaded extensions: tools, hooks and grants", (*model).cmdExt},
		{"permissions", "", "list the permission rules that apply", (*model).cmdPermissions},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames lists the command names, sorted, for completion.
func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	sort.Strings(out)
	return out
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// table formats rows with aligned columns.
func table(rows [][]string) string {
	for _, r := range rows {
		for i := range r {
			r[i] = clean(r[i])
		}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func (m *model) cmdHelp(string) tea.Cmd {
	var rows [][]string
	for _, c := range commands {
		u := "/" + c.name
		if c.args != "" {
			u += " " + c.args
		}
		rows = append(rows, []string{u, c.help})
	}
	rows = append(rows,
		[]string{"!COMMAND", "run COMMAND in the shell (through the bash tool's hooks and permissions); its output joins the conversation"},
		[]string{"@PATH", "attach a file (Tab completes): text inline, images as images"},
	)
	keys := [][]string{
		{"Enter", "send (while the agent works: queue the message for after the current tool calls)"},
		{"Alt+Enter, Ctrl+J", "new line (a paste stays one prompt)"},
		{"↑ / ↓", "previous / next prompt of the history (on the first / last line)"},
		{"Tab", "complete an @path or a /command"},
		{"Esc", "cancel the running turn"},
		{"Ctrl-C", "cancel the running turn; clear the editor; twice at an empty prompt: exit"},
		{"Ctrl-D", "exit (at an empty prompt)"},
	}
	m.print("Commands:\n" + table(rows) + "\nKeys:\n" + table(keys))
	return nil
}

// switchSession runs change — a runtime call that starts or switches the
// session or the model, which runs the extensions' session hooks, and they
// may ask the person — then builds the new agent, both off the loop, so
// that the loop stays free to show those questions. The loop installs the
// agent when switchDoneMsg comes; until then the TUI is busy ("session")
// and lines typed wait. When the agent cannot be built, undo (if any) puts
// back what change did.
func (m *model) switchSession(change func() (what string, err error), undo func(), replay bool) tea.Cmd {
	m.busy = "session"
	newAgent, onEvent := m.cfg.NewAgent, m.onEvent
	m.ui.work.Add(1)
	return func() tea.Msg {
		defer m.ui.work.Done()
		what, err := change()
		if err != nil {
			return switchDoneMsg{err: err}
		}
		ag, err := newAgent(onEvent)
		if err != nil {
			if undo != nil {
				undo()
			}
			return switchDoneMsg{err: err}
		}
		return switchDoneMsg{ag: ag, what: what, replay: replay}
	}
}

// switchDone installs the agent a switchSession built.
func (m *model) switchDone(msg switchDoneMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		m.print(m.st.fail.Render("✗ " + clean(msg.err.Error())))
	case msg.replay:
		m.ag = msg.ag
		m.replay()
	default:
		m.ag = msg.ag
		m.print(m.st.ok.Render("✓ ") + msg.what)
	}
	return m.endWork()
}

func (m *model) cmdNew(string) tea.Cmd {
	rt := m.rt
	return m.switchSession(func() (string, error) {
		if err := rt.NewSession(""); err != nil {
			return "", err
		}
		return "new session " + shortID(rt.Session().ID()), nil
	}, nil, false)
}

func (m *model) cmdResume(args string) tea.Cmd {
	if args != "" {
		return m.resume(args)
	}
	infos, err := m.rt.Sessions()
	if err != nil {
		m.print(m.st.fail.Render("✗ " + clean(err.Error())))
		return nil
	}
	cur := m.rt.Session().ID()
	var others = infos[:0]
	for _, in := range infos {
		if in.ID != cur {
			others = append(others, in)
		}
	}
	if len(others) == 0 {
		m.print("There are no other sessions of this folder to resume.")
		return nil
	}
	m.pick = &picker{infos: others}
	return nil
}

// resume switches to the session at path (or id prefix).
func (m *model) resume(path string) tea.Cmd {
	rt := m.rt
	return m.switchSession(func() (string, error) { return "", rt.SwitchSession(path) }, nil, true)
}

func (m *model) cmdSession(string) tea.Cmd {
	s := m.rt.Session()
	file := s.Path()
	if s.InMemory() {
		file = "(not saved: --no-session)"
	} else if !s.Written() {
		file += " (written at the first answer)"
	}
	name := m.rt.SessionName()
	if name == "" {
		name = "(none: /name NAME)"
	}
	users, assistants, toolResults := 0, 0, 0
	for _, msg := range m.rt.History() {
		switch msg.Role {
		case "user":
			users++
		case "assistant":
			assistants++
		case "toolResult":
			toolResults++
		}
	}
	ctx := humanTokens(m.tokens)
	if m.window > 0 {
		ctx += " of " + humanTokens(m.window)
	}
	m.print(table([][]string{
		{"file", file}, {"id", s.ID()}, {"name", name},
		{"messages", fmt.Sprintf("%d user, %d assistant, %s", users, assistants, plural.Count(toolResults, "tool result"))},
		{"context", ctx + " tokens"},
	}))
	return nil
}

func (m *model) cmdName(args string) tea.Cmd {
	if args == "" {
		if n := m.rt.SessionName(); n != "" {
			m.print("The session is named " + clean(n) + ".")
		} else {
			m.print("The session has no name; /name NAME names it.")
		}
		return nil
	}
	if err := m.rt.SetSessionName(args); err != nil {
		m.print(m.st.fail.Render("✗ " + clean(err.Error())))
		return nil
	}
	m.print(m.st.ok.Render("✓ ") + "session named " + clean(m.rt.SessionName()))
	return nil
}

func (m *model) cmdFork(string) tea.Cmd {
	rt, old := m.rt, m.rt.Session().ID()
	return m.switchSession(func() (string, error) {
		if err := rt.CloneSession(); err != nil {
			return "", err
		}
		return fmt.Sprintf("forked session %s into %s; you are in the copy", shortID(old), shortID(rt.Session().ID())), nil
	}, nil, false)
}

func (m *model) cmdCompact(args string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel = "compact", cancel
	rt := m.rt
	m.ui.work.Add(1)
	return func() tea.Msg {
		defer m.ui.work.Done()
		defer cancel()
		res, err := rt.Compact(ctx, args)
		if err != nil && ctx.Err() != nil {
			err = errors.Join(err, context.Canceled)
		}
		return compactDoneMsg{res: res, err: err}
	}
}

func (m *model) cmdModel(args string) tea.Cmd {
	if args == "" {
		cur := m.cfg.FixedModel
		if cur == "" {
			cur = m.rt.ModelName()
		}
		m.print("The model is " + cur + "; /model NAME changes it.")
		return nil
	}
	if m.cfg.FixedModel != "" {
		m.print(m.st.fail.Render("✗ the model is " + m.cfg.FixedModel + " for this run (--script); it cannot be changed"))
		return nil
	}
	rt, old := m.rt, m.rt.ModelName()
	return m.switchSession(func() (string, error) {
		if err := rt.SetModel("", args); err != nil {
			return "", err
		}
		return "model " + rt.ModelName(), nil
	}, func() { rt.SetModel("", old) }, false)
}

func (m *model) cmdTools(string) tea.Cmd {
	reg := m.rt.Registry()
	var rows [][]string
	for _, d := range reg.Definitions() {
		state := "inactive"
		if reg.IsActive(d.Name) {
			state = "active"
		}
		desc := d.Description
		if i := strings.IndexAny(desc, ".\n"); i > 0 {
			desc = desc[:i]
		}
		rows = append(rows, []string{d.Name, state, cut(desc, 80)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	m.print("Tools (--tools or [tools] active in pi.toml choose the active ones):\n" + table(rows))
	return nil
}

func (m *model) cmdExt(string) tea.Cmd {
	exts := m.rt.Extensions()
	if len(exts) == 0 {
		m.print("No extensions are loaded (pi ext install FILE.wasm, or -e FILE.wasm).")
		return nil
	}
	var rows [][]string
	for _, e := range exts {
		var tools []string
		for _, t := range e.Tools {
			tools = append(tools, t.Name)
		}
		g, _ := json.Marshal(e.Grants)
		grants := string(g)
		if grants == "{}" || grants == "null" {
			grants = "none"
		}
		scope := e.Scope
		if scope == "" {
			scope = "-"
		}
		rows = append(rows, []string{e.Name + " " + e.Version, "loaded (" + scope + ")", "tools: " + orNone(tools), "hooks: " + orNone(e.Hooks), "grants: " + cut(grants, 120)})
	}
	m.print("Extensions:\n" + table(rows))
	return nil
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ",")
}

func (m *model) cmdPermissions(string) tea.Cmd {
	info := m.rt.Permissions()
	if len(info.Rules) == 0 && info.DefaultAt == "" && info.IgnoredDefault == "" {
		m.print("No [permissions] in pi.toml: every call is allowed (see docs/permissions.md).")
		return nil
	}
	where := "pi's default"
	if info.DefaultAt != "" {
		where = info.DefaultAt
	}
	var b strings.Builder
	fmt.Fprintf(&b, "default: %s (%s)\n", info.Default, where)
	if info.IgnoredDefault != "" {
		fmt.Fprintf(&b, "ignored: default %s (%s): the project is not trusted (pi trust)\n", info.IgnoredDefault, info.IgnoredDefaultAt)
	}
	rows := [][]string{{"WHERE", "DECISION", "RULE", "REASON"}}
	for _, r := range info.Rules {
		reason := r.Reason
		if r.Ignored != "" {
			reason = "ignored: " + r.Ignored
		}
		rows = append(rows, []string{r.Where, string(r.Decision), r.Short(), reason})
	}
	b.WriteString(table(rows))
	m.print(b.String())
	return nil
}

package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pi-go/pi/runtime/models"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/checkpoint"
	"github.com/pi-go/pi/runtime/session"
)

// pi's own slash commands, run by Submit for every front end. A front end
// may show some of them its own way first (the TUI's /resume picker); the
// text each produces goes to SubmitOptions.Show.

// builtin is one of pi's own slash commands.
type builtin struct {
	name, args, help string
	// interactiveOnly commands (exit, quit) run only for a person at a
	// prompt; with -p the line goes on as any other.
	interactiveOnly bool
	run             func(ctx context.Context, c *Conversation, args string, o SubmitOptions, sub *Submitted) error
}

// builtins are pi's slash commands, in /help order.
var builtins []builtin

func init() {
	builtins = []builtin{
		{name: "help", help: "list the commands", run: cmdHelp},
		{name: "exit", help: "leave pi (also: quit, Ctrl-D)", interactiveOnly: true, run: cmdExit},
		{name: "quit", help: "leave pi", interactiveOnly: true, run: cmdExit},
		{name: "new", help: "start a new session", run: cmdNew},
		{name: "resume", args: "[ID]", help: "resume a session by id prefix (without one: list them)", run: cmdResume},
		{name: "session", help: "show the session: file, id, name, messages, context", run: cmdSession},
		{name: "name", args: "[NAME]", help: "name the session (shown in lists and the status line)", run: cmdName},
		{name: "fork", help: "go on in a copy of this session (the original stays as it is)", run: cmdFork},
		{name: "clone", help: "go on in a new session holding the current branch (same as /fork)", run: cmdFork},
		{name: "tree", args: "[-s] [ID [FOCUS]]", help: "show the session's tree; with ID go on from that entry (-s: summarize the branch left)", run: cmdTree},
		{name: "undo", help: "undo the last turn: restore the files it changed and go back to before its prompt", run: cmdUndo},
		{name: "redo", help: "redo the turn undone last", run: cmdRedo},
		{name: "rewind", args: "[N [both|files|conversation]]", help: "list the turns; with N undo turn N and the ones after it (files, conversation or both)", run: cmdRewind},
		{name: "label", args: "[-e ID] [TEXT]", help: "label the current entry, or entry ID of /tree (without TEXT: clear the label)", run: cmdLabel},
		{name: "compact", args: "[INSTRUCTIONS]", help: "summarize the conversation so far to free context", run: cmdCompact},
		{name: "model", args: "[PROVIDER/ID]", help: "show the model and the usable ones, or change it (any provider: pi models lists them)", run: cmdModel},
		{name: "thinking", args: "[LEVEL]", help: "show or set how hard the model thinks: off, minimal, low, medium, high, xhigh", run: cmdThinking},
		{name: "tools", help: "list the tools, active and not", run: cmdTools},
		{name: "ext", help: "list the loaded extensions: tools, hooks and grants", run: cmdExt},
		{name: "reload", help: "read pi.toml and the extensions' modules again (the conversation goes on)", run: cmdReload},
		{name: "permissions", help: "list the permission rules that apply", run: cmdPermissions},
		{name: "plan", args: "[on|off]", help: "plan mode: read-only tools, bash in a read-only sandbox", run: cmdPlan},
		{name: "export", args: "[FILE]", help: "write the session to FILE: .jsonl (the session file's format) or .html (one self-contained page)", run: cmdExport},
		{name: "import", args: "FILE", help: "copy a session file (.jsonl) into this folder's sessions and go on in it", run: cmdImport},
	}
}

func findBuiltin(name string) (builtin, bool) {
	for _, b := range builtins {
		if b.name == name {
			return b, true
		}
	}
	return builtin{}, false
}

// table formats rows with aligned columns, each line indented by two.
func table(rows [][]string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func cmdHelp(_ context.Context, c *Conversation, _ string, o SubmitOptions, _ *Submitted) error {
	o.show(c.HelpText())
	return nil
}

func cmdExit(_ context.Context, _ *Conversation, _ string, _ SubmitOptions, sub *Submitted) error {
	sub.Exit = true
	return nil
}

func cmdNew(_ context.Context, c *Conversation, _ string, o SubmitOptions, sub *Submitted) error {
	if err := c.NewSession(""); err != nil {
		return err
	}
	sub.Switched = true
	o.show("✓ new session " + c.ShortID(c.Session().ID()))
	return nil
}

func cmdResume(_ context.Context, c *Conversation, args string, o SubmitOptions, sub *Submitted) error {
	if args == "" {
		infos, err := c.Sessions()
		if err != nil {
			return err
		}
		cur := c.Session().ID()
		var rows [][]string
		for _, in := range infos {
			if in.ID == cur {
				continue
			}
			title := in.Name
			if title == "" {
				title = oneLine(in.FirstMessage)
			}
			rows = append(rows, []string{c.ShortID(in.ID), in.Modified.Local().Format("2006-01-02 15:04"), fmt.Sprintf("%d msgs", in.MessageCount), cut(title, 60)})
		}
		if len(rows) == 0 {
			o.show("There are no other sessions of this folder to resume.")
			return nil
		}
		o.show("Sessions of this folder, the latest first (/resume ID resumes one):\n" + table(rows))
		return nil
	}
	if err := c.SwitchSession(args); err != nil {
		return err
	}
	sub.Switched, sub.Resumed = true, true
	name := c.SessionName()
	if name == "" {
		name = c.ShortID(c.Session().ID())
	}
	o.show("✓ resumed session " + name)
	return nil
}

func cmdSession(_ context.Context, c *Conversation, _ string, o SubmitOptions, _ *Submitted) error {
	s := c.Session()
	file := s.Path()
	if s.InMemory() {
		file = "(not saved: --no-session)"
	} else if !s.Written() {
		file += " (written at the first answer)"
	}
	name := c.SessionName()
	if name == "" {
		name = "(none: /name NAME)"
	}
	st := c.Stats()
	ctxText := HumanTokens(c.ContextTokens())
	if w := c.ContextWindow(); w > 0 {
		ctxText += " of " + HumanTokens(w)
	}
	o.show(table([][]string{
		{"file", file}, {"id", s.ID()}, {"name", name},
		{"messages", fmt.Sprintf("%s, %s, %s", plural.Count(st.UserMessages, "user message"), plural.Count(st.AssistantMessages, "answer"), plural.Count(st.ToolResults, "tool result"))},
		{"context", ctxText + " tokens"},
	}))
	return nil
}

func cmdName(_ context.Context, c *Conversation, args string, o SubmitOptions, _ *Submitted) error {
	if args == "" {
		if n := c.SessionName(); n != "" {
			o.show("The session is named " + n + ".")
		} else {
			o.show("The session has no name; /name NAME names it.")
		}
		return nil
	}
	if err := c.SetSessionName(args); err != nil {
		return err
	}
	o.show("✓ session named " + c.SessionName())
	return nil
}

func cmdFork(_ context.Context, c *Conversation, _ string, o SubmitOptions, sub *Submitted) error {
	old := c.Session().ID()
	if err := c.Clone(); err != nil {
		return err
	}
	sub.Switched = true
	o.show(fmt.Sprintf("✓ forked session %s into %s; you are in the copy", c.ShortID(old), c.ShortID(c.Session().ID())))
	return nil
}

func cmdReload(ctx context.Context, c *Conversation, _ string, o SubmitOptions, _ *Submitted) error {
	if err := c.Reload(ctx); err != nil {
		return err
	}
	o.show(fmt.Sprintf("✓ reloaded: %s", plural.Count(len(c.rt.Extensions()), "extension")))
	return nil
}

func cmdCompact(ctx context.Context, c *Conversation, args string, o SubmitOptions, _ *Submitted) error {
	res, err := c.Compact(ctx, args)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	o.show(fmt.Sprintf("Compacted: %s tokens of conversation summarized; the conversation goes on from the summary.", HumanTokens(res.TokensBefore)))
	return nil
}

func cmdModel(_ context.Context, c *Conversation, args string, o SubmitOptions, sub *Submitted) error {
	if args == "" {
		cur, err := c.Model()
		if err != nil {
			return err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "The model is %s (%s); /model PROVIDER/ID changes it.", cur.Ref(), cur.API)
		if avail, err := c.AvailableModels(); err == nil && len(avail) > 1 {
			b.WriteString(" Usable now:")
			for i, m := range avail {
				if i == 30 {
					fmt.Fprintf(&b, "\n  … and %d more (pi models lists them all)", len(avail)-i)
					break
				}
				b.WriteString("\n  " + m.Ref())
			}
		}
		o.show(b.String())
		return nil
	}
	if err := c.SetModel("", args); err != nil {
		return err
	}
	sub.Switched = true
	m, _ := c.Model()
	o.show(fmt.Sprintf("✓ model %s (thinking %s)", m.Ref(), c.ThinkingLevel()))
	return nil
}

func cmdThinking(_ context.Context, c *Conversation, args string, o SubmitOptions, _ *Submitted) error {
	if args == "" {
		o.show(fmt.Sprintf("Thinking level %s; the model has %s. /thinking LEVEL sets it.", c.ThinkingLevel(), models.LevelNames(c.ThinkingLevels())))
		return nil
	}
	eff, err := c.SetThinkingLevel(args)
	if err != nil {
		return err
	}
	if string(eff) != strings.ToLower(strings.TrimSpace(args)) {
		m, _ := c.Model()
		o.show(fmt.Sprintf("✓ thinking %s (%s has no %s; it has %s)", eff, m.Ref(), strings.TrimSpace(args), models.LevelNames(c.ThinkingLevels())))
		return nil
	}
	o.show(fmt.Sprintf("✓ thinking %s", eff))
	return nil
}

func cmdTools(_ context.Context, c *Conversation, _ string, o SubmitOptions, _ *Submitted) error {
	reg := c.rt.Registry()
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
	o.show("Tools (--tools or [tools] active in pi.toml choose the active ones):\n" + table(rows))
	return nil
}

func cmdExt(_ context.Context, c *Conversation, _ string, o SubmitOptions, _ *Submitted) error {
	exts := c.rt.Extensions()
	if len(exts) == 0 {
		o.show("No extensions are loaded (pi ext install FILE.wasm, or -e FILE.wasm).")
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
	o.show("Extensions:\n" + table(rows))
	return nil
}

func cmdPermissions(_ context.Context, c *Conversation, _ string, o SubmitOptions, _ *Submitted) error {
	info := c.rt.Permissions()
	if len(info.Rules) == 0 && info.DefaultAt == "" && info.IgnoredDefault == "" {
		o.show("No [permissions] in pi.toml: every call is allowed (see docs/permissions.md).")
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
	o.show(b.String())
	return nil
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ",")
}

// cut shortens s to n bytes at a rune boundary, with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// HumanTokens is a token count as people read it: 950, 12.3k, 128k, 1.2M
// (/session, the TUI's footer).
func HumanTokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
}

// ShortID is the shortest prefix of id, at least 8 characters, that no
// other session of this folder shares: how front ends name a session.
func (c *Conversation) ShortID(id string) string {
	infos, _ := c.Sessions()
	ids := make([]string, 0, len(infos)+1)
	for _, in := range infos {
		ids = append(ids, in.ID)
	}
	ids = append(ids, c.Session().ID())
	return session.ShortID(id, ids)
}

func cmdLabel(_ context.Context, c *Conversation, args string, o SubmitOptions, _ *Submitted) error {
	entry := ""
	if rest, ok := strings.CutPrefix(args, "-e "); ok {
		f := strings.Fields(rest)
		if len(f) == 0 {
			return errors.New("label: -e needs an entry id (see /tree)")
		}
		entry = f[0]
		args = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), entry))
	}
	if err := c.SetLabel(entry, args); err != nil {
		return err
	}
	if strings.TrimSpace(args) == "" {
		o.show("✓ label cleared")
	} else {
		o.show("✓ labelled " + strings.TrimSpace(args))
	}
	return nil
}

func cmdTree(ctx context.Context, c *Conversation, args string, o SubmitOptions, sub *Submitted) error {
	f := strings.Fields(args)
	summarize := len(f) > 0 && f[0] == "-s"
	if summarize {
		f = f[1:]
	}
	if len(f) == 0 {
		lines := TreeLines(c.Session())
		if len(lines) == 0 {
			o.show("The session has no entries yet.")
			return nil
		}
		o.show("The session's entries (/tree ID goes on from one, /tree -s ID summarizes the branch left):\n" + strings.TrimRight(FormatTree(lines, 120), "\n"))
		return nil
	}
	res, err := c.NavigateTree(ctx, f[0], NavigateOptions{Summarize: summarize, Instructions: strings.Join(f[1:], " ")})
	if err != nil {
		return err
	}
	sub.Switched = true
	msg := "✓ going on from " + f[0]
	if res.SummaryEntryID != "" {
		msg += ", with a summary of the branch left"
	}
	if res.EditorText != "" {
		msg += "; the message was: " + cut(oneLine(res.EditorText), 200)
	}
	o.show(msg)
	return nil
}

func cmdExport(_ context.Context, c *Conversation, args string, o SubmitOptions, _ *Submitted) error {
	path, err := c.Export(args)
	if err != nil {
		return err
	}
	o.show("✓ exported to " + path)
	return nil
}

func cmdImport(_ context.Context, c *Conversation, args string, o SubmitOptions, sub *Submitted) error {
	if args == "" {
		return errors.New("import: name the file: /import FILE.jsonl")
	}
	if err := c.Import(args); err != nil {
		return err
	}
	sub.Switched, sub.Resumed = true, true
	o.show("✓ imported " + args + " as session " + c.ShortID(c.Session().ID()))
	return nil
}

// undoWith runs op, and once more with Force when files changed since and
// the person (asked on a terminal or an RPC client) says to overwrite
// them.
func undoWith(ctx context.Context, c *Conversation, o SubmitOptions, op func(UndoOptions) (UndoResult, error)) (UndoResult, error) {
	res, err := op(UndoOptions{})
	var conflict *checkpoint.ConflictError
	if !errors.As(err, &conflict) {
		return res, err
	}
	if o.Interactive {
		ok, askErr := c.rt.UI().Confirm(ctx, "Overwrite files you changed?", fmt.Sprintf("These files changed after the turn: %s. Restoring them loses those changes.", strings.Join(conflict.Paths, ", ")))
		if askErr == nil && ok {
			return op(UndoOptions{Force: true})
		}
	}
	return res, fmt.Errorf("%w; nothing was changed", err)
}

// showUndo tells what Undo, Redo or Rewind did.
func showUndo(o SubmitOptions, what string, res UndoResult) {
	var b strings.Builder
	b.WriteString("✓ " + what)
	if len(res.Restored) > 0 {
		b.WriteString("; files restored: " + strings.Join(res.Restored, ", "))
	}
	for p, why := range res.NotRestored {
		b.WriteString("\n  not restored: " + p + " (" + why + ")")
	}
	if res.Prompt != "" && strings.HasPrefix(what, "undid") {
		b.WriteString("\nThe prompt was: " + cut(oneLine(res.Prompt), 200))
	}
	o.show(b.String())
}

func cmdUndo(ctx context.Context, c *Conversation, _ string, o SubmitOptions, sub *Submitted) error {
	res, err := undoWith(ctx, c, o, func(u UndoOptions) (UndoResult, error) { return c.Undo(ctx, u) })
	if err != nil {
		return err
	}
	sub.Switched = true
	showUndo(o, fmt.Sprintf("undid turn %d", res.Turns[0]), res)
	return nil
}

func cmdRedo(ctx context.Context, c *Conversation, _ string, o SubmitOptions, sub *Submitted) error {
	res, err := undoWith(ctx, c, o, func(u UndoOptions) (UndoResult, error) { return c.Redo(ctx, u) })
	if err != nil {
		return err
	}
	sub.Switched = true
	showUndo(o, fmt.Sprintf("redid turn %d", res.Turns[0]), res)
	return nil
}

func cmdRewind(ctx context.Context, c *Conversation, args string, o SubmitOptions, sub *Submitted) error {
	f := strings.Fields(args)
	if len(f) == 0 {
		turns, err := c.Turns()
		if err != nil {
			return err
		}
		if len(turns) == 0 {
			o.show("No turns to rewind on this branch.")
			return nil
		}
		var rows [][]string
		for _, t := range turns {
			var files []string
			for _, fc := range t.Files {
				files = append(files, fc.Kind+" "+fc.Path)
			}
			rows = append(rows, []string{fmt.Sprint(t.ID), cut(oneLine(t.Prompt), 60), cut(orNone(files), 80)})
		}
		o.show("Turns of this branch (/rewind N [both|files|conversation] goes back to before turn N):\n" + table(rows))
		return nil
	}
	var id int
	if _, err := fmt.Sscan(f[0], &id); err != nil {
		return fmt.Errorf("rewind: %q is not a turn number (see /rewind)", f[0])
	}
	mode := RewindBoth
	if len(f) > 1 {
		mode = RewindMode(f[1])
	} else if o.Interactive {
		choice, ok, err := c.rt.UI().Select(ctx, fmt.Sprintf("Rewind to before turn %d:", id), []string{"both: files and conversation", "files only", "conversation only"})
		if err != nil || !ok {
			o.show("Rewind cancelled.")
			return nil
		}
		mode = RewindMode(strings.Fields(choice)[0])
		if mode == "both:" {
			mode = RewindBoth
		}
	}
	res, err := undoWith(ctx, c, o, func(u UndoOptions) (UndoResult, error) { return c.Rewind(ctx, id, mode, u) })
	if err != nil {
		return err
	}
	sub.Switched = mode != RewindFiles
	showUndo(o, fmt.Sprintf("rewound to before turn %d (%s)", id, mode), res)
	return nil
}

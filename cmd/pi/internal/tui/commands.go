package tui

import (
	"fmt"
	"strings"
	"text/tabwriter"

	tea "github.com/charmbracelet/bubbletea"
)

// Slash commands are the conversation's (conversation.Conversation.Submit
// runs pi's own and the extensions'); the TUI only shows bare /resume as a
// picker and adds its keys to /help.

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

// keysHelp is what /help adds in the TUI: its keys.
func keysHelp() string {
	keys := [][]string{
		{"Enter", "send (while the agent works: queue the message for after the current tool calls)"},
		{"Alt+Enter, Ctrl+J", "new line (a paste stays one prompt)"},
		{"↑ / ↓", "previous / next prompt of the history (on the first / last line)"},
		{"/", "at an empty prompt: the commands in a dropdown (↑/↓ move, Tab or Enter takes, Esc closes)"},
		{"Tab", "complete an @path or a /command"},
		{"Shift+Tab", "the model's next thinking level (off … xhigh, wrapping; /thinking LEVEL sets one)"},
		{"Ctrl+T", "show the model's thinking whole, or as one dim line (the default)"},
		{"Ctrl+P", "the next model of --models (else of the usable models)"},
		{"Esc", "cancel the running turn"},
		{"Ctrl-C", "cancel the running turn; clear the editor; twice at an empty prompt: exit"},
		{"Ctrl-D", "exit (at an empty prompt)"},
	}
	return "Keys:\n" + table(keys)
}

// pickSession shows the /resume picker of this folder's other sessions.
func (m *model) pickSession() tea.Cmd {
	infos, err := m.conv.Sessions()
	if err != nil {
		m.print(m.st.fail.Render("✗ " + clean(err.Error())))
		return nil
	}
	p := newPicker(infos, m.conv.Session().ID())
	if len(p.infos) == 0 {
		m.print("There are no other sessions of this folder to resume.")
		return nil
	}
	m.pick = p
	return nil
}

// resume switches to the session at path (or id prefix), through the
// conversation's /resume.
func (m *model) resume(path string) tea.Cmd {
	return m.startWork("command", Prompt{Text: "/resume " + path})
}

// shortID is how the TUI names a session: the shortest prefix no other
// session of the folder shares.
func (m *model) shortID(id string) string { return m.conv.ShortID(id) }

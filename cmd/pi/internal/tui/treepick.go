package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/runtime/conversation"
)

// treePicker is bare /tree: the session's entries as a tree (branches,
// labels, compaction and branch-summary markers, the leaf highlighted);
// Enter goes on from the chosen entry, s does with a summary of the
// branch left.
type treePicker struct {
	lines []conversation.TreeLine
	pos   int
}

// pickTree shows the /tree picker.
func (m *model) pickTree() tea.Cmd {
	lines := conversation.TreeLines(m.conv.Session())
	if len(lines) == 0 {
		m.print("The session has no entries yet.")
		return nil
	}
	p := &treePicker{lines: lines, pos: len(lines) - 1}
	for i, l := range lines {
		if l.Current {
			p.pos = i
		}
	}
	m.tpick = p
	return nil
}

func (p *treePicker) view(st styles) string {
	var b strings.Builder
	b.WriteString("Go on from an entry (↑↓ move, Enter: go on from it, s: with a summary of the branch left, l: label it, Esc cancels):\n")
	start := max(0, min(p.pos-9, len(p.lines)-19))
	end := min(len(p.lines), start+19)
	for i := start; i < end; i++ {
		l := p.lines[i]
		text := clean(l.Prefix)
		if l.Label != "" {
			text += st.warn.Render("["+oneLine(clean(l.Label))+"]") + " "
		}
		body := oneLine(clean(l.Text))
		switch l.Kind {
		case "compaction", "branch_summary":
			body = st.warn.Render(cut(body, 120))
		default:
			body = cut(body, 120)
		}
		text += body
		if l.Current {
			text += st.accent.Render("  ← current")
		}
		switch {
		case i == p.pos:
			b.WriteString(st.accent.Render("▸ ") + text)
		case !l.OnPath:
			b.WriteString("  " + st.dim.Render(ansi.Strip(text)))
		default:
			b.WriteString("  " + text)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (m *model) onTreeKey(k tea.KeyMsg) tea.Cmd {
	p := m.tpick
	switch k.String() {
	case "up", "k":
		p.pos = max(0, p.pos-1)
	case "down", "j":
		p.pos = min(len(p.lines)-1, p.pos+1)
	case "pgup", "left":
		p.pos = max(0, p.pos-10)
	case "pgdown", "right":
		p.pos = min(len(p.lines)-1, p.pos+10)
	case "l":
		// Label the chosen entry: the command is put in the editor for
		// the label's text.
		m.tpick = nil
		m.editor.SetValue("/label -e " + p.lines[p.pos].EntryID + " ")
		m.editor.CursorEnd()
	case "esc", "ctrl+c", "q":
		m.tpick = nil
		m.print(m.st.dim.Render("(the conversation goes on where it was)"))
	case "enter", "s":
		m.tpick = nil
		l := p.lines[p.pos]
		// A user message is put back in the editor, to send again
		// (changed or not) from its parent.
		if e := m.conv.Session().Entry(l.EntryID); e != nil && l.Kind == "user" {
			if msg, err := e.Message(); err == nil && msg.Role == "user" {
				var parts []string
				for _, b := range msg.Content {
					if b.Type == "text" {
						parts = append(parts, b.Text)
					}
				}
				m.editor.SetValue(strings.Join(parts, "\n"))
			}
		}
		line := "/tree " + l.EntryID
		if k.String() == "s" {
			line = "/tree -s " + l.EntryID
		}
		m.print(m.st.user.Render("› ") + line)
		return m.startWork("command", Prompt{Text: line})
	}
	return nil
}

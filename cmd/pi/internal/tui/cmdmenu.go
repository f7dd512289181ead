package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/runtime/conversation"
)

// menuItem is a slash command the dropdown offers.
type menuItem struct {
	name, args, help string
}

// menuRows is how many commands the dropdown shows at a time.
const menuRows = 8

// cmdMenu is the dropdown of slash commands shown while the editor holds
// "/" and a command name being typed: the commands whose names start with
// what is typed, pos the highlighted one.
type cmdMenu struct {
	items []menuItem
	pos   int
}

// slashCommands are the commands a person can type: the conversation's
// (pi's own in /help order, then the extensions' in load order).
func slashCommands(conv *conversation.Conversation) []menuItem {
	var out []menuItem
	for _, c := range conv.Commands() {
		help := clean(c.Description)
		if c.Extension != "" {
			if help != "" {
				help += " "
			}
			help += "(" + clean(c.Extension) + ")"
		}
		out = append(out, menuItem{clean(c.Name), clean(c.ArgumentHint), help})
	}
	return out
}

// commandNames lists the command names for Tab completion.
func (m *model) commandNames() []string {
	var out []string
	for _, c := range slashCommands(m.conv) {
		out = append(out, c.name)
	}
	return out
}

// menuTyped is the command name being typed: the editor holds one line,
// "/" and no space yet.
func (m *model) menuTyped() (string, bool) {
	v := m.editor.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\n") {
		return "", false
	}
	return v[1:], true
}

// updateMenu opens, narrows or closes the dropdown after the editor
// changed. Esc closed it until the editor no longer holds a command name.
func (m *model) updateMenu() {
	typed, ok := m.menuTyped()
	if !ok {
		m.menu, m.menuOff = nil, false
		return
	}
	if m.menuOff {
		return
	}
	var items []menuItem
	for _, c := range slashCommands(m.conv) {
		if strings.HasPrefix(c.name, typed) {
			items = append(items, c)
		}
	}
	if len(items) == 0 {
		m.menu = nil
		return
	}
	pos := 0
	if m.menu != nil && m.menu.pos < len(m.menu.items) {
		// The highlighted command stays highlighted while it matches.
		cur := m.menu.items[m.menu.pos].name
		for i, it := range items {
			if it.name == cur {
				pos = i
			}
		}
	}
	m.menu = &cmdMenu{items: items, pos: pos}
}

// onMenuKey handles the keys of an open dropdown: ↑/↓ (Ctrl-P/Ctrl-N)
// move, Tab or Enter take the highlighted command into the editor (Enter
// sends a name already typed whole), Esc closes it. It reports whether the
// key was the dropdown's.
func (m *model) onMenuKey(k tea.KeyMsg) (tea.Cmd, bool) {
	mn := m.menu
	switch k.String() {
	case "up", "ctrl+p":
		mn.pos = (mn.pos + len(mn.items) - 1) % len(mn.items)
	case "down", "ctrl+n":
		mn.pos = (mn.pos + 1) % len(mn.items)
	case "esc":
		m.menu, m.menuOff = nil, true
	case "tab", "enter":
		if k.Paste {
			return nil, false
		}
		name := mn.items[mn.pos].name
		if typed, _ := m.menuTyped(); k.String() == "enter" && typed == name {
			m.menu = nil
			return nil, false // the name is whole: Enter sends it
		}
		m.editor.SetValue("/" + name + " ")
		m.fitEditor()
		m.menu, m.menuOff = nil, false
	default:
		return nil, false
	}
	return nil, true
}

// view draws the dropdown: each command with its arguments and help, the
// highlighted one marked; a window of menuRows around it.
func (mn *cmdMenu) view(st styles, width int) string {
	start := max(0, min(mn.pos-menuRows/2, len(mn.items)-menuRows))
	end := min(len(mn.items), start+menuRows)
	nameW := 0
	for _, it := range mn.items[start:end] {
		nameW = max(nameW, ansi.StringWidth(usage(it)))
	}
	var b strings.Builder
	for i := start; i < end; i++ {
		it := mn.items[i]
		line := fmt.Sprintf("%-*s  %s", nameW, usage(it), it.help)
		line = ansi.Truncate(line, max(width-3, 10), "…")
		if i == mn.pos {
			b.WriteString(st.accent.Render("▸ " + line))
		} else {
			b.WriteString("  " + st.dim.Render(line))
		}
		b.WriteString("\n")
	}
	if n := len(mn.items) - (end - start); n > 0 {
		b.WriteString(st.dim.Render(fmt.Sprintf("  (%d of %d commands; ↑↓ move, Tab or Enter takes, Esc closes)", end-start, len(mn.items))))
		b.WriteString("\n")
	}
	return b.String()
}

func usage(it menuItem) string {
	if it.args == "" {
		return "/" + it.name
	}
	return "/" + it.name + " " + it.args
}

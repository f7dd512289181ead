package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// editorRows are the rows the editor shows, their prompts and padding
// trimmed.
func editorRows(ed textarea.Model) []string {
	var out []string
	for _, l := range strings.Split(ansi.Strip(ed.View()), "\n") {
		out = append(out, strings.TrimSpace(strings.TrimPrefix(l, "> ")))
	}
	return out
}

func testEditor() textarea.Model {
	r := profileRenderer(termenv.Ascii)
	return newEditor(r, r)
}

func keyRunes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// typeInto sends msgs to the editor as the model does: each update, then
// fitEditor, then a frame drawn (the textarea scrolls by what it drew).
func typeInto(ed *textarea.Model, limit int, msgs ...tea.Msg) {
	for _, msg := range msgs {
		*ed, _ = ed.Update(msg)
		fitEditor(ed, limit)
		ed.View()
	}
}

// TestEditorShowsEveryLine: a new line typed or pasted into a one-row
// editor grows it and the first line stays in view; past the limit it
// scrolls to keep the cursor in view, and back to the top when the cursor
// goes there or lines are deleted.
func TestEditorShowsEveryLine(t *testing.T) {
	ed := testEditor()
	ed.SetWidth(40)
	newline := tea.KeyMsg{Type: tea.KeyEnter, Alt: true}
	typeInto(&ed, 4, keyRunes("first line"), newline, keyRunes("second line"))
	if got := editorRows(ed); len(got) != 2 || got[0] != "first line" || got[1] != "second line" {
		t.Fatalf("after Alt+Enter the editor shows %q", got)
	}

	ed = testEditor()
	ed.SetWidth(40)
	typeInto(&ed, 4, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p1\np2\np3"), Paste: true})
	if got := editorRows(ed); len(got) != 3 || got[0] != "p1" || got[2] != "p3" {
		t.Fatalf("after a paste the editor shows %q", got)
	}
	// Past the limit: the last rows, the cursor's last.
	typeInto(&ed, 4, newline, keyRunes("p4"), newline, keyRunes("p5"), newline, keyRunes("p6"))
	if got := editorRows(ed); len(got) != 4 || got[0] != "p3" || got[3] != "p6" {
		t.Fatalf("six lines in four rows: %q, want p3…p6", got)
	}
	if ed.Line() != 5 {
		t.Fatalf("the cursor moved to line %d", ed.Line())
	}
	// Up to the first line: the view follows it.
	up := tea.KeyMsg{Type: tea.KeyUp}
	typeInto(&ed, 4, up, up, up, up, up)
	if got := editorRows(ed); got[0] != "p1" || ed.Line() != 0 {
		t.Fatalf("cursor on line %d, the editor shows %q", ed.Line(), got)
	}
	// A long line wraps into rows that count as rows.
	ed = testEditor()
	ed.SetWidth(20)
	typeInto(&ed, 6, keyRunes("one two three four five six seven eight nine ten"))
	got := editorRows(ed)
	if len(got) < 3 || !strings.HasPrefix(got[0], "one") || !strings.HasSuffix(got[len(got)-1], "ten") {
		t.Fatalf("a wrapped line shows as %q", got)
	}
	// Deleting lines shrinks the editor and shows the first line again.
	ed = testEditor()
	ed.SetWidth(40)
	typeInto(&ed, 3, keyRunes("a"), newline, keyRunes("b"), newline, keyRunes("c"), newline, keyRunes("d"), newline, keyRunes("e"))
	bs := tea.KeyMsg{Type: tea.KeyBackspace}
	typeInto(&ed, 3, bs, bs, bs, bs, bs, bs)
	if got := editorRows(ed); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("after deleting to two lines the editor shows %q", got)
	}
}

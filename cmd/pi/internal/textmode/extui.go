package textmode

import (
	"context"
	"fmt"
	"strings"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
)

// The line mode's share of ABI 1.2's extension UI (docs/abi.md, "Front
// ends"): the editor dialog reads lines up to a "." line; statuses and
// widgets are printed as "[NAME] TEXT" when they change (nothing for
// clears); the title, the working message and the editor's text are
// ignored; components answer "no-tui".

var _ app.ExtensionUI = (*LineUI)(nil)

// flatLine is a guest's line as the line mode prints it: its spans' text
// with every control character removed.
func flatLine(l app.Line) string { return termtext.Flat(l.Text()) }

// Editor prints the title and reads lines up to a line holding only ".";
// a "." first (an empty answer) cancels.
func (u *LineUI) Editor(ctx context.Context, title, prefill string) (string, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := fmt.Sprintf("\n? %s (lines; a line with only . ends)\n", line(title))
	if prefill != "" {
		q += "  was: " + termtext.IndentLater(termtext.Printable(prefill)) + "\n"
	}
	fmt.Fprint(u.out, q)
	var lines []string
	for {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		if !u.lines.Scan() {
			return "", false, fmt.Errorf("no answer: end of input")
		}
		l := strings.TrimRight(u.lines.Text(), "\r")
		if l == "." {
			break
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return "", false, nil
	}
	return strings.Join(lines, "\n"), true, nil
}

// SetStatus prints "[NAME] TEXT"; a clear prints nothing.
func (u *LineUI) SetStatus(extension, key string, text app.Line) {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := extension + "\x00" + key
	if text == nil {
		delete(u.statuses, id)
		return
	}
	s := flatLine(text)
	if last, ok := u.statuses[id]; ok && last == s {
		return
	}
	if u.statuses == nil {
		u.statuses = map[string]string{}
	}
	u.statuses[id] = s
	fmt.Fprintf(u.out, "[%s] %s\n", extension, s)
}

// SetWidget prints each line as "[NAME] LINE"; a clear prints nothing.
func (u *LineUI) SetWidget(extension, key string, lines []app.Line, placement string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, l := range lines {
		fmt.Fprintf(u.out, "[%s] %s\n", extension, flatLine(l))
	}
}

// SetTitle, SetWorkingMessage and SetEditorText do nothing in the line
// mode.
func (u *LineUI) SetTitle(string, string)           {}
func (u *LineUI) SetWorkingMessage(string, *string) {}
func (u *LineUI) SetEditorText(string, string)      {}
func (u *LineUI) EditorText() (string, bool)        { return "", false }
func (u *LineUI) OpenComponent(*app.Component) bool { return false }
func (u *LineUI) RerenderComponent(*app.Component)  {}
func (u *LineUI) CloseComponent(c *app.Component)   {}

package textmode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/redact"
)

// LineUI is the interactive line mode's app.UI: notices (extensions'
// ui.notify) are printed, questions (ui.confirm, approvals) read a line
// from the prompt's own reader, which is idle while a turn or a command
// runs. The line reader cannot be interrupted, so a question waits for its
// answer even past ctx's deadline.
type LineUI struct {
	mu    sync.Mutex
	lines *bufio.Scanner
	out   io.Writer
	// statuses are the last status printed per extension and key
	// (extui.go): a status is printed when it changes.
	statuses map[string]string
}

// NewLineUI asks on out (through termtext's rule) and reads the answers
// from lines, the prompt's own reader.
func NewLineUI(lines *bufio.Scanner, out io.Writer) *LineUI {
	return &LineUI{lines: lines, out: termtext.NewWriter(out)}
}

var _ app.UI = (*LineUI)(nil)

// line is an extension's title, option or placeholder as the line UI
// shows it: cleaned, on one line.
func line(s string) string { return termtext.OneLine(termtext.Printable(s)) }

// Notify prints the message (its later lines indented, so that it cannot
// pass for a question or a prompt) ("warning: MESSAGE" for warnings and errors).
func (u *LineUI) Notify(message string, level app.NotifyLevel) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if level != app.NotifyInfo && level != "" {
		message = string(level) + ": " + message
	}
	fmt.Fprintf(u.out, "\n%s\n", termtext.IndentLater(termtext.Printable(message)))
}

// ask prints the question and reads the answer line.
func (u *LineUI) ask(ctx context.Context, question string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fmt.Fprint(u.out, question)
	if !u.lines.Scan() {
		return "", errors.New("no answer: end of input")
	}
	return strings.TrimSpace(u.lines.Text()), nil
}

// Confirm asks "? TITLE: MESSAGE [y/N]"; y or yes confirms.
func (u *LineUI) Confirm(ctx context.Context, title, message string) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	a, err := u.ask(ctx, fmt.Sprintf("\n? %s: %s [y/N] ", line(title), termtext.IndentLater(termtext.Printable(message))))
	if err != nil {
		return false, err
	}
	switch strings.ToLower(a) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// Select lists the options numbered and reads a number; anything else
// dismisses the question.
func (u *LineUI) Select(ctx context.Context, title string, options []string) (string, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "\n? %s\n", line(title))
	for i, o := range options {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, line(o))
	}
	b.WriteString("  number (Enter dismisses): ")
	a, err := u.ask(ctx, b.String())
	if err != nil {
		return "", false, err
	}
	var n int
	if _, err := fmt.Sscanf(a, "%d", &n); err != nil || n < 1 || n > len(options) {
		return "", false, nil
	}
	return options[n-1], true, nil
}

// Input reads one line; an empty line dismisses the question.
func (u *LineUI) Input(ctx context.Context, title, placeholder string) (string, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := fmt.Sprintf("\n? %s: ", line(title))
	if placeholder != "" {
		q = fmt.Sprintf("\n? %s (%s): ", line(title), line(placeholder))
	}
	a, err := u.ask(ctx, q)
	if err != nil || a == "" {
		return "", false, err
	}
	return a, true, nil
}

// showFunc prints what a command or an input hook shows the person: the
// text on stdout, or in json mode one line {"type":"notice","text":...}.
func showFunc(jsonLines bool, r *redact.Redactor, stdout io.Writer) func(string) {
	if jsonLines {
		stdout = termtext.NewJSONWriter(stdout)
		return func(s string) {
			b, _ := json.Marshal(map[string]string{"type": "notice", "text": s})
			stdout.Write(append(r.Bytes(b), '\n'))
		}
	}
	return func(s string) { fmt.Fprintln(stdout, termtext.Printable(r.String(s))) }
}

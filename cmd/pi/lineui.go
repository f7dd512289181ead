package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pi-go/pi/runtime/redact"
)

// lineUI is the interactive line mode's answer to extensions' ui.notify
// and ui.confirm (ABI 1.1): notices are printed, questions read a y/N line
// from the prompt's own reader, which is idle while a turn or a command
// runs.
type lineUI struct {
	mu    sync.Mutex
	lines *bufio.Scanner
	out   io.Writer
}

// Notify prints "[NAME] MESSAGE" ("[NAME] warning: MESSAGE" for warnings
// and errors).
func (u *lineUI) Notify(ext, message, level string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if level != "info" {
		message = level + ": " + message
	}
	fmt.Fprintf(u.out, "\n[%s] %s\n", ext, printable(message))
}

// Confirm asks "? [NAME] TITLE: MESSAGE [y/N]"; y or yes confirms. The
// line reader cannot be interrupted, so the question waits for its answer
// even past ctx's deadline.
func (u *lineUI) Confirm(ctx context.Context, ext, title, message string) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	fmt.Fprintf(u.out, "\n? [%s] %s: %s [y/N] ", ext, printable(title), printable(message))
	if !u.lines.Scan() {
		return false, errors.New("no answer: end of input")
	}
	switch strings.ToLower(strings.TrimSpace(u.lines.Text())) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// showFunc prints what a command or an input hook shows the person in
// print mode: the text on stdout, or in json mode one line
// {"type":"notice","text":...}.
func showFunc(mode string, r *redact.Redactor, stdout io.Writer) func(string) {
	if mode == "json" {
		return func(s string) {
			b, _ := json.Marshal(map[string]string{"type": "notice", "text": s})
			stdout.Write(append(r.Bytes(b), '\n'))
		}
	}
	return func(s string) { fmt.Fprintln(stdout, printable(r.String(s))) }
}

// printable replaces what an extension's text could use to drive the
// terminal — control characters other than newline and tab, DEL and the
// C1 controls (ESC sequences that move the cursor, rewrite a line, set the
// title) — with "�", so a notice or a question cannot fake another prompt.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return '\uFFFD'
		}
		return r
	}, s)
}

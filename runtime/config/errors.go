package config

import (
	"fmt"
	"strings"
)

// Error is one problem in one pi.toml: a TOML syntax error, an unknown key,
// a value of the wrong type or a bad value. Load returns one *Error, or
// several joined with errors.Join (one a line, in file and line order); use
// errors.As to get at the first.
type Error struct {
	// File is the absolute path of the pi.toml.
	File string
	// Line is 1-based; 0 when the problem has no single line (an unreadable
	// file).
	Line int
	// Column is 1-based and set for syntax errors only.
	Column int
	// Key is the key path the problem is about ("tools.bash.shell",
	// "extensions[1].sha256"); empty for syntax errors.
	Key string
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

var _ error = (*Error)(nil)

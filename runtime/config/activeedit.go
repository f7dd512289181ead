package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/atomicfile"
)

// ErrNoActiveList is returned (wrapped) by AddActiveTools when the file
// does not set tools.active (every tool is then active already).
var ErrNoActiveList = errors.New("it does not set tools.active")

// AddActiveTools appends names to the tools.active list of the pi.toml at
// tomlPath (`pi ext install --activate`, `pi mcp add --activate`), leaving
// out those it lists already. Only the list changes: the names go after
// its last element (before a trailing comma's comment, so a list written
// one name a line keeps its shape), and every other byte of the file
// stays as it was. The result is parsed and compared with the old file
// before it atomically replaces it: it must load, and differ only in
// those names. It reports the names it added (none when the list already
// had them all; nothing is written then).
//
// # Errors
//
// ErrNoActiveList (wrapped) when the file has no tools.active; a file
// that does not load; a list written so that its end cannot be found on
// the lines from its key on (edit the file by hand then); a failed write.
func AddActiveTools(tomlPath string, names []string) (added []string, err error) {
	file, err := filepath.Abs(tomlPath)
	if err != nil {
		return nil, fmt.Errorf("add active tools to %s: %w", tomlPath, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("add %s to tools.active in %s: %s", strings.Join(names, ", "), file, fmt.Sprintf(format, args...))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fail("%v", err)
	}
	before, err := parseLayer(file, data, ScopeProject)
	if err != nil {
		return nil, fmt.Errorf("add active tools: the file does not load: %w", err)
	}
	if !before.activeSet {
		return nil, fmt.Errorf("add %s to tools.active in %s: %w", strings.Join(names, ", "), file, ErrNoActiveList)
	}
	for _, n := range names {
		if !slices.Contains(before.active, n) && !slices.Contains(added, n) {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	start, _, ok := lineBounds(data, indexDocument(data).lines["tools.active"])
	if !ok {
		return nil, fail("cannot find its tools.active key; edit the file by hand")
	}
	at, sep, end, ok := activeListEnd(data, start)
	if !ok {
		return nil, fail("cannot find the end of its tools.active list; edit the file by hand")
	}
	quoted := make([]string, len(added))
	for i, n := range added {
		quoted[i] = tomlString(n)
	}
	ins := sep + strings.Join(quoted, ", ") + end
	var out bytes.Buffer
	out.Grow(len(data) + len(ins))
	out.Write(data[:at])
	out.WriteString(ins)
	out.Write(data[at:])
	after, err := parseLayer(file, out.Bytes(), ScopeProject)
	if err != nil {
		return nil, fmt.Errorf("add active tools to %s: the result would not load: %w", file, err)
	}
	want := *before
	want.active = append(slices.Clone(before.active), added...)
	if !reflect.DeepEqual(&want, after) {
		return nil, fail("the edit changed more than the list; edit the file by hand")
	}
	if err := atomicfile.WriteFile(file, out.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("add active tools: %w", err)
	}
	return added, nil
}

// activeListEnd finds, in the array that follows the first '=' from off
// (the line of the tools.active key), where new elements go: right after
// its last element, or after a trailing comma, or after '[' when it is
// empty; sep is what goes before them ("", ", " or " ") and end what goes
// after them ("," after a trailing comma, which stays last). ok is false when
// the array's end is not found. Strings (all four kinds), comments and
// nested arrays are skipped as TOML reads them.
func activeListEnd(data []byte, off int) (at int, sep, end string, ok bool) {
	i := off
	for i < len(data) && data[i] != '=' && data[i] != '\n' {
		i++
	}
	if i >= len(data) || data[i] != '=' {
		return 0, "", "", false
	}
	i++
	for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
		i++
	}
	if i >= len(data) || data[i] != '[' {
		return 0, "", "", false
	}
	depth := 0
	last, lastKind := i+1, byte('[')
	for i < len(data) {
		c := data[i]
		switch {
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			continue
		case c == '[':
			depth++
			if depth > 1 {
				lastKind = 'v'
			}
		case c == ']':
			depth--
			if depth == 0 {
				switch lastKind {
				case '[':
					return last, "", "", true
				case ',':
					return last, " ", ",", true
				}
				return last, ", ", "", true
			}
			last = i + 1
		case c == ',':
			if depth == 1 {
				last, lastKind = i+1, ','
			}
		case c == '"' || c == '\'':
			next, ok := skipString(data, i)
			if !ok {
				return 0, "", "", false
			}
			i = next
			if depth == 1 {
				last, lastKind = i, 'v'
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			// A bare value (a number, a boolean): pi's list holds strings,
			// but the end is found all the same.
			if depth == 1 {
				last, lastKind = i+1, 'v'
			}
		}
		i++
	}
	return 0, "", "", false
}

// skipString returns the offset just past the TOML string starting at i.
func skipString(data []byte, i int) (int, bool) {
	q := data[i]
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		end := bytes.Index(data[i+3:], []byte{q, q, q})
		if end < 0 {
			return 0, false
		}
		j := i + 3 + end + 3
		for j < len(data) && data[j] == q { // up to two quotes may end the content
			j++
		}
		return j, true
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j + 1, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

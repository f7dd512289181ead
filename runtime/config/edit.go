package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/atomicfile"
)

// Errors of AppendExtension and RemoveExtension, for errors.Is.
var (
	ErrExtensionExists   = errors.New("an extension of that name is already there")
	ErrExtensionNotFound = errors.New("no extension of that name")
)

// AppendExtension adds e as an [[extensions]] block at the end of the
// pi.toml at tomlPath, creating the file and its folder when missing, and
// leaving the bytes already in the file as they were. The block has name,
// path (relative to the file's folder when e.Path is inside it, else
// absolute; a relative e.Path is written as given), sha256, override when
// true, and [extensions.grants], [extensions.limits] and
// [extensions.config] subtables when set. e.Scope, e.File and e.Line are
// ignored. The new file is parsed and validated before it atomically
// replaces the old one, so a refused append writes nothing.
//
// # Errors
//
// ErrExtensionExists (wrapped) when the file already has an extension of
// e.Name; an existing file that does not load; an e that would not load
// (bad name, sha256 or grant, a config value TOML cannot hold); a failed
// write.
func AppendExtension(tomlPath string, e Extension) error {
	file, err := filepath.Abs(tomlPath)
	if err != nil {
		return fmt.Errorf("append extension %q to %s: %w", e.Name, tomlPath, err)
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("append extension %q to %s: %w", e.Name, file, err)
	}
	if len(old) > 0 {
		l, err := parseLayer(file, old, ScopeProject)
		if err != nil {
			return fmt.Errorf("append extension %q to %s: the file does not load: %w", e.Name, file, err)
		}
		for _, x := range l.extensions {
			if x.Name == e.Name {
				return fmt.Errorf("append extension %q to %s (line %d): %w", e.Name, file, x.Line, ErrExtensionExists)
			}
		}
	}
	if err := checkUTF8(e); err != nil {
		return fmt.Errorf("append extension %q to %s: %w", e.Name, file, err)
	}
	block, err := renderExtension(filepath.Dir(file), e)
	if err != nil {
		return fmt.Errorf("append extension %q to %s: %w", e.Name, file, err)
	}
	return writeAppended(file, old, block, fmt.Sprintf("extension %q", e.Name), func(l *layer) bool {
		n := len(l.extensions)
		return n > 0 && l.extensions[n-1].Name == e.Name
	})
}

// writeAppended appends block to old (the file's bytes, after a blank
// line), checks that the result loads and that its last entry is the one
// appended (last), and atomically replaces file with it; what names the
// entry in messages ("extension \"loc\""). A refused append writes
// nothing. It is the one tail of AppendExtension and AppendMCPServer.
func writeAppended(file string, old, block []byte, what string, last func(*layer) bool) error {
	var buf bytes.Buffer
	buf.Write(old)
	if len(old) > 0 {
		if !bytes.HasSuffix(old, []byte("\n")) {
			buf.WriteByte('\n')
		}
		if !bytes.HasSuffix(old, []byte("\n\n")) {
			buf.WriteByte('\n')
		}
	}
	buf.Write(block)
	l, err := parseLayer(file, buf.Bytes(), ScopeProject)
	if err != nil {
		return fmt.Errorf("append %s to %s: the result would not load: %w", what, file, err)
	}
	if !last(l) {
		return fmt.Errorf("append %s to %s: the result would not load it", what, file)
	}
	if err := atomicfile.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("append %s: %w", what, err)
	}
	return nil
}

// checkUTF8 refuses strings TOML cannot hold: written as they are they would
// come back with U+FFFD in place of the invalid bytes, a different value.
func checkUTF8(e Extension) error {
	check := func(key, v string) error {
		if !utf8.ValidString(v) {
			return fmt.Errorf("%s %q is not valid UTF-8", key, v)
		}
		return nil
	}
	for _, kv := range [][2]string{{"name", e.Name}, {"path", e.Path}, {"sha256", e.SHA256}} {
		if err := check(kv[0], kv[1]); err != nil {
			return err
		}
	}
	for _, g := range []struct {
		key  string
		list []string
	}{{"grants.fs", e.Grants.FS}, {"grants.exec", e.Grants.Exec}, {"grants.env", e.Grants.Env}, {"grants.http", e.Grants.HTTP}, {"grants.tools", e.Grants.Tools}} {
		for i, v := range g.list {
			if err := check(fmt.Sprintf("%s[%d]", g.key, i), v); err != nil {
				return err
			}
		}
	}
	var walk func(key string, v any) error
	walk = func(key string, v any) error {
		switch v := v.(type) {
		case string:
			return check(key, v)
		case map[string]any:
			for k, x := range v {
				if err := check(key+" key", k); err != nil {
					return err
				}
				if err := walk(key+"."+k, x); err != nil {
					return err
				}
			}
		case []any:
			for i, x := range v {
				if err := walk(fmt.Sprintf("%s[%d]", key, i), x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("config", map[string]any(e.Config))
}

// renderExtension writes e as a TOML block.
func renderExtension(dir string, e Extension) ([]byte, error) {
	var b bytes.Buffer
	p := e.Path
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(dir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p = rel
		}
	}
	p = filepath.ToSlash(p)
	b.WriteString("[[extensions]]\n")
	fmt.Fprintf(&b, "name = %s\n", tomlString(e.Name))
	fmt.Fprintf(&b, "path = %s\n", tomlString(p))
	fmt.Fprintf(&b, "sha256 = %s\n", tomlString(strings.ToLower(e.SHA256)))
	if e.Override {
		b.WriteString("override = true\n")
	}
	if !e.Grants.Empty() {
		b.WriteString("\n[extensions.grants]\n")
		for _, g := range []struct {
			key  string
			list []string
		}{{"fs", e.Grants.FS}, {"exec", e.Grants.Exec}, {"env", e.Grants.Env}, {"http", e.Grants.HTTP}, {"tools", e.Grants.Tools}} {
			if len(g.list) == 0 {
				continue
			}
			quoted := make([]string, len(g.list))
			for i, s := range g.list {
				quoted[i] = tomlString(s)
			}
			fmt.Fprintf(&b, "%s = [%s]\n", g.key, strings.Join(quoted, ", "))
		}
		if e.Grants.LLM {
			b.WriteString("llm = true\n")
		}
		if e.Grants.Model {
			b.WriteString("model = true\n")
		}
	}
	if e.Limits.MemoryMB != 0 || e.Limits.TimeoutMS != 0 || e.Limits.KVMB != 0 || e.Limits.LLMTokens != 0 {
		b.WriteString("\n[extensions.limits]\n")
		if e.Limits.MemoryMB != 0 {
			fmt.Fprintf(&b, "memory_mb = %d\n", e.Limits.MemoryMB)
		}
		if e.Limits.TimeoutMS != 0 {
			fmt.Fprintf(&b, "timeout_ms = %d\n", e.Limits.TimeoutMS)
		}
		if e.Limits.KVMB != 0 {
			fmt.Fprintf(&b, "kv_mb = %d\n", e.Limits.KVMB)
		}
		if e.Limits.LLMTokens != 0 {
			fmt.Fprintf(&b, "llm_tokens = %d\n", e.Limits.LLMTokens)
		}
	}
	if e.Config != nil {
		b.WriteString("\n[extensions.config]\n")
		keys := slices.Sorted(maps.Keys(e.Config))
		for _, k := range keys {
			v, err := tomlValue(e.Config[k])
			if err != nil {
				return nil, fmt.Errorf("config key %q: %w", k, err)
			}
			fmt.Fprintf(&b, "%s = %s\n", tomlKey(k), v)
		}
	}
	return b.Bytes(), nil
}

// tomlValue writes a JSON-like value inline (tables as inline tables).
func tomlValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return tomlString(v), nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return strconv.FormatInt(i, 10), nil
		}
		f, err := v.Float64()
		if err != nil {
			return "", fmt.Errorf("bad number %q", v)
		}
		return tomlValue(f)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("%v cannot be passed as JSON", v)
		}
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return strconv.FormatInt(int64(v), 10), nil
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s, nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := tomlValue(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case []string:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = tomlString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		parts := make([]string, len(keys))
		for i, k := range keys {
			s, err := tomlValue(v[k])
			if err != nil {
				return "", err
			}
			parts[i] = tomlKey(k) + " = " + s
		}
		if len(parts) == 0 {
			return "{}", nil
		}
		return "{ " + strings.Join(parts, ", ") + " }", nil
	case nil:
		return "", errors.New("null cannot be written in TOML")
	}
	return "", fmt.Errorf("%T cannot be written in TOML", v)
}

func tomlKey(k string) string {
	if isBareKey(k) {
		return k
	}
	return tomlString(k)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// RemoveExtension removes the [[extensions]] block named name from the
// pi.toml at tomlPath: its header, the comment lines right above the
// header, its keys and subtables, and the blank lines up to the next table
// (whose own comment lines stay). When the block is the last thing in the
// file, the blank lines before it go too. Every other byte stays as it
// was; the file is replaced atomically.
//
// # Errors
//
// ErrExtensionNotFound (wrapped, with the installed names) when no
// extension has that name; a file that cannot be read or is not valid
// TOML; an extension written inline (extensions = [{...}]), which is left
// for the user to edit; a failed write.
func RemoveExtension(tomlPath, name string) error {
	return removeNamedTable(tomlPath, "extensions", "extension", "installed", name, ErrExtensionNotFound)
}

// removeNamedTable removes the element named name of the array of tables
// key ([[extensions]], [[mcp]]) from the pi.toml at tomlPath, as
// RemoveExtension describes; noun names the element in messages and have
// says how the names that are there are listed ("installed").
func removeNamedTable(tomlPath, key, noun, have, name string, notFound error) error {
	file, err := filepath.Abs(tomlPath)
	if err != nil {
		return fmt.Errorf("remove %s %q from %s: %w", noun, name, tomlPath, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("remove %s %q from %s: %w", noun, name, file, err)
	}
	raw, err := decodeTOML(file, data)
	if err != nil {
		return fmt.Errorf("remove %s %q: %w", noun, name, err)
	}
	names := tableNames(raw, key)
	i := slices.Index(names, name)
	if i < 0 {
		installed := "none " + have
		if len(names) > 0 {
			installed = have + ": " + strings.Join(names, ", ")
		}
		return fmt.Errorf("remove %s %q from %s: %w (%s)", noun, name, file, notFound, installed)
	}
	idx := indexDocument(data)
	elem := indexKey(key, i)
	owned := func(h tableHeader) bool {
		return h.path == elem || strings.HasPrefix(h.path, elem+".") || strings.HasPrefix(h.path, elem+"[")
	}
	var cuts [][2]int
	found := false
	for k, h := range idx.headers {
		if !owned(h) {
			continue
		}
		start, end := h.start, len(data)
		if h.path == elem {
			found = true
			start = commentsAbove(data, idx, start)
		}
		if k+1 < len(idx.headers) {
			end = idx.headers[k+1].start
			if !owned(idx.headers[k+1]) {
				end = commentsAbove(data, idx, end)
			}
		}
		cuts = append(cuts, [2]int{start, end})
	}
	if !found {
		return fmt.Errorf("remove %s %q from %s: it is written inline (%s = [...]); edit the file by hand", noun, name, file, key)
	}
	// Coalesce touching cuts (headers come in document order).
	merged := cuts[:1]
	for _, c := range cuts[1:] {
		if last := &merged[len(merged)-1]; c[0] <= last[1] {
			last[1] = max(last[1], c[1])
		} else {
			merged = append(merged, c)
		}
	}
	if last := &merged[len(merged)-1]; last[1] == len(data) {
		last[0] = blankLinesAbove(data, last[0])
	}
	var out bytes.Buffer
	prev := 0
	for _, c := range merged {
		out.Write(data[prev:c[0]])
		prev = c[1]
	}
	out.Write(data[prev:])
	if _, err := decodeTOML(file, out.Bytes()); err != nil {
		return fmt.Errorf("remove %s %q from %s: the result would not parse: %w", noun, name, file, err)
	}
	if err := atomicfile.WriteFile(file, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("remove %s %q: %w", noun, name, err)
	}
	return nil
}

// extensionNames lists the names of a decoded document's [[extensions]].
func extensionNames(raw map[string]any) []string { return tableNames(raw, "extensions") }

// tableNames lists the name of each element of a decoded document's array
// of tables key, in order ("" where there is no string name).
func tableNames(raw map[string]any, key string) []string {
	var names []string
	switch v := raw[key].(type) {
	case []map[string]any:
		for _, e := range v {
			n, _ := e["name"].(string)
			names = append(names, n)
		}
	case []any:
		for _, e := range v {
			m, _ := e.(map[string]any)
			n, _ := m["name"].(string)
			names = append(names, n)
		}
	}
	return names
}

// lineAbove returns the start and the trimmed text of the line that ends
// right before off (which is a line start); ok is false at the top.
func lineAbove(data []byte, off int) (start int, text string, ok bool) {
	if off <= 0 || data[off-1] != '\n' {
		return off, "", false
	}
	start = bytes.LastIndexByte(data[:off-1], '\n') + 1
	return start, strings.TrimSpace(string(data[start : off-1])), true
}

// commentsAbove moves off up over the comment lines directly above it
// (real comments: a line of a multi-line string that starts with # is not
// one).
func commentsAbove(data []byte, idx *docIndex, off int) int {
	for {
		start, _, ok := lineAbove(data, off)
		if !ok || !idx.comments[1+bytes.Count(data[:start], []byte("\n"))] {
			return off
		}
		off = start
	}
}

// blankLinesAbove moves off up over the blank lines directly above it.
func blankLinesAbove(data []byte, off int) int {
	for {
		start, text, ok := lineAbove(data, off)
		if !ok || text != "" {
			return off
		}
		off = start
	}
}

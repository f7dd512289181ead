package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/extspec"
)

// SetExtensionSHA256 rewrites the sha256 of the [[extensions]] entry named
// name in the pi.toml at tomlPath (`pi ext update`). Only the hex digits of
// the old value change: every other byte of the file (comments, grants,
// limits, [extensions.config], the order of keys) stays as it was. The
// result is parsed and compared with the old file before it atomically
// replaces it: it must load, and differ only in that one sha256.
//
// # Errors
//
// ErrExtensionNotFound (wrapped) when no entry has that name; a sum that is
// not 64 hex digits; a file that does not load; a sha256 written so that it
// cannot be found on its line exactly once (edit the file by hand then); a
// failed write.
func SetExtensionSHA256(tomlPath, name, sum string) error {
	file, err := filepath.Abs(tomlPath)
	if err != nil {
		return fmt.Errorf("set sha256 of extension %q in %s: %w", name, tomlPath, err)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("set sha256 of extension %q in %s: %s", name, file, fmt.Sprintf(format, args...))
	}
	if err := extspec.CheckSHA256(sum); err != nil {
		return fail("sha256 %v", err)
	}
	sum = strings.ToLower(sum)
	data, err := os.ReadFile(file)
	if err != nil {
		return fail("%v", err)
	}
	before, err := parseLayer(file, data, ScopeProject)
	if err != nil {
		return fmt.Errorf("set sha256 of extension %q: the file does not load: %w", name, err)
	}
	i := -1
	var names []string
	for k, e := range before.extensions {
		names = append(names, e.Name)
		if e.Name == name {
			i = k
		}
	}
	if i < 0 {
		installed := "none installed"
		if len(names) > 0 {
			installed = "installed: " + strings.Join(names, ", ")
		}
		return fmt.Errorf("set sha256 of extension %q in %s: %w (%s)", name, file, ErrExtensionNotFound, installed)
	}
	old := before.extensions[i].SHA256
	line := indexDocument(data).lines[joinKey(indexKey("extensions", i), "sha256")]
	start, end, ok := lineBounds(data, line)
	if !ok {
		return fail("cannot find its sha256 key; edit the file by hand")
	}
	// The old digest, quoted, once on its line (its case as written).
	seg := data[start:end]
	at := -1
	for _, q := range []string{`"`, `'`} {
		lower := bytes.ToLower(seg)
		needle := []byte(q + old + q)
		if n := bytes.Count(lower, needle); n == 1 {
			if at >= 0 {
				at = -2
				break
			}
			at = bytes.Index(lower, needle) + 1
		} else if n > 1 {
			at = -2
			break
		}
	}
	if at < 0 {
		return fail("its sha256 is not written once on line %d as a plain quoted string; edit the file by hand", line)
	}
	var out bytes.Buffer
	out.Grow(len(data))
	out.Write(data[:start+at])
	out.WriteString(sum)
	out.Write(data[start+at+len(old):])
	after, err := parseLayer(file, out.Bytes(), ScopeProject)
	if err != nil {
		return fmt.Errorf("set sha256 of extension %q in %s: the result would not load: %w", name, file, err)
	}
	if err := sameExceptSHA256(before, after, i, sum); err != nil {
		return fail("%v; edit the file by hand", err)
	}
	if err := atomicfile.WriteFile(file, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("set sha256 of extension %q: %w", name, err)
	}
	return nil
}

// lineBounds returns the byte range of 1-based line n, without its newline.
func lineBounds(data []byte, n int) (start, end int, ok bool) {
	if n < 1 {
		return 0, 0, false
	}
	for l := 1; l < n; l++ {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			return 0, 0, false
		}
		start += i + 1
	}
	end = len(data)
	if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
		end = start + i
	}
	return start, end, true
}

// sameExceptSHA256 checks that after is before with extension i's sha256
// set to sum and nothing else changed.
func sameExceptSHA256(before, after *layer, i int, sum string) error {
	if len(before.extensions) != len(after.extensions) || after.extensions[i].SHA256 != sum {
		return errors.New("the edit did not land on the right key")
	}
	want := *before
	want.extensions = append([]Extension(nil), before.extensions...)
	want.extensions[i].SHA256 = sum
	if !reflect.DeepEqual(&want, after) {
		return errors.New("the edit changed more than the sha256")
	}
	return nil
}

// ParseExtensionConfig builds an extension's [extensions.config] table from
// the command line (`pi ext install --ext-config-file FILE --ext-config
// KEY=VALUE ...`): the table in file (a TOML document; "" for none), then
// each assignment, in order, setting one top-level key. VALUE is a TOML
// value: `n=3`, `on=true`, `greeting="hi"` (the quotes are TOML's, so a
// shell needs them quoted: 'greeting="hi"'), `list=["a","b"]`,
// `t={depth=2}`. KEY is one key, taken literally (`a.b=1` sets the key
// "a.b"; write a table value for nesting). The values are converted as
// pi.toml's [extensions.config] is: integers, floats, strings, booleans,
// arrays and tables, date-times as RFC 3339 strings. The result is nil
// when file is "" and there are no assignments.
//
// # Errors
//
// An unreadable file or one that is not TOML (with its line); an
// assignment without '=' or with an empty key; a VALUE that is not a TOML
// value (the message says that strings need quotes); a float JSON cannot
// hold (nan, inf).
func ParseExtensionConfig(file string, assignments []string) (map[string]any, error) {
	var cfg map[string]any
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("extension config: %w", err)
		}
		raw, err := decodeTOML(file, data)
		if err != nil {
			return nil, fmt.Errorf("extension config: %w", err)
		}
		d := &decoder{file: file, idx: indexDocument(data)}
		cfg, _ = d.jsonValue("", raw).(map[string]any)
		if err := d.err(); err != nil {
			return nil, fmt.Errorf("extension config: %w", err)
		}
		if cfg == nil {
			cfg = map[string]any{}
		}
	}
	for _, a := range assignments {
		key, value, ok := strings.Cut(a, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("extension config %q: want KEY=VALUE, VALUE in TOML (n=3, 'greeting=\"hi\"', 'list=[\"a\"]')", a)
		}
		doc := "v = " + strings.TrimSpace(value) + "\n"
		raw, err := decodeTOML("--ext-config", []byte(doc))
		if err != nil || len(raw) != 1 {
			hint := ""
			if v := strings.TrimSpace(value); v != "" && !strings.ContainsAny(v[:1], `"'[{`) {
				hint = fmt.Sprintf("; a string needs TOML quotes, which the shell removes unless quoted itself: --ext-config '%s=\"%s\"'", key, v)
			}
			return nil, fmt.Errorf("extension config %q: %s is not a TOML value%s", a, strings.TrimSpace(value), hint)
		}
		d := &decoder{file: "--ext-config", idx: indexDocument([]byte(doc))}
		v := d.jsonValue(key, raw["v"])
		if err := d.err(); err != nil {
			return nil, fmt.Errorf("extension config %q: %w", a, err)
		}
		if cfg == nil {
			cfg = map[string]any{}
		}
		cfg[key] = v
	}
	return cfg, nil
}

// FileExtensions returns the [[extensions]] entries of the one pi.toml at
// tomlPath, in order, with Scope set to scope and paths resolved against
// the file's folder: what `pi ext update` finds to update, without the
// other layer that Load would lay over it.
//
// # Errors
//
// A file that cannot be read or does not load (with file, line and key).
func FileExtensions(tomlPath, scope string) ([]Extension, error) {
	file, err := filepath.Abs(tomlPath)
	if err != nil {
		return nil, fmt.Errorf("read extensions of %s: %w", tomlPath, err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read extensions of %s: %w", file, err)
	}
	l, err := parseLayer(file, data, scope)
	if err != nil {
		return nil, err
	}
	return l.extensions, nil
}

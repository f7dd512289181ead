package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The differential oracle: santhosh-tekuri/jsonschema, the library pi
// used before, compiled the way pi compiled it.

var oraclePrinter = message.NewPrinter(language.English)

type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) { return nil, fmt.Errorf("%s is outside", u) }

var oracleDrafts = map[Draft]*santhosh.Draft{
	Draft4: santhosh.Draft4, Draft6: santhosh.Draft6, Draft7: santhosh.Draft7,
	Draft2019: santhosh.Draft2019, Draft2020: santhosh.Draft2020,
}

func oracleCompile(schema string, d Draft) (*santhosh.Schema, error) {
	doc, err := santhosh.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := santhosh.NewCompiler()
	c.UseLoader(refuseLoader{})
	c.DefaultDraft(oracleDrafts[d])
	if err := c.AddResource("pi:test.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("pi:test.json")
}

// problem is one leaf: where and what.
type problem struct{ at, msg string }

func oracleLeaves(err error) []problem {
	var ve *santhosh.ValidationError
	if !errors.As(err, &ve) {
		return []problem{{"?", err.Error()}}
	}
	var out []problem
	var walk func(*santhosh.ValidationError)
	walk = func(e *santhosh.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := strings.Join(e.InstanceLocation, "/")
		if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			// The library lists them in map order: one problem each.
			for _, p := range k.Properties {
				out = append(out, problem{at, "additional property " + p})
			}
			return
		}
		out = append(out, problem{at, e.ErrorKind.LocalizedString(oraclePrinter)})
	}
	walk(ve)
	return out
}

func ourLeaves(err error) []problem {
	var out []problem
	for _, l := range err.(*Error).Leaves() {
		at := strings.Join(l.InstanceLocation, "/")
		if k, ok := l.Kind.(*AdditionalProperties); ok {
			for _, p := range k.Properties {
				out = append(out, problem{at, "additional property " + p})
			}
			continue
		}
		out = append(out, problem{at, l.Kind.Message()})
	}
	return out
}

func sortedProblems(p []problem) []string {
	out := make([]string, len(p))
	for i, x := range p {
		out[i] = x.at + " | " + x.msg
	}
	sort.Strings(out)
	return out
}

func mustTree(t testing.TB, s string) any {
	v, err := Unmarshal([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// compare validates instance with both libraries and reports any
// difference of verdict or of the problems (location and text). compiled
// reports whether the oracle compiled the schema.
func compare(t testing.TB, schema string, d Draft, instances ...string) (compiled bool) {
	t.Helper()
	want, werr := oracleCompile(schema, d)
	got, gerr := Compile(mustTree(t, schema), Options{URL: "pi:test.json", DefaultDraft: d})
	if werr != nil {
		if gerr == nil {
			t.Errorf("draft %d schema %s: the library refuses it (%v), we compiled it", d, schema, firstLine(werr))
		}
		return false
	}
	if gerr != nil {
		if rest, ok := withoutRefusedRegex(schema, gerr); ok {
			return compare(t, rest, d, instances...)
		}
		t.Errorf("draft %d schema %s: we refuse it: %v", d, schema, gerr)
		return true
	}
	for _, inst := range instances {
		v := mustTree(t, inst)
		w := want.Validate(v)
		g := got.Validate(v)
		if (w == nil) != (g == nil) {
			t.Errorf("draft %d schema %s instance %s: library valid=%v, ours valid=%v (%v / %v)", d, schema, inst, w == nil, g == nil, w, g)
			continue
		}
		if w == nil {
			continue
		}
		wp, gp := sortedProblems(oracleLeaves(w)), sortedProblems(ourLeaves(g))
		if strings.Join(wp, "\n") != strings.Join(gp, "\n") {
			t.Errorf("draft %d schema %s instance %s:\nlibrary:\n  %s\nours:\n  %s", d, schema, inst, strings.Join(wp, "\n  "), strings.Join(gp, "\n  "))
		}
	}
	return true
}

// withoutRefusedRegex handles the one known difference of verdict: pi
// refuses a regular expression Go cannot compile anywhere in the document;
// the library only where it compiles the schema (reached from the root,
// and not beside a $ref before 2019-09) or where its draft's meta-schema
// checks it. When our error is such an expression, it returns the
// document without it (the patternProperties entry, or the pattern), for
// the comparison to go on with the rest.
func withoutRefusedRegex(schema string, ours error) (string, bool) {
	line := firstLine(ours)
	if !strings.Contains(line, "is not a regular expression Go accepts") {
		return "", false
	}
	_, ptr, ok := strings.Cut(line, "#")
	if !ok {
		return "", false
	}
	ptr, _, _ = strings.Cut(ptr, ": ")
	var doc any
	if err := json.Unmarshal([]byte(schema), &doc); err != nil {
		return "", false
	}
	toks := strings.Split(ptr, "/")[1:]
	at := doc
	for _, tok := range toks[:len(toks)-1] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := at.(type) {
		case map[string]any:
			at = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return "", false
			}
			at = v[i]
		default:
			return "", false
		}
	}
	obj, ok := at.(map[string]any)
	if !ok {
		return "", false
	}
	switch last := toks[len(toks)-1]; last {
	case "patternProperties":
		m := regexp.MustCompile(`patternProperties key ("(?:[^"\\]|\\.)*") is not`).FindStringSubmatch(line)
		pp, ok := obj[last].(map[string]any)
		if m == nil || !ok {
			return "", false
		}
		key, err := strconv.Unquote(m[1])
		if err != nil {
			return "", false
		}
		delete(pp, key)
	case "pattern":
		delete(obj, last)
	default:
		return "", false
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

var _ = bytes.NewReader

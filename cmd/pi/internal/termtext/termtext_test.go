package termtext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is what an attacker puts in text pi shows: CSI, OSC 52 (the
// clipboard) and OSC 0 (the title) ended by BEL and by ST, DCS, the C1
// controls CSI and OSC as UTF-8 and as raw bytes, a carriage return and
// backspaces that overwrite a line, DEL, the bidi overrides and isolates,
// the line separators.
var hostile = []string{
	"\x1b[2J\x1b[31mred\x1b[0m",
	"\x1b]52;c;ZXZpbA==\x07",
	"\x1b]0;pwned\x1b\\",
	"\x1bP1$qm\x1b\\",
	"\u009b31m \u009d0;t\u009c",
	"\x9b31m \x9d0;t\x07 \xc2",
	"ok\r? fake [y/N] \b\b\b\x7f",
	"abc\u202Efed\u2066x\u2067y\u2068z\u2069\u202A\u202B\u202C\u202D\u200E\u200F\u061C",
	"a\u2028b\u2029c\x00\x05\x0b\x0c",
}

func checkClean(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%q gave invalid UTF-8 %q", in, out)
	}
	for _, r := range out {
		if IsControl(r) {
			t.Errorf("%q kept %U: %q", in, r, out)
		}
	}
}

func TestPrintable(t *testing.T) {
	for _, h := range hostile {
		checkClean(t, h, Printable(h))
	}
	for in, want := range map[string]string{
		"a\tb\nc\x00d\x7f\x1b[2K\u009b": "a\tb\ncd[2K",
		"line one\r\nline two":          "line one\nline two",
		"ok\x1b[2K\r? fake [y/N]":       "ok[2K? fake [y/N]",
		"a\x9bb":                        "a\uFFFDb",
		"abc\u202Efed":                  "abcfed",
		"plain héllo, 世界 ✓":             "plain héllo, 世界 ✓",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriter: the stream gets the same rule, also when a write ends in the
// middle of a rune or of an escape sequence.
func TestWriter(t *testing.T) {
	all := strings.Join(hostile, "\n") + " end ✓世"
	for chunk := 1; chunk <= 7; chunk++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(all); i += chunk {
			n, err := w.Write([]byte(all[i:min(i+chunk, len(all))]))
			if err != nil || n != min(chunk, len(all)-i) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		checkClean(t, all, out.String())
		if out.String() != Printable(all) {
			t.Errorf("chunks of %d: %q, want %q", chunk, out.String(), Printable(all))
		}
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	if NewWriter(w) != w || Raw(w) != &out || Raw(&out) != &out {
		t.Error("NewWriter wraps a Writer again, or Raw does not unwrap")
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"a longer text", 8, "a longer..."},
		{"héllo", 2, "h..."}, // never inside a rune
	} {
		if got := Cut(tc.in, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestJSONWriter: JSON that encoding/json wrote keeps its exact text
// through the JSON writer, with nothing a terminal acts on left raw (DEL,
// the C1 controls and the bidi controls, which encoding/json does not
// escape).
func TestJSONWriter(t *testing.T) {
	for _, h := range hostile {
		in := map[string]string{"text": h, "k\u009b\u202e": "v"}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w := NewJSONWriter(&out)
		for i := 0; i < len(b); i += 3 { // a rune split between writes stays whole
			w.Write(b[i:min(i+3, len(b))])
		}
		checkClean(t, h, out.String())
		var back, want map[string]string
		if err := json.Unmarshal(out.Bytes(), &back); err != nil {
			t.Fatalf("%q: the escaped JSON does not decode: %v\n%s", h, err, out.String())
		}
		json.Unmarshal(b, &want) // invalid UTF-8 was already U+FFFD in b
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%q: decodes to %q, want %q", h, back, want)
		}
	}
	var out bytes.Buffer
	if w := NewJSONWriter(NewWriter(&out)); Raw(w) != &out || NewJSONWriter(w) != w || NewWriter(w) == w {
		t.Error("a JSON writer over a text writer does not write to the raw writer, or is wrapped again")
	}
}

// FuzzFlat: whatever an extension sends for one line of display, Flat
// leaves no control character (line breaks and tabs included) and no byte
// that is not UTF-8, and keeps every printable rune.
func FuzzFlat(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;pwned\x07\x1b[2J\u009b31mred\rX\ny", "a\tb\u202ec", "\xff\xfe", "\u2028x\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Flat(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Flat(%q) = %q is not UTF-8", s, out)
		}
		for _, r := range out {
			if r == '\n' || r == '\t' || IsControl(r) {
				t.Fatalf("Flat(%q) = %q keeps %U", s, out, r)
			}
		}
		want := 0
		for _, r := range s {
			if r != '\n' && r != '\t' && !IsControl(r) {
				want++
			}
		}
		if got := utf8.RuneCountInString(out); got != want {
			t.Fatalf("Flat(%q) = %q has %d runes, want %d", s, out, got, want)
		}
	})
}

// BenchmarkFlat: a guest's line with escape sequences in it, and a plain
// one (the fast path).
func BenchmarkFlat(b *testing.B) {
	hostile := strings.Repeat("status \x1b]0;pwned\x07\x1b[2J\u009b31mred\rX\ny ", 4)
	plain := strings.Repeat("a plain status line ", 4)
	b.Run("hostile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Flat(hostile)
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Flat(plain)
		}
	})
}

package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/redact"
)

const key = "sk-live-0123456789abcdef"

func TestShortValuesAreNotSecrets(t *testing.T) {
	for _, short := range []string{"", "x", "test", "ollama", "k", "sk-12345678"} {
		r := redact.New(short)
		if r.Active() {
			t.Errorf("New(%q) is active; a value under %d bytes is not a secret", short, redact.MinLen)
		}
		in := "a.txt " + short + " b" + short
		if got := r.String(in); got != in {
			t.Errorf("New(%q).String(%q) = %q, want it unchanged", short, in, got)
		}
	}
	if !redact.IsSecret(strings.Repeat("a", redact.MinLen)) || redact.IsSecret(strings.Repeat("a", redact.MinLen-1)) {
		t.Fatalf("IsSecret does not cut at %d bytes", redact.MinLen)
	}
}

func TestString(t *testing.T) {
	r := redact.New(key)
	tests := []struct{ in, want string }{
		{"key " + key + " and " + key, "key [REDACTED] and [REDACTED]"},
		{key + key, "[REDACTED][REDACTED]"},
		{"nothing here", "nothing here"},
		{key[:len(key)-1], key[:len(key)-1]},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(r.Bytes([]byte(tt.in))); got != tt.want {
			t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if r.ContainsBytes([]byte(tt.in)) != r.Contains(tt.in) {
			t.Errorf("ContainsBytes(%q) != Contains", tt.in)
		}
	}
	var nilR *redact.Redactor
	if nilR.String(key) != key || nilR.Active() || nilR.Contains(key) || nilR.ContainsBytes([]byte(key)) {
		t.Fatal("a nil Redactor must redact nothing")
	}
}

// A key with characters JSON escapes is found in JSON text too, and the
// result stays valid JSON.
func TestJSONEscapedForm(t *testing.T) {
	odd := `sk-<odd>&"quoted"\slash-123`
	r := redact.New(odd)
	b, _ := json.Marshal(map[string]string{"text": "echo " + odd})
	if strings.Contains(string(b), odd) {
		t.Fatal("test premise: the JSON form should differ from the raw key")
	}
	out := r.Bytes(b)
	if !json.Valid(out) || !strings.Contains(string(out), redact.Mark) {
		t.Fatalf("JSON not redacted or broken: %s", out)
	}
	var m map[string]string
	json.Unmarshal(out, &m)
	if strings.Contains(m["text"], "odd") {
		t.Fatalf("decoded text still has the key: %q", m["text"])
	}
}

// A secret split anywhere across pieces never goes out, and text that
// cannot start it is not held back.
func TestStreamSplitAnywhere(t *testing.T) {
	r := redact.New(key)
	text := "before " + key + " middle " + key + " after"
	for cut1 := 0; cut1 <= len(text); cut1++ {
		for _, cut2 := range []int{cut1, min(cut1+1, len(text)), min(cut1+7, len(text)), len(text)} {
			s := r.Stream()
			var out strings.Builder
			for _, p := range []string{text[:cut1], text[cut1:cut2], text[cut2:]} {
				w := s.Write(p)
				if strings.Contains(out.String()+w, key) {
					t.Fatalf("cuts %d,%d: the key went out", cut1, cut2)
				}
				out.WriteString(w)
			}
			out.WriteString(s.Flush())
			if out.String() != "before [REDACTED] middle [REDACTED] after" {
				t.Fatalf("cuts %d,%d: %q", cut1, cut2, out.String())
			}
		}
	}
	s := r.Stream()
	if got := s.Write("plain text with no key start"); got != "plain text with no key start" {
		t.Fatalf("text that cannot start the key was held back: %q", got)
	}
	if got := s.Write("ends with sk-"); got != "ends with " {
		t.Fatalf("a possible key start was let out: %q", got)
	}
	if got := s.Flush(); got != "sk-" {
		t.Fatalf("Flush = %q", got)
	}
}

// A stream with no secret passes everything at once.
func TestStreamInactive(t *testing.T) {
	s := redact.New("short").Stream()
	if got := s.Write("short sk-"); got != "short sk-" || s.Flush() != "" {
		t.Fatalf("inactive stream held or changed text: %q", got)
	}
}

func FuzzStream(f *testing.F) {
	f.Add("xx"+key+"yy", 3, 9)
	f.Fuzz(func(t *testing.T, text string, a, b int) {
		r := redact.New(key)
		s := r.Stream()
		n := len(text)
		a, b = clamp(a, n), clamp(b, n)
		if a > b {
			a, b = b, a
		}
		out := s.Write(text[:a]) + s.Write(text[a:b]) + s.Write(text[b:]) + s.Flush()
		if strings.Contains(out, key) {
			t.Fatalf("key in %q", out)
		}
		if want := r.String(text); !strings.Contains(text, key[:1]) && out != want {
			t.Fatalf("stream %q != whole %q", out, want)
		}
	})
}

func clamp(i, n int) int {
	if i < 0 {
		i = -i
	}
	if n == 0 {
		return 0
	}
	return i % (n + 1)
}

package termtext

import "testing"

func TestPrintable(t *testing.T) {
	if got := Printable("a\tb\nc\x00d\x7f\x1b[2K\u009b"); got != "a\tb\nc\uFFFDd\uFFFD\uFFFD[2K\uFFFD" {
		t.Errorf("Printable = %q", got)
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

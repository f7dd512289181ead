package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"tools", "tools", 0}, {"tols", "tools", 1},
		{"verison", "version", 1}, {"abcd", "badc", 2}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := Distance(c.b, c.a); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.d)
		}
	}
}

func TestClosest(t *testing.T) {
	if got := Closest("modle", []string{"mode", "model"}); got != "model" {
		t.Errorf("Closest(modle) = %q, want model (same length wins a tie)", got)
	}
	commands := []string{"version", "tool", "tools", "ext", "trust", "untrust", "permissions", "sessions", "demo", "help"}
	for word, want := range map[string]string{
		"tols": "tools", "toolz": "tools", "verison": "version", "sesions": "sessions", "permisions": "permissions",
		"exr": "ext", "hepl": "help", "tust": "trust", "untrsut": "untrust",
		// Not close, a different first letter, or an exact name: no guess.
		"test": "", "rust": "", "memo": "", "hello": "", "tool": "", "explain": "", "fix": "", "": "",
	} {
		if got := Closest(word, commands); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
}

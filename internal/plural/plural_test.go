package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		word string
		want string
	}{
		{1, "line", "1 line"},
		{0, "line", "0 lines"},
		{2, "line", "2 lines"},
		{-1, "line", "-1 line"},
		{3, "tool result", "3 tool results"},
		{2, "entry", "2 entries"},
		{2, "day", "2 days"},
		{4, "match", "4 matches"},
		{2, "process", "2 processes"},
		{2, "box", "2 boxes"},
		{1, "entry", "1 entry"},
	} {
		if got := Count(c.n, c.word); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}

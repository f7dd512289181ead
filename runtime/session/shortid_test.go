package session

import (
	"strings"
	"testing"
)

// ShortIDs: at least minLen bytes, longer only as far as another id
// shares the prefix (two sessions started within the same minute share
// the first 8 hex digits of their UUID v7), and each prefix names one id.
func TestShortIDs(t *testing.T) {
	ids := []string{
		"01a24dce-7b1f-7000-8000-000000000001",
		"01a24dce-7c22-7000-8000-000000000002",
		"01a24dce-7c23-7000-8000-000000000003",
		"019fffff-0000-7000-8000-000000000004",
		"abc",
		"abcdefghij",
	}
	want := []string{"01a24dce-7b", "01a24dce-7c22", "01a24dce-7c23", "019fffff", "abc", "abcdefgh"}
	got := ShortIDs(ids, 8)
	for i := range ids {
		if got[i] != want[i] {
			t.Errorf("ShortIDs(%q) = %q, want %q", ids[i], got[i], want[i])
		}
		for j, other := range ids {
			if j != i && strings.HasPrefix(other, got[i]) && got[i] != ids[i] {
				t.Errorf("%q is also a prefix of %q", got[i], other)
			}
		}
	}
	if got := ShortIDs([]string{"01a24dce-7b1f"}, 8); got[0] != "01a24dce" {
		t.Errorf("one id: %q", got[0])
	}
}

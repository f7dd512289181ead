package tui

import (
	"encoding/json"
	"testing"
)

// TestTaskArgSummary: a running task call shows its agent and description,
// not its prompt's JSON; another tool's description argument is not taken
// for one.
func TestTaskArgSummary(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"task", `{"agent":"scout","description":"find the\ntests","prompt":"long..."}`, "scout: find the tests"},
		{"task", `{"description":"look around","prompt":"p"}`, "general-purpose: look around"},
		{"mcp__x__y", `{"description":"d"}`, `{"description":"d"}`},
	} {
		if got := argSummary(tc.name, json.RawMessage(tc.args), 160); got != tc.want {
			t.Errorf("%s %s: got %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}

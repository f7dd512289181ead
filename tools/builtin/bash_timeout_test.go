package builtin

import (
	"context"
	"strings"
	"testing"
)

// TestBashDefaultTimeout: BashOptions.DefaultTimeout ends a call that gives
// no timeout, with the contract's message; a call's own timeout wins.
func TestBashDefaultTimeout(t *testing.T) {
	opts := BashOptions{DefaultTimeout: 0.3}
	r := bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": "sleep 5"}, nil)
	if !r.IsError || !strings.Contains(resultText(t, r), "Command timed out after 0.3 seconds") {
		t.Errorf("default timeout: %+v", r)
	}
	r = bashCall(t, context.Background(), opts, t.TempDir(), map[string]any{"command": "sleep 0.6; echo done", "timeout": 10}, nil)
	if r.IsError || !strings.Contains(resultText(t, r), "done") {
		t.Errorf("the call's own timeout must win over the default: %+v", r)
	}
}

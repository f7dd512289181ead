package extensions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestValidateConfigMessages: field-level messages naming the key path.
func TestValidateConfigMessages(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"greeting":{"type":"string"},"list":{"type":"array","items":{"type":"integer","minimum":1}},"nested":{"type":"object","properties":{"a b":{"type":"boolean"}}}},"required":["greeting"],"additionalProperties":false}`)
	err := ValidateConfig(schema, map[string]any{"greeting": 5, "list": []any{int64(1), int64(0), "x"}, "nested": map[string]any{"a b": "yes"}, "extra": true}, "extensions[2].config")
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		`extensions[2].config.extra: unknown key (the extension's configSchema does not allow it)`,
		`extensions[2].config.greeting: expected string, got number`,
		`extensions[2].config.list[1]: minimum: got 0, want 1`,
		`extensions[2].config.list[2]: expected integer, got string`,
		`extensions[2].config.nested."a b": expected boolean, got string`,
	}
	if strings.Join(ce.Problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(ce.Problems, "\n"), strings.Join(want, "\n"))
	}
	if err := ValidateConfig(schema, nil, ""); err == nil || !strings.Contains(err.Error(), "config.greeting: missing (the extension requires it)") {
		t.Errorf("missing: %v", err)
	}
	missing, err := ValidateConfigValues(schema, nil, "c")
	if err != nil || strings.Join(missing, ",") != "c.greeting" {
		t.Errorf("values only: %v, %v", missing, err)
	}
}

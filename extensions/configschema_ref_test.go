package extensions

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConfigSchemaReadsNoFile: an extension's configSchema cannot make pi
// open a file or a URL through $ref or $schema (the library pi used before
// loaded file: references for configSchema). The file named is a FIFO
// without a writer: opening it would block for ever, so an answer proves
// it was not opened.
func TestConfigSchemaReadsNoFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "s.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"$ref":"file://` + fifo + `"}}}`,
		`{"$schema":"file://` + fifo + `","type":"object"}`,
		`{"type":"object","$defs":{"x":{"$id":"file:///tmp/"}},"properties":{"a":{"$ref":"file://` + fifo + `#/x"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/s.json"}}}`,
	} {
		done := make(chan error, 1)
		go func() { done <- ValidateConfig(json.RawMessage(schema), map[string]any{"a": 1}, "") }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is outside the schema; an extension's configSchema may refer only to itself") {
				t.Errorf("%s: %v", schema, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ValidateConfig blocked: it opened the referenced file", schema)
		}
	}
}

package tool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/tool"
)

// TestSchemaReferencesStayInTheDocument: a schema (an extension's, an MCP
// server's) cannot make pi read a file or a URL through $ref, $dynamicRef
// or $schema. The file referred to is a FIFO without a writer: reading it
// would block for ever, so a Wrap that returns proves it was not read.
// References inside the document and the standard drafts still work.
func TestSchemaReferencesStayInTheDocument(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "s.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	exec := func(context.Context, tool.Call, tool.Context) (tool.Result, error) { return tool.Result{}, nil }
	wrap := func(schema string) error {
		done := make(chan error, 1)
		go func() {
			_, err := tool.Wrap(tool.ToolDefinition{Name: "x", Parameters: json.RawMessage(schema), Execute: exec}, nil)
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("Wrap of %s blocked: it is reading the referenced file", schema)
			return nil
		}
	}
	for _, bad := range []string{
		`{"type":"object","properties":{"a":{"$ref":"file://` + fifo + `"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/s.json"}}}`,
		`{"$schema":"file://` + fifo + `","type":"object"}`,
	} {
		if err := wrap(bad); err == nil || !strings.Contains(err.Error(), "outside the schema") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// Never read, whatever the compiler makes of them.
	wrap(`{"type":"object","properties":{"a":{"$ref":"` + fifo + `"}}}`)
	wrap(`{"type":"object","$defs":{"x":{"$dynamicRef":"file://` + fifo + `#x"}}}`)
	for _, good := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"a":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/a"}}}`,
	} {
		if err := wrap(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
}

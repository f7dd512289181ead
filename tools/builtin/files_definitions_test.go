package builtin

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// TestFileToolDefinitions pins the model-visible texts of read, write and
// edit (checked against the reference agent's when the golden file was
// made) and the product-layer settings.
func TestFileToolDefinitions(t *testing.T) {
	type visible struct {
		Name             string          `json:"name"`
		Label            string          `json:"label"`
		Description      string          `json:"description"`
		Parameters       json.RawMessage `json:"parameters"`
		PromptSnippet    string          `json:"promptSnippet"`
		PromptGuidelines []string        `json:"promptGuidelines"`
	}
	var out bytes.Buffer
	for _, d := range []tool.ToolDefinition{readDefinition(), writeDefinition(), editDefinition()} {
		if d.Source.Kind != tool.SourceBuiltin || d.ExecutionMode != tool.Parallel || d.Execute == nil {
			t.Errorf("%s: source %v, mode %q", d.Name, d.Source, d.ExecutionMode)
		}
		if _, err := tool.Wrap(d, nil); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		b, err := json.Marshal(visible{d.Name, d.Label, d.Description, d.Parameters, d.PromptSnippet, d.PromptGuidelines})
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	golden(t, "file_tool_definitions.jsonl", out.String())
	if d := editDefinition(); d.PrepareArguments == nil {
		t.Error("edit has no PrepareArguments")
	}
}

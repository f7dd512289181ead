package tool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// BenchmarkWrapBuiltins is the start-up share of the tool layer: compiling
// the seven built-in tools' schemas (every pi start that registers tools
// does it once; bench/startup.sh times whole starts).
func BenchmarkWrapBuiltins(b *testing.B) {
	defs := builtin.Definitions(builtin.Options{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.WrapAll(defs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateWrite is the validation of a write call's arguments
// (1 MB of content with escapes): one parse, the schema check, the parse
// kept for the call.
func BenchmarkValidateWrite(b *testing.B) {
	var w tool.AgentTool
	for _, d := range builtin.Definitions(builtin.Options{}) {
		if d.Name == "write" {
			t, err := tool.Wrap(d, nil)
			if err != nil {
				b.Fatal(err)
			}
			w = t
		}
	}
	args, _ := json.Marshal(map[string]string{"path": "f.txt", "content": strings.Repeat("line\twith \"quotes\"\n", 1<<20/19)})
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

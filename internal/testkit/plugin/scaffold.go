package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/scaffold"
)

// ScaffoldWAT builds a real module from the WAT scaffold of `pi ext new`:
// an extension named name whose tool name answers "Hello from TEXT!" and
// which declares hooks (a JSON list such as ["tool_call"]; its tool_call
// hook blocks arguments holding "rm -rf"). Different texts give different
// modules (and sha256s) of the same extension. A missing wat2wasm fails
// the test.
func ScaffoldWAT(t testing.TB, name, text, hooks string) string {
	t.Helper()
	return ScaffoldWATTool(t, name, name, text, hooks)
}

// ScaffoldWATTool is ScaffoldWAT with the tool named toolName instead of
// the extension's name.
func ScaffoldWATTool(t testing.TB, name, toolName, text, hooks string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, err := scaffold.Write(scaffold.Options{Dir: dir, Name: name, Lang: "wat"}); err != nil {
		t.Fatal(err)
	}
	watFile := filepath.Join(dir, name+".wat")
	src, err := os.ReadFile(watFile)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(src), "Hello from "+name+"!", "Hello from "+text+"!")
	s = strings.Replace(s, `\"tools\":[{\"name\":\"`+name+`\"`, `\"tools\":[{\"name\":\"`+toolName+`\"`, 1)
	s = strings.Replace(s, `\"hooks\":[\"tool_call\"]`, `\"hooks\":`+strings.ReplaceAll(hooks, `"`, `\"`), 1)
	if err := os.WriteFile(watFile, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name+".wasm")
	if b, err := exec.Command("wat2wasm", watFile, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm (Debian package wabt): %v\n%s", err, b)
	}
	return out
}

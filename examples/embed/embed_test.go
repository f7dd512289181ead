package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestEmbed runs the example as a user would: a project whose pi.toml makes
// only the extension's tool active, the hello-wat extension given with -e,
// and a script that calls that tool and a tool the pi.toml left out.
func TestEmbed(t *testing.T) {
	wasm := plugin.BuildWAT(t, "examples/plugins/hello-wat/hello.wat")
	project := t.TempDir()
	os.Mkdir(filepath.Join(project, ".git"), 0o755)
	if err := os.WriteFile(filepath.Join(project, "pi.toml"), []byte("[tools]\nactive = [\"hello\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"turns":[
	  {"toolCalls":[{"name":"hello","arguments":{"name":"embedder"}},{"name":"bash","arguments":{"command":"echo no"}}]},
	  {"text":"Greeted."}]}`), 0o644)

	bin := filepath.Join(t.TempDir(), "embed")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-C", project, "-e", wasm, "-script", script, "say hello")
	cmd.Env = append(os.Environ(), "PI_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("embed: %v\n%s", err, out)
	}
	for _, want := range []string{
		`call hello {"name":"embedder"}`,
		"result Hello, embedder!",
		"result Tool bash not found", // pi.toml's active set applies
		"answer: Greeted.",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

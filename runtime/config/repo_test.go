package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepositoryPiToml loads the repository's own pi.toml with the strict
// decoder (a typo fails here), checks that it applies without trust, and
// checks that its commented [[extensions]] example, uncommented, loads too.
func TestRepositoryPiToml(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("..", "..", FileName))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the repository's pi.toml: %v", err)
	}
	c, err := Load(LoadOptions{ConfigFile: file, PIHome: t.TempDir(), Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("the repository's pi.toml needs trust: %v", c.Warnings)
	}
	if c.Model.Name == "" {
		t.Error("it names no model")
	}
	for _, want := range []string{"read", "bash", "edit", "write"} {
		if !slices.Contains(c.Tools.Active, want) {
			t.Errorf("tools.active %v lacks %s", c.Tools.Active, want)
		}
	}
	if len(c.Extensions) != 0 {
		t.Errorf("it loads extensions: %+v", c.Extensions)
	}

	// The commented example: from "# [[extensions]]" to the end, "# " removed.
	_, example, ok := strings.Cut(string(data), "\n# [[extensions]]\n")
	if !ok {
		t.Fatal("pi.toml has no commented [[extensions]] example")
	}
	var b strings.Builder
	b.WriteString("[[extensions]]\n")
	for _, line := range strings.Split(example, "\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "#"), " ")
		b.WriteString(line + "\n")
	}
	dir := t.TempDir()
	uncommented := writeFile(t, filepath.Join(dir, FileName), string(data)+"\n"+b.String())
	c, err = Load(LoadOptions{ConfigFile: uncommented, PIHome: t.TempDir(), Cwd: dir, Trust: true})
	if err != nil {
		t.Fatalf("the commented example does not load once uncommented:\n%s\n%v", b.String(), err)
	}
	if len(c.Extensions) != 1 {
		t.Fatalf("extensions %+v", c.Extensions)
	}
	e := c.Extensions[0]
	if len(e.Grants.FS) == 0 || len(e.Grants.Exec) == 0 || e.Limits.MemoryMB == 0 || e.Limits.TimeoutMS == 0 {
		t.Errorf("the example should show fs and exec grants and both limits: %+v", e)
	}
	if err := e.Grants.Check(); err != nil {
		t.Error(err)
	}
	if err := e.Limits.Check(); err != nil {
		t.Error(err)
	}
}

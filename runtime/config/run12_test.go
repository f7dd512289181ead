package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The ABI 1.2 keys: grants llm and model (booleans) and limits.llm_tokens
// are read, and written back by AppendExtension (pi ext install).
func TestRun12GrantsAndLimits(t *testing.T) {
	dir := t.TempDir()
	toml := writeFile(t, filepath.Join(dir, "pi.toml"), ext("a", shaA)+"[extensions.grants]\nllm = true\nmodel = false\n[extensions.limits]\nllm_tokens = 5000\n")
	c, err := Load(LoadOptions{Cwd: dir, PIHome: t.TempDir(), Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	e := c.Extensions[0]
	if !e.Grants.LLM || e.Grants.Model || e.Limits.LLMTokens != 5000 || e.Limits.LLMTokenQuota() != 5000 {
		t.Errorf("grants %+v limits %+v", e.Grants, e.Limits)
	}
	e.Name, e.Grants.Model = "b", true
	if err := AppendExtension(toml, e); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(toml)
	if !strings.Contains(string(b), "[extensions.grants]\nllm = true\nmodel = true\n\n[extensions.limits]\nllm_tokens = 5000\n") {
		t.Errorf("written:\n%s", b)
	}
	c, err = Load(LoadOptions{Cwd: dir, PIHome: t.TempDir(), Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Extensions[1].Grants; !g.LLM || !g.Model || c.Extensions[1].Limits.LLMTokenQuota() != 5000 {
		t.Errorf("read back: %+v", c.Extensions[1])
	}
	var zero Extension
	if zero.Limits.LLMTokenQuota() != 200000 {
		t.Errorf("default quota %d", zero.Limits.LLMTokenQuota())
	}
}

package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAgents: [agents] defaults, the project's values over the global
// file's, and errors that name the file, the line and the key.
func TestAgents(t *testing.T) {
	e := newEnv(t)
	c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: filepath.Dir(e.home)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Agents != (Agents{}) || c.Agents.Parallel() != 4 || c.Agents.Depth() != 1 {
		t.Fatalf("defaults %+v", c.Agents)
	}
	writeFile(t, filepath.Join(e.home, "pi.toml"), "[agents]\ntask = true\nmax_parallel = 2\n")
	writeFile(t, filepath.Join(e.proj, ".git", "HEAD"), "ref: x\n")
	writeFile(t, filepath.Join(e.proj, "pi.toml"), "[agents]\nclaude = true\nmax_depth = 2\n")
	c, err = Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: filepath.Dir(e.home)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Agents != (Agents{Task: true, Claude: true, MaxParallel: 2, MaxDepth: 2}) {
		t.Fatalf("layered %+v", c.Agents)
	}
	for text, want := range map[string]string{
		"# x\n[agents]\nmax_parallel = 0\n": `pi.toml:3: key "agents.max_parallel" must be positive, got 0`,
		"[agents]\nmax_depth = 9\n":         `pi.toml:2: key "agents.max_depth" must be at most 8 levels, got 9`,
		"[agents]\ntask = \"yes\"\n":        `pi.toml:2: key "agents.task" must be a boolean, got string`,
		"[agents]\n\nparallel = 3\n":        `pi.toml:3: unknown key "agents.parallel" (known keys: task, claude, max_parallel, max_depth)`,
	} {
		writeFile(t, filepath.Join(e.proj, "pi.toml"), text)
		_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: filepath.Dir(e.home)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
}

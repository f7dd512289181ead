package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAddActiveTools: the names go at the end of the list whatever its
// layout, every other byte stays, names already there are not added
// twice, and a file without the list is refused unchanged.
func TestAddActiveTools(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"one line", "[tools]\nactive = [\"read\"] # mine\n", "[tools]\nactive = [\"read\", \"a\", \"b\"] # mine\n"},
		{"empty", "[tools]\nactive = []\n", "[tools]\nactive = [\"a\", \"b\"]\n"},
		{"trailing comma and comments", "# top\n[tools]\nactive = [\n  \"read\", # ] not the end\n  'grep',\n  # last\n]\n[model]\nname = \"m\"\n",
			"# top\n[tools]\nactive = [\n  \"read\", # ] not the end\n  'grep', \"a\", \"b\",\n  # last\n]\n[model]\nname = \"m\"\n"},
		{"dotted key", "tools.active = [\"x\"] # ]\n", "tools.active = [\"x\", \"a\", \"b\"] # ]\n"},
		{"already there", "[tools]\nactive = [\"a\"]\n", "[tools]\nactive = [\"a\", \"b\"]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "pi.toml")
			if err := os.WriteFile(p, []byte(c.in), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := AddActiveTools(p, []string{"a", "b", "a"}); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			added, err := AddActiveTools(p, []string{"b"})
			if err != nil || added != nil {
				t.Errorf("adding a name already there: %v, %v", added, err)
			}
			cfg, err := Load(LoadOptions{Cwd: filepath.Dir(p), PIHome: t.TempDir(), Trust: true})
			if err != nil || !slices.Contains(cfg.Tools.Active, "a") || !slices.Contains(cfg.Tools.Active, "b") {
				t.Errorf("loaded: %v, %v", cfg.Tools.Active, err)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "pi.toml")
	os.WriteFile(p, []byte("[model]\nname = \"m\"\n"), 0o644)
	if _, err := AddActiveTools(p, []string{"a"}); !errors.Is(err, ErrNoActiveList) {
		t.Errorf("no list: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "[model]\nname = \"m\"\n" {
		t.Errorf("a refused edit wrote %q", got)
	}
}

package plugins_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/config"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

var (
	tomlBlock = regexp.MustCompile("(?s)```toml\n(.*?)```")
	nameLine  = regexp.MustCompile(`(?m)^name = "([a-z][a-z0-9_-]*)"`)
	pathLine  = regexp.MustCompile(`(?m)^path = "[^"]*"`)
	shaLine   = regexp.MustCompile(`(?m)^sha256 = "[^"]*"`)
)

// TestDocumentedConfigsLoad checks every pi.toml block of the examples'
// READMEs and of docs/extensions.md that names one of the examples: the block
// must pass the real pi.toml loader, and the extension must load into the
// real host with the grants, limits and configuration it gives (so each
// example's configuration check accepts what its README shows).
func TestDocumentedConfigsLoad(t *testing.T) {
	root := plugin.ModuleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "examples/plugins/*/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "docs/extensions.md"))
	tested := map[string]int{}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range tomlBlock.FindAllStringSubmatch(string(b), -1) {
			block := m[1]
			nm := nameLine.FindStringSubmatch(block)
			if !strings.Contains(block, "[[extensions]]") || nm == nil {
				continue
			}
			name := nm[1]
			if _, err := os.Stat(filepath.Join(root, "examples/plugins", name)); err != nil {
				continue // an extension of the guide that is not an example
			}
			rel, _ := filepath.Rel(root, doc)
			t.Run(fmt.Sprintf("%s#%s#%d", rel, name, i), func(t *testing.T) {
				var wasm string
				if name == "hello-wat" {
					wasm = plugin.BuildWAT(t, "examples/plugins/hello-wat/hello.wat")
				} else {
					wasm = porttest.Build(t, filepath.Join(root, "examples/plugins", name)) // Go, C or Rust
				}
				sum, err := extensions.FileSHA256(wasm)
				if err != nil {
					t.Fatal(err)
				}
				project := t.TempDir()
				text := pathLine.ReplaceAllString(block, `path = "`+filepath.ToSlash(wasm)+`"`)
				text = shaLine.ReplaceAllString(text, `sha256 = "`+sum+`"`)
				if err := os.WriteFile(filepath.Join(project, "pi.toml"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				cfg, err := config.Load(config.LoadOptions{Cwd: project, PIHome: t.TempDir(), Trust: true})
				if err != nil {
					t.Fatalf("pi.toml from %s does not load:\n%s\n%v", rel, text, err)
				}
				e, ok := cfg.Extension(name)
				if !ok {
					t.Fatalf("no extension %q in %+v", name, cfg.Extensions)
				}
				l := plugin.Load(t, e.Path, project, extensions.Spec{
					Name: e.Name, Override: e.Override, Config: e.Config,
					Grants: extensions.Grants{FS: e.Grants.FS, Exec: e.Grants.Exec, Env: e.Grants.Env},
					Limits: extensions.Limits{MemoryMB: e.Limits.MemoryMB, TimeoutMS: e.Limits.TimeoutMS},
				})
				if l.Ext.Info().Name != name {
					t.Errorf("loaded %q", l.Ext.Info().Name)
				}
				tested[name]++
			})
		}
	}
	for _, name := range []string{"loc", "protect-paths", "bash-env", "redact", "hello-wat"} {
		if tested[name] == 0 {
			t.Errorf("no pi.toml block of %s was tested; the README should show one", name)
		}
	}
}

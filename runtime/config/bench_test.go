package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoad measures one Load of a global pi.toml and a trusted
// project pi.toml with 20 extensions (the cost paid once per pi start).
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	var sb strings.Builder
	sb.WriteString(risky)
	for i := range 20 {
		fmt.Fprintf(&sb, "\n[[extensions]]\nname = \"ext%d\"\npath = \"e%d.wasm\"\nsha256 = \"%s\"\n[extensions.grants]\nfs = [\"ro:.\"]\nexec = [\"git\"]\n[extensions.limits]\nmemory_mb = 64\n[extensions.config]\nlevel = %d\nnested = { a = [1, 2, 3], b = \"x\" }\n", i, i, shaC, i)
	}
	writeFile(b, filepath.Join(home, "pi.toml"), globalWithCode)
	project := writeFile(b, filepath.Join(proj, "pi.toml"), sb.String())
	if err := Trust(home, project); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len() + len(globalWithCode)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Load(LoadOptions{Cwd: proj, PIHome: home})
		if err != nil || len(c.Extensions) != 23 {
			b.Fatalf("%v %d", err, len(c.Extensions))
		}
	}
}

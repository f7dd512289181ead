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
	doc := benchDocument()
	writeFile(b, filepath.Join(home, "pi.toml"), globalWithCode)
	project := writeFile(b, filepath.Join(proj, "pi.toml"), doc)
	if err := Trust(home, project); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc) + len(globalWithCode)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Load(LoadOptions{Cwd: proj, PIHome: home})
		if err != nil || len(c.Extensions) != 23 {
			b.Fatalf("%v %d", err, len(c.Extensions))
		}
	}
}

// benchDocument is the risky project file plus 20 extensions with grants,
// limits and config: about 5 KiB.
func benchDocument() string {
	var sb strings.Builder
	sb.WriteString(risky)
	for i := range 20 {
		fmt.Fprintf(&sb, "\n[[extensions]]\nname = \"ext%d\"\npath = \"e%d.wasm\"\nsha256 = \"%s\"\n[extensions.grants]\nfs = [\"ro:.\"]\nexec = [\"git\"]\n[extensions.limits]\nmemory_mb = 64\n[extensions.config]\nlevel = %d\nnested = { a = [1, 2, 3], b = \"x\" }\n", i, i, shaC, i)
	}
	return sb.String()
}

// BenchmarkParse splits BenchmarkLoad's CPU work: the TOML library's
// decode, our key index, and the whole parse and validation of one file.
func BenchmarkParse(b *testing.B) {
	data := []byte(benchDocument())
	b.Run("toml-decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeTOML("pi.toml", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("key-index", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			indexDocument(data)
		}
	})
	b.Run("parse-and-validate", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseLayer("/p/pi.toml", data, ScopeProject); err != nil {
				b.Fatal(err)
			}
		}
	})
}

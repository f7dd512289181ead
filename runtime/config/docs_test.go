package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPermissionsDocExamples: every ```toml block of docs/permissions.md
// loads, its match and not_match examples included.
func TestPermissionsDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "permissions.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```toml\n")[1:]
	if len(blocks) < 5 {
		t.Fatalf("found %d toml blocks", len(blocks))
	}
	for i, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		if _, err := parseLayer("docs/permissions.md#"+string(rune('0'+i)), []byte(b), ScopeGlobal); err != nil {
			t.Errorf("block %d:\n%s\n%v", i, b, err)
		}
	}
}

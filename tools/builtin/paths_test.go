package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolvePath(t *testing.T) {
	dir := t.TempDir()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	mustWrite(t, filepath.Join(dir, "@literal.txt"), "x")
	mustWrite(t, filepath.Join(dir, "plain.txt"), "x")
	mustWrite(t, filepath.Join(dir, "a\u00A0b.txt"), "x") // a real no-break space in the name
	mustWrite(t, filepath.Join(dir, "c d.txt"), "x")
	tests := []struct {
		name, in, want string
	}{
		{"relative joins cwd", "sub/f.go", filepath.Join(dir, "sub/f.go")},
		{"absolute stays", "/etc/hosts", "/etc/hosts"},
		{"cleaned", "./x/../plain.txt", filepath.Join(dir, "plain.txt")},
		{"tilde", "~", home},
		{"tilde slash", "~/notes.md", filepath.Join(home, "notes.md")},
		{"tilde inside stays", "a~/b", filepath.Join(dir, "a~/b")},
		{"@ kept when the @ path exists", "@literal.txt", filepath.Join(dir, "@literal.txt")},
		{"@ dropped when only the plain path exists", "@plain.txt", filepath.Join(dir, "plain.txt")},
		{"@ dropped when nothing exists", "@new.txt", filepath.Join(dir, "new.txt")},
		{"@ then tilde", "@~/x", filepath.Join(home, "x")},
		{"unicode space kept when it exists", "a\u00A0b.txt", filepath.Join(dir, "a\u00A0b.txt")},
		{"unicode space read as space", "c\u2009d.txt", filepath.Join(dir, "c d.txt")},
		{"ideographic space, nothing exists", "e\u3000f.txt", filepath.Join(dir, "e f.txt")},
		{"@ and unicode space", "@c\u202Fd.txt", filepath.Join(dir, "c d.txt")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolvePath(dir, tt.in); got != tt.want {
				t.Errorf("resolvePath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestResolveReadPath(t *testing.T) {
	dir := t.TempDir()
	screenshot := "Screenshot 2024-01-01 at 10.00.00\u202FAM.png"
	nfd := "cafe\u0301.txt"                   // é as e + combining acute, as macOS stores it
	curly := "Capture d\u2019e\u0301cran.png" // curly apostrophe and NFD
	onlyCurly := "it\u2019s.txt"
	for _, n := range []string{screenshot, nfd, curly, onlyCurly, "plain.txt"} {
		mustWrite(t, filepath.Join(dir, n), "x")
	}
	tests := []struct {
		name, in, want string
	}{
		{"exists", "plain.txt", filepath.Join(dir, "plain.txt")},
		{"AM/PM narrow no-break space", "Screenshot 2024-01-01 at 10.00.00 AM.png", filepath.Join(dir, screenshot)},
		{"NFD", "caf\u00e9.txt", filepath.Join(dir, nfd)},
		{"curly apostrophe", "it's.txt", filepath.Join(dir, onlyCurly)},
		{"NFD and curly apostrophe", "Capture d'\u00e9cran.png", filepath.Join(dir, curly)},
		{"nothing matches", "missing's.txt", filepath.Join(dir, "missing's.txt")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveReadPath(dir, tt.in); got != tt.want {
				t.Errorf("resolveReadPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "real", "f"), "")
	if err := os.Symlink("real", filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real/new", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{filepath.Join(dir, "real", "f"), filepath.Join(dir, "real", "f")},
		{filepath.Join(dir, "dirlink", "f"), filepath.Join(dir, "real", "f")},
		{filepath.Join(dir, "dirlink", "missing"), filepath.Join(dir, "real", "missing")},
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "real", "new")},
		{filepath.Join(dir, "no", "such", "dir", "f"), filepath.Join(dir, "no", "such", "dir", "f")},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.in), func(t *testing.T) {
			if got := realPath(tt.in); got != tt.want {
				t.Errorf("realPath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

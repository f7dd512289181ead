package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

func TestLs(t *testing.T) {
	dir := t.TempDir()
	// Names whose order differs between byte order and the case-insensitive
	// collation the reference agent uses (punctuation, digits, accents, case).
	names := []string{"foo-bar", "foo.go", "foo_test", "README.md", "a_b", "ab", "Zeta", "alpha", ".hidden",
		"Zeta.md", "zeta.go", "_private", "foo bar", "10.txt", "9.txt", "É.txt", "e.txt", "f.txt"}
	files := map[string]string{"Src/": "", "empty/": "", "sub/.gitignore": "*\n", "sub/x": ""}
	for _, n := range names {
		files["list/"+n] = ""
	}
	files["list/Src/"] = ""
	files[".gitignore"] = "list/\n"
	writeTree(t, dir, files)
	if err := os.Symlink("Src", filepath.Join(dir, "list", "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing", filepath.Join(dir, "list", "dangling")); err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string { return filepath.Join(dir, p) }
	listed := strings.Join([]string{"_private", ".hidden", "10.txt", "9.txt", "a_b", "ab", "alpha", "e.txt", "É.txt", "f.txt",
		"foo bar", "foo_test", "foo-bar", "foo.go", "link-to-dir/", "README.md", "Src/", "Zeta", "zeta.go", "Zeta.md"}, "\n")
	tests := []struct {
		name    string
		args    string
		want    string
		isError bool
	}{
		{"collation order, dotfiles, '/' for folders and links to folders, dangling links left out, .gitignore not read", `{"path":"list"}`, listed, false},
		{"default path", `{}`, ".gitignore\nempty/\nlist/\nSrc/\nsub/", false},
		{"absolute path", fmt.Sprintf(`{"path":%q}`, abs("sub")), ".gitignore\nx", false},
		{"empty directory", `{"path":"empty"}`, "(empty directory)", false},
		{"limit reached", `{"path":"list","limit":3}`, "_private\n.hidden\n10.txt\n\n[3 entries limit reached. Use limit=6 for more]", false},
		{"limit equal to the count has no notice", `{"path":"sub","limit":2}`, ".gitignore\nx", false},
		{"limit below 1 is 1", `{"path":"sub","limit":-4}`, ".gitignore\n\n[1 entries limit reached. Use limit=2 for more]", false},
		{"path not found", `{"path":"nope"}`, "Path not found: " + abs("nope"), true},
		{"not a directory", `{"path":"sub/x"}`, "Not a directory: " + abs("sub/x"), true},
		{"wrong type", `{"path":3}`, "Validation failed for tool \"ls\":\n  - path: must be string (got number)", true},
		{"unknown field", `{"path":".","all":true}`, `ls: decode arguments: json: unknown field "all"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callSearch(context.Background(), t, dir, "ls", tt.args)
			got, _, _ := strings.Cut(r.Text(), "\n\nReceived arguments")
			if got != tt.want || r.IsError != tt.isError {
				t.Errorf("ls %s\n got (isError=%v):\n%s\nwant (isError=%v):\n%s", tt.args, r.IsError, got, tt.isError, tt.want)
			}
		})
	}
}

func TestLsByteLimit(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var all []string
	for i := range 400 {
		name := fmt.Sprintf("%03d-%s", i, strings.Repeat("n", 150))
		files[name] = ""
		all = append(all, name)
	}
	writeTree(t, dir, files)
	var kept []string
	size := -1
	for _, n := range all {
		if size+1+len(n) > output.DefaultMaxBytes {
			break
		}
		size += 1 + len(n)
		kept = append(kept, n)
	}
	r := callSearch(context.Background(), t, dir, "ls", `{}`)
	want := strings.Join(kept, "\n") + "\n\n[50.0KB limit reached]"
	if got := r.Text(); got != want {
		t.Errorf("got %d bytes ending %q, want %d bytes", len(got), got[max(0, len(got)-100):], len(want))
	}
	d, _ := json.Marshal(r.Details)
	if !strings.Contains(string(d), `"truncation"`) || strings.Contains(string(d), "entryLimitReached") {
		t.Errorf("details %s", d)
	}
}

func TestLsDefinitionTexts(t *testing.T) {
	d := lsDefinition()
	if d.Name != "ls" || d.Label != "ls" || d.Source.Kind != tool.SourceBuiltin || d.ExecutionMode != tool.Parallel {
		t.Errorf("definition: %+v", d)
	}
	if want := "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first)."; d.Description != want {
		t.Errorf("description %q", d.Description)
	}
	if d.PromptSnippet != "List directory contents" {
		t.Errorf("snippet %q", d.PromptSnippet)
	}
	assertSchema(t, d.Parameters, `{"type":"object","properties":{`+
		`"path":{"type":"string","description":"Directory to list (default: current directory)"},`+
		`"limit":{"type":"number","description":"Maximum number of entries to return (default: 500)"}}}`)
}

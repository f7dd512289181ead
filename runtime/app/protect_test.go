package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// protectRecipe is docs/permissions.md's "Protect secrets" rule.
const protectRecipe = `[[permissions.rules]]
tool = "*"
path = [".env*", "**/*.pem", "**/*.key", ".ssh", "secrets"]
decision = "deny"
reason = "secrets stay out of the model's context"
match = [".env", "config/.env.prod", "certs/site.pem"]
`

// secretProject is a project with secrets the recipe protects, a hard
// link and a symlink to .env under innocent names, and one ordinary file
// that mentions the word "secret".
func secretProject(t *testing.T, rules string) (dir string, rt *Runtime) {
	t.Helper()
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), rules)
	for name, content := range map[string]string{
		".env":             "API_TOKEN=secret-dotenv\n",
		"config/.env.prod": "DB=secret-prod\n",
		"secrets/db.txt":   "secret-db\n",
		"certs/site.pem":   "secret-pem\n",
		"src/main.go":      "// no secret here\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), content)
	}
	if err := os.Link(filepath.Join(dir, ".env"), filepath.Join(dir, "notes.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := os.Symlink(".env", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return dir, rt
}

// leaked reports a secret's text in a tool's answer.
func leaked(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range []string{"secret-dotenv", "secret-prod", "secret-db", "secret-pem"} {
		if strings.Contains(text, s) {
			t.Errorf("%s leaked %q:\n%s", what, s, text)
		}
	}
}

// TestProtectSecretsRecipe is the attack on the recipe: a model that
// searches the whole project instead of reading .env, and one that reads
// .env under another name (a hard link, a symlink). grep, find and ls over
// the root leave the protected files out and say so; every call that names
// one of them, under any of its names, is refused; the files are untouched.
func TestProtectSecretsRecipe(t *testing.T) {
	dir, rt := secretProject(t, protectRecipe)

	text, isErr := callText(t, rt, "grep", `{"pattern":"secret"}`)
	leaked(t, "grep over the root", text)
	if isErr || !strings.Contains(text, "src/main.go:1: // no secret here") || !strings.Contains(text, "[5 paths left out by permission path rules]") {
		t.Errorf("grep over the root = %q", text)
	}
	text, _ = callText(t, rt, "grep", `{"pattern":"secret","glob":"*.txt","ignoreCase":true,"context":2}`)
	leaked(t, "grep with a glob", text)

	text, isErr = callText(t, rt, "find", `{"pattern":"*"}`)
	for _, name := range []string{".env", "notes.txt", ".env.prod", "site.pem", "secrets"} {
		if strings.Contains(text, name) {
			t.Errorf("find lists %s:\n%s", name, text)
		}
	}
	if isErr || !strings.Contains(text, "src/main.go") || !strings.Contains(text, "left out by permission path rules]") {
		t.Errorf("find = %q", text)
	}

	text, isErr = callText(t, rt, "ls", `{}`)
	if isErr || text != ".git/\ncerts/\nconfig/\nsrc/\n\n[4 paths left out by permission path rules]" {
		t.Errorf("ls = %q", text)
	}

	// Every name of the file is refused, with why.
	for _, tc := range []struct{ tool, input, why string }{
		{"read", `{"path":".env"}`, ""},
		{"read", `{"path":"notes.txt"}`, "notes.txt is a hard link of .env"},
		{"read", `{"path":"link.txt"}`, ""},
		{"grep", `{"pattern":"secret","path":"notes.txt"}`, "notes.txt is a hard link of .env"},
		{"edit", `{"path":"notes.txt","edits":[{"oldText":"API_TOKEN","newText":"X"}]}`, "hard link"},
		{"write", `{"path":"notes.txt","content":"x"}`, "hard link"},
	} {
		text, isErr := callText(t, rt, tc.tool, tc.input)
		leaked(t, tc.tool+" "+tc.input, text)
		if !isErr || !strings.Contains(text, "Blocked by permissions:") || !strings.Contains(text, "secrets stay out of the model's context") || !strings.Contains(text, tc.why) {
			t.Errorf("%s %s = %q", tc.tool, tc.input, text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".env")); string(b) != "API_TOKEN=secret-dotenv\n" {
		t.Errorf(".env is now %q", b)
	}
}

// TestReadRuleHidesFromSearch: a rule that denies only `read` still keeps
// grep and find (over the root, or pointed at the file) from showing the
// file: what read may not see, no search shows.
func TestReadRuleHidesFromSearch(t *testing.T) {
	_, rt := secretProject(t, "[[permissions.rules]]\ntool = \"read\"\npath = [\".env\"]\ndecision = \"deny\"\n")
	for _, input := range []string{`{"pattern":"secret"}`, `{"pattern":"secret","path":".env"}`, `{"pattern":"secret","path":"notes.txt"}`} {
		text, _ := callText(t, rt, "grep", input)
		if strings.Contains(text, "secret-dotenv") || !strings.Contains(text, "left out by permission path rules]") {
			t.Errorf("grep %s = %q", input, text)
		}
	}
	if text, _ := callText(t, rt, "find", `{"pattern":"*.txt"}`); strings.Contains(text, "notes.txt") {
		t.Errorf("find = %q", text)
	}
}

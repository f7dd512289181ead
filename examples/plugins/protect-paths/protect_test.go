//go:build !wasip1

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

func load(t *testing.T, root string, config map[string]any) *plugin.Loaded {
	wasm := plugin.BuildGo(t, "examples/plugins/protect-paths")
	return plugin.Load(t, wasm, root, extensions.Spec{Name: "protect-paths", Config: config})
}

// builtins returns the real write and bash tools working in root.
func builtins(t *testing.T, root string) []tool.AgentTool {
	t.Helper()
	tools, err := tool.WrapAll(builtin.Definitions(builtin.Options{}), func(string) tool.Context { return tool.Context{Cwd: root} })
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func TestDefaultRulesBlockWrites(t *testing.T) {
	root := t.TempDir()
	l := load(t, root, nil)
	tools := builtins(t, root)
	tests := []struct {
		name, path string
		rule       string // "" = allowed
	}{
		{"env", ".env", ".env"},
		{"env variant", ".env.local", ".env.*"},
		{"nested env", "svc/.env", ".env"},
		{"absolute env", filepath.Join(root, ".env.prod"), ".env.*"},
		{"git config", ".git/config", ".git/**"},
		{"git folder itself", ".git", ".git/**"},
		{"at prefix", "@.env", ".env"},
		{"dotted path", "./a/../.env", ".env"},
		{"ordinary file", "main.go", ""},
		{"env lookalike", "env.go", ""},
		{"envrc", ".envrc", ""},
		{"gitignore", ".gitignore", ""},
		{"nested git is not the root's", "sub/.git/config", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := plugin.RunWith(t, tools, l.Hooks, "write", map[string]any{"path": tc.path, "content": "SECRET=1\n"})
			target := tc.path
			if !filepath.IsAbs(target) {
				target = filepath.Join(root, strings.TrimPrefix(target, "@"))
			}
			_, statErr := os.Stat(target)
			if tc.rule == "" {
				if r.IsError {
					t.Fatalf("write %s was refused: %s", tc.path, r.Text())
				}
				if statErr != nil {
					t.Errorf("write %s reported success but the file is missing: %v", tc.path, statErr)
				}
				return
			}
			if !r.IsError {
				t.Fatalf("write %s was allowed: %s", tc.path, r.Text())
			}
			for _, w := range []string{"protect-paths", tc.path, `"` + tc.rule + `"`} {
				if !strings.Contains(r.Text(), w) {
					t.Errorf("reason %q does not name %q", r.Text(), w)
				}
			}
			if tc.path != ".git" && statErr == nil {
				t.Errorf("blocked write created %s", target)
			}
		})
	}
	t.Run("edit is blocked too", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(root, ".env"), []byte("A=1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := plugin.RunWith(t, tools, l.Hooks, "edit", map[string]any{"path": ".env", "edits": []map[string]string{{"oldText": "A=1", "newText": "A=2"}}})
		if !r.IsError || !strings.Contains(r.Text(), "edit of .env") {
			t.Errorf("edit .env: %q", r.Text())
		}
		if b, _ := os.ReadFile(filepath.Join(root, ".env")); string(b) != "A=1\n" {
			t.Errorf(".env changed to %q", b)
		}
	})
	t.Run("read is blocked too", func(t *testing.T) {
		r := plugin.RunWith(t, tools, l.Hooks, "read", map[string]any{"path": ".env"})
		if !r.IsError || !strings.Contains(r.Text(), "read of .env") || strings.Contains(r.Text(), "A=1") {
			t.Errorf("read .env: %q", r.Text())
		}
	})
}

// guard_reads = false keeps the old behaviour: only changes are checked.
func TestGuardReadsOff(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := load(t, root, map[string]any{"guard_reads": false})
	tools := builtins(t, root)
	if r := plugin.RunWith(t, tools, l.Hooks, "read", map[string]any{"path": ".env"}); r.IsError || !strings.Contains(r.Text(), "A=1") {
		t.Errorf("read .env with guard_reads off: %q", r.Text())
	}
	if r := plugin.RunWith(t, tools, l.Hooks, "write", map[string]any{"path": "notes", "content": "x"}); r.IsError {
		t.Errorf("write notes: %q", r.Text())
	}
	if r := plugin.RunWith(t, tools, l.Hooks, "write", map[string]any{"path": ".env", "content": "x"}); !r.IsError {
		t.Errorf("write .env with guard_reads off was allowed: %q", r.Text())
	}
}

// TestRealPathsBlocked tries every way of naming a protected file other
// than by its name: the host's real paths catch what the argument hides.
func TestRealPathsBlocked(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, root, out := filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "out")
	t.Setenv("HOME", home)
	files := map[string]string{
		filepath.Join(home, ".ssh", "authorized_keys"): "KEYS",
		filepath.Join(home, "notes.txt"):               "HOMENOTES",
		filepath.Join(root, ".env"):                    "ENV",
		filepath.Join(root, "secrets", "db.key"):       "DBKEY",
		filepath.Join(root, "src", "main.go"):          "package main",
		filepath.Join(out, "plain.txt"):                "PLAIN",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"notes.txt":  ".env",                      // a symlinked file
		"vault":      "secrets",                   // a symlinked protected folder
		"sshdir":     filepath.Join(home, ".ssh"), // a symlinked folder outside the project
		"outlink":    "../out",                    // a harmless symlinked folder
		"later":      "secrets/not-yet.key",       // a dangling link into a protected folder
		"src/escape": "../secrets",                // a link deeper in the tree
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	l := load(t, root, map[string]any{"paths": []any{".env", "secrets/**", filepath.ToSlash(filepath.Join(home, ".ssh")) + "/**"}})
	tools := builtins(t, root)
	tests := []struct {
		name, tool string
		args       map[string]any
		blocked    bool
	}{
		{"write tilde ssh", "write", map[string]any{"path": "~/.ssh/authorized_keys", "content": "evil"}, true},
		{"edit tilde ssh", "edit", map[string]any{"path": "~/.ssh/authorized_keys", "edits": []map[string]string{{"oldText": "KEYS", "newText": "evil"}}}, true},
		{"read tilde ssh", "read", map[string]any{"path": "~/.ssh/authorized_keys"}, true},
		{"write dot-dot env", "write", map[string]any{"path": "./x/../.env", "content": "evil"}, true},
		{"write symlink to env", "write", map[string]any{"path": "notes.txt", "content": "evil"}, true},
		{"read symlink to env", "read", map[string]any{"path": "notes.txt"}, true},
		{"read at symlink to env", "read", map[string]any{"path": "@notes.txt"}, true},
		{"write through symlinked protected folder", "write", map[string]any{"path": "vault/db.key", "content": "evil"}, true},
		{"write new file under symlinked protected folder", "write", map[string]any{"path": "vault/new.key", "content": "evil"}, true},
		{"write dangling link into protected folder", "write", map[string]any{"path": "later", "content": "evil"}, true},
		{"write through a deeper link", "write", map[string]any{"path": "src/escape/db.key", "content": "evil"}, true},
		{"write absolute through link outside", "write", map[string]any{"path": filepath.Join(root, "sshdir", "authorized_keys"), "content": "evil"}, true},
		{"ls protected folder", "ls", map[string]any{"path": "secrets"}, true},
		{"ls symlinked protected folder", "ls", map[string]any{"path": "vault"}, true},
		{"ls tilde ssh", "ls", map[string]any{"path": "~/.ssh"}, true},
		{"find glob in protected folder", "find", map[string]any{"pattern": "**/*.key", "path": "vault"}, true},
		{"find in symlinked ssh", "find", map[string]any{"pattern": "*", "path": "sshdir"}, true},
		{"find over home reaches ssh", "find", map[string]any{"pattern": "authorized_keys", "path": "~"}, true},
		{"grep glob over protected folder", "grep", map[string]any{"pattern": ".", "path": "src/escape", "glob": "*.key"}, true},
		{"grep symlink to env", "grep", map[string]any{"pattern": "ENV", "path": "notes.txt"}, true},
		{"grep over home reaches ssh", "grep", map[string]any{"pattern": "KEYS", "path": "~"}, true},
		// What stays allowed: the project, a harmless link, the home folder listed.
		{"write ordinary", "write", map[string]any{"path": "src/new.go", "content": "package main"}, false},
		{"write through harmless link", "write", map[string]any{"path": "outlink/plain.txt", "content": "ok"}, false},
		{"read ordinary", "read", map[string]any{"path": "src/main.go"}, false},
		{"ls home", "ls", map[string]any{"path": "~"}, false},
		{"grep project", "grep", map[string]any{"pattern": "package", "path": "src", "glob": "*.go"}, false},
		{"find project", "find", map[string]any{"pattern": "*.go"}, false},
		{"bash has no paths", "bash", map[string]any{"command": "true"}, false},
		// The README's limit: without bash rules, what a command opens is
		// not checked.
		{"bash reading env is not checked", "bash", map[string]any{"command": "cat .env"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := plugin.RunWith(t, tools, l.Hooks, tc.tool, tc.args)
			if !tc.blocked {
				if r.IsError {
					t.Errorf("refused: %s", r.Text())
				}
				return
			}
			if !r.IsError || !strings.Contains(r.Text(), "Blocked by protect-paths") {
				t.Errorf("%s %v was allowed: %s", tc.tool, tc.args, r.Text())
			}
			for _, secret := range []string{"KEYS", "ENV", "DBKEY"} {
				if strings.Contains(r.Text(), secret) && !strings.Contains(fmt.Sprint(tc.args), secret) {
					t.Errorf("a blocked call leaked %s: %s", secret, r.Text())
				}
			}
		})
	}
	// No blocked change reached the disk.
	for p, c := range files {
		if c != "KEYS" && c != "ENV" && c != "DBKEY" {
			continue
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != c {
			t.Errorf("%s now holds %q (%v)", p, b, err)
		}
	}
	for _, p := range []string{filepath.Join(root, "secrets", "new.key"), filepath.Join(root, "secrets", "not-yet.key")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("blocked write created %s", p)
		}
	}
}

func TestConfiguredRules(t *testing.T) {
	root := t.TempDir()
	l := load(t, root, map[string]any{
		"paths": []any{"secrets/**", "*.pem", "/etc/**"},
		"bash":  []any{`\brm\s+-rf\b`, `git\s+push\s+.*--force`},
	})
	tools := builtins(t, root)
	tests := []struct {
		name, toolName string
		args           map[string]any
		rule           string
	}{
		{"secrets folder", "write", map[string]any{"path": "secrets/a/b.txt", "content": "x"}, "secrets/**"},
		{"pem anywhere", "write", map[string]any{"path": "deploy/key.pem", "content": "x"}, "*.pem"},
		{"absolute rule", "write", map[string]any{"path": "/etc/hosts", "content": "x"}, "/etc/**"},
		{"env no longer default", "write", map[string]any{"path": ".env", "content": "x"}, ""},
		{"rm -rf", "bash", map[string]any{"command": "cd x && rm -rf /"}, `\brm\s+-rf\b`},
		{"force push", "bash", map[string]any{"command": "git push origin main --force"}, `git\s+push\s+.*--force`},
		{"harmless bash", "bash", map[string]any{"command": "echo rm-rf"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := plugin.RunWith(t, tools, l.Hooks, tc.toolName, tc.args)
			if tc.rule == "" {
				if r.IsError {
					t.Errorf("refused: %s", r.Text())
				}
				return
			}
			if !r.IsError || !strings.Contains(r.Text(), "Blocked by protect-paths") || !strings.Contains(r.Text(), tc.rule) {
				t.Errorf("got %q (isError %v), want a block naming rule %s", r.Text(), r.IsError, tc.rule)
			}
		})
	}
}

func TestBadConfigFailsLoad(t *testing.T) {
	wasm := plugin.BuildGo(t, "examples/plugins/protect-paths")
	tests := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"bad regexp", map[string]any{"bash": []any{"("}}, `config bash[0] "("`},
		{"bad glob", map[string]any{"paths": []any{"ok", "[abc"}}, `config paths[1] "[abc"`},
		{"unknown key", map[string]any{"pathz": []any{}}, `unknown field "pathz"`},
		{"wrong type", map[string]any{"paths": ".env"}, `field "paths" must be array`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := plugin.LoadErr(t, wasm, t.TempDir(), extensions.Spec{Name: "protect-paths", Config: tc.config})
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "protect-paths") {
				t.Errorf("error %q, want it to name the extension and contain %q", err, tc.want)
			}
		})
	}
}

// The hook runs in front of any tool, including ones from other sources.
func TestHookSeesToolCallInfo(t *testing.T) {
	root := t.TempDir()
	l := load(t, root, nil)
	if len(l.Hooks.ToolCall) != 1 || !strings.Contains(l.Hooks.ToolCall[0].Name, "protect-paths") {
		t.Fatalf("tool_call hooks %+v", l.Hooks.ToolCall)
	}
	d, err := l.Hooks.ToolCall[0].Func(context.Background(), tool.CallInfo{ID: "c9", Name: "write", Input: []byte(`{"path":".env","content":""}`)})
	if err != nil || !d.Block {
		t.Fatalf("decision %+v, err %v", d, err)
	}
	d, err = l.Hooks.ToolCall[0].Func(context.Background(), tool.CallInfo{ID: "c9", Name: "my_tool", Input: []byte(`{"path":".env"}`)})
	if err != nil || d.Block {
		t.Errorf("a tool other than write/edit/bash was blocked: %+v, %v", d, err)
	}
}

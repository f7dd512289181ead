//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
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

// Secrets of the shapes the extension knows, built here so that no real-looking
// token sits in the source.
var (
	openAI = "sk-" + strings.Repeat("aB3_", 8)
	github = "ghp_" + strings.Repeat("x1Y2", 9)
	aws    = "AKIA" + "ABCDEFGHIJKLMNOP"
	custom = "tok_" + "0123456789abcdef"
)

func setup(t *testing.T, config map[string]any) (*plugin.Loaded, []tool.AgentTool, string) {
	t.Helper()
	root := t.TempDir()
	wasm := plugin.BuildGo(t, "examples/plugins/redact")
	l := plugin.Load(t, wasm, root, extensions.Spec{Name: "redact", Config: config})
	tools, err := tool.WrapAll(builtin.Definitions(builtin.Options{}), func(string) tool.Context { return tool.Context{Cwd: root} })
	if err != nil {
		t.Fatal(err)
	}
	return l, tools, root
}

func TestMasksSecretsInResults(t *testing.T) {
	l, tools, root := setup(t, map[string]any{"patterns": []any{`tok_[0-9a-f]{16}`}})
	env := "OPENAI_API_KEY=" + openAI + "\nGITHUB_TOKEN=" + github + "\nAWS_ACCESS_KEY_ID=" + aws + "\nINTERNAL=" + custom + "\nPLAIN=sk-short\n"
	if err := os.WriteFile(filepath.Join(root, "secrets.env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read", "read", map[string]any{"path": "secrets.env"}},
		{"bash", "bash", map[string]any{"command": "cat secrets.env"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := plugin.RunWith(t, tools, l.Hooks, tc.tool, tc.args)
			got := r.Text()
			for _, s := range []string{openAI, github, aws, custom} {
				if strings.Contains(got, s) {
					t.Errorf("secret %s reached the model:\n%s", s, got)
				}
			}
			for _, w := range []string{"OPENAI_API_KEY=[REDACTED]", "GITHUB_TOKEN=[REDACTED]", "AWS_ACCESS_KEY_ID=[REDACTED]", "INTERNAL=[REDACTED]", "PLAIN=sk-short"} {
				if !strings.Contains(got, w) {
					t.Errorf("result does not contain %q:\n%s", w, got)
				}
			}
		})
	}
	if !strings.Contains(l.Logs(), "masked 4 secret(s) in the result of read") {
		t.Errorf("no log line about the masking:\n%s", l.Logs())
	}
}

func TestShapes(t *testing.T) {
	l, _, _ := setup(t, nil)
	hook := l.Hooks.ToolResult[0]
	slack := "xoxb-" + "1234567890-abcdef"
	tests := []struct{ name, in, want string }{
		{"alone", openAI, "[REDACTED]"},
		{"at both ends", aws + " middle " + github, "[REDACTED] middle [REDACTED]"},
		{"adjacent", openAI + "," + openAI, "[REDACTED],[REDACTED]"},
		{"aws inside a longer word is kept", "X" + aws, "X" + aws},
		{"aws followed by more capitals is kept", aws + "Q", aws + "Q"},
		{"too short", "sk-abc ghp_short AKIA123", "sk-abc ghp_short AKIA123"},
		{"slack", "token=" + slack, "token=[REDACTED]"},
		{"fine-grained github", "github_pat_" + strings.Repeat("A1_", 10), "[REDACTED]"},
		{"many literals, few secrets", strings.Repeat("sk- gho ASIA ", 200) + openAI, strings.Repeat("sk- gho ASIA ", 200) + "[REDACTED]"},
		{"unicode around", "é" + openAI + "ü", "é[REDACTED]ü"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := hook.Func(context.Background(), tool.CallInfo{ID: "c", Name: "read", Input: json.RawMessage(`{}`)}, tool.TextResult(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got := tc.in
			if p.Content != nil {
				got = tool.Result{Content: p.Content}.Text()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMasksDetails(t *testing.T) {
	l, tools, root := setup(t, nil)
	p := filepath.Join(root, "config.py")
	if err := os.WriteFile(p, []byte("KEY = \""+openAI+"\"\nDEBUG = False\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := plugin.RunWith(t, tools, l.Hooks, "edit", map[string]any{"path": "config.py", "edits": []map[string]string{{"oldText": "DEBUG = False", "newText": "DEBUG = True"}}})
	if r.IsError {
		t.Fatalf("edit failed: %s", r.Text())
	}
	b, err := json.Marshal(r.Details)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), openAI) {
		t.Errorf("secret left in details: %s", b)
	}
	if !strings.Contains(string(b), "DEBUG = True") || !strings.Contains(string(b), `KEY = \"[REDACTED]\"`) {
		t.Errorf("details %s: want the diff with the key line masked", b)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), openAI) {
		t.Errorf("the file itself must keep its secret; it is %q", b)
	}
}

func TestCleanResultIsUntouched(t *testing.T) {
	l, tools, root := setup(t, nil)
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("nothing to hide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	with := plugin.RunWith(t, tools, l.Hooks, "read", map[string]any{"path": "a.txt"})
	without := plugin.RunWith(t, tools, nil, "read", map[string]any{"path": "a.txt"})
	if with.Text() != without.Text() || with.IsError != without.IsError {
		t.Errorf("with the hook %q, without %q", with.Text(), without.Text())
	}
}

func TestNoDefaults(t *testing.T) {
	l, tools, root := setup(t, map[string]any{"no_defaults": true, "patterns": []any{`tok_[0-9a-f]{16}`}})
	if err := os.WriteFile(filepath.Join(root, "k"), []byte(openAI+" "+custom), 0o644); err != nil {
		t.Fatal(err)
	}
	got := plugin.RunWith(t, tools, l.Hooks, "read", map[string]any{"path": "k"}).Text()
	if !strings.Contains(got, openAI) || strings.Contains(got, custom) {
		t.Errorf("got %q: want the default pattern off and the custom one on", got)
	}
}

func TestBadConfigFailsLoad(t *testing.T) {
	wasm := plugin.BuildGo(t, "examples/plugins/redact")
	tests := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"bad regexp", map[string]any{"patterns": []any{"[a-"}}, `config patterns: "[a-"`},
		{"matches empty", map[string]any{"patterns": []any{"x*"}}, "matches the empty string"},
		{"unknown key", map[string]any{"pattern": []any{"x"}}, `unknown field "pattern"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := plugin.LoadErr(t, wasm, t.TempDir(), extensions.Spec{Name: "redact", Config: tc.config})
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// BenchmarkRedactHook measures the tool_result hook on a 50KB result (the
// built-in tools' output limit), clean and with two secrets in it, called as
// the pipeline calls it.
func BenchmarkRedactHook(b *testing.B) {
	wasm := plugin.BuildGo(b, "examples/plugins/redact")
	l := plugin.Load(b, wasm, b.TempDir(), extensions.Spec{Name: "redact"})
	line := "INFO request served in 12ms path=/api/v1/items user=42 task-list ok\n"
	clean := strings.Repeat(line, (50<<10)/len(line))
	h := l.Hooks.ToolResult[0]
	for _, tc := range []struct {
		name, text string
		masked     bool
	}{
		{"clean_50KB", clean, false},
		{"2_secrets_50KB", clean + "key " + openAI + " and " + aws + "\n", true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			res := tool.Result{Content: []tool.ContentBlock{tool.Text(tc.text)}}
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := h.Func(context.Background(), tool.CallInfo{ID: "c", Name: "bash", Input: json.RawMessage(`{}`)}, res)
				if err != nil || (p.Content != nil) != tc.masked {
					b.Fatalf("patched %v, err %v", p.Content != nil, err)
				}
			}
		})
	}
}

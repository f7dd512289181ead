package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// pathsWorld is a home folder, a project and a folder outside it, with the
// symlinks an attacker would use to reach a protected file under another
// name. Every file holds a unique marker, so a test can tell which file a
// tool really opened.
type pathsWorld struct {
	base, home, proj, out string
}

func newPathsWorld(t *testing.T) pathsWorld {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := pathsWorld{base: base, home: filepath.Join(base, "home"), proj: filepath.Join(base, "proj"), out: filepath.Join(base, "outside")}
	t.Setenv("HOME", w.home)
	mustWrite(t, filepath.Join(w.home, ".ssh", "authorized_keys"), "MARK-keys\n")
	mustWrite(t, filepath.Join(w.proj, ".env"), "MARK-env\n")
	mustWrite(t, filepath.Join(w.proj, "a b.txt"), "MARK-spaced\n")
	mustWrite(t, filepath.Join(w.proj, "sub", "keep.txt"), "MARK-sub\n")
	mustWrite(t, filepath.Join(w.out, "secret.txt"), "MARK-secret\n")
	for link, target := range map[string]string{
		"notes.txt": ".env",                      // a symlinked file
		"linkdir":   "../outside",                // a symlinked folder
		"dangling":  "../outside/created.txt",    // a link to a file not there yet
		"chain":     "linkdir",                   // a link to a link
		"sub/up":    "../linkdir/../outside/sub", // a relative target read from the link's real folder
	} {
		if err := os.Symlink(target, filepath.Join(w.proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// recordingHooks is one real tool_call hook that keeps every CallInfo it
// sees and lets the call through.
func recordingHooks(seen *[]tool.CallInfo) *tool.Hooks {
	return &tool.Hooks{ToolCall: []tool.ToolCallHook{{Name: "recorder", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
		*seen = append(*seen, c)
		return tool.ToolCallDecision{}, nil
	}}}}
}

func allTools(t *testing.T, cwd string) []tool.AgentTool {
	t.Helper()
	tools, err := tool.WrapAll(Definitions(Options{}), func(string) tool.Context { return tool.Context{Cwd: cwd} })
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestCallPathsAreWhatToolsOpen runs every path tool through the pipeline
// with the ways of naming a file other than by its real path, and checks
// both that the hook saw the real path and that the tool really opened
// that file (its marker is in the result, or the write landed there).
func TestCallPathsAreWhatToolsOpen(t *testing.T) {
	w := newPathsWorld(t)
	j := filepath.Join
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string // the real path the hook must see
		proof      string // text in the result that shows which file was opened ("" for writes)
	}{
		{"read tilde", "read", map[string]any{"path": "~/.ssh/authorized_keys"}, j(w.home, ".ssh", "authorized_keys"), "MARK-keys"},
		{"read at prefix", "read", map[string]any{"path": "@.env"}, j(w.proj, ".env"), "MARK-env"},
		{"read relative", "read", map[string]any{"path": ".env"}, j(w.proj, ".env"), "MARK-env"},
		{"read dot-dot", "read", map[string]any{"path": "./nowhere/../.env"}, j(w.proj, ".env"), "MARK-env"},
		{"read symlinked file", "read", map[string]any{"path": "notes.txt"}, j(w.proj, ".env"), "MARK-env"},
		{"read symlinked folder", "read", map[string]any{"path": "linkdir/secret.txt"}, j(w.out, "secret.txt"), "MARK-secret"},
		{"read link to a link", "read", map[string]any{"path": "chain/secret.txt"}, j(w.out, "secret.txt"), "MARK-secret"},
		{"read absolute through link", "read", map[string]any{"path": j(w.proj, "linkdir", "secret.txt")}, j(w.out, "secret.txt"), "MARK-secret"},
		{"read unicode space", "read", map[string]any{"path": "a\u00a0b.txt"}, j(w.proj, "a b.txt"), "MARK-spaced"},
		{"read at and unicode space", "read", map[string]any{"path": "@a\u202fb.txt"}, j(w.proj, "a b.txt"), "MARK-spaced"},
		{"write tilde", "write", map[string]any{"path": "~/.ssh/authorized_keys", "content": "W1"}, j(w.home, ".ssh", "authorized_keys"), ""},
		{"write symlinked file", "write", map[string]any{"path": "notes.txt", "content": "W2"}, j(w.proj, ".env"), ""},
		{"write new file under symlinked folder", "write", map[string]any{"path": "linkdir/new/deep.txt", "content": "W3"}, j(w.out, "new", "deep.txt"), ""},
		{"write dangling link", "write", map[string]any{"path": "dangling", "content": "W4"}, j(w.out, "created.txt"), ""},
		{"write at prefix new file", "write", map[string]any{"path": "@fresh.txt", "content": "W5"}, j(w.proj, "fresh.txt"), ""},
		{"write dot-dot out of a link", "write", map[string]any{"path": "linkdir/../linkdir/secret.txt", "content": "W6"}, j(w.out, "secret.txt"), ""},
		{"edit symlinked file", "edit", map[string]any{"path": "notes.txt", "edits": []map[string]string{{"oldText": "W2", "newText": "E1"}}}, j(w.proj, ".env"), ""},
		{"edit legacy shape through link", "edit", map[string]any{"path": "chain/secret.txt", "oldText": "W6", "newText": "E2"}, j(w.out, "secret.txt"), ""},
		{"ls tilde", "ls", map[string]any{"path": "~"}, w.home, ".ssh/"},
		{"ls default is cwd", "ls", map[string]any{}, w.proj, "linkdir"},
		{"ls symlinked folder", "ls", map[string]any{"path": "linkdir"}, w.out, "secret.txt"},
		{"ls relative link target", "ls", map[string]any{"path": "sub/up"}, j(w.out, "sub"), ""},
		{"find tilde folder", "find", map[string]any{"pattern": "*", "path": "~/.ssh"}, j(w.home, ".ssh"), "authorized_keys"},
		{"find glob in symlinked folder", "find", map[string]any{"pattern": "**/*.txt", "path": "@linkdir"}, w.out, "secret.txt"},
		{"grep glob over symlinked folder", "grep", map[string]any{"pattern": "E2", "path": "chain", "glob": "*.txt"}, w.out, "secret.txt"},
		{"grep one symlinked file", "grep", map[string]any{"pattern": "E1", "path": "notes.txt"}, j(w.proj, ".env"), "E1"},
		{"grep tilde", "grep", map[string]any{"pattern": "W1", "path": "~/.ssh"}, j(w.home, ".ssh"), "W1"},
	}
	if err := os.MkdirAll(j(w.out, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := allTools(t, w.proj)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen []tool.CallInfo
			raw, _ := json.Marshal(tc.args)
			r := tool.Run(context.Background(), tools, recordingHooks(&seen), tc.tool, "c1", raw, nil)
			if len(seen) != 1 {
				t.Fatalf("hook ran %d times", len(seen))
			}
			if got := seen[0].Paths; !reflect.DeepEqual(got, []string{tc.want}) {
				t.Errorf("paths %q, want [%q]", got, tc.want)
			}
			if r.IsError {
				t.Fatalf("%s failed: %s", tc.tool, callText(r))
			}
			if tc.proof != "" && !strings.Contains(callText(r), tc.proof) {
				t.Errorf("result %q does not show %q: the tool opened something else", callText(r), tc.proof)
			}
			switch tc.tool {
			case "write":
				if got := mustRead(t, tc.want); got != tc.args["content"] {
					t.Errorf("%s holds %q: the write went somewhere else", tc.want, got)
				}
			case "edit":
				var spec struct {
					Edits   []map[string]string `json:"edits"`
					NewText string              `json:"newText"`
				}
				_ = json.Unmarshal(raw, &spec)
				want := spec.NewText
				if len(spec.Edits) > 0 {
					want = spec.Edits[0]["newText"]
				}
				if got := mustRead(t, tc.want); got != want {
					t.Errorf("%s holds %q: the edit went somewhere else", tc.want, got)
				}
			}
		})
	}
}

func callText(r tool.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Tools that open no files they can name say so with an empty list, never
// a missing one.
func TestCallPathsEmptyForBash(t *testing.T) {
	var seen []tool.CallInfo
	tools := allTools(t, t.TempDir())
	tool.Run(context.Background(), tools, recordingHooks(&seen), "bash", "c1", json.RawMessage(`{"command":"cat ~/.ssh/id_rsa"}`), nil)
	if len(seen) != 1 || seen[0].Paths == nil || len(seen[0].Paths) != 0 {
		t.Fatalf("bash paths %#v, want an empty non-nil list", seen)
	}
	b, _ := json.Marshal(seen[0])
	if !strings.Contains(string(b), `"paths":[]`) {
		t.Errorf("CallInfo JSON %s has no \"paths\":[]", b)
	}
}

// A hook that rewrites the path gets the next hook to see the new real
// path, not the one the model gave.
func TestCallPathsRecomputedAfterRewrite(t *testing.T) {
	w := newPathsWorld(t)
	var seen []tool.CallInfo
	hooks := &tool.Hooks{ToolCall: []tool.ToolCallHook{
		{Name: "rewriter", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
			seen = append(seen, c)
			return tool.ToolCallDecision{Input: json.RawMessage(`{"path":"linkdir/secret.txt","content":"x"}`)}, nil
		}},
		{Name: "checker", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
			seen = append(seen, c)
			return tool.ToolCallDecision{Block: true, Reason: "stop"}, nil
		}},
	}}
	r := tool.Run(context.Background(), allTools(t, w.proj), hooks, "write", "c1", json.RawMessage(`{"path":"harmless.txt","content":"x"}`), nil)
	if !r.IsError || len(seen) != 2 {
		t.Fatalf("result %q, hooks ran %d times", callText(r), len(seen))
	}
	if want := []string{filepath.Join(w.proj, "harmless.txt")}; !reflect.DeepEqual(seen[0].Paths, want) {
		t.Errorf("first hook saw %q, want %q", seen[0].Paths, want)
	}
	if want := []string{filepath.Join(w.out, "secret.txt")}; !reflect.DeepEqual(seen[1].Paths, want) {
		t.Errorf("second hook saw %q after the rewrite, want %q", seen[1].Paths, want)
	}
}

func TestRealPathFollowsLinksAsTheKernel(t *testing.T) {
	w := newPathsWorld(t)
	j := filepath.Join
	// A dangling link inside a symlinked folder, with a relative target that
	// climbs: the kernel reads "../x" from the link's real folder.
	if err := os.Symlink("../escaped", j(w.out, "rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop2", j(w.proj, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", j(w.proj, "loop2")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{j(w.proj, "linkdir", "rel"), j(w.base, "escaped")},
		{j(w.proj, "linkdir", "rel", "more"), j(w.base, "escaped", "more")},
		{j(w.proj, "sub", "up", "x"), j(w.out, "sub", "x")},
		{j(w.proj, "chain", "..", ".env"), j(w.proj, ".env")}, // cleaned first, as the tools do
		{"/", "/"},
	}
	for _, tt := range tests {
		if got := realPath(tt.in); got != tt.want {
			t.Errorf("realPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A loop ends (the kernel says ELOOP) inside the loop, the rest kept.
	if got := realPath(j(w.proj, "loop1", "f")); got != j(w.proj, "loop1", "f") && got != j(w.proj, "loop2", "f") {
		t.Errorf("RealPath of a loop = %q", got)
	}
	// What the kernel agrees on: writing through the dangling relative link
	// creates the file where RealPath said.
	if err := os.WriteFile(j(w.proj, "linkdir", "rel"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, j(w.base, "escaped")); got != "k" {
		t.Errorf("kernel wrote elsewhere: %q", got)
	}
}

// BenchmarkCallPaths is what a tool_call hook costs the pipeline before the
// hook itself: decoding the input and resolving its real path.
func BenchmarkCallPaths(b *testing.B) {
	dir := b.TempDir()
	mustWrite(b, filepath.Join(dir, "a", "b", "c", "file.go"), "x")
	paths := readDefinition().Paths
	in := json.RawMessage(`{"path":"a/b/c/file.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := paths(tool.NewCall("", in, nil), dir); err != nil {
			b.Fatal(err)
		}
	}
}

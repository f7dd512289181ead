package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/runtime/session"
)

// referenceVersion is the reference agent the session format must
// interoperate with.
const referenceVersion = "0.73.1"

// referenceAgent returns the path of the reference agent's cli.js,
// installing @mariozechner/pi-coding-agent with npm once into the user's
// cache folder (outside the repository; $XDG_CACHE_HOME is honoured). It
// skips only when node or npm is missing.
func referenceAgent(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed, so the interoperability test with the reference agent cannot run: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed, so the reference agent cannot be installed: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache folder for the reference agent: %v", err)
	}
	dir := filepath.Join(cache, "pi-go", "ref-"+referenceVersion)
	pkg := filepath.Join(dir, "node_modules", "@mariozechner", "pi-coding-agent")
	cli := filepath.Join(pkg, "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "@mariozechner/pi-coding-agent@"+referenceVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install of the reference agent into %s failed: %v\n%s", dir, err, out)
		}
	}
	var meta struct {
		Version string `json:"version"`
	}
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil || json.Unmarshal(b, &meta) != nil || meta.Version != referenceVersion {
		t.Fatalf("the reference agent in %s is version %q, want %s: remove the folder to reinstall", dir, meta.Version, referenceVersion)
	}
	_ = node
	return cli
}

// refEnv is an agent folder for the reference agent with a models.json
// that points its "loop" provider at the test server.
func refEnv(t *testing.T, url string, contextWindow int) []string {
	t.Helper()
	agentDir, home := t.TempDir(), t.TempDir()
	models := map[string]any{"providers": map[string]any{"loop": map[string]any{
		"baseUrl": url, "api": "openai-completions", "apiKey": "test-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": "m1", "contextWindow": contextWindow}},
	}}}
	b, _ := json.Marshal(models)
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "PI_CODING_AGENT_DIR="+agentDir, "HOME="+home, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
		session.EnvDir+"=")
}

// runReference runs the reference agent in print mode in dir.
func runReference(t *testing.T, cli string, env []string, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{cli, "--provider", "loop", "--model", "m1"}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("reference agent %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// runPi runs pi in print mode in dir against url.
func runPi(t *testing.T, dir, url string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append(args, "--base-url", url, "--model", "m", "--cwd", dir), strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("pi %v: exit %d\n%s", args, code, stderr.String())
	}
	return stdout.String()
}

// chatOf normalizes the messages of a chat request after the system
// prompt: role, text (a string or the text parts joined), the tool calls
// with parsed arguments, the answered call's id. The two programs write
// the same conversation with different but equivalent JSON (a user text
// as a string or as one text part, an empty assistant text as "" or null).
func chatOf(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["role"] == "system" || mm["role"] == "developer" {
			continue
		}
		n := map[string]any{"role": mm["role"]}
		switch c := mm["content"].(type) {
		case string:
			n["text"] = c
		case []any:
			var parts []string
			for _, p := range c {
				pm := p.(map[string]any)
				if pm["type"] != "text" {
					t.Fatalf("a %v part: this test sends text only", pm["type"])
				}
				parts = append(parts, pm["text"].(string))
			}
			n["text"] = strings.Join(parts, "\n")
		case nil:
			n["text"] = ""
		}
		if calls, ok := mm["tool_calls"].([]any); ok && len(calls) > 0 {
			var cs []any
			for _, c := range calls {
				cm := c.(map[string]any)
				f := cm["function"].(map[string]any)
				var args any
				if err := json.Unmarshal([]byte(f["arguments"].(string)), &args); err != nil {
					t.Fatalf("tool call arguments %q: %v", f["arguments"], err)
				}
				cs = append(cs, map[string]any{"id": cm["id"], "name": f["name"], "arguments": args})
			}
			n["tool_calls"] = cs
		}
		if id, ok := mm["tool_call_id"]; ok {
			n["tool_call_id"] = id
		}
		out = append(out, n)
	}
	return out
}

func sameConversation(t *testing.T, what string, pi, ref []map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(pi, ref) {
		a, _ := json.MarshalIndent(pi, "", "  ")
		b, _ := json.MarshalIndent(ref, "", "  ")
		t.Fatalf("%s: pi and the reference agent sent different conversations\npi:\n%s\nreference:\n%s", what, a, b)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A session written by pi — tool calls answered by tools, a second
// prompt, and a compaction pi made when the usage passed the threshold —
// is loaded by the reference agent, which sends the model the same
// conversation pi sends when it resumes the same file.
func TestInteropPiSessionLoadedByReference(t *testing.T) {
	cli := referenceAgent(t)
	home := isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi from the file\n"), 0o644)
	// Keeping 8 tokens cuts at the second prompt: the first turn is
	// summarized, the second kept.
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte("[model]\ncontext_window = 20000\n[compaction]\nreserve_tokens = 1000\nkeep_recent_tokens = 8\n"), 0o644)
	srv := openai.NewServer(t,
		openai.Reply{Text: "Looking.", ToolCalls: []openai.ToolCall{
			{ID: "call_read", Name: "read", Arguments: `{"path":"hello.txt"}`},
			{ID: "call_bash", Name: "bash", Arguments: `{"command":"echo \"a && b <c>\"; exit 3"}`},
		}},
		openai.Reply{Text: "Both done: ünïcode & <tags>.", Usage: &openai.Usage{PromptTokens: 300, CompletionTokens: 10, TotalTokens: 310}},
		openai.Reply{Text: "Second answer.", Usage: &openai.Usage{PromptTokens: 19400, CompletionTokens: 100, TotalTokens: 19500}},
		openai.Reply{Text: "PI SUMMARY: read hello.txt, ran a failing echo."},
		openai.Reply{Text: "pi resumed"},
		openai.Reply{Text: "reference resumed"},
	)
	file := filepath.Join(t.TempDir(), "pi-written.jsonl")
	runPi(t, dir, srv.URL, "--session", file, "-p", "read hello.txt and run the echo")
	runPi(t, dir, srv.URL, "--session", file, "-p", "second question")
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("%d requests: pi did not compact", n)
	}
	s, err := session.Read(file, session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var hasCompaction bool
	for _, e := range s.Entries() {
		hasCompaction = hasCompaction || e.Type == session.TypeCompaction
	}
	if !hasCompaction {
		t.Fatal("pi's session has no compaction entry: the test proves less than it should")
	}
	refFile := filepath.Join(t.TempDir(), "copy.jsonl")
	copyFile(t, file, refFile)

	runPi(t, dir, srv.URL, "--session", file, "-p", "third")
	out := runReference(t, cli, refEnv(t, srv.URL, 128000), dir, "--session", refFile, "-p", "third")
	if !strings.Contains(out, "reference resumed") {
		t.Fatalf("reference output %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	piConv, refConv := chatOf(t, reqs[4]), chatOf(t, reqs[5])
	sameConversation(t, "a pi session", piConv, refConv)
	if !strings.Contains(fmt.Sprint(piConv[0]["text"]), "PI SUMMARY") || len(piConv) != 4 {
		t.Fatalf("the resumed conversation is not summary, kept turn, new prompt: %v", piConv)
	}
	// The reference appended to the copy: pi can read its entries back.
	back, err := session.Read(refFile, session.OpenOptions{})
	if err != nil || len(back.Warnings()) != 0 {
		t.Fatalf("reading the reference's additions: %v %v", err, back.Warnings())
	}
}

// A session written by the reference agent — a tool call and its result,
// two prompts — is resumed by pi (pi --session FILE -p), which sends the
// same conversation the reference sends when it resumes the same file.
func TestInteropReferenceSessionResumedByPi(t *testing.T) {
	cli := referenceAgent(t)
	isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the reference\n"), 0o644)
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{ID: "call_9", Name: "read", Arguments: `{"path":"hello.txt"}`}}},
		openai.Reply{Text: "It says hello.", Usage: &openai.Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105}},
		openai.Reply{Text: "Second & <last> answer."},
		openai.Reply{Text: "reference resumed"},
		openai.Reply{Text: "pi resumed"},
	)
	env := refEnv(t, srv.URL, 128000)
	file := filepath.Join(t.TempDir(), "ref-written.jsonl")
	runReference(t, cli, env, dir, "--session", file, "-p", "read hello.txt")
	runReference(t, cli, env, dir, "--session", file, "-p", "and now?")
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests after the reference's runs", n)
	}
	piFile := filepath.Join(t.TempDir(), "copy.jsonl")
	copyFile(t, file, piFile)
	runReference(t, cli, env, dir, "--session", file, "-p", "third")
	if out := runPi(t, dir, srv.URL, "--session", piFile, "-p", "third"); !strings.Contains(out, "pi resumed") {
		t.Fatalf("pi output %q", out)
	}
	reqs := srv.Requests()
	refConv, piConv := chatOf(t, reqs[3]), chatOf(t, reqs[4])
	sameConversation(t, "a reference session", piConv, refConv)
	if len(piConv) != 7 || piConv[2]["role"] != "tool" || !strings.Contains(fmt.Sprint(piConv[2]["text"]), "hello from the reference") {
		t.Fatalf("pi sent %v", piConv)
	}
	// pi appended to the reference's file in the same format: the
	// reference reads pi's entries back (one more resume).
	srv.Add(openai.Reply{Text: "reference again"})
	runReference(t, cli, env, dir, "--session", piFile, "-p", "fourth")
	last := chatOf(t, srv.Requests()[5])
	if len(last) != 9 || last[7]["text"] != "pi resumed" || last[8]["text"] != "fourth" {
		t.Fatalf("the reference did not read pi's additions: %v", last)
	}
}

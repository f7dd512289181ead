package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/runtime/session"
)

// thinkingModels is a models.json naming the loopback Anthropic server as
// provider "claude" with two reasoning models, for pi and the reference.
func thinkingModels(url string) []byte {
	b, _ := json.Marshal(map[string]any{"providers": map[string]any{"claude": map[string]any{
		"baseUrl": url, "api": "anthropic-messages", "apiKey": "test-key",
		"models": []any{
			map[string]any{"id": "c1", "reasoning": true, "contextWindow": 200000, "maxTokens": 32000},
			map[string]any{"id": "c2", "reasoning": true, "contextWindow": 200000, "maxTokens": 32000},
		},
	}}})
	return b
}

// piRun runs pi in dir with args; its stdout.
func piRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(append(args, "--cwd", dir), strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("pi %v: exit %d\n%s", args, code, stderr.String())
	}
	return stdout.String()
}

// refRun runs the reference agent with env in dir with args (no model
// flags of its own); its output.
func refRun(t *testing.T, cli string, env []string, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{cli}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("reference agent %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// contextView is what a context is made of, in one shape for both: the
// thinking level, the model, and each message's role, model and blocks
// (text, thinking with its signature and redaction, tool calls and
// results).
type contextView struct {
	ThinkingLevel string           `json:"thinkingLevel"`
	Model         map[string]any   `json:"model"`
	Messages      []map[string]any `json:"messages"`
}

func viewOf(t *testing.T, raw []byte) contextView {
	t.Helper()
	var c struct {
		ThinkingLevel string           `json:"thinkingLevel"`
		Model         map[string]any   `json:"model"`
		Messages      []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	v := contextView{ThinkingLevel: c.ThinkingLevel, Model: c.Model}
	keep := []string{"role", "provider", "model", "api", "toolCallId", "toolName", "isError", "stopReason"}
	for _, m := range c.Messages {
		n := map[string]any{}
		for _, k := range keep {
			if x, ok := m[k]; ok {
				n[k] = x
			}
		}
		var blocks []any
		switch c := m["content"].(type) {
		case string:
			blocks = append(blocks, map[string]any{"type": "text", "text": c})
		case []any:
			for _, b := range c {
				bm := b.(map[string]any)
				out := map[string]any{}
				for _, k := range []string{"type", "text", "thinking", "thinkingSignature", "redacted", "id", "name", "arguments"} {
					if x, ok := bm[k]; ok {
						out[k] = x
					}
				}
				blocks = append(blocks, out)
			}
		}
		n["content"] = blocks
		v.Messages = append(v.Messages, n)
	}
	return v
}

// piContext is pi's context of file in the reference's shape.
func piContext(t *testing.T, file string) contextView {
	t.Helper()
	s, err := session.Read(file, session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Warnings(); len(w) > 0 {
		t.Fatalf("pi warned reading %s: %v", file, w)
	}
	c := s.ContextAt(s.Leaf())
	level := c.ThinkingLevel
	if level == "" {
		level = "off"
	}
	b, err := json.Marshal(map[string]any{"thinkingLevel": level, "model": map[string]any{"provider": c.Provider, "modelId": c.Model}, "messages": c.Messages})
	if err != nil {
		t.Fatal(err)
	}
	return viewOf(t, b)
}

func sameContext(t *testing.T, file string) contextView {
	t.Helper()
	ref := viewOf(t, []byte(refSession(t, "context", file)))
	pi := piContext(t, file)
	if !reflect.DeepEqual(pi, ref) {
		a, _ := json.MarshalIndent(pi, "", " ")
		b, _ := json.MarshalIndent(ref, "", " ")
		t.Fatalf("pi and the reference build different contexts of %s\npi:\n%s\nreference:\n%s", file, a, b)
	}
	return pi
}

// messagesRequest is a Messages request with what legitimately differs
// between the two programs left out: the texts of the system prompt (each
// program's own; its blocks and cache marks are kept) and of the tools'
// descriptions and schemas (each program's own; their names, order and
// cache marks are kept). Everything else is compared as sent: the model,
// stream, max_tokens, the thinking setting, and the conversation with its
// thinking blocks, signatures, redacted thinking, tool calls and results
// and cache marks.
func messagesRequest(body map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	shape := func(v any, keep ...string) any {
		list, _ := v.([]any)
		var s []any
		for _, x := range list {
			m, _ := x.(map[string]any)
			n := map[string]any{}
			for _, k := range append(keep, "type", "cache_control") {
				if y, ok := m[k]; ok {
					n[k] = y
				}
			}
			s = append(s, n)
		}
		return s
	}
	out["system"] = shape(body["system"])
	out["tools"] = shape(body["tools"], "name")
	return out
}

func scriptThinking(srv *anthropic.Server) {
	srv.Add(
		anthropic.Reply{Chunks: 2, Blocks: []anthropic.Block{
			{Type: "thinking", Text: "I should read the file first.", Signature: "sig-A=="},
			{Type: "tool_use", ID: "toolu_01", Name: "read", Input: `{"path":"hello.txt"}`},
		}, Usage: anthropic.Usage{Input: 100, Output: 20}},
		anthropic.Reply{Blocks: []anthropic.Block{
			{Type: "thinking", Text: "It says hello.", Signature: "sig-B=="},
			{Type: "text", Text: "The file says hello."},
		}, Usage: anthropic.Usage{Input: 150, Output: 10}},
	)
}

// A session pi wrote with a reasoning model on Anthropic's API — thinking
// blocks with signatures, redacted thinking, a tool call, a switch to
// another model (model_change) and a thinking level — loads in the
// reference's SessionManager as the same context (messages, blocks,
// signatures, model, level); resumed by both, it makes both send the
// same Messages request.
func TestInteropThinkingSessionWrittenByPi(t *testing.T) {
	cli := referenceAgent(t)
	home := isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)
	srv := anthropic.NewServer(t)
	scriptThinking(srv)
	srv.Add(anthropic.Reply{Blocks: []anthropic.Block{
		{Type: "thinking", Text: "A second model now.", Signature: "sig-C=="},
		{Type: "redacted_thinking", Data: "ENCRYPTED=="},
		{Type: "text", Text: "Second answer."},
	}})
	models := thinkingModels(srv.URL)
	os.WriteFile(filepath.Join(home, "models.json"), models, 0o600)
	file := filepath.Join(t.TempDir(), "pi.jsonl")
	piRun(t, dir, "--model", "claude/c1", "--thinking", "high", "--session", file, "-p", "read hello.txt")
	piRun(t, dir, "--model", "claude/c2", "--session", file, "-p", "and now?")
	got := sameContext(t, file)
	if got.ThinkingLevel != "high" || got.Model["modelId"] != "c2" || len(got.Messages) != 6 {
		t.Fatalf("context: %+v", got)
	}
	raw, _ := os.ReadFile(file)
	for _, want := range []string{`"type":"model_change"`, `"modelId":"c2"`, `"type":"thinking_level_change"`, `"thinkingSignature":"sig-A=="`, `"redacted":true`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Fatalf("pi's session lacks %s:\n%s", want, raw)
		}
	}

	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	copyFile(t, file, copyPath)
	srv.Add(anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "pi resumed"}}},
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "reference resumed"}}})
	if out := piRun(t, dir, "--session", file, "-p", "third"); !strings.Contains(out, "pi resumed") {
		t.Fatalf("pi said %q", out)
	}
	env := thinkingRefEnv(t, models)
	if out := refRun(t, cli, env, dir, "--session", copyPath, "-p", "third"); !strings.Contains(out, "reference resumed") {
		t.Fatalf("the reference said %q", out)
	}
	reqs := srv.Requests()
	sameRequest(t, messagesRequest(reqs[3].JSON), messagesRequest(reqs[4].JSON))
}

// A session the reference wrote on the same server and models — thinking
// with signatures, a tool call, then a switch to another model — loads in
// pi as the same context, and resumed by both makes both send the same
// Messages request.
func TestInteropThinkingSessionWrittenByReference(t *testing.T) {
	cli := referenceAgent(t)
	home := isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)
	srv := anthropic.NewServer(t)
	scriptThinking(srv)
	srv.Add(anthropic.Reply{Blocks: []anthropic.Block{
		{Type: "thinking", Text: "A second model now.", Signature: "sig-C=="},
		{Type: "text", Text: "Second answer."},
	}})
	models := thinkingModels(srv.URL)
	os.WriteFile(filepath.Join(home, "models.json"), models, 0o600)
	env := thinkingRefEnv(t, models)
	file := filepath.Join(t.TempDir(), "ref.jsonl")
	refRun(t, cli, env, dir, "--provider", "claude", "--model", "c1", "--thinking", "high", "--session", file, "-p", "read hello.txt")
	refRun(t, cli, env, dir, "--provider", "claude", "--model", "c2", "--session", file, "-p", "and now?")
	got := sameContext(t, file)
	if got.ThinkingLevel != "high" || got.Model["modelId"] != "c2" || len(got.Messages) != 6 {
		t.Fatalf("context: %+v", got)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	copyFile(t, file, copyPath)
	srv.Add(anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "reference resumed"}}},
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "pi resumed"}}})
	refRun(t, cli, env, dir, "--session", file, "-p", "third")
	if out := piRun(t, dir, "--session", copyPath, "-p", "third"); !strings.Contains(out, "pi resumed") {
		t.Fatalf("pi said %q", out)
	}
	reqs := srv.Requests()
	sameRequest(t, messagesRequest(reqs[4].JSON), messagesRequest(reqs[3].JSON))
}

// thinkingRefEnv is an agent folder for the reference with models.
func thinkingRefEnv(t *testing.T, models []byte) []string {
	t.Helper()
	agentDir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), models, 0o600); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "PI_CODING_AGENT_DIR="+agentDir, "HOME="+home, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
		session.EnvDir+"=")
}

func sameRequest(t *testing.T, pi, ref map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(pi, ref) {
		a, _ := json.MarshalIndent(pi, "", " ")
		b, _ := json.MarshalIndent(ref, "", " ")
		t.Fatalf("pi and the reference sent different requests on resume\npi:\n%s\nreference:\n%s", a, b)
	}
}

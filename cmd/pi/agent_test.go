package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/tools/builtin"
)

// isolate gives the test its own PI_HOME and no model environment.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("PI_HOME", home)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("PI_TRUST", "")
	for _, v := range providerKeyVars {
		t.Setenv(v, "")
	}
	return home
}

// providerKeyVars are the catalogue's key variables (docs/models.md): a
// key set on the test machine must not choose the model.
var providerKeyVars = []string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY", "CEREBRAS_API_KEY", "ZAI_API_KEY", "MOONSHOT_API_KEY", "HF_TOKEN", "FIREWORKS_API_KEY", "MINIMAX_API_KEY"}

// TestPrintModeAgainstOpenAIServer is the loop's acceptance test: pi -p
// against a scripted OpenAI-compatible server on loopback sends back, for
// each tool call, the contract's text, in call order; every request carries
// the four default tools with their JSON Schemas; the system prompt names
// them; the final text goes to stdout.
func TestPrintModeAgainstOpenAIServer(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const key = "sk-test-THE-KEY-123456"
	srv := openai.NewServer(t,
		openai.Reply{
			Text:       "Working on it.",
			Chunks:     3,
			Interleave: true,
			ToolCalls: []openai.ToolCall{
				{Name: "read", Arguments: `{"path":"notes.txt"}`},
				{Name: "edit", Arguments: `{"path":"notes.txt","edits":[{"oldText":"gamma","newText":"delta"}]}`},
				{Name: "bash", Arguments: `{"command":"echo hi; echo $OPENAI_API_KEY"}`},
				{Name: "write", Arguments: `{"path":"out/new.txt","content":"héllo\n"}`},
				{Name: "nope", Arguments: `{}`},
				{Name: "read", Arguments: `{"path":`},
				{Name: "write", Arguments: `{"path":"x.txt"}`},
			},
		},
		openai.Reply{Text: "All done.", Chunks: 2},
	)
	var stdout, stderr bytes.Buffer
	t.Setenv("OPENAI_API_KEY", key)
	code := run([]string{"-p", "do the thing", "--base-url", srv.URL, "--model", "M", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "All done.") {
		t.Fatalf("stdout lacks the final text:\n%s", stdout.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), key) {
		t.Fatal("the API key appears in pi's output")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}

	// The four default tools with the schemas of their definitions.
	want := map[string]json.RawMessage{}
	for _, d := range builtin.Definitions(builtin.Options{}) {
		want[d.Name] = d.Parameters
	}
	for i, r := range reqs {
		if r["model"] != "M" {
			t.Errorf("request %d model = %v", i, r["model"])
		}
		tools, _ := r["tools"].([]any)
		var names []string
		for _, tl := range tools {
			fn := tl.(map[string]any)["function"].(map[string]any)
			name := fn["name"].(string)
			names = append(names, name)
			var wantSchema any
			json.Unmarshal(want[name], &wantSchema)
			if !reflect.DeepEqual(fn["parameters"], wantSchema) {
				t.Errorf("request %d: tool %s parameters differ from its definition's schema", i, name)
			}
		}
		if strings.Join(names, ",") != "read,bash,edit,write" {
			t.Errorf("request %d tools = %v, want read,bash,edit,write", i, names)
		}
		msgs := r["messages"].([]any)
		sys := msgs[0].(map[string]any)
		if sys["role"] != "system" {
			t.Fatalf("request %d: first message is %v, not the system prompt", i, sys["role"])
		}
		for _, n := range names {
			if !strings.Contains(sys["content"].(string), "- "+n+": ") {
				t.Errorf("system prompt does not list %s", n)
			}
		}
	}

	// The second request carries one tool message per call, in call order.
	msgs := reqs[1]["messages"].([]any)
	var results []map[string]any
	var callIDs []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		switch mm["role"] {
		case "tool":
			results = append(results, mm)
		case "assistant":
			for _, c := range mm["tool_calls"].([]any) {
				callIDs = append(callIDs, c.(map[string]any)["id"].(string))
			}
		}
	}
	if len(results) != 7 {
		t.Fatalf("%d tool messages, want 7", len(results))
	}
	text := func(i int) string {
		switch c := results[i]["content"].(type) {
		case string:
			return c
		case []any:
			var b strings.Builder
			for _, p := range c {
				b.WriteString(p.(map[string]any)["text"].(string))
			}
			return b.String()
		}
		return ""
	}
	for i, id := range callIDs {
		if results[i]["tool_call_id"] != id {
			t.Errorf("tool message %d answers %v, want %s (call order)", i, results[i]["tool_call_id"], id)
		}
	}
	checks := []struct {
		i        int
		contains string
	}{
		{0, "alpha\nbeta\n"},
		{1, "Could not find the exact text in notes.txt. The old text must match exactly including all whitespace and newlines."},
		{2, "hi\n"},
		{3, "Successfully wrote 7 bytes to out/new.txt"},
		{4, "Tool nope not found"},
		{5, "read"},
		{6, "Validation failed for tool \"write\":\n  - content: must have required property 'content'"},
	}
	for _, c := range checks {
		if got := text(c.i); !strings.Contains(got, c.contains) {
			t.Errorf("tool message %d = %q, want it to contain %q", c.i, got, c.contains)
		}
	}
	if strings.Contains(text(2), key) {
		t.Errorf("the API key reached the model through bash: %q", text(2))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out", "new.txt")); err != nil || string(b) != "héllo\n" {
		t.Errorf("write did not happen: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "alpha\nbeta\n" {
		t.Errorf("failed edit changed the file: %q", b)
	}
	// One compact line per tool call on stderr.
	if n := strings.Count(stderr.String(), "→ "); n != 7 {
		t.Errorf("%d tool lines on stderr, want 7:\n%s", n, stderr.String())
	}
}

func TestJSONModeEmitsEvents(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x\n"), 0o644)
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}}},
		openai.Reply{Text: "ok"},
	)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--mode", "json", "-p", "read it", "--base-url", srv.URL, "--model", "M", "--api-key", "k", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		types = append(types, ev["type"].(string))
	}
	seq := strings.Join(types, " ")
	for _, want := range []string{"agent_start", "turn_start", "message_update", "tool_execution_start", "tool_execution_end", "turn_end", "agent_end"} {
		if !strings.Contains(seq, want) {
			t.Errorf("events lack %s: %s", want, seq)
		}
	}
	// As the reference agent's: the session header first, then the run
	// from agent_start to agent_end, which ends the stream (session_start
	// and session_shutdown are extensions' events, not the stream's).
	if len(types) < 3 || types[0] != "session" || types[1] != "agent_start" || types[len(types)-1] != "agent_end" {
		t.Errorf("events are not header, agent_start ... agent_end: %s", seq)
	}
}

func TestProviderErrorExitsOne(t *testing.T) {
	home := isolate(t)
	srv := openai.NewServer(t, openai.Reply{Status: 401, ErrorMessage: "bad key"})
	var stdout, stderr bytes.Buffer
	t.Setenv("MY_KEY", "sk-wrong-key-0000")
	dir := t.TempDir()
	// The global pi.toml is the user's own, so where the key goes may be set there.
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte("[model]\napi_key_env = \"MY_KEY\"\nname = \"M\"\nbase_url = \""+srv.URL+"\"\n"), 0o644)
	code := run([]string{"-p", "hi", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "MY_KEY") {
		t.Errorf("401 error does not name the key's env var:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "sk-wrong-key-0000") {
		t.Errorf("the key appears in the error:\n%s", stderr.String())
	}
}

func TestScriptFlagAndStdinPrompt(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`{"turns":[{"toolCalls":[{"name":"bash","arguments":{"command":"echo from-bash"}}]},{"text":"finished"}]}`), 0o644)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--script", script, "--cwd", dir}, strings.NewReader("please do it\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "finished") || !strings.Contains(stderr.String(), "→ bash") {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
}

func TestInteractiveLineMode(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`{"turns":[{"text":"first answer"},{"toolCalls":[{"name":"read","arguments":{"path":"s.json"}}]},{"text":"second answer"}]}`), 0o644)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--interactive", "--script", script, "--cwd", dir}, strings.NewReader("one\n\ntwo\n"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"first answer", "→ read", "second answer", "    {\"turns\""} {
		if !strings.Contains(out, want) {
			t.Errorf("interactive transcript lacks %q:\n%s", want, out)
		}
	}
}

func TestDemo(t *testing.T) {
	isolate(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"demo"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"Helo, Ada", "Successfully replaced 1 block(s) in main.go.", "Successfully wrote", "Hello, Ada!", "ok  \tgreet"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo transcript lacks %q:\n%s", want, out)
		}
	}
}

// TestTwentyParallelEditsInOneTurn: one assistant message with 20 edits of
// different lines of one file; the loop runs them concurrently and the
// per-file queue keeps all 20.
func TestTwentyParallelEditsInOneTurn(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	var lines, want []string
	var calls []openai.ToolCall
	for i := 0; i < 20; i++ {
		lines = append(lines, fmt.Sprintf("line %02d old", i))
		want = append(want, fmt.Sprintf("line %02d new", i))
		calls = append(calls, openai.ToolCall{Name: "edit", Arguments: fmt.Sprintf(`{"path":"f.txt","edits":[{"oldText":"line %02d old","newText":"line %02d new"}]}`, i, i)})
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := openai.NewServer(t, openai.Reply{ToolCalls: calls, Chunks: 2}, openai.Reply{Text: "edited"})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-p", "edit", "--base-url", srv.URL, "--model", "M", "--api-key", "k", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
	if string(got) != strings.Join(want, "\n")+"\n" {
		t.Fatalf("after 20 parallel edits the file is:\n%s", got)
	}
	if n := strings.Count(stderr.String(), "✓ edit"); n != 20 {
		t.Errorf("%d successful edits reported, want 20:\n%s", n, stderr.String())
	}
}

// TestUntrustedProjectCannotRedirectTheKey: a repository's pi.toml that
// points base_url elsewhere is ignored until trusted, so the key is never
// sent there.
func TestUntrustedProjectCannotRedirectTheKey(t *testing.T) {
	isolate(t)
	evil := openai.NewServer(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pi.toml"), []byte("[model]\nname = \"M\"\nbase_url = \""+evil.URL+"\"\n"), 0o644)
	t.Setenv("OPENAI_API_KEY", "sk-precious-0000")
	good := openai.NewServer(t, openai.Reply{Text: "hello from the configured endpoint"})
	t.Setenv("OPENAI_BASE_URL", good.URL)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-p", "hi", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if len(evil.Requests()) != 0 {
		t.Fatal("the untrusted project's base_url received a request")
	}
	if !strings.Contains(stdout.String(), "hello from the configured endpoint") || !strings.Contains(stderr.String(), "model.base_url") {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	if r := good.Requests(); len(r) != 1 || r[0]["model"] != "M" {
		t.Fatalf("model.name from the project should still apply: %v", r)
	}
}

// TestKeyNeverInEventsOrLogs: a tool that prints the API key shows
// [REDACTED] in the JSON event stream and in trace logs. (bash gets the key
// only because the user's pi.toml lists it in pass_env.)
func TestKeyNeverInEventsOrLogs(t *testing.T) {
	home := isolate(t)
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte("[tools.bash]\npass_env = [\"OPENAI_API_KEY\"]\n"), 0o644)
	const key = "sk-json-mode-SECRET-98765"
	t.Setenv("OPENAI_API_KEY", key)
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"echo key=$OPENAI_API_KEY"}`}}},
		openai.Reply{Text: "done"},
	)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--mode", "json", "-p", "show", "--base-url", srv.URL, "--model", "M", "--log-level", "trace", "--cwd", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), key) {
		t.Fatalf("the key appears in events or logs")
	}
	if !strings.Contains(stdout.String(), "key=[REDACTED]") {
		t.Fatalf("the bash output was not redacted in the events:\n%s", stdout.String())
	}
	for _, r := range srv.RawRequests()[1:] {
		if strings.Contains(string(r), key) {
			t.Fatal("the key was sent back to the model in a tool result")
		}
	}
}

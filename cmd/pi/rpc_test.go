package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/session"
)

// TestReferenceRPCClient is RPC mode's acceptance: the reference agent's
// own RpcClient (installed with npm, see referenceAgent) drives the real pi
// binary against the loopback model server — prompt and its events, a
// follow-up, get_messages, bash, a confirm over the extension UI
// sub-protocol, abort while a tool runs, compact, session name and stats,
// new_session, an unknown command (testdata/rpc/client.mjs holds the
// checks). It skips only when node or npm is missing.
func TestReferenceRPCClient(t *testing.T) {
	srv := openai.NewServer(t,
		openai.Reply{Text: "Hi there!", Chunks: 3},
		openai.Reply{Text: "More here."},
		openai.Reply{Text: "## Goal\nSummary of the talk."},
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"rm -f nothing-here"}`}}},
		openai.Reply{Text: "ok, skipped"},
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"sleep 30"}`}}},
	)
	home, work := t.TempDir(), t.TempDir()
	toml := "[compaction]\nkeep_recent_tokens = 1\n\n[permissions]\ndefault = \"allow\"\n\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"rm\"]\ndecision = \"ask\"\n"
	if err := os.WriteFile(filepath.Join(home, "pi.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	runRefClient(t, "client.mjs", srv.URL, home, work)
	// What the model was sent: the summary request with the instructions;
	// the bash command's output with the next prompt, as the reference
	// sends it.
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6", len(reqs))
	}
	got := requestText(reqs[3])
	if !strings.Contains(got, "Ran `echo from-bash; exit 3`\n```\nfrom-bash\n\n```\n\nCommand exited with code 3") {
		t.Fatalf("the request after bash does not carry its output:\n%s", got)
	}
	if s := requestText(reqs[2]); !strings.Contains(s, "keep the greeting") {
		t.Fatalf("the compaction request lacks the instructions:\n%s", s)
	}
}

// TestReferenceRPCClientExtensions is RPC mode's acceptance for the
// conversation: the reference agent's own RpcClient drives prompts through
// an extension's input hook and its slash commands, and get_commands lists
// them, as -p and the TUI do (testdata/rpc/client_ext.mjs holds the
// checks). It skips only when node or npm is missing.
func TestReferenceRPCClientExtensions(t *testing.T) {
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/raw11")
	srv := openai.NewServer(t, openai.Reply{Text: "the plan"}, openai.Reply{Text: "the answer"})
	runRefClient(t, "client_ext.mjs", srv.URL, t.TempDir(), t.TempDir(), "EXT_WASM="+wasm)
	// The model saw exactly the two prompts that were meant for it.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got := requestText(reqs[0]); strings.Contains(got, "hunter2") || !strings.Contains(got, "summarize the plan") {
		t.Errorf("first request:\n%s", got)
	}
	if got := requestText(reqs[1]); !strings.Contains(got, "plain question (checked)") {
		t.Errorf("second request:\n%s", got)
	}
}

// runRefClient runs testdata/rpc/SCRIPT with node: the reference agent's
// RpcClient (installed with npm, see referenceAgent) driving the real pi
// binary through pi-shim.cjs against the model server at modelURL, with
// PI_HOME home and the working folder work; env adds variables. It fails
// the test unless the script exits 0 having printed "step: done".
func runRefClient(t *testing.T, script, modelURL, home, work string, env ...string) {
	t.Helper()
	pkg := filepath.Dir(filepath.Dir(referenceAgent(t)))
	shim, _ := filepath.Abs("testdata/rpc/pi-shim.cjs")
	path, _ := filepath.Abs(filepath.Join("testdata/rpc", script))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", path)
	cmd.Env = append(os.Environ(), "REF_PKG="+pkg, "PI_BIN="+realPi(t), "PI_SHIM="+shim, "MODEL_URL="+modelURL, "WORK_DIR="+work,
		"PI_HOME="+home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", "PI_CODING_AGENT_SESSION_DIR=")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the reference RPC client (%s) failed: %v\n%s", script, err, out)
	}
	if !strings.Contains(string(out), "step: done") {
		t.Fatalf("the client (%s) did not finish:\n%s", script, out)
	}
}

// requestText is every text of a chat request's messages, one per line.
func requestText(body map[string]any) string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		switch c := m.(map[string]any)["content"].(type) {
		case string:
			out = append(out, c)
		case []any:
			for _, p := range c {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// The reference's RpcClient switches models and thinking levels over
// pi's RPC (client_models.mjs); the session then holds the reference's
// model_change and thinking_level_change entries, and a resumed session
// goes on with the last of each.
func TestReferenceRPCModels(t *testing.T) {
	referenceAgent(t)
	srv := openai.NewServer(t,
		openai.Reply{Text: "Hi!", Usage: &openai.Usage{PromptTokens: 1000, CompletionTokens: 100}},
		openai.Reply{Text: "again"},
	)
	home, work := t.TempDir(), t.TempDir()
	text := `{"providers": {"local": {
  "baseUrl": "` + srv.URL + `", "api": "openai-completions", "apiKey": "local-literal-key-0123456789",
  "models": [
    {"id": "qwen", "reasoning": true, "thinkingLevelMap": {"xhigh": "max"}, "contextWindow": 32000, "cost": {"input": 2, "output": 10, "cacheRead": 0.5, "cacheWrite": 0}},
    {"id": "plain"}
  ]}}}`
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{}
	for _, v := range providerKeyVars {
		env = append(env, v+"=")
	}
	runRefClient(t, "client_models.mjs", srv.URL, home, work, env...)
	files := sessionFiles(t, home, work)
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	s, err := session.Read(files[0], session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range s.Branch() {
		switch e.Type {
		case session.TypeModelChange:
			changes = append(changes, "model "+e.Provider+"/"+e.ModelID)
		case session.TypeThinkingLevelChange:
			changes = append(changes, "thinking "+e.ThinkingLevel)
		}
	}
	want := "thinking high,thinking xhigh,thinking off,thinking minimal,thinking low,model local/plain,thinking off,model local/qwen,thinking medium,thinking high"
	if got := strings.Join(changes, ","); !strings.HasSuffix(got, want) {
		t.Errorf("changes recorded\n got %s\nwant …%s", got, want)
	}
	// Resumed without flags, the session's model and level are sent.
	var out, errb bytes.Buffer
	cmd := exec.Command(realPi(t), "--session", files[0], "-p", "more")
	cmd.Dir, cmd.Stdout, cmd.Stderr = work, &out, &errb
	cmd.Env = append(os.Environ(), "PI_HOME="+home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=")
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Run(); err != nil {
		t.Fatalf("pi --session: %v\n%s", err, errb.String())
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1]["model"]; got != "qwen" {
		t.Errorf("resumed model %v", got)
	}
	s, _ = session.Read(files[0], session.OpenOptions{})
	if p, m := s.Model(); p != "local" || m != "qwen" || s.ThinkingLevel() != "high" {
		t.Errorf("after the resume: %s/%s at %q", p, m, s.ThinkingLevel())
	}
}

// TestReferenceRPCClientSession12: the reference agent's own RpcClient
// gets ABI 1.2's answers when an extension's session_before_* hooks
// cancel (cancelled: true; compact's error names the extension) and its
// user_bash hook blocks (testdata/rpc/client_session12.mjs holds the
// checks), with a session on disk. It skips only when node or npm is
// missing.
func TestReferenceRPCClientSession12(t *testing.T) {
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/conv12/b")
	srv := openai.NewServer(t, openai.Reply{Text: "hi there"})
	runRefClient(t, "client_session12.mjs", srv.URL, t.TempDir(), t.TempDir(), "EXT_WASM="+wasm)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (nothing asked for a summary)", n)
	}
}

package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/anthropic"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/app"
)

// run12Log is a log a test can wait on for a line.
type run12Log struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func (l *run12Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *run12Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *run12Log) wait(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		l.mu.Lock()
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		text := l.b.String()
		l.mu.Unlock()
		for _, line := range strings.Split(text, "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return line
			}
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no log line with %q:\n%s", parts, text)
		}
	}
}

// run12Project makes a project loading the run12 test guest with grants
// and limits (TOML lines), on the OpenAI-wire server srv (models "m",
// which reasons, and "small"), and opens a runtime and a conversation.
func run12Project(t *testing.T, srv *openai.Server, grants, limits string, o app.Options) (*app.Runtime, *Conversation, *run12Log) {
	t.Helper()
	models := `{"providers": {"local": {"baseUrl": "` + srv.URL + `", "api": "openai-completions", "apiKey": "` + testKey + `",
  "models": [{"id": "m", "reasoning": true}, {"id": "small"}]}}}`
	return run12ProjectOn(t, models, "local", "m", grants, limits, o)
}

// run12ProjectOn is run12Project with models.json's text and the model
// (provider, id) to start with.
func run12ProjectOn(t *testing.T, models, provider, id, grants, limits string, o app.Options) (*app.Runtime, *Conversation, *run12Log) {
	t.Helper()
	dir, home := project.New(t)
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/run12")
	toml := project.Extension(t, "run12", wasm)
	if grants != "" {
		toml += "[extensions.grants]\n" + grants + "\n"
	}
	if limits != "" {
		toml += "[extensions.limits]\n" + limits + "\n"
	}
	project.Write(t, filepath.Join(dir, "pi.toml"), toml)
	if err := os.WriteFile(filepath.Join(home, "models.json"), []byte(models), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &run12Log{}
	o.Cwd, o.PIHome, o.Trust, o.LogOutput = dir, home, true, log
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	o.Model = app.ModelOptions{Provider: provider, Name: id}
	o.Mode = app.ModeInteractive
	rt := openRT(t, o)
	c := open(t, rt, Options{Session: &SessionOptions{Dir: t.TempDir()}})
	return rt, c, log
}

// tool12 runs a tool of the guest through the runtime's pipeline.
func tool12(t *testing.T, rt *app.Runtime, name, input string) (string, bool) {
	t.Helper()
	res, err := rt.CallTool(context.Background(), name, "c1", json.RawMessage(input), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Text(), res.IsError
}

// llm.complete sends exactly the system prompt and the messages, no
// tools, through pi's provider (the key the guest never sees); the
// quota counts the provider's usage and, once reached, nothing is sent.
func TestRun12LLMCompleteAndQuota(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "four, and " + testKey, Usage: &openai.Usage{PromptTokens: 20, CompletionTokens: 15, TotalTokens: 35}})
	rt, _, log := run12Project(t, srv, "llm = true", "llm_tokens = 30", app.Options{})
	got, isErr := tool12(t, rt, "complete", `{"prompt":"2+2?","system":"Answer in words.","max":64}`)
	if isErr || got != "four, and [REDACTED]" {
		t.Fatalf("complete = %q (error %v)", got, isErr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if _, has := reqs[0]["tools"]; has {
		t.Errorf("tools were sent: %v", reqs[0]["tools"])
	}
	if reqs[0]["max_completion_tokens"] != float64(64) {
		t.Errorf("maxTokens 64 sent as max_completion_tokens %v", reqs[0]["max_completion_tokens"])
	}
	msgs, _ := json.Marshal(reqs[0]["messages"])
	if string(msgs) != `[{"content":"Answer in words.","role":"system"},{"content":"2+2?","role":"user"}]` {
		t.Errorf("messages sent: %s", msgs)
	}
	// 35 tokens spent of 30: the next call is refused and sends nothing.
	got, isErr = tool12(t, rt, "complete", `{"prompt":"again"}`)
	if !isErr || !strings.HasSuffix(got, "llm quota exceeded (35 of 30 tokens)") {
		t.Errorf("past the quota: %q (error %v)", got, isErr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after the quota", n)
	}
	log.wait(t, "llm.complete refused: quota exceeded", "used=35", "quota=30")
}

func TestRun12LLMCompleteNeedsTheGrant(t *testing.T) {
	srv := openai.NewServer(t)
	rt, _, _ := run12Project(t, srv, "", "", app.Options{})
	got, isErr := tool12(t, rt, "complete", `{"prompt":"x"}`)
	if !isErr || !strings.Contains(got, "permission denied: extension run12 may not call the model (grants.llm)") {
		t.Errorf("without grants.llm: %q", got)
	}
	if len(srv.Requests()) != 0 {
		t.Error("a request was sent")
	}
}

// before_provider_request sees the body pi posts; with grants.model its
// replacement is sent, pi's "stream" kept.
func TestRun12BeforeProviderRequest(t *testing.T) {
	for _, granted := range []bool{true, false} {
		t.Run(fmt.Sprint("model grant ", granted), func(t *testing.T) {
			srv := openai.NewServer(t, openai.Reply{Text: "ok"})
			grants := ""
			if granted {
				grants = "model = true"
			}
			_, c, log := run12Project(t, srv, grants, "", app.Options{})
			if _, err := submit(t, c, "hello"); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if reqs[0]["stream"] != true {
				t.Errorf("stream = %v, want pi's true", reqs[0]["stream"])
			}
			if _, has := reqs[0]["x_run12"]; has != granted {
				t.Errorf("x_run12 sent: %v, want %v", has, granted)
			}
			if granted {
				log.wait(t, `the replacement's "stream" is ignored`)
			} else {
				log.wait(t, "the replacement is ignored", "grants.model")
			}
		})
	}
}

// model.get, model.set (grants.model) and model.setThinkingLevel, with
// model_select sent for the change.
func TestRun12Model(t *testing.T) {
	srv := openai.NewServer(t)
	rt, c, log := run12Project(t, srv, "model = true", "", app.Options{})
	got, isErr := tool12(t, rt, "model", `{}`)
	if isErr || !strings.Contains(got, `"Provider":"local","ID":"m"`) || !strings.Contains(got, `"ThinkingLevel":"medium"`) {
		t.Errorf("model.get = %s", got)
	}
	if got, isErr = tool12(t, rt, "setmodel", `{"level":"xhigh"}`); isErr || got != "high" {
		t.Errorf("xhigh on a model without xhigh = %q (error %v), want high", got, isErr)
	}
	if got, isErr = tool12(t, rt, "setmodel", `{"id":"small"}`); isErr {
		t.Fatalf("model.set: %s", got)
	}
	if m, _ := c.Model(); m.ID != "small" {
		t.Errorf("model after model.set: %s", m.Ref())
	}
	log.wait(t, "ext.run12", `event {"type":"model_select","model":{"provider":"local","id":"small"},"previousModel":{"provider":"local","id":"m"},"source":"set"}`)
	if got, isErr = tool12(t, rt, "setmodel", `{"level":"high"}`); isErr || got != "off" {
		t.Errorf("a level on a model without reasoning = %q, want off", got)
	}
	if got, isErr = tool12(t, rt, "setmodel", `{"id":"nope"}`); !isErr || !strings.Contains(got, "model not found") {
		t.Errorf("unknown model: %q", got)
	}
	// Cycling sends model_select with source cycle.
	if _, err := c.CycleModel(); err != nil {
		t.Fatal(err)
	}
	log.wait(t, "ext.run12", `"source":"cycle"`)
}

func TestRun12ModelNeedsTheGrant(t *testing.T) {
	srv := openai.NewServer(t)
	rt, _, _ := run12Project(t, srv, "", "", app.Options{})
	got, isErr := tool12(t, rt, "setmodel", `{"id":"small"}`)
	if !isErr || !strings.Contains(got, "permission denied: extension run12 may not change the model (grants.model)") {
		t.Errorf("without grants.model: %q", got)
	}
}

// tools.list, tools.setActive (the start set and own tools only) and
// tools registered later, active at once.
func TestRun12Tools(t *testing.T) {
	srv := openai.NewServer(t)
	rt, _, _ := run12Project(t, srv, "", "", app.Options{Tools: []string{"read", "tools", "activate", "register"}})
	got, _ := tool12(t, rt, "tools", `{}`)
	if !strings.Contains(got, `{"Name":"read","Description":`) || !strings.Contains(got, `"Source":"builtin","Active":true}`) ||
		!strings.Contains(got, `"Source":"extension:run12","Active":true}`) || strings.Contains(got, `"Name":"late"`) {
		t.Errorf("tools.list = %s", got)
	}
	if got, isErr := tool12(t, rt, "activate", `{"names":["read","write"]}`); !isErr || !strings.HasSuffix(got, `extension run12 may not activate tool "write" (not active at start)`) {
		t.Errorf("activating write: %q", got)
	}
	if got, isErr := tool12(t, rt, "activate", `{"names":["read","flags","activate","register"]}`); isErr {
		t.Errorf("activating its own tool: %s", got)
	}
	if active := strings.Join(rt.Registry().ActiveNames(), ","); active != "read,flags,activate,register" {
		t.Errorf("active = %s", active)
	}
	if got, isErr := tool12(t, rt, "register", `{}`); isErr {
		t.Fatalf("register: %s", got)
	}
	if !rt.Registry().IsActive("late") {
		t.Errorf("a registered tool is not active: %v", rt.Registry().ActiveNames())
	}
	if got, isErr := tool12(t, rt, "late", `{}`); isErr || got != "late tool ran" {
		t.Errorf("late = %q", got)
	}
	if got, isErr := tool12(t, rt, "register", `{}`); !isErr || !strings.Contains(got, `already has a tool "late"`) {
		t.Errorf("registering twice: %q", got)
	}
}

// pi.shutdown only from a command; from there it reaches the runtime's
// lifecycle receiver.
func TestRun12Shutdown(t *testing.T) {
	srv := openai.NewServer(t)
	rt, c, _ := run12Project(t, srv, "", "", app.Options{})
	if got, isErr := tool12(t, rt, "shutdown", `{}`); !isErr || !strings.HasSuffix(got, "pi.shutdown is only allowed in a command or shortcut") {
		t.Errorf("from a tool: %q", got)
	}
	asked := make(chan string, 1)
	rt.OnLifecycle(func(action, ext string) { asked <- action + " by " + ext })
	if _, err := c.Submit(context.Background(), Prompt{Text: "/bye"}, SubmitOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-asked:
		if got != "shutdown by run12" {
			t.Errorf("asked %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown never asked")
	}
}

// Without a front end's receiver, pi.shutdown from a command ends the
// submission as /exit does.
func TestRun12ShutdownExits(t *testing.T) {
	srv := openai.NewServer(t)
	_, c, _ := run12Project(t, srv, "", "", app.Options{})
	var shown []string
	sub, err := c.Submit(context.Background(), Prompt{Text: "/bye"}, SubmitOptions{Show: func(s string) { shown = append(shown, s) }})
	if err != nil || !sub.Exit || strings.Join(shown, "|") != "bye" {
		t.Errorf("/bye: %+v %v, shown %q", sub, err, shown)
	}
}

// The same through the Anthropic wire: llm.complete's answer and usage,
// and before_provider_request on the Messages body.
func TestRun12Anthropic(t *testing.T) {
	srv := anthropic.NewServer(t,
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "a haiku"}}, Usage: anthropic.Usage{Input: 12, Output: 4}},
		anthropic.Reply{Blocks: []anthropic.Block{{Type: "text", Text: "ok"}}})
	models := `{"providers": {"claude": {"baseUrl": "` + srv.URL + `", "api": "anthropic-messages", "apiKey": "` + testKey + `",
  "models": [{"id": "sonnet"}]}}}`
	rt, c, log := run12ProjectOn(t, models, "claude", "sonnet", "llm = true\nmodel = true", "", app.Options{LogLevel: "debug"})
	got, isErr := tool12(t, rt, "complete", `{"prompt":"a poem","system":"Be short.","max":100}`)
	if isErr || got != "a haiku" {
		t.Fatalf("complete = %q (error %v)", got, isErr)
	}
	log.wait(t, "llm.complete", "tokens=16")
	if _, err := submit(t, c, "hello"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if _, has := reqs[0].JSON["x_run12"]; has {
		t.Error("the hook ran on llm.complete's request")
	}
	if _, has := reqs[0].JSON["tools"]; has || reqs[0].JSON["system"] == nil {
		t.Errorf("llm.complete sent %s", reqs[0].Raw)
	}
	// maxTokens is the Messages API's max_tokens; the conversation's
	// own request keeps the model's.
	if own, _ := reqs[1].JSON["max_tokens"].(float64); reqs[0].JSON["max_tokens"] != float64(100) || own <= 100 {
		t.Errorf("max_tokens: llm.complete %v (want 100), the conversation %v (want the model's)", reqs[0].JSON["max_tokens"], reqs[1].JSON["max_tokens"])
	}
	if reqs[1].JSON["x_run12"] != true || reqs[1].JSON["stream"] != true {
		t.Errorf("the conversation's request: %s", reqs[1].Raw)
	}
}

// pi.reload from a command: once idle, every extension gets a fresh
// instance (what its memory held is gone, tools it registered with
// tools.register too), its declared tools stay, and session_start with
// reason reload follows.
func TestRun12Reload(t *testing.T) {
	srv := openai.NewServer(t)
	rt, c, log := run12Project(t, srv, "", "", app.Options{})
	for _, want := range []string{"1", "2"} {
		if got, isErr := tool12(t, rt, "count", `{}`); isErr || got != want {
			t.Fatalf("count = %q (error %v), want %s", got, isErr, want)
		}
	}
	if got, isErr := tool12(t, rt, "register", `{}`); isErr {
		t.Fatalf("register: %s", got)
	}
	var shown []string
	sub, err := c.Submit(context.Background(), Prompt{Text: "/reload-all"}, SubmitOptions{Show: func(s string) { shown = append(shown, s) }})
	if err != nil || sub.Exit || strings.Join(shown, "|") != "reloading" {
		t.Fatalf("/reload-all: %+v %v, shown %q", sub, err, shown)
	}
	log.wait(t, "ext.run12", `"type":"session_start"`, `"reason":"reload"`)
	if got, isErr := tool12(t, rt, "count", `{}`); isErr || got != "1" {
		t.Errorf("count after reload = %q (error %v), want 1 (a fresh instance)", got, isErr)
	}
	if rt.Registry().IsActive("late") {
		t.Errorf("the tool registered by the old instance survived the reload: %v", rt.Registry().ActiveNames())
	}
	if got, isErr := tool12(t, rt, "register", `{}`); isErr || got != "registered" {
		t.Errorf("registering again after reload: %q", got)
	}
}

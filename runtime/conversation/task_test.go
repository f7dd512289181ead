package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// agentRouter is the model of a parent and its children: each conversation
// plays its own script, told apart by the system prompt (a child's holds
// its definition's body). Hooks run before a child's turns, so a test can
// hold a child until the other has started (they run at the same time) or
// has ended.
type agentRouter struct {
	parent   *llm.Scripted
	children map[string]*llm.Scripted // by the marker in the system prompt
	// before runs before a child's turn n (from 1); an error ends the
	// turn with it.
	before func(ctx context.Context, child string, n int) error
	mu     sync.Mutex
	turns  map[string]int
}

func (r *agentRouter) Stream(ctx context.Context, req llm.Request, on func(llm.StreamEvent)) (*llm.Response, error) {
	for marker, p := range r.children {
		if !strings.Contains(req.SystemPrompt, marker) {
			continue
		}
		r.mu.Lock()
		r.turns[marker]++
		n := r.turns[marker]
		r.mu.Unlock()
		if r.before != nil {
			if err := r.before(ctx, marker, n); err != nil {
				return nil, err
			}
		}
		return p.Stream(ctx, req, on)
	}
	return r.parent.Stream(ctx, req, on)
}

func script(t *testing.T, text string) *llm.Scripted {
	t.Helper()
	s, err := llm.ParseScript([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return llm.NewScripted(s)
}

// wait waits for ch to close, ctx to end, or a bound no passing test
// reaches.
func wait(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return errors.New("timed out waiting for " + what)
	}
}

// agentsProject is a trusted project loading the raw ABI 1.1 guest (its
// tool probe makes host calls, tool.call among them; it may call bash),
// a permission rule denying rm, and two agents: scout (read and probe, no
// bash) and reviewer (bash only).
func agentsProject(t *testing.T) (dir, home string) {
	dir, home = project.Raw(t, project.RawEntry{Name: "raw11", Grants: `tools = ["bash"]`})
	toml, err := os.ReadFile(filepath.Join(dir, "pi.toml"))
	if err != nil {
		t.Fatal(err)
	}
	project.Write(t, filepath.Join(dir, "pi.toml"), string(toml)+"\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"rm\"]\ndecision = \"deny\"\nreason = \"no rm here\"\n")
	if err := os.MkdirAll(filepath.Join(dir, ".pi", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	project.Write(t, filepath.Join(dir, ".pi", "agents", "scout.md"), "---\nname: scout\ndescription: Finds things\ntools: read, probe\n---\nYou are the scout.\n")
	project.Write(t, filepath.Join(dir, ".pi", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews things\ntools:\n  - bash\n---\nYou are the reviewer.\n")
	project.Write(t, filepath.Join(dir, "victim"), "keep me\n")
	return dir, home
}

// TestTaskTwoChildrenInParallel: the parent's two task calls run two
// children at the same time (each waits for the other to start); the
// scout, without bash, cannot run it, neither itself nor through an
// extension's tool.call; the reviewer's rm is denied by the parent's
// permission rules; the results come back in call order although the
// reviewer ends first; the children's events reach the parent's listeners
// tagged; each child's session is saved with the parent's as its
// parentSession and linked from the parent's tool results.
func TestTaskTwoChildrenInParallel(t *testing.T) {
	dir, home := agentsProject(t)
	sessDir := t.TempDir()
	started := map[string]chan struct{}{"You are the scout.": make(chan struct{}), "You are the reviewer.": make(chan struct{})}
	reviewerDone := make(chan struct{})
	r := &agentRouter{
		parent: script(t, `{"turns":[
			{"toolCalls":[
				{"id":"t1","name":"task","arguments":{"agent":"scout","description":"find","prompt":"find the victim"}},
				{"id":"t2","name":"task","arguments":{"agent":"reviewer","description":"review","prompt":"remove the victim"}}]},
			{"text":"all done"}]}`),
		children: map[string]*llm.Scripted{
			"You are the scout.": script(t, `{"turns":[
				{"toolCalls":[
					{"name":"bash","arguments":{"command":"touch bash-ran"}},
					{"name":"probe","arguments":{"method":"tool.call","params":{"name":"bash","input":{"command":"touch probe-ran"}}}}]},
				{"text":"scout: found it"}]}`),
			"You are the reviewer.": script(t, `{"turns":[
				{"toolCalls":[{"name":"bash","arguments":{"command":"rm -f victim"}}]},
				{"text":"reviewer: could not remove it"}]}`),
		},
		turns: map[string]int{},
	}
	var once sync.Map
	r.before = func(ctx context.Context, child string, n int) error {
		if n == 1 {
			if _, done := once.LoadOrStore(child, true); !done {
				close(started[child])
			}
			for _, ch := range started {
				if err := wait(ctx, ch, "the other child to start"); err != nil {
					return err
				}
			}
		}
		if child == "You are the scout." && n == 2 {
			return wait(ctx, reviewerDone, "the reviewer to end")
		}
		if child == "You are the reviewer." && n == 2 {
			defer close(reviewerDone)
		}
		return nil
	}
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	var log eventLog
	c := open(t, rt, Options{Provider: r, Session: &SessionOptions{Dir: sessDir}, OnEvent: log.add})
	res, err := submit(t, c, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all done" {
		t.Fatalf("parent answered %q", res.Text)
	}

	// Results in call order, each the child's final answer.
	ends := log.of(agent.EventTurnEnd)
	if len(ends) == 0 || len(ends[0].ToolResults) != 2 {
		t.Fatalf("turn ends %+v", ends)
	}
	var texts []string
	for _, m := range ends[0].ToolResults {
		text := ""
		for _, b := range m.Content {
			text += b.Text
		}
		texts = append(texts, m.ToolCallID+"="+text)
	}
	if strings.Join(texts, " ") != "t1=scout: found it t2=reviewer: could not remove it" {
		t.Errorf("results %q", texts)
	}

	// What each model was sent: the parent has task; a child (depth 1 of
	// max_depth 1) has its own tools only, its definition's prompt after
	// pi's, and the task's prompt alone as its context.
	toolNames := func(req llm.Request) string {
		var n []string
		for _, ts := range req.Tools {
			n = append(n, ts.Name)
		}
		return strings.Join(n, ",")
	}
	if reqs := r.parent.Requests(); !strings.Contains(toolNames(reqs[0]), ",task") {
		t.Errorf("parent's tools %s", toolNames(reqs[0]))
	}
	for marker, want := range map[string]string{"You are the scout.": "read,probe", "You are the reviewer.": "bash"} {
		req := r.children[marker].Requests()[0]
		if got := toolNames(req); got != want {
			t.Errorf("%s tools %s, want %s", marker, got, want)
		}
		if !strings.Contains(req.SystemPrompt, "clearly when working with files\n\n"+marker+"\nCurrent date: ") || len(req.Messages) != 1 {
			t.Errorf("%s request: system %q, %d messages", marker, req.SystemPrompt, len(req.Messages))
		}
	}

	// Restrictions and permissions held inside the children.
	for _, f := range []string{"bash-ran", "probe-ran"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: the scout ran bash", f)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "victim")); err != nil || string(b) != "keep me\n" {
		t.Errorf("victim: %q, %v", b, err)
	}
	childEnds := map[string]string{}
	for _, ev := range log.of(agent.EventSubagent) {
		if ev.Subagent == nil || ev.Event == nil {
			t.Fatalf("subagent_event without its child: %+v", ev)
		}
		if ev.Event.Type == agent.EventToolExecutionEnd {
			childEnds[ev.Subagent.Agent+"/"+ev.Subagent.ToolCallID+"/"+ev.Event.ToolName] = ev.Event.Result.Text()
		}
	}
	if got := childEnds["scout/t1/bash"]; !strings.Contains(got, "bash") || !strings.Contains(got, "not found") {
		t.Errorf("scout's own bash: %q", got)
	}
	if got := childEnds["scout/t1/probe"]; !strings.Contains(got, `tool \"bash\" is not available to this agent (its tools: read, probe)`) {
		t.Errorf("scout's bash through tool.call: %q", got)
	}
	if got := childEnds["reviewer/t2/bash"]; !strings.Contains(got, "no rm here") {
		t.Errorf("reviewer's rm: %q", got)
	}
	// The same tool.call outside a child runs bash: the limit refused it.
	if out, err := rt.CallTool(context.Background(), "probe", "c1", json.RawMessage(`{"method":"tool.call","params":{"name":"bash","input":{"command":"touch probe-ok"}}}`), nil); err != nil || out.IsError {
		t.Fatalf("probe at the top: %v %+v", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "probe-ok")); err != nil {
		t.Errorf("tool.call at the top did not run bash: %v", err)
	}

	// Sessions: each child's beside the parent's, linked both ways.
	parentFile := c.sessionFile()
	infos, err := session.List(filepath.Join(sessDir, "subagents"))
	if err != nil || len(infos) != 2 {
		t.Fatalf("child sessions %+v, %v", infos, err)
	}
	linked := map[string]bool{}
	for _, ev := range log.of(agent.EventToolExecutionEnd) {
		if d, ok := ev.Result.Details.(*TaskDetails); ok {
			linked[d.SessionFile] = true
		}
	}
	parentText, _ := os.ReadFile(parentFile)
	for _, in := range infos {
		if in.ParentSession != parentFile || !linked[in.Path] {
			t.Errorf("child session %s: parent %q (want %q), linked %v", in.Path, in.ParentSession, parentFile, linked[in.Path])
		}
		if !strings.Contains(string(parentText), in.Path) {
			t.Errorf("the parent's session does not name %s", in.Path)
		}
	}
}

// TestTaskAbortStopsAllChildren: aborting the parent while two children
// wait for their model aborts both; the parent's run ends.
func TestTaskAbortStopsAllChildren(t *testing.T) {
	dir, home := agentsProject(t)
	started := map[string]chan struct{}{"You are the scout.": make(chan struct{}), "You are the reviewer.": make(chan struct{})}
	r := &agentRouter{
		parent: script(t, `{"turns":[
			{"toolCalls":[
				{"id":"t1","name":"task","arguments":{"agent":"scout","description":"a","prompt":"a"}},
				{"id":"t2","name":"task","arguments":{"agent":"reviewer","description":"b","prompt":"b"}}]},
			{"text":"not reached"}]}`),
		children: map[string]*llm.Scripted{
			"You are the scout.":    script(t, `{"turns":[{"text":"never"}]}`),
			"You are the reviewer.": script(t, `{"turns":[{"text":"never"}]}`),
		},
		turns: map[string]int{},
	}
	r.before = func(ctx context.Context, child string, n int) error {
		close(started[child])
		<-ctx.Done() // until the abort
		return nil
	}
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	var log eventLog
	c := open(t, rt, Options{Provider: r, OnEvent: log.add})
	done := make(chan error, 1)
	go func() { _, err := submit(t, c, "go"); done <- err }()
	for _, ch := range started {
		if err := wait(context.Background(), ch, "a child to start"); err != nil {
			t.Fatal(err)
		}
	}
	c.Abort()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the parent's run did not end after the abort")
	}
	var got []string
	for _, ev := range log.of(agent.EventToolExecutionEnd) {
		got = append(got, ev.ToolCallID+"="+ev.Result.Text())
	}
	if strings.Join(got, " ") != "t1=task: agent scout was aborted t2=task: agent reviewer was aborted" && strings.Join(got, " ") != "t2=task: agent reviewer was aborted t1=task: agent scout was aborted" {
		t.Errorf("task results %q", got)
	}
	for _, ev := range log.of(agent.EventSubagent) {
		if ev.Event.Type == agent.EventAgentEnd && ev.Event.StopReason != llm.StopAborted {
			t.Errorf("child %s ended with %q", ev.Subagent.Agent, ev.Event.StopReason)
		}
	}
}

// TestTaskMaxParallel: with [agents] max_parallel = 1 the second child
// starts only after the first has ended (were the bound not kept, the two
// children would most likely overlap; TestTaskTwoChildrenInParallel shows
// they can); its subagent_event lines carry the child's id, agent, call
// and depth.
func TestTaskMaxParallel(t *testing.T) {
	dir, home := agentsProject(t)
	toml, err := os.ReadFile(filepath.Join(dir, "pi.toml"))
	if err != nil {
		t.Fatal(err)
	}
	project.Write(t, filepath.Join(dir, "pi.toml"), string(toml)+"\n[agents]\nmax_parallel = 1\n")
	r := &agentRouter{
		parent: script(t, `{"turns":[
			{"toolCalls":[
				{"id":"t1","name":"task","arguments":{"agent":"scout","description":"a","prompt":"a"}},
				{"id":"t2","name":"task","arguments":{"agent":"reviewer","description":"b","prompt":"b"}}]},
			{"text":"done"}]}`),
		children: map[string]*llm.Scripted{
			"You are the scout.":    script(t, `{"turns":[{"toolCalls":[{"name":"read","arguments":{"path":"victim"}}]},{"text":"a"}]}`),
			"You are the reviewer.": script(t, `{"turns":[{"toolCalls":[{"name":"bash","arguments":{"command":"cat victim"}}]},{"text":"b"}]}`),
		},
		turns: map[string]int{},
	}
	var mu sync.Mutex
	var seq []string
	r.before = func(_ context.Context, child string, n int) error {
		mu.Lock()
		defer mu.Unlock()
		seq = append(seq, strings.Fields(child)[3]+strconv.Itoa(n))
		return nil
	}
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true})
	var log eventLog
	c := open(t, rt, Options{Provider: r, OnEvent: log.add})
	if _, err := submit(t, c, "go"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(seq, " ")
	if got != "scout.1 scout.2 reviewer.1 reviewer.2" && got != "reviewer.1 reviewer.2 scout.1 scout.2" {
		t.Errorf("child turns %q: the children overlapped", got)
	}
	evs := log.of(agent.EventSubagent)
	if len(evs) == 0 {
		t.Fatal("no subagent_event")
	}
	b, err := json.Marshal(evs[0])
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Type     string
		Subagent struct {
			ID, Agent, ToolCallID string
			Depth                 int
		}
		Event struct{ Type string }
	}
	if err := json.Unmarshal(b, &line); err != nil || line.Type != "subagent_event" || line.Subagent.ID == "" || line.Subagent.Depth != 1 || line.Subagent.ToolCallID == "" || line.Event.Type == "" {
		t.Errorf("subagent_event line %s", b)
	}
}

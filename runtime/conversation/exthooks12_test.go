package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// conv12 is a conversation with the conv12 test guest loaded twice (as
// conv12 with cfgA and conv12b with cfgB, TOML lines of their
// [extensions.config]), a session on disk and a scripted model.
type conv12 struct {
	t  *testing.T
	c  *Conversation
	rt *app.Runtime
	p  *llm.Scripted
}

func newConv12(t *testing.T, cfgA, cfgB string, turns ...string) *conv12 {
	t.Helper()
	dir, home := project.New(t)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	b := plugin.BuildGo(t, "extensions/testdata/guests/conv12/b")
	toml := project.Extension(t, "conv12", a) + "[extensions.config]\n" + cfgA + "\n" +
		project.Extension(t, "conv12b", b) + "[extensions.config]\n" + cfgB + "\n"
	project.Write(t, filepath.Join(dir, "pi.toml"), toml)
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Mode: app.ModeInteractive})
	p := scripted(t, turns...)
	c := open(t, rt, Options{Provider: p, Session: &SessionOptions{Dir: t.TempDir()}})
	return &conv12{t: t, c: c, rt: rt, p: p}
}

// line submits a line as a person at the prompt and returns what was
// shown.
func (x *conv12) line(text string) string {
	x.t.Helper()
	var shown []string
	_, err := x.c.Submit(context.Background(), Prompt{Text: text}, SubmitOptions{Interactive: true, Show: func(s string) { shown = append(shown, s) }})
	if err != nil {
		x.t.Fatalf("%s: %v", text, err)
	}
	return strings.Join(shown, "\n")
}

// tool runs an extension's tool as the model would, outside any command.
func (x *conv12) tool(name string, input any) string {
	x.t.Helper()
	in, _ := json.Marshal(input)
	res, err := x.rt.CallTool(context.Background(), name, "t1", in, nil)
	if err != nil {
		x.t.Fatal(err)
	}
	return res.Text()
}

// seen is what the extension's hooks and events saw.
func (x *conv12) seen(ext string) []string {
	x.t.Helper()
	s := x.tool(ext+"_seen", map[string]any{})
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func count(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// Every session.* method from a command, through the SDK's typed helpers
// and raw host calls, on a session file; command-only methods are refused
// in a tool.
func TestABI12SessionMethods(t *testing.T) {
	x := newConv12(t, `initCall = "session.info"`, "", "hi there")
	x.line("hello")
	s := x.c.Session()
	if seen := x.seen("conv12"); !slices.Contains(seen, `init {"error":"session.info is not available during init"}`) {
		t.Errorf("session.info in init: %q", seen)
	}

	var info struct{ SessionID, SessionFile, Name, LeafID string }
	if err := json.Unmarshal([]byte(x.line("/conv12-typed info")), &info); err != nil || info.SessionID != s.ID() || info.SessionFile != s.Path() || info.LeafID != s.Leaf() {
		t.Fatalf("info = %+v, %v (session %s %s)", info, err, s.ID(), s.Path())
	}
	if got := x.line("/conv12-typed branch"); strings.Count(got, `"message"`) != 2 {
		t.Errorf("branch = %s", got)
	}
	x.line("/conv12-typed name Demo run")
	if x.c.SessionName() != "Demo run" {
		t.Errorf("name = %q", x.c.SessionName())
	}
	leaf := s.Leaf()
	if got := x.line(`/conv12-call session.setLabel {"entryId":"` + leaf + `","label":"mark"}`); got != `{"result":{}}` || s.Labels()[leaf] != "mark" {
		t.Errorf("setLabel = %s, labels %v", got, s.Labels())
	}
	x.line(`/conv12-call session.setLabel {"entryId":"` + leaf + `","label":null}`)
	if _, ok := s.Labels()[leaf]; ok {
		t.Errorf("a null label did not clear: %v", s.Labels())
	}
	if got := x.line(`/conv12-call session.setLabel {"entryId":"nope","label":"x"}`); !strings.Contains(got, `"error"`) {
		t.Errorf("label of an unknown entry = %s", got)
	}
	var tree struct {
		Result struct{ Entries []json.RawMessage } `json:"result"`
	}
	if err := json.Unmarshal([]byte(x.line("/conv12-call session.tree {}")), &tree); err != nil || len(tree.Result.Entries) != len(s.Entries()) {
		t.Errorf("tree: %d entries, session %d (%v)", len(tree.Result.Entries), len(s.Entries()), err)
	}
	if got := x.line("/conv12-call session.branch {\"limit\":1}"); strings.Count(got, `"id":`) != 1 {
		t.Errorf("branch limit 1 = %s", got)
	}
	if got := x.line("/conv12-typed append kept"); len(got) != 10 {
		t.Errorf("append = %s", got)
	}
	if got := x.line("/conv12-typed entries"); !strings.Contains(got, `"Data":{"note":"kept"}`) {
		t.Errorf("entries = %s", got)
	}
	if got := x.line("/conv12-typed usage"); !strings.Contains(got, `"Known":true`) {
		t.Errorf("usage = %s", got)
	}
	if got := x.line("/conv12-typed state"); !strings.Contains(got, `"Idle":true`) || !strings.Contains(got, "SystemPrompt") {
		t.Errorf("state = %s", got)
	}

	// Where: command-only methods in a tool; the rest answer there.
	for _, m := range []string{"session.new", "session.switch", "session.fork", "session.navigate"} {
		want := `{"error":"` + m + ` is only allowed in a command or shortcut"}`
		if got := x.tool("conv12_call", map[string]any{"method": m, "params": map[string]any{}}); got != want {
			t.Errorf("%s in a tool = %s, want %s", m, got, want)
		}
	}
	if got := x.tool("conv12_call", map[string]any{"method": "session.info"}); !strings.Contains(got, s.ID()) {
		t.Errorf("session.info in a tool = %s", got)
	}
	if got := x.tool("conv12_call", map[string]any{"method": "agent.sendMessage", "params": map[string]any{"customType": "x", "content": 5}}); !strings.Contains(got, "content must be a string or content blocks") {
		t.Errorf("bad content = %s", got)
	}
}

// The session_before_* hooks of another extension cancel what a person
// or an extension asks for; the caller's own hook is skipped during its
// call; RPC-facing errors say who cancelled.
func TestABI12BeforeHooksCancel(t *testing.T) {
	x := newConv12(t, "", `cancel = ["switch", "fork", "tree", "compact"]`, "one")
	x.line("hello")
	s := x.c.Session()
	id := s.ID()

	err := x.c.NewSession("")
	if !IsCancelled(err) || err.Error() != "new session cancelled by extension conv12b: not now" || x.c.Session().ID() != id {
		t.Fatalf("new session = %v (session %s, was %s)", err, x.c.Session().ID(), id)
	}
	if got := x.line("/conv12-typed new"); got != "true" {
		t.Errorf("session.new by conv12 = %s, want cancelled", got)
	}
	// conv12's own hook ran for the person's /new, not for its own call;
	// conv12b's ran for both.
	if a, b := count(x.seen("conv12"), "before_switch"), count(x.seen("conv12b"), "before_switch"); a != 1 || b != 2 {
		t.Errorf("before_switch calls: conv12 %d (want 1), conv12b %d (want 2)", a, b)
	}
	first := ""
	for _, e := range s.Branch() {
		if userMessage(e) != nil {
			first = e.ID
		}
	}
	if _, err := x.c.Fork(first); !IsCancelled(err) {
		t.Errorf("fork = %v", err)
	}
	if got := x.line(`/conv12-call session.fork {"entryId":"` + first + `"}`); got != `{"result":{"cancelled":true}}` {
		t.Errorf("session.fork = %s", got)
	}
	if got := x.line(`/conv12-call session.navigate {"targetId":"` + first + `"}`); got != `{"result":{"cancelled":true}}` {
		t.Errorf("session.navigate = %s", got)
	}
	before := s.Leaf()
	if _, err := x.c.NavigateTree(context.Background(), first, NavigateOptions{}); !IsCancelled(err) || s.Leaf() != before {
		t.Errorf("navigate = %v, leaf %s (was %s)", err, s.Leaf(), before)
	}
	if _, err := x.c.Compact(context.Background(), ""); err == nil || err.Error() != "compaction cancelled by extension conv12b" {
		t.Errorf("compact = %v", err)
	}
	if x.c.Session().ID() != id {
		t.Error("a cancelled change changed the session")
	}
}

// A compaction and a branch summary given by a hook become the entries
// without asking the model; session_compact and session_tree follow, and
// session_start says why a session started.
func TestABI12SummariesAndEvents(t *testing.T) {
	x := newConv12(t, "", `compactSummary = "summary by hook"
treeSummary = "branch by hook"`, "one", "two", "three")
	x.line("hello")
	x.line("again")
	asked := len(x.p.Requests())
	res, err := x.c.Compact(context.Background(), "focus")
	if err != nil || res.Summary != "summary by hook" {
		t.Fatalf("compact = %+v, %v", res, err)
	}
	s := x.c.Session()
	last := s.Entry(s.Leaf())
	if last.Type != session.TypeCompaction || !last.FromHook || last.Summary != "summary by hook" {
		t.Errorf("leaf entry %+v", last)
	}
	if len(x.p.Requests()) != asked {
		t.Error("the model was asked for a summary a hook gave")
	}
	seen := x.seen("conv12")
	if !slices.ContainsFunc(seen, func(l string) bool {
		return strings.HasPrefix(l, "event ") && strings.Contains(l, `"type":"session_compact"`) && strings.Contains(l, `"fromExtension":true`) && strings.Contains(l, last.ID)
	}) {
		t.Errorf("no session_compact event: %q", seen)
	}
	if !slices.ContainsFunc(seen, func(l string) bool {
		return strings.Contains(l, `before_compact {"firstKept"`) && strings.Contains(l, `"instructions":"focus"`) && strings.Contains(l, `"reason":"manual"`)
	}) {
		t.Errorf("before_compact params: %q", seen)
	}

	// Navigate with a summary: the hook's branch summary.
	first := ""
	for _, e := range s.Branch() {
		if userMessage(e) != nil && first == "" {
			first = e.ID
		}
	}
	old := s.Leaf()
	nav, err := x.c.NavigateTree(context.Background(), first, NavigateOptions{Summarize: true})
	if err != nil || nav.SummaryEntryID == "" {
		t.Fatalf("navigate = %+v, %v", nav, err)
	}
	if e := s.Entry(nav.SummaryEntryID); e.Summary != "branch by hook" || !e.FromHook {
		t.Errorf("branch summary %+v", e)
	}
	if seen := x.seen("conv12"); !slices.ContainsFunc(seen, func(l string) bool {
		return strings.Contains(l, `"type":"session_tree"`) && strings.Contains(l, `"oldLeafId":"`+old+`"`) && strings.Contains(l, `"newLeafId":"`+s.Leaf()+`"`)
	}) {
		t.Errorf("no session_tree event: %q", seen)
	}

	// New and fork: session_start's reason, then session_switch and
	// session_fork naming the previous file.
	prev := s.Path()
	if err := x.c.NewSession(""); err != nil {
		t.Fatal(err)
	}
	seen = x.seen("conv12b")
	if !slices.ContainsFunc(seen, func(l string) bool {
		return strings.Contains(l, `"type":"session_start"`) && strings.Contains(l, `"reason":"new"`)
	}) ||
		!slices.ContainsFunc(seen, func(l string) bool {
			return strings.Contains(l, `"type":"session_switch"`) && strings.Contains(l, `"reason":"new"`) && strings.Contains(l, fmt.Sprintf(`"previousSessionFile":%q`, prev))
		}) {
		t.Errorf("new session events: %q", seen)
	}
	if err := x.c.SwitchSession(prev); err != nil {
		t.Fatal(err)
	}
	if seen := x.seen("conv12b"); !slices.ContainsFunc(seen, func(l string) bool {
		return strings.Contains(l, `"type":"session_start"`) && strings.Contains(l, `"reason":"resume"`)
	}) ||
		!slices.ContainsFunc(seen, func(l string) bool {
			return strings.Contains(l, `before_switch {"Reason":"resume","TargetSessionFile":`)
		}) {
		t.Errorf("resume: %q", seen)
	}

	// The same changes asked for by an extension's command.
	if got := x.line("/conv12-typed new"); got != "false" || x.c.Session().Path() == prev {
		t.Fatalf("session.new from a command = %s", got)
	}
	if got := x.line(`/conv12-call session.switch {"sessionPath":"` + prev + `"}`); got != `{"result":{"cancelled":false}}` || x.c.Session().Path() != prev {
		t.Fatalf("session.switch from a command = %s (session %s)", got, x.c.Session().Path())
	}
	x.line("third")
	for _, e := range x.c.Session().Branch() {
		if userMessage(e) != nil {
			first = e.ID
		}
	}
	if got := x.line(`/conv12-call session.fork {"entryId":"` + first + `"}`); got != `{"result":{"cancelled":false}}` || x.c.Session().Path() == prev {
		t.Fatalf("session.fork from a command = %s", got)
	}
	if seen := x.seen("conv12b"); !slices.ContainsFunc(seen, func(l string) bool {
		return strings.Contains(l, `"type":"session_fork"`) && strings.Contains(l, fmt.Sprintf(`"previousSessionFile":%q`, prev))
	}) || !slices.ContainsFunc(seen, func(l string) bool {
		return strings.Contains(l, `"type":"session_start"`) && strings.Contains(l, `"reason":"fork"`)
	}) {
		t.Errorf("fork events: %q", seen)
	}
}

// sendUserMessage from a command starts a run once the command returned;
// sendMessage adds a custom_message the model sees; triggerTurn runs the
// model on it; a flood is cut at MaxPendingExtensionRuns.
func TestABI12AgentMessages(t *testing.T) {
	x := newConv12(t, "", "", "one", "two", "three")
	x.line("/conv12-typed send from the extension")
	if err := x.c.WaitExtensionRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := x.p.Requests()
	if len(reqs) != 1 || !slices.Equal(userTexts(reqs[0].Messages), []string{"from the extension"}) {
		t.Fatalf("requests %+v", reqs)
	}
	x.line("/conv12-typed sendmsg remember this")
	s := x.c.Session()
	if e := s.Entry(s.Leaf()); e.Type != session.TypeCustomMessage || e.CustomType != "conv12" || !e.Display || string(e.Details) != `{"n":1}` {
		t.Errorf("custom message entry %+v", e)
	}
	if len(x.p.Requests()) != 1 {
		t.Error("sendMessage without triggerTurn started a run")
	}
	x.line("/conv12-typed trigger and go")
	if err := x.c.WaitExtensionRuns(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs = x.p.Requests()
	if len(reqs) != 2 || !slices.Equal(userTexts(reqs[1].Messages), []string{"from the extension", "remember this", "and go"}) {
		t.Fatalf("the triggered turn sent %q", userTexts(reqs[len(reqs)-1].Messages))
	}
	// The file holds the custom messages as the reference reads them back.
	back, err := session.Read(s.Path(), session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var customs []string
	for _, m := range back.Context() {
		if m.Role == session.RoleCustom {
			customs = append(customs, m.CustomType+":"+m.Content[0].Text)
		}
	}
	if !slices.Equal(customs, []string{"conv12:remember this", "conv12:and go"}) {
		t.Errorf("custom messages read back: %q", customs)
	}

	// A flood: the first MaxPendingExtensionRuns are queued, the rest
	// refused with the reason.
	got := x.line("/conv12-typed flood")
	var flood struct {
		OK      int    `json:"ok"`
		Refused string `json:"refused"`
	}
	if err := json.Unmarshal([]byte(got), &flood); err != nil || flood.OK != MaxPendingExtensionRuns || !strings.Contains(flood.Refused, "already wait") {
		t.Errorf("flood = %s", got)
	}
	x.c.Abort()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.c.WaitExtensionRuns(ctx); err != nil {
		t.Fatalf("the flood's runs did not end: %v", err)
	}
}

// The context hook replaces what one request sends (the session keeps
// everything); an answer that breaks the conversation is ignored; a hook
// that never returns is stopped at the hook limit and the request goes as
// it was.
func TestABI12ContextHook(t *testing.T) {
	t.Run("drop", func(t *testing.T) {
		x := newConv12(t, `context = "drop"`, "", "one", "two")
		x.line("first")
		x.line("second")
		reqs := x.p.Requests()
		if got := reqs[1].Messages; len(got) != 1 || userTexts(got)[0] != "second" {
			t.Errorf("the second request sent %d messages: %q", len(got), userTexts(got))
		}
		if n := len(x.c.Session().Context()); n != 4 {
			t.Errorf("the session keeps %d messages, want 4", n)
		}
	})
	t.Run("break", func(t *testing.T) {
		x := newConv12(t, `context = "break"`, "", "one")
		x.line("first")
		if got := x.p.Requests()[0].Messages; len(got) != 1 || got[0].Role != llm.RoleUser {
			t.Errorf("a broken answer was used: %+v", got)
		}
	})
	t.Run("hang", func(t *testing.T) {
		x := newConv12(t, `context = "hang"`, "", "one")
		start := time.Now()
		x.line("first")
		if got := x.p.Requests()[0].Messages; len(got) != 1 {
			t.Errorf("request after a hung hook: %+v", got)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("the hung hook held the run %s", d)
		}
	})
}

// user_bash: block refuses the command (RPC's error), result stands in
// for it (recorded as its bashExecution), rewrite runs another command.
func TestABI12UserBash(t *testing.T) {
	for _, tc := range []struct{ mode, wantErr, wantOut string }{
		{"block", "no shell today", ""},
		{"result", "", "pretend output"},
		{"rewrite", "", "rewritten"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			x := newConv12(t, `userBash = "`+tc.mode+`"`, "")
			res, err := x.c.RunBash(context.Background(), "echo original", nil)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v", err)
				}
				if n := len(x.c.Session().Context()); n != 0 {
					t.Errorf("a blocked command was recorded")
				}
				return
			}
			if err != nil || !strings.Contains(res.Output, tc.wantOut) {
				t.Fatalf("res = %+v, %v", res, err)
			}
			msgs := x.c.Session().Context()
			if len(msgs) != 1 || msgs[0].Role != session.RoleBashExecution || !strings.Contains(msgs[0].Output, tc.wantOut) {
				t.Errorf("recorded %+v", msgs)
			}
			if tc.mode == "result" && (msgs[0].ExitCode == nil || *msgs[0].ExitCode != 3) {
				t.Errorf("exit code %v", msgs[0].ExitCode)
			}
			if got := x.seen("conv12"); !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, `user_bash {"Command":"echo original"`) }) {
				t.Errorf("the hook saw %q", got)
			}
			run, err := x.c.RunShellCommand(context.Background(), "echo original", nil)
			if err != nil || !strings.Contains(run.Result.Text(), tc.wantOut) {
				t.Errorf("!cmd = %+v, %v", run, err)
			}
		})
	}
}

// A session_before_switch hook that never returns is stopped at the hook
// limit: logged, and the new session starts.
func TestABI12HungBeforeHook(t *testing.T) {
	x := newConv12(t, "", "hangSwitch = true")
	id := x.c.Session().ID()
	if err := x.c.NewSession(""); err != nil {
		t.Fatal(err)
	}
	if x.c.Session().ID() == id {
		t.Error("the session did not change")
	}
}

// During a run, a tool's agent.sendUserMessage steers the run (the model
// gets it after the tool's result) and agent.abort ends it; agent.state
// says the agent is busy.
func TestABI12AgentDuringARun(t *testing.T) {
	dir, home := project.New(t)
	a := plugin.BuildGo(t, "extensions/testdata/guests/conv12/a")
	project.Write(t, filepath.Join(dir, "pi.toml"), project.Extension(t, "conv12", a))
	rt := openRT(t, app.Options{Cwd: dir, PIHome: home, Trust: true, Mode: app.ModeInteractive})
	script, err := llm.ParseScript([]byte(`{"turns":[
		{"toolCalls":[{"name":"conv12_call","arguments":{"method":"agent.state"}},{"name":"conv12_call","arguments":{"method":"agent.sendUserMessage","params":{"content":[{"type":"text","text":"steered in"}]}}}]},
		{"text":"saw it"},
		{"toolCalls":[{"name":"conv12_call","arguments":{"method":"agent.abort"}}]},
		{"text":"never asked"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := llm.NewScripted(script)
	c := open(t, rt, Options{Provider: p})
	res, err := submit(t, c, "go")
	if err != nil || res.Text != "saw it" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || !slices.Equal(userTexts(reqs[1].Messages), []string{"go", "steered in"}) {
		t.Fatalf("second request's user messages: %q", userTexts(reqs[len(reqs)-1].Messages))
	}
	var state string
	for _, m := range reqs[1].Messages {
		if m.Role == llm.RoleToolResult && strings.Contains(m.Content[0].Text, "idle") {
			state = m.Content[0].Text
		}
	}
	if !strings.Contains(state, `"idle":false`) {
		t.Errorf("agent.state during the run = %s", state)
	}
	res, _ = submit(t, c, "stop yourself")
	if res == nil || res.StopReason != llm.StopAborted || len(p.Requests()) != 3 {
		t.Errorf("agent.abort from a tool: %+v, %d requests", res, len(p.Requests()))
	}
}

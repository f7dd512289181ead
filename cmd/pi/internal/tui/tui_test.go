package tui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/pi-go/pi/internal/testkit/waitbuf"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/session"
)

// Key sequences as a terminal sends them.
const (
	keyEnter     = "\r"
	keyAltEnter  = "\x1b\r"
	keyCtrlJ     = "\n"
	keyUp        = "\x1b[A"
	keyDown      = "\x1b[B"
	keyCtrlC     = "\x03"
	keyCtrlD     = "\x04"
	keyEsc       = "\x1b"
	keyTab       = "\t"
	keyBackspace = "\x7f"
)

func paste(s string) string { return "\x1b[200~" + s + "\x1b[201~" }

// screen is what the program wrote to the terminal.
type screen struct{ *waitbuf.Buffer }

func newScreen() *screen { return &screen{waitbuf.New()} }

// text is everything written, escape sequences removed, and a channel
// closed at the next write.
func (s *screen) text() (string, <-chan struct{}) {
	raw, changed := s.Snapshot()
	return ansi.Strip(raw), changed
}

// raw is everything written to the terminal, escape sequences and all.
func (s *screen) raw() string { return s.String() }

// term is a running TUI driven through its input as a terminal would.
type term struct {
	t      *testing.T
	ui     *UI
	stderr *waitbuf.Buffer // the log's fallback: stderr before and after the TUI
	in     *io.PipeWriter
	scr    *screen
	done   chan int
	rt     *app.Runtime
	conv   *conversation.Conversation
	prov   *llm.Scripted
	dir    string
	home   string
	cancel context.CancelFunc
}

type termOptions struct {
	turns   []llm.ScriptTurn
	toml    string // the project's pi.toml
	first   string
	history string // history file; "" means one in the test's PI_HOME
	home    string
	// onSessionStart, when set, runs at each session_start the
	// conversation sends (on the goroutine that changes the session, as
	// an extension's session_start handler does): at New, before Run, and
	// at /new, /resume, /fork.
	onSessionStart func()
	// beforeRun runs between New and Run.
	beforeRun func(*UI)
	// profile is the colour profile (nil: the output's, none for a pipe).
	profile *termenv.Profile
	// model, when set, replaces the scripted model: the runtime's model
	// flags (the home's models.json applies).
	model *app.ModelOptions
}

// startTUI opens a runtime in a fresh project with a scripted model and
// runs the TUI on a pipe and a screen buffer.
func startTUI(t *testing.T, o termOptions) *term {
	t.Helper()
	dir := t.TempDir()
	home := o.home
	if home == "" {
		home = t.TempDir()
	}
	t.Setenv("PI_CODING_AGENT_SESSION_DIR", "")
	if o.toml != "" {
		if err := os.WriteFile(filepath.Join(dir, "pi.toml"), []byte(o.toml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ui := New()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := waitbuf.New()
	ao := app.Options{Cwd: dir, PIHome: home, Trust: true,
		Approver: app.ApproverFunc(ui.Approve), UI: ui, Mode: app.ModeInteractive, LogOutput: ui.LogWriter(stderr)}
	if o.model != nil {
		ao.Model = *o.model
	}
	rt, err := app.Open(ctx, ao)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	prov := llm.NewScripted(llm.Script{Turns: o.turns})
	var given llm.Provider = prov
	if o.model != nil {
		given = nil
	}
	conv, err := conversation.New(rt, conversation.Options{
		Session: &conversation.SessionOptions{}, Provider: given, ModelName: "scripted",
		OnEvent: func(ev agent.Event) {
			if ev.Type == agent.EventSessionStart && o.onSessionStart != nil {
				o.onSessionStart()
			}
		},
	})
	if err != nil {
		cancel()
		rt.Close()
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	scr := newScreen()
	hist := o.history
	if hist == "" {
		hist = filepath.Join(home, "prompt-history.jsonl")
	}
	tt := &term{t: t, ui: ui, stderr: stderr, in: pw, scr: scr, done: make(chan int, 1), rt: rt, conv: conv, prov: prov, dir: dir, home: home, cancel: cancel}
	cfg := Config{
		Conversation: conv,
		FirstPrompt:  o.first, HistoryFile: hist,
		Input: pr, Output: scr,
		ProgramOptions: []tea.ProgramOption{tea.WithoutSignals()},
		profile:        o.profile,
	}
	if o.beforeRun != nil {
		o.beforeRun(ui)
	}
	go func() { tt.done <- ui.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		pw.Close()
		select {
		case <-tt.done:
		case <-time.After(10 * time.Second):
			t.Error("the TUI did not end")
		}
		conv.Close()
		rt.Close()
	})
	tt.waitFor("pi · Enter sends")
	return tt
}

func (tt *term) typ(keys ...string) {
	tt.t.Helper()
	for _, k := range keys {
		errc := make(chan error, 1)
		go func() {
			_, err := io.WriteString(tt.in, k)
			errc <- err
		}()
		select {
		case err := <-errc:
			if err != nil {
				tt.t.Fatalf("type %q: %v", k, err)
			}
		case <-time.After(20 * time.Second):
			text, _ := tt.scr.text()
			tt.t.Fatalf("the TUI did not take the key %q within 20s (stuck); screen:\n%s", k, tail(text, 2000))
		}
	}
}

// waitFor waits until the screen shows want (count times at least).
func (tt *term) waitFor(want string) string { return tt.waitForN(want, 1) }

func (tt *term) waitForN(want string, count int) string {
	tt.t.Helper()
	return tt.scr.WaitFor(tt.t, ansi.Strip, want, count, 20*time.Second)
}

// exit leaves with Ctrl-D and waits for Run to return.
func (tt *term) exit() int {
	tt.t.Helper()
	tt.typ(keyCtrlD)
	return tt.wait()
}

func (tt *term) wait() int {
	tt.t.Helper()
	select {
	case code := <-tt.done:
		tt.done <- code
		return code
	case <-time.After(20 * time.Second):
		text, _ := tt.scr.text()
		tt.t.Fatalf("the TUI did not exit; screen:\n%s", tail(text, 2000))
	}
	return -1
}

func tail(s string, n int) string { return waitbuf.Tail(s, n) }

// userTexts are the user messages of the model's request i.
func (tt *term) userTexts(i int) []string {
	reqs := tt.prov.Requests()
	if i >= len(reqs) {
		tt.t.Fatalf("request %d of %d", i, len(reqs))
	}
	var out []string
	for _, m := range reqs[i].Messages {
		if m.Role == llm.RoleUser {
			out = append(out, messageText(m))
		}
	}
	return out
}

func bashCall(cmd string) llm.ScriptTurn {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{{Name: "bash", Arguments: args}}}
}

func TestHistoryUpDownAndPersisted(t *testing.T) {
	home := t.TempDir()
	tt := startTUI(t, termOptions{home: home, turns: []llm.ScriptTurn{{Text: "answer one"}, {Text: "answer two"}, {Text: "answer three"}}})
	tt.typ("first prompt", keyEnter)
	tt.waitFor("answer one")
	tt.typ("second prompt", keyEnter)
	tt.waitFor("answer two")
	// Up twice: the first prompt; Down once: the second; Enter sends it.
	tt.typ(keyUp, keyUp, keyDown, keyEnter)
	tt.waitFor("answer three")
	if got := tt.userTexts(2); len(got) != 3 || got[2] != "second prompt" {
		t.Fatalf("third request's user messages %q, want the second prompt again", got)
	}
	tt.exit()
	h, err := LoadHistory(filepath.Join(home, "prompt-history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// The repeat of the latest prompt is not stored twice.
	if got := h.Entries(); len(got) != 2 || got[0] != "first prompt" || got[1] != "second prompt" {
		t.Fatalf("history file holds %q", got)
	}
	st, err := os.Stat(filepath.Join(home, "prompt-history.jsonl"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode %v (%v), want 0600", st.Mode(), err)
	}
	// A new TUI on the same PI_HOME recalls it with Up.
	tt2 := startTUI(t, termOptions{home: home, turns: []llm.ScriptTurn{{Text: "recalled"}}})
	tt2.typ(keyUp, keyEnter)
	tt2.waitFor("recalled")
	if got := tt2.userTexts(0); len(got) != 1 || got[0] != "second prompt" {
		t.Fatalf("recalled prompt %q", got)
	}
	tt2.exit()
}

func TestMultiLineInput(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "got it"}}})
	// Alt+Enter and Ctrl+J add lines; Enter sends the whole prompt.
	tt.typ("line one", keyAltEnter, "line two", keyCtrlJ, "line three", keyEnter)
	tt.waitFor("got it")
	if got := tt.userTexts(0); len(got) != 1 || got[0] != "line one\nline two\nline three" {
		t.Fatalf("user message %q", got)
	}
	if n := len(tt.prov.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	tt.exit()
}

func TestPasteStaysOnePrompt(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "one answer"}, {Text: "unexpected"}}})
	trace := "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/x/main.go:5 +0x1d\r\nexit status 2"
	tt.typ(paste(trace))
	tt.typ(" <- why?", keyEnter)
	tt.waitFor("one answer")
	got := tt.userTexts(0)
	want := strings.ReplaceAll(trace, "\r\n", "\n")
	want = strings.ReplaceAll(want, "\t", "    ") + " <- why?"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("user message\n%q\nwant\n%q", got, want)
	}
	tt.exit()
	if n := len(tt.prov.Requests()); n != 1 {
		t.Fatalf("the paste became %d requests, want 1", n)
	}
}

func TestCtrlCCancelsThenExits(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{bashCall("echo started; sleep 600"), {Text: "after cancel"}}})
	tt.typ("run it", keyEnter)
	tt.waitFor("started")
	tt.typ(keyCtrlC)
	tt.waitFor("(turn cancelled)")
	tt.waitFor("✗ bash")
	// The prompt is idle again: a typed line is cleared by Ctrl-C, and an
	// empty prompt needs a second Ctrl-C to exit.
	tt.typ("draft")
	tt.waitFor("draft")
	tt.typ(keyCtrlC, keyCtrlC)
	tt.waitFor("Press Ctrl-C again to exit")
	select {
	case <-tt.done:
		t.Fatal("one Ctrl-C at an empty prompt exited (after one cleared the draft)")
	default:
	}
	tt.typ(keyCtrlC)
	if code := tt.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if n := len(tt.prov.Requests()); n != 1 {
		t.Fatalf("%d requests after the cancel, want 1", n)
	}
}

func TestEscapeAbortsTurn(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{bashCall("echo esc-started; sleep 600"), {Text: "next"}}})
	tt.typ("go", keyEnter)
	tt.waitFor("esc-started")
	tt.typ(keyEsc)
	tt.waitFor("(turn cancelled)")
	tt.exit()
}

func TestQueuedMessageSentAfterToolBatch(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		bashCall("echo waiting; while [ ! -e release ]; do sleep 0.02; done; echo released"),
		{Text: "took the steer"},
	}})
	tt.typ("start", keyEnter)
	tt.waitFor("waiting")
	tt.typ("also check the tests", keyEnter)
	tt.waitFor("queued: also check the tests")
	if err := os.WriteFile(filepath.Join(tt.dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tt.waitFor("took the steer")
	reqs := tt.prov.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleUser || messageText(last) != "also check the tests" || msgs[len(msgs)-2].Role != llm.RoleToolResult {
		t.Fatalf("second request ends with %+v after %+v", last, msgs[len(msgs)-2])
	}
	text := tt.waitFor("› also check the tests")
	if strings.Index(text, "✓ bash") > strings.LastIndex(text, "› also check the tests") {
		t.Fatal("the queued message was shown as sent before the tool batch ended")
	}
	tt.exit()
}

func TestQueuedCommandRunsAfterTurn(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		bashCall("echo holding; while [ ! -e release ]; do sleep 0.02; done"),
		{Text: "finished"},
	}})
	tt.typ("start", keyEnter)
	tt.waitFor("holding")
	tt.typ("/name queued-name", keyEnter)
	tt.waitFor("queued: /name queued-name")
	os.WriteFile(filepath.Join(tt.dir, "release"), nil, 0o644)
	tt.waitFor("session named queued-name")
	text, _ := tt.scr.text()
	if strings.Index(text, "finished") > strings.Index(text, "session named queued-name") {
		t.Fatal("the queued command ran before the turn ended")
	}
	tt.exit()
}

func TestSlashCommands(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "hello"}}})
	tt.typ("/help", keyEnter)
	tt.waitFor("/compact [INSTRUCTIONS]")
	tt.typ("/frobnicate now", keyEnter)
	tt.waitFor("unknown command /frobnicate (see /help)")
	tt.typ("hi", keyEnter)
	tt.waitFor("hello")
	tt.typ("/name feature-x", keyEnter)
	tt.waitFor("session named feature-x")
	tt.waitFor(" • feature-x")
	tt.typ("/session", keyEnter)
	tt.waitFor("1 user message, 1 answer")
	tt.typ("/tools", keyEnter)
	tt.waitFor("bash")
	tt.typ("/ext", keyEnter)
	tt.waitFor("No extensions are loaded")
	tt.typ("/permissions", keyEnter)
	tt.waitFor("No [permissions] in pi.toml")
	path := tt.conv.Session().Path()
	tt.typ("/new", keyEnter)
	tt.waitFor("new session")
	tt.typ("/resume", keyEnter)
	tt.waitFor("Resume a session")
	tt.typ(keyEnter)
	tt.waitFor("(resumed session feature-x)")
	if got := tt.conv.Session().Path(); got != path {
		t.Errorf("resumed %s, want %s", got, path)
	}
	tt.typ("exit", keyEnter)
	tt.wait()
	if n := len(tt.prov.Requests()); n != 1 {
		t.Fatalf("commands reached the model: %d requests, want 1", n)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `"type":"session_info"`) || !strings.Contains(string(data), `"name":"feature-x"`) {
		t.Fatalf("session file lacks the name entry (%v):\n%s", err, data)
	}
}

func TestLongOutputNotice(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{bashCall("seq 1 5000"), {Text: "long done"}}})
	tt.typ("count", keyEnter)
	text := tt.waitFor("long done")
	const notice = "Output truncated; the full output is in"
	i := strings.Index(text, notice)
	if i < 0 {
		t.Fatalf("no truncation notice:\n%s", tail(text, 2000))
	}
	path := strings.Fields(text[i+len(notice):])[0]
	data, err := os.ReadFile(path)
	if err != nil || strings.Count(string(data), "\n") != 5000 {
		t.Fatalf("full output %s: %d lines, %v", path, strings.Count(string(data), "\n"), err)
	}
	if !strings.Contains(text, "earlier lines") || !strings.Contains(text, "5000") {
		t.Fatal("the preview does not say lines were left out or does not end with the last line")
	}
	tt.exit()
}

func TestBangCommandJoinsContext(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "saw it"}}})
	tt.typ("!echo bang-output-42", keyEnter)
	tt.waitFor("now part of the conversation")
	tt.typ("what did it print?", keyEnter)
	tt.waitFor("saw it")
	got := tt.userTexts(0)
	if len(got) != 2 || !strings.Contains(got[0], "Ran `echo bang-output-42`") || !strings.Contains(got[0], "bang-output-42\n") {
		t.Fatalf("user messages %q", got)
	}
	tt.exit()
}

func TestBangCommandObeysPermissions(t *testing.T) {
	toml := "[permissions]\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"rm\"]\ndecision = \"deny\"\nreason = \"no deleting\"\n"
	tt := startTUI(t, termOptions{toml: toml})
	os.WriteFile(filepath.Join(tt.dir, "keep.txt"), []byte("x"), 0o644)
	tt.typ("!rm keep.txt", keyEnter)
	tt.waitFor("no deleting")
	if _, err := os.Stat(filepath.Join(tt.dir, "keep.txt")); err != nil {
		t.Fatalf("!rm ran past a deny rule: %v", err)
	}
	tt.exit()
}

func TestAskAnsweredInTUI(t *testing.T) {
	toml := "[permissions]\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\nreason = \"creates files\"\n"
	tt := startTUI(t, termOptions{toml: toml, turns: []llm.ScriptTurn{bashCall("touch made-1"), bashCall("touch made-2"), {Text: "all done"}}})
	tt.typ("make files", keyEnter)
	tt.waitFor("allow? [y]es / [n]o / [a]lways")
	tt.typ("n")
	tt.waitForN("allow? [y]es", 2)
	tt.typ("y")
	tt.waitFor("all done")
	if _, err := os.Stat(filepath.Join(tt.dir, "made-1")); err == nil {
		t.Error("a declined call ran")
	}
	if _, err := os.Stat(filepath.Join(tt.dir, "made-2")); err != nil {
		t.Errorf("an approved call did not run: %v", err)
	}
	tt.exit()
}

func TestAttachFiles(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "read them"}}})
	os.WriteFile(filepath.Join(tt.dir, "notes.txt"), []byte("remember the milk\n"), 0o644)
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	os.WriteFile(filepath.Join(tt.dir, "pic.png"), png, 0o644)
	os.WriteFile(filepath.Join(tt.dir, "blob.bin"), []byte{0, 1, 2, 0xff}, 0o644)
	// Tab completes @no → @notes.txt.
	tt.typ("see @no", keyTab)
	tt.waitFor("see @notes.txt")
	tt.typ("and @pic.png, mail me@example.com", keyEnter)
	tt.waitFor("read them")
	reqs := tt.prov.Requests()
	user := reqs[0].Messages[0]
	if len(user.Content) != 2 || user.Content[1].Type != "image" || user.Content[1].MimeType != "image/png" {
		t.Fatalf("user message blocks %+v", user.Content)
	}
	if !strings.Contains(user.Content[0].Text, "<file name=\""+filepath.Join(tt.dir, "notes.txt")+"\">\nremember the milk\n") {
		t.Fatalf("text file not inlined: %q", user.Content[0].Text)
	}
	// A binary file is refused with a message; nothing is sent.
	tt.typ("look at @blob.bin", keyEnter)
	tt.waitFor("is neither text")
	tt.typ("look at @.", keyEnter)
	tt.waitFor("is a folder")
	tt.exit()
	if n := len(tt.prov.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestMarkdownAndDiff(t *testing.T) {
	edit, _ := json.Marshal(map[string]string{"path": "a.txt", "oldText": "old line", "newText": "new line"})
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptToolCall{{Name: "edit", Arguments: edit}}},
		{Text: "## Summary\n\nThe **file** changed:\n\n- one item\n"},
	}})
	os.WriteFile(filepath.Join(tt.dir, "a.txt"), []byte("keep\nold line\n"), 0o644)
	tt.typ("edit it", keyEnter)
	text := tt.waitFor("• one item")
	for _, want := range []string{"✓ edit a.txt", "-2 old line", "+2 new line", "• one item", "Summary"} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, tail(text, 1500))
		}
	}
	// The live area may show the raw text until its first render; what is
	// printed at the end is rendered.
	final := text[strings.LastIndex(text, "Summary"):]
	if strings.Contains(final, "**file**") || strings.Contains(final, "- one item") {
		t.Errorf("markdown printed raw:\n%s", final)
	}
	tt.exit()
}

// TestTerminalEscapesDropped: escape sequences in tool output, the model's
// text, a file name and a session name never reach the terminal (they
// could set the clipboard with OSC 52, retitle the window or clear the
// screen).
func TestTerminalEscapesDropped(t *testing.T) {
	evil := "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\x9b31m"
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		bashCall(`printf 'out\033]52;c;ZXZpbA==\007\033[2J\n'; cat evil.txt`),
		{Text: "answer " + evil + " end"},
	}})
	os.WriteFile(filepath.Join(tt.dir, "evil.txt"), []byte("file "+evil+"\n"), 0o644)
	tt.typ("go "+paste("pasted "+evil), keyEnter)
	tt.waitFor("answer ]52")
	tt.typ("/name n"+evil, keyEnter)
	tt.waitFor("session named n")
	tt.exit()
	raw := tt.scr.raw()
	for _, bad := range []string{"\x1b]52", "\x1b]0;pwned", "\x9b", "\x07"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the terminal got %q", bad)
		}
	}
	if strings.Count(raw, "\x1b[2J") > 0 {
		t.Error("the terminal got a clear-screen from untrusted text")
	}
}

// TestModelToolNameCleaned: a tool name the model made up (no tool has
// it) is shown while the call runs, in its result block and when the
// session is shown again on /resume: its escape sequences, C1 and bidi
// controls never reach the terminal.
func TestModelToolNameCleaned(t *testing.T) {
	evil := "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\u009b31m\u202e"
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptToolCall{{Name: "madeup" + evil, Arguments: []byte(`{}`)}}},
		{Text: "after the made-up tool"},
	}})
	tt.typ("go", keyEnter)
	tt.waitFor("after the made-up tool")
	id := tt.conv.Session().ID()
	tt.typ("/new", keyEnter)
	tt.waitFor("new session")
	tt.typ("/resume "+id[:13], keyEnter)
	tt.waitFor("(resumed session")
	tt.exit()
	raw := tt.scr.raw()
	if !strings.Contains(raw, "madeup]52") {
		t.Error("the made-up name was not shown")
	}
	for _, bad := range []string{"\x1b]52", "\x1b]0;pwned", "\u009b", "\x07", "\x1b[2J", "\u202e"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the terminal got %q", bad)
		}
	}
}

// TestResumeShortIDs: sessions started within the same minute share the
// first 8 digits of their id; the picker and the resume notice show each
// one's shortest unique prefix, and /resume takes it.
func TestResumeShortIDs(t *testing.T) {
	tt := startTUI(t, termOptions{})
	dir := session.DirFor(session.DefaultDir(tt.home), tt.dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"01a24dce-7b1f-7000-8000-000000000001", "01a24dce-7c22-7000-8000-000000000002", "01a24dce-7c23-7000-8000-000000000003"} {
		ts := fmt.Sprintf("2025-06-15T12:00:0%d.000Z", i)
		data := fmt.Sprintf(`{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`+"\n"+
			`{"type":"message","id":"aaaaaaa%d","parentId":null,"timestamp":%q,"message":{"role":"user","content":"prompt %d"}}`+"\n",
			id, ts, tt.dir, i, ts, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tt.typ("/resume", keyEnter)
	text := tt.waitFor("Resume a session")
	text = text[strings.LastIndex(text, "Resume a session"):]
	for _, want := range []string{"▸ 01a24dce-7c23  2025-06-15", "01a24dce-7c22  2025-06-15", "01a24dce-7b    2025-06-15", "1 msgs  prompt 0"} {
		if !strings.Contains(text, want) {
			t.Errorf("the picker lacks %q:\n%s", want, text)
		}
	}
	tt.typ(keyEnter)
	tt.waitFor("(resumed session 01a24dce-7c23)")
	tt.typ("/resume 01a24dce-7b", keyEnter)
	tt.waitFor("(resumed session 01a24dce-7b)")
	if id := tt.conv.Session().ID(); id != "01a24dce-7b1f-7000-8000-000000000001" {
		t.Errorf("/resume 01a24dce-7b resumed %s", id)
	}
	tt.exit()
}

var tookRE = regexp.MustCompile(`took (\d+\.\d)s`)

// TestToolPreviews: a read shows the first lines it read and how many
// more there were; a bash call, the model's or a !command, says how long
// it took.
func TestToolPreviews(t *testing.T) {
	read, _ := json.Marshal(map[string]string{"path": "notes.txt"})
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{
		{ToolCalls: []llm.ScriptToolCall{{Name: "read", Arguments: read}}},
		bashCall("sleep 0.3; echo slept"),
		{Text: "previews done"},
	}})
	var content strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&content, "note line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(tt.dir, "notes.txt"), []byte(content.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tt.typ("look", keyEnter)
	text := tt.waitFor("previews done")
	block := text[strings.Index(text, "✓ read notes.txt"):strings.Index(text, "✓ bash")]
	for _, want := range []string{"  note line 1", "  note line 8", "… 12 more lines"} {
		if !strings.Contains(block, want) {
			t.Errorf("the read preview lacks %q:\n%s", want, block)
		}
	}
	if strings.Contains(block, "note line 9") {
		t.Errorf("the read preview shows more than 8 lines:\n%s", block)
	}
	bash := text[strings.Index(text, "✓ bash"):]
	m := tookRE.FindStringSubmatch(bash)
	if m == nil {
		t.Fatalf("the bash call does not say how long it took:\n%s", bash)
	}
	if secs, _ := strconv.ParseFloat(m[1], 64); secs < 0.3 {
		t.Errorf("the bash call took %ss, it slept 0.3s", m[1])
	}
	tt.typ("!sleep 0.2", keyEnter)
	text = tt.waitFor("now part of the conversation")
	if m := tookRE.FindStringSubmatch(text[strings.LastIndex(text, "✓ bash $ sleep 0.2"):]); m == nil {
		t.Errorf("the !command does not say how long it took:\n%s", tail(text, 600))
	} else if secs, _ := strconv.ParseFloat(m[1], 64); secs < 0.2 {
		t.Errorf("the !command took %ss, it slept 0.2s", m[1])
	}
	tt.exit()
}

// TestFailedPromptBackInEditor: when the model fails, its error is printed
// once, as the provider said it, and the prompt goes back into the editor:
// Enter sends it again. A failed /compact is one line too.
func TestFailedPromptBackInEditor(t *testing.T) {
	tt := startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "first answer"}, {Error: "upstream exploded"}, {Text: "resent fine"}}})
	tt.typ("hello", keyEnter)
	tt.waitFor("first answer")
	tt.typ("fail", keyAltEnter, "please", keyEnter)
	text := tt.waitFor("the prompt is back in the editor")
	if n := strings.Count(text, "upstream exploded"); n != 1 {
		t.Errorf("the error is printed %d times:\n%s", n, tail(text, 1500))
	}
	if strings.Contains(text, "agent run") || strings.Contains(text, "turn 1:") {
		t.Errorf("the error has internal prefixes:\n%s", tail(text, 1500))
	}
	tt.waitFor("> please")
	tt.typ(keyEnter)
	tt.waitFor("resent fine")
	if got := tt.userTexts(2); got[len(got)-1] != "fail\nplease" {
		t.Fatalf("the resent prompt is %q", got[len(got)-1])
	}
	// The script has no answer left for the summary: /compact fails, and
	// says so once.
	tt.typ("/compact", keyEnter)
	text = tt.waitFor("script ended")
	text = text[strings.LastIndex(text, "› /compact"):]
	if n := strings.Count(text, "✗"); n != 1 || strings.Count(text, "script ended") != 1 {
		t.Errorf("a failed /compact printed %d errors:\n%s", n, text)
	}
	tt.exit()
}

var sgrSeq = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourSGR are the escape sequences of raw that set a colour (foreground
// or background, 16, 256 or true colour).
func colourSGR(raw string) []string {
	var out []string
	for _, m := range sgrSeq.FindAllStringSubmatch(raw, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				out = append(out, m[0])
				break
			}
		}
	}
	return out
}

// TestNoColor: on a 256-colour terminal the TUI paints in colour, with
// NO_COLOR set it writes no colour at all (the answer's markdown, tool
// calls, a diff, errors, the dropdown, the footer, a question), and the
// editor's cursor still shows (reverse video).
func TestNoColor(t *testing.T) {
	edit, _ := json.Marshal(map[string]string{"path": "a.txt", "oldText": "old", "newText": "new"})
	run := func(t *testing.T) string {
		ansi256 := termenv.ANSI256
		toml := "[permissions]\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\n"
		tt := startTUI(t, termOptions{profile: &ansi256, toml: toml, turns: []llm.ScriptTurn{
			bashCall("echo out; touch x"),
			{ToolCalls: []llm.ScriptToolCall{{Name: "edit", Arguments: edit}}},
			{Text: "# Title\n\n**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", Usage: &llm.Usage{InputTokens: 95, OutputTokens: 1, TotalTokens: 96}},
			{Error: "it broke"},
		}})
		os.WriteFile(filepath.Join(tt.dir, "a.txt"), []byte("old\n"), 0o644)
		tt.typ("go", keyEnter)
		tt.waitFor("allow? [y]es")
		tt.typ("y")
		tt.waitFor("Title")
		// The turn has ended when the footer no longer says "working…"
		// after the context share (a line typed before would steer the
		// run that is ending, not start a new one).
		tt.waitFor("96/128k (0.1%)  ")
		tt.typ("again", keyEnter)
		tt.waitFor("it broke")
		tt.typ(keyCtrlC, "/")
		tt.waitFor("▸ /help")
		tt.typ(keyCtrlC)
		tt.exit()
		return tt.scr.raw()
	}
	t.Setenv("NO_COLOR", "")
	if got := colourSGR(run(t)); len(got) == 0 {
		t.Fatal("no colour on a 256-colour terminal")
	}
	t.Setenv("NO_COLOR", "1")
	raw := run(t)
	if got := colourSGR(raw); len(got) > 0 {
		t.Errorf("NO_COLOR: the TUI wrote %d colour sequences, e.g. %q", len(got), got[0])
	}
	if !strings.Contains(raw, "\x1b[7m") {
		t.Error("NO_COLOR: the cursor is not drawn (no reverse video)")
	}
}

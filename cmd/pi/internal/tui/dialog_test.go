package tui

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

func toolApproval(name string) tool.ApprovalRequest {
	return tool.ApprovalRequest{Call: tool.CallInfo{Name: name, Input: []byte(`{}`)}, Questions: []string{"ok?"}}
}

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// raw11TOML is a pi.toml that loads the ABI 1.1 test guest (its
// /probe METHOD PARAMS command makes a host call and shows the answer).
func raw11TOML(t *testing.T) string {
	t.Helper()
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/raw11")
	sum, err := extensions.FileSHA256(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[[extensions]]\nname = \"raw11\"\npath = %q\nsha256 = %q\n[extensions.config]\nname = \"raw11\"\n", wasm, sum)
}

// result is what an app.UI call returned.
type result struct {
	value string
	ok    bool
	err   error
}

// within waits for a result.
func within(t *testing.T, c chan result) result {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the question was not answered within 20s")
		return result{}
	}
}

func confirmAsync(ctx context.Context, u *UI, title, msg string) chan result {
	c := make(chan result, 1)
	go func() {
		ok, err := u.Confirm(ctx, title, msg)
		c <- result{ok: ok, err: err}
	}()
	return c
}

func selectAsync(ctx context.Context, u *UI, title string, opts []string) chan result {
	c := make(chan result, 1)
	go func() {
		v, ok, err := u.Select(ctx, title, opts)
		c <- result{v, ok, err}
	}()
	return c
}

func inputAsync(ctx context.Context, u *UI, title, placeholder string) chan result {
	c := make(chan result, 1)
	go func() {
		v, ok, err := u.Input(ctx, title, placeholder)
		c <- result{v, ok, err}
	}()
	return c
}

// TestExtensionConfirmInTUI: a real WASM extension's ui.confirm is asked
// in the TUI; y, n and Esc reach the extension as its answer, and the
// transcript says what was asked and answered.
func TestExtensionConfirmInTUI(t *testing.T) {
	tt := startTUI(t, termOptions{toml: raw11TOML(t)})
	tt.typ(`/probe ui.confirm {"title":"Deploy?","message":"to prod\nsecond line"}`, keyEnter)
	text := tt.waitFor("[y]es / [n]o (Enter or Esc: no)")
	if !strings.Contains(text, "? [raw11] Deploy?") || !strings.Contains(text, "\n  second line") {
		t.Fatalf("the question lacks its title or message:\n%s", tail(text, 1500))
	}
	// Keys that mean nothing here are not taken as an answer.
	tt.typ("x", "q")
	tt.typ("y")
	tt.waitFor(`{"ok":true,"result":{"confirmed":true}}`)
	tt.waitFor("? [raw11] Deploy? → yes")

	for i, key := range []string{"n", keyEsc, keyEnter} {
		tt.typ(fmt.Sprintf(`/probe ui.confirm {"title":"Again %d","message":"m"}`, i), keyEnter)
		tt.waitFor(fmt.Sprintf("? [raw11] Again %d", i))
		tt.typ(key)
		tt.waitFor(fmt.Sprintf("? [raw11] Again %d → no", i))
	}
	if n := strings.Count(tt.waitForN(`{"ok":true,"result":{"confirmed":false}}`, 3), `{"ok":true,"result":{"confirmed":false}}`); n != 3 {
		t.Fatalf("%d answers of no, want 3", n)
	}
	// The prompt is back: the editor takes a line again.
	tt.typ("/probe ui.notify {\"message\":\"back at the prompt\"}", keyEnter)
	tt.waitFor("• [raw11] back at the prompt")
	tt.exit()
}

// TestExtensionConfirmTimeout: an extension's ui.confirm with timeoutMs
// gives up without an answer; the dialog goes and the extension hears
// "timeout"; keys then go to the editor, not to a stale question.
func TestExtensionConfirmTimeout(t *testing.T) {
	tt := startTUI(t, termOptions{toml: raw11TOML(t), turns: nil})
	tt.typ(`/probe ui.confirm {"title":"Quick","message":"m","timeoutMs":200}`, keyEnter)
	tt.waitFor(`{"ok":true,"result":{"confirmed":false,"reason":"timeout"}}`)
	tt.waitFor("? [raw11] Quick → (no answer in time)")
	tt.typ("y")
	tt.waitFor("> y") // in the editor
	tt.typ(keyCtrlC, keyCtrlD)
	tt.wait()
}

// TestExtensionNotifyInTUI: ui.notify prints a styled line per level; an
// unknown level is refused to the extension; escape sequences in the
// message never reach the terminal.
func TestExtensionNotifyInTUI(t *testing.T) {
	tt := startTUI(t, termOptions{toml: raw11TOML(t)})
	tt.typ(`/probe ui.notify {"message":"plain info"}`, keyEnter)
	tt.waitFor("• [raw11] plain info")
	tt.typ(`/probe ui.notify {"message":"careful","level":"warning"}`, keyEnter)
	tt.waitFor("! warning: [raw11] careful")
	tt.typ(`/probe ui.notify {"message":"broken","level":"error"}`, keyEnter)
	tt.waitFor("✗ error: [raw11] broken")
	tt.typ(`/probe ui.notify {"message":"x","level":"shout"}`, keyEnter)
	tt.waitFor(`level \"shout\" must be info, warning`)
	tt.typ(`/probe ui.notify {"message":"evil \u001b]52;c;ZXZpbA==\u0007\u001b[2J\u009b31m end"}`, keyEnter)
	tt.waitFor("• [raw11] evil ]52;c;ZXZpbA==[2J31m end")
	tt.exit()
	raw := tt.scr.raw()
	for _, bad := range []string{"\x1b]52", "\x9b", "\x07"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the terminal got %q from a notice", bad)
		}
	}
	if strings.Contains(tt.stderr.String(), "plain info") {
		t.Errorf("a notice went to stderr under the TUI: %q", tt.stderr.String())
	}
}

// TestSelectInTUI: a list dialog; arrows and j/k move, / filters, Enter
// picks, Esc dismisses (the first Esc while filtering clears the filter).
func TestSelectInTUI(t *testing.T) {
	tt := startTUI(t, termOptions{})
	ctx := context.Background()
	opts := []string{"alpha", "bravo", "charlie", "delta"}

	c := selectAsync(ctx, tt.ui, "Pick a letter", opts)
	tt.waitFor("▸ alpha")
	tt.typ(keyDown, "j", "j", "k") // bravo, charlie, delta, charlie
	tt.waitFor("▸ charlie")
	tt.typ(keyUp, keyUp, keyUp) // stops at the top
	tt.typ(keyDown, keyEnter)
	if r := within(t, c); !r.ok || r.value != "bravo" || r.err != nil {
		t.Fatalf("select = %+v, want bravo", r)
	}
	tt.waitFor(`? Pick a letter → "bravo"`)

	c = selectAsync(ctx, tt.ui, "Filtered", opts)
	tt.waitFor("? Filtered")
	tt.typ("/", "E", "l")    // "el": only delta
	tt.waitFor("filter: El") // case kept as typed, matched folded
	tt.typ("j", "k")         // j and k are typed while filtering
	tt.waitFor("filter: Eljk")
	tt.waitFor("(no option matches)")
	tt.typ(keyEnter) // nothing to pick: the dialog stays
	tt.typ(keyBackspace, keyBackspace, keyEnter)
	if r := within(t, c); !r.ok || r.value != "delta" {
		t.Fatalf("filtered select = %+v, want delta", r)
	}

	c = selectAsync(ctx, tt.ui, "Dismiss me", opts)
	tt.waitFor("? Dismiss me")
	tt.typ("/", "zz", keyEsc) // clears the filter only
	tt.waitFor("/ filters")
	tt.typ(keyEsc)
	if r := within(t, c); r.ok || r.value != "" {
		t.Fatalf("dismissed select = %+v", r)
	}
	tt.waitFor("? Dismiss me → dismissed")

	// A long list shows a window around the cursor.
	long := make([]string, 100)
	for i := range long {
		long[i] = fmt.Sprintf("item-%03d", i)
	}
	c = selectAsync(ctx, tt.ui, "Long", long)
	tt.waitFor("90 below")
	for range 50 {
		tt.typ("j")
	}
	tt.waitFor("▸ item-050")
	tt.typ(keyEnter)
	if r := within(t, c); r.value != "item-050" {
		t.Fatalf("long select = %+v", r)
	}
	tt.exit()
}

// TestInputInTUI: a one-line input with its placeholder; Enter submits
// (a pasted line break becomes a space), Esc dismisses.
func TestInputInTUI(t *testing.T) {
	tt := startTUI(t, termOptions{turns: nil})
	ctx := context.Background()
	c := inputAsync(ctx, tt.ui, "Branch name", "feature/…")
	tt.waitFor("feature/…")
	tt.typ("fix-", paste("login\npage"), keyEnter)
	if r := within(t, c); !r.ok || r.value != "fix-login page" {
		t.Fatalf("input = %+v", r)
	}
	tt.waitFor(`? Branch name → "fix-login page"`)

	c = inputAsync(ctx, tt.ui, "Nothing", "")
	tt.waitFor("? Nothing")
	tt.typ("typed", keyEsc)
	if r := within(t, c); r.ok || r.value != "" {
		t.Fatalf("dismissed input = %+v", r)
	}
	tt.waitFor("? Nothing → dismissed")

	// An empty line is an answer (""), not a dismissal.
	c = inputAsync(ctx, tt.ui, "Empty ok", "")
	tt.waitFor("? Empty ok")
	tt.typ(keyEnter)
	if r := within(t, c); !r.ok || r.value != "" {
		t.Fatalf("empty input = %+v", r)
	}
	// The editor did not get the keys typed into the dialogs.
	tt.typ("z")
	text := tt.waitFor("> z")
	if strings.Contains(text, "> typed") || strings.Contains(text, "> fix-") || strings.Contains(text, "> zfix") {
		t.Fatal("keys of a dialog reached the editor")
	}
	tt.typ(keyCtrlC, keyCtrlD)
	tt.wait()
}

// TestQuestionsQueue: two questions at once are asked one after the
// other, in order, each answer to its asker.
func TestQuestionsQueue(t *testing.T) {
	tt := startTUI(t, termOptions{})
	ctx := context.Background()
	first := confirmAsync(ctx, tt.ui, "First?", "")
	tt.waitFor("? First?")
	second := selectAsync(ctx, tt.ui, "Second", []string{"one", "two"})
	tt.waitFor("(1 more question waiting)")
	third := inputAsync(ctx, tt.ui, "Third", "")
	tt.waitFor("(2 more questions waiting)")
	tt.typ("y")
	if r := within(t, first); !r.ok {
		t.Fatalf("first = %+v", r)
	}
	tt.waitFor("▸ one")
	tt.waitFor("(1 more question waiting)")
	select {
	case r := <-second:
		t.Fatalf("the second question was answered before it was shown: %+v", r)
	default:
	}
	tt.typ("j", keyEnter)
	if r := within(t, second); !r.ok || r.value != "two" {
		t.Fatalf("second = %+v", r)
	}
	tt.waitFor("? Third")
	tt.typ("3", keyEnter)
	if r := within(t, third); !r.ok || r.value != "3" {
		t.Fatalf("third = %+v", r)
	}
	tt.exit()
}

// TestQuestionCancelled: a question whose ctx ends while shown or while
// queued behind another goes away; the asker gets the default at once.
func TestQuestionCancelled(t *testing.T) {
	tt := startTUI(t, termOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	shown := confirmAsync(ctx, tt.ui, "Shown", "")
	tt.waitFor("? Shown")
	qctx, qcancel := context.WithCancel(context.Background())
	queued := selectAsync(qctx, tt.ui, "Queued", []string{"a"})
	tt.waitFor("(1 more question waiting)")
	qcancel()
	if r := within(t, queued); r.ok {
		t.Fatalf("a cancelled queued select = %+v", r)
	}
	tt.waitFor("? Queued → (no answer: cancelled)")
	cancel()
	if r := within(t, shown); r.ok || r.err != nil {
		t.Fatalf("a cancelled confirm = %+v", r)
	}
	tt.waitFor("? Shown → (no answer: cancelled)")
	// A ctx that has ended already asks nothing.
	if ok, _ := tt.ui.Confirm(ctx, "Never", ""); ok {
		t.Fatal("a confirm with an ended ctx said yes")
	}
	// y now goes to the editor: no question is left.
	tt.typ("y")
	text := tt.waitFor("> y")
	if strings.Contains(text, "? Never") {
		t.Fatal("a question with an ended ctx was shown")
	}
	tt.typ(keyCtrlC, keyCtrlD)
	tt.wait()
}

// TestCtrlCInDialog: Ctrl-C dismisses the question and cancels the work
// that asked it (here an extension command).
func TestCtrlCInDialog(t *testing.T) {
	tt := startTUI(t, termOptions{toml: raw11TOML(t)})
	tt.typ(`/probe ui.confirm {"title":"Stop me","message":"m"}`, keyEnter)
	tt.waitFor("? [raw11] Stop me")
	tt.typ(keyCtrlC)
	tt.waitFor("? [raw11] Stop me → no")
	// The editor is back. A command, not a prompt: a prompt would fail
	// (the script has no turns) and come back into the editor, where
	// Ctrl-D does not exit.
	tt.typ("/help", keyEnter)
	tt.waitFor("/compact")
	tt.exit()
}

// TestUIOutsideRun: before Run and after the TUI ended, questions answer
// no at once and notices go to the log (after) or wait for the start
// (before); a question open when the TUI ends is answered no.
func TestUIOutsideRun(t *testing.T) {
	u := New()
	ctx := context.Background()
	if ok, err := u.Confirm(ctx, "t", "m"); ok || err != nil {
		t.Fatalf("confirm before Run = %v, %v", ok, err)
	}
	if _, ok, _ := u.Select(ctx, "t", []string{"a"}); ok {
		t.Fatal("select before Run picked")
	}
	if _, ok, _ := u.Input(ctx, "t", ""); ok {
		t.Fatal("input before Run answered")
	}
	if a, err := u.Approve(ctx, toolApproval("bash")); a != app.Decline || err == nil {
		t.Fatalf("ask before Run = %v, %v", a, err)
	}

	tt := startTUI(t, termOptions{})
	open := confirmAsync(ctx, tt.ui, "Open at exit", "")
	tt.waitFor("? Open at exit")
	tt.cancel() // the TUI ends (its ctx) with the question open
	tt.wait()
	if r := within(t, open); r.ok {
		t.Fatalf("a question open at exit = %+v", r)
	}
	if ok, _ := tt.ui.Confirm(ctx, "after", ""); ok {
		t.Fatal("confirm after the TUI said yes")
	}
	tt.ui.Notify("notice-after-exit", app.NotifyWarning)
	tt.rt.Logger().Warn("log-after-exit")
	for _, want := range []string{"notice-after-exit", "log-after-exit"} {
		if !strings.Contains(tt.stderr.String(), want) {
			t.Errorf("%q did not go to stderr after the TUI: %q", want, tt.stderr.String())
		}
	}
}

// TestNoticeBeforeRunShownAtStart: a notice given before Run (an
// extension's init) is printed when the TUI starts, not lost or written
// under it.
func TestNoticeBeforeRunShownAtStart(t *testing.T) {
	tt := startTUI(t, termOptions{beforeRun: func(u *UI) {
		u.Notify("said before run", app.NotifyWarning)
	}})
	tt.waitFor("! warning: said before run")
	tt.exit()
	if strings.Contains(tt.stderr.String(), "said before run") {
		t.Errorf("the notice went to stderr too: %q", tt.stderr.String())
	}
}

// TestLogLinesInTranscript: the runtime's log lines while the TUI runs are
// printed in its transcript, never raw on the terminal or on stderr; an
// extension's stderr (a guest panic) is such a log line; before and after
// the TUI they go to stderr.
func TestLogLinesInTranscript(t *testing.T) {
	crash := llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{{Name: "crash", Arguments: []byte(`{}`)}}}
	tt := startTUI(t, termOptions{toml: raw11TOML(t), turns: []llm.ScriptTurn{crash, {Text: "after the crash"}}})
	tt.rt.Logger().Warn("runtime-warning-xyz", "key", "value")
	text := tt.waitFor("runtime-warning-xyz")
	if !regexp.MustCompile(`\[WARN\] +pi: runtime-warning-xyz: key=value`).MatchString(text) {
		t.Fatalf("log line not as expected:\n%s", tail(text, 1000))
	}
	// A log line with escape sequences is cleaned like any text.
	tt.rt.Logger().Error("evil-log \x1b]52;c;ZXZpbA==\x07 end")
	tt.waitFor("evil-log")
	// Debug and info stay out at the default level (warn).
	tt.rt.Logger().Info("info-not-shown")
	tt.rt.Logger().Warn("after-info")
	text = tt.waitFor("after-info")
	if strings.Contains(text, "info-not-shown") {
		t.Error("an info line was shown at the default log level")
	}
	// An extension that writes to stderr while the TUI runs: its guest
	// panics; the runtime logs its stderr lines.
	tt.typ("crash it", keyEnter)
	tt.waitFor("pi.ext.raw11: panic: crash requested: stream=stderr")
	tt.waitFor("after the crash")
	tt.exit()
	if s := tt.stderr.String(); strings.Contains(s, "runtime-warning-xyz") || strings.Contains(s, "after-info") || strings.Contains(s, "crash requested") {
		t.Errorf("log lines went to stderr under the TUI: %q", s)
	}
	if strings.Contains(tt.scr.raw(), "\x1b]52") {
		t.Error("the terminal got an OSC 52 from a log line")
	}
}

// TestNoticeAndLogFromLoopGoroutine: the runtime notifies and logs from
// the goroutine that changes the session (an extension's session_start
// handler runs there at /new); that neither blocks the TUI nor is lost.
func TestNoticeAndLogFromLoopGoroutine(t *testing.T) {
	var tt *term
	tt = startTUI(t, termOptions{onSessionStart: func() {
		if tt == nil {
			return // the first session_start, before Run
		}
		tt.ui.Notify("notice-from-loop", app.NotifyWarning)
		tt.rt.Logger().Warn("log-from-loop")
	}})
	tt.typ("/new", keyEnter)
	tt.waitFor("notice-from-loop")
	tt.waitFor("log-from-loop")
	tt.waitFor("new session")
	tt.exit()
}

// TestLogFloodBounded: a flood of log lines faster than the loop takes
// them keeps at most maxInboxLogs waiting; the rest are counted, not kept.
func TestLogFloodBounded(t *testing.T) {
	tt := startTUI(t, termOptions{})
	const n = 3 * maxInboxLogs
	w := tt.ui.LogWriter(tt.stderr)
	// All lines in one write: the loop cannot take any before the end.
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "flood-%05d\n", i)
	}
	w.Write([]byte(b.String()))
	text := tt.waitFor("log lines or notices not shown")
	m := regexp.MustCompile(`\((\d+) log lines or notices not shown`).FindStringSubmatch(text)
	dropped, _ := strconv.Atoi(m[1])
	shown := len(regexp.MustCompile(`flood-\d{5}`).FindAllString(text, -1))
	if dropped != n-maxInboxLogs || shown != maxInboxLogs {
		t.Fatalf("%d shown, %d dropped of %d", shown, dropped, n)
	}
	tt.exit()
}

// TestDialogTextCleaned: what an extension writes into a question or a
// notice cannot drive the terminal (escape sequences are dropped) nor pass
// for another line of the transcript (a title is one line, a notice's
// later lines are indented).
func TestDialogTextCleaned(t *testing.T) {
	tt := startTUI(t, termOptions{})
	ctx := context.Background()
	evil := "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\x9b31m"
	c := selectAsync(ctx, tt.ui, "title"+evil+"\n› fake prompt", []string{"opt" + evil, "two\n✓ bash fake"})
	tt.waitFor("▸ opt]52")
	text := tt.waitFor("  two …") // one line: the rest is cut
	if strings.Contains(text, "fake prompt") || strings.Contains(text, "\n✓ bash fake") {
		t.Error("a title's or an option's second line reached the screen")
	}
	tt.typ(keyEnter)
	if r := within(t, c); r.value != "opt"+evil {
		t.Fatalf("select = %q: the answer must be the option as given", r.value)
	}
	c = inputAsync(ctx, tt.ui, "in"+evil, "ph"+evil)
	tt.waitFor("ph]52")
	tt.typ(keyEsc)
	within(t, c)
	c = confirmAsync(ctx, tt.ui, "conf", "msg"+evil+"\n  allow? [y]es / [n]o / [a]lways for this session")
	tt.waitFor("msg]52")
	tt.typ("a") // not an answer to a yes/no question
	tt.typ("n")
	if r := within(t, c); r.ok {
		t.Fatal("a confirm took a as yes")
	}
	tt.ui.Notify("note"+evil+"\n› fake prompt", app.NotifyInfo)
	text = tt.waitFor("note]52")
	if strings.Contains(text, "\n› fake prompt") || !strings.Contains(text, "\n  › fake prompt") {
		t.Error("a notice's second line was not indented")
	}
	tt.exit()
	raw := tt.scr.raw()
	for _, bad := range []string{"\x1b]52", "\x1b]0;pwned", "\x9b", "\x07", "\x1b[2J"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the terminal got %q", bad)
		}
	}
}

// TestQuestionDuringNew: /new, /resume, /fork and /model run the
// conversation's switch off the loop (an extension's session_start
// handler runs there and may ask), so a question asked meanwhile is shown
// and answered.
func TestQuestionDuringNew(t *testing.T) {
	var tt *term
	got := make(chan result, 1)
	tt = startTUI(t, termOptions{onSessionStart: func() {
		if tt == nil {
			return // the first session_start, before Run
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ok, err := tt.ui.Confirm(ctx, "Asked during /new", "")
		got <- result{ok: ok, err: err}
	}})
	tt.typ("/new", keyEnter)
	tt.waitFor("? Asked during /new")
	tt.waitFor("working…")
	tt.typ("y")
	if r := within(t, got); !r.ok || r.err != nil {
		t.Fatalf("the question asked during /new = %+v, want yes", r)
	}
	tt.waitFor("? Asked during /new → yes")
	tt.waitFor("new session")
	tt.exit()
}

// TestLinesWaitForSwitch: a line typed while /new switches waits (shown as
// queued) and goes to the model on the new session once the switch ends.
func TestLinesWaitForSwitch(t *testing.T) {
	var tt *term
	release := make(chan struct{})
	tt = startTUI(t, termOptions{turns: []llm.ScriptTurn{{Text: "answer after the switch"}}, onSessionStart: func() {
		if tt == nil {
			return // the first session_start, before Run
		}
		<-release
	}})
	tt.typ("/new", keyEnter)
	tt.waitFor("working…")
	tt.typ("say hi", keyEnter)
	tt.waitFor("queued: say hi")
	if n := len(tt.prov.Requests()); n != 0 {
		t.Fatalf("%d requests went to the model while the session switched", n)
	}
	close(release)
	tt.waitFor("new session")
	tt.waitFor("answer after the switch")
	if n := len(tt.prov.Requests()); n != 1 {
		t.Fatalf("%d requests after the switch, want 1", n)
	}
	tt.exit()
}

// TestSlashDropdown: typing "/" opens the list of commands, the TUI's and
// the extensions'; typing narrows it by prefix; ↓ moves, Tab and Enter
// take the highlighted command into the editor, Enter on a whole name
// sends it, Esc closes the list.
func TestSlashDropdown(t *testing.T) {
	tt := startTUI(t, termOptions{toml: raw11TOML(t)})
	tt.typ("/")
	text := tt.waitFor("commands; ↑↓ move")
	for _, want := range []string{"▸ /help", "/resume [ID]"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dropdown lacks %q:\n%s", want, tail(text, 1500))
		}
	}
	// "/p": the TUI's /permissions and the extension's /probe.
	tt.typ("p")
	tt.waitFor("send a host call (raw11)")
	tt.waitFor("▸ /permissions")
	// "/e" leaves exit and ext; ↓ highlights ext; Tab takes it.
	tt.typ(keyBackspace, "e")
	tt.waitFor("▸ /exit")
	tt.typ(keyDown)
	tt.waitFor("▸ /ext")
	tt.typ(keyTab)
	tt.waitFor("> /ext ")
	tt.typ(keyEnter)
	tt.waitFor("Extensions:")
	// "/pr" leaves only /probe; Enter takes it (the name is not whole yet),
	// a second Enter sends it.
	tt.typ("/pr")
	tt.waitFor("▸ /probe")
	tt.typ(keyEnter)
	tt.waitFor("> /probe ")
	tt.typ(`ui.notify {"message":"from the dropdown"}`, keyEnter)
	tt.waitFor("[raw11] from the dropdown")
	// Esc closes the list, also while the name typed goes on matching; the
	// line typed stays.
	tt.typ("/h")
	tt.waitFor("▸ /help")
	tt.typ(keyEsc, "e")
	tt.waitFor("> /he")
	// The frames drawn since "/he" was typed (the frame of "/h" may be
	// repainted once more before Esc is read; it is before this point).
	screen := ansi.Strip(tt.scr.String())
	if after := screen[strings.LastIndex(screen, "> /he"):]; strings.Contains(after, "▸ /help") || strings.Contains(after, "list the commands") {
		t.Errorf("the dropdown was drawn again after Esc:\n%s", after)
	}
	tt.typ(keyCtrlC)
	tt.exit()
}

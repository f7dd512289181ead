//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/proc"
	"github.com/pi-go/pi/runtime/session"
)

// piProc runs the real pi binary (the test binary as `pi`) in dir with
// PI_HOME home.
func piProc(t *testing.T, dir, home string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	bin, err := exec.LookPath("pi")
	if err != nil {
		t.Skipf("no pi command on PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PI_HOME="+home, "HOME="+home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", session.EnvDir+"=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = dir
	return cmd, &out
}

// blockingCall is a bash call that writes "ready" to log, then waits until
// the file release exists (so nothing is left behind when the test ends).
func blockingCall(log, release string) string {
	// The loop also ends when the test's folder is gone (the log with
	// it): a pi killed mid-call leaves its command behind, and the
	// release file written at cleanup is removed with the folder at once.
	cmd := fmt.Sprintf(`echo " ready" >> %s; while [ ! -e %s ] && [ -e %s ]; do sleep 0.05; done; echo released`, log, release, log)
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

// sessionFiles lists the session files of dir's session folder.
func sessionFiles(t *testing.T, home, dir string) []string {
	t.Helper()
	infos, err := session.List(session.DirFor(session.DefaultDir(home), dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range infos {
		out = append(out, in.Path)
	}
	return out
}

// pi killed with SIGKILL while a tool call runs leaves a session whose
// last assistant message has an unanswered call; `pi -c` resumes it,
// writes an error result saying the run was killed, and sends the model
// the whole conversation with that result.
func TestKillMidToolCallThenContinue(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tmp := t.TempDir()
	log, release := filepath.Join(tmp, "log"), filepath.Join(tmp, "release")
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) })
	srv := openai.NewServer(t,
		openai.Reply{Text: "Running it.", ToolCalls: []openai.ToolCall{{ID: "call_long", Name: "bash", Arguments: blockingCall(log, release)}}},
		openai.Reply{Text: "It was interrupted; I will not repeat it."},
	)
	pi, out := piProc(t, dir, home, "-p", "run the long job", "--base-url", srv.URL, "--model", "m")
	if err := pi.Start(); err != nil {
		t.Fatal(err)
	}
	proc.WaitLog(t, log, " ready", 1, 30*time.Second)
	if err := pi.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = pi.Wait()
	files := sessionFiles(t, home, dir)
	if len(files) != 1 {
		t.Fatalf("session files %v; pi said:\n%s", files, out)
	}
	before, _ := session.Read(files[0], session.OpenOptions{})
	if len(session.Unanswered(before.Branch())) != 1 {
		t.Fatal("the killed run's session has no unanswered call: the test proves nothing")
	}

	cont, out2 := piProc(t, dir, home, "-c", "-p", "what happened?", "--base-url", srv.URL, "--model", "m")
	if err := cont.Run(); err != nil {
		t.Fatalf("pi -c: %v\n%s", err, out2)
	}
	if !strings.Contains(out2.String(), "tool call(s) ran; each got an error result") {
		t.Errorf("pi -c did not say it repaired the session:\n%s", out2)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[1]["messages"].([]any)
	var roles []string
	var toolText string
	for _, m := range msgs[1:] {
		mm := m.(map[string]any)
		roles = append(roles, mm["role"].(string))
		if mm["role"] == "tool" {
			toolText, _ = mm["content"].(string)
			if mm["tool_call_id"] != "call_long" {
				t.Errorf("the result answers %v", mm["tool_call_id"])
			}
		}
	}
	if strings.Join(roles, ",") != "user,assistant,tool,user" || !strings.Contains(toolText, "interrupted or killed") {
		t.Fatalf("sent %v, tool result %q", roles, toolText)
	}
	after, err := session.Read(files[0], session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(session.Unanswered(after.Branch())) != 0 || len(after.Entries()) != len(before.Entries())+3 {
		t.Fatalf("the session was not repaired and continued: %d → %d entries", len(before.Entries()), len(after.Entries()))
	}
}

// Two pi processes on one session: the second is refused with a message
// that suggests --fork (and exits 1), --fork works while the first still
// runs, and the first finishes its session intact.
func TestTwoProcessesOnOneSession(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tmp := t.TempDir()
	log, release := filepath.Join(tmp, "log"), filepath.Join(tmp, "release")
	t.Cleanup(func() { os.WriteFile(release, nil, 0o600) })
	file := filepath.Join(tmp, "shared.jsonl")
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{ID: "c1", Name: "bash", Arguments: blockingCall(log, release)}}},
		openai.Reply{Text: "fork answer"},
		openai.Reply{Text: "first done"},
	)
	first, out1 := piProc(t, dir, home, "--session", file, "-p", "first", "--base-url", srv.URL, "--model", "m")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Process.Kill() })
	proc.WaitLog(t, log, " ready", 1, 30*time.Second)

	for _, args := range [][]string{{"--session", file}, {"-c", "--session-dir", tmp}} {
		second, out2 := piProc(t, dir, home, append(args, "-p", "second", "--base-url", srv.URL, "--model", "m")...)
		err := second.Run()
		var ee *exec.ExitError
		if !errAs(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("second pi %v: %v\n%s", args, err, out2)
		}
		if !strings.Contains(out2.String(), "in use by another pi process") || !strings.Contains(out2.String(), "--fork "+file) {
			t.Errorf("second pi %v says:\n%s", args, out2)
		}
	}
	fork, out3 := piProc(t, dir, home, "--fork", file, "--session-dir", filepath.Join(tmp, "forks"), "-p", "forked", "--base-url", srv.URL, "--model", "m")
	if err := fork.Run(); err != nil {
		t.Fatalf("--fork: %v\n%s", err, out3)
	}
	os.WriteFile(release, nil, 0o600)
	if err := waitExit(t, first, 30*time.Second); err != nil {
		t.Fatalf("first pi: %v\n%s", err, out1)
	}
	s, err := session.Read(file, session.OpenOptions{})
	if err != nil || len(s.Warnings()) != 0 {
		t.Fatalf("the shared session: %v %v", err, s.Warnings())
	}
	var texts []string
	for _, e := range s.Entries() {
		if m, err := e.Message(); err == nil {
			for _, b := range m.Content {
				texts = append(texts, m.Role+":"+b.Type+":"+b.Text)
			}
		}
	}
	if got := strings.Join(texts, "|"); !strings.HasPrefix(got, "user:text:first|assistant:toolCall:|toolResult:text:released") ||
		!strings.HasSuffix(got, "assistant:text:first done") || strings.Contains(got, "second") || strings.Contains(got, "forked") {
		t.Fatalf("the first session holds %s", got)
	}
	forks, _ := session.List(filepath.Join(tmp, "forks"))
	if len(forks) != 1 || forks[0].ParentSession != file {
		t.Fatalf("forks %+v", forks)
	}
}

func errAs(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// pi sessions list, -r without a terminal (the list and exit 2), the
// header first in --mode json, and flags that contradict each other.
func TestSessionsCommands(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	srv := openai.NewServer(t, openai.Reply{Text: "one"}, openai.Reply{Text: "two"})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--mode", "json", "-p", "remember 42", "--base-url", srv.URL, "--model", "m", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	first := strings.SplitN(stdout.String(), "\n", 2)[0]
	var h session.Header
	if err := json.Unmarshal([]byte(first), &h); err != nil || h.Type != "session" || h.Version != 3 || h.Cwd != dir {
		t.Fatalf("first line %s", first)
	}
	files := sessionFiles(t, home, dir)
	if len(files) != 1 || !strings.Contains(files[0], h.ID) {
		t.Fatalf("files %v, header id %s", files, h.ID)
	}

	stdout.Reset()
	if code := run([]string{"sessions", "list", "--json", "--cwd", dir}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("sessions list: %d %s", code, stderr.String())
	}
	var infos []session.Info
	if err := json.Unmarshal(stdout.Bytes(), &infos); err != nil || len(infos) != 1 || infos[0].ID != h.ID || infos[0].FirstMessage != "remember 42" || infos[0].MessageCount != 2 {
		t.Fatalf("list %s (%v)", stdout.String(), err)
	}
	stdout.Reset()
	run([]string{"sessions", "list", "--cwd", dir}, nil, &stdout, &stderr)
	if !strings.Contains(stdout.String(), h.ID[:13]) || !strings.Contains(stdout.String(), "remember 42") {
		t.Fatalf("list text %s", stdout.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-r", "-p", "x", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
		t.Fatalf("-r without a terminal: exit %d", code)
	}
	if !strings.Contains(stderr.String(), h.ID[:13]) || !strings.Contains(stderr.String(), "--session ID-PREFIX") {
		t.Fatalf("-r says %s", stderr.String())
	}

	stderr.Reset()
	if code := run([]string{"--session", h.ID[:23], "-p", "what number?", "--base-url", srv.URL, "--model", "m", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("--session ID-PREFIX: %d %s", code, stderr.String())
	}
	if !strings.Contains(string(srv.RawRequests()[1]), "remember 42") {
		t.Fatal("--session did not send the earlier conversation")
	}
	for _, bad := range [][]string{{"-c", "--fork", "x"}, {"--no-session", "-c"}, {"-r", "--session", "x"}} {
		stderr.Reset()
		if code := run(append(bad, "-p", "x"), strings.NewReader(""), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "only one of") && !strings.Contains(stderr.String(), "cannot be combined") {
			t.Errorf("%v: exit %d, %s", bad, code, stderr.String())
		}
	}
}

// /compact in interactive line mode compacts the session with the
// instructions given, and the next prompt goes on from the summary.
func TestInteractiveCompact(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	// Keeping 1 token cuts at the last answer: the prompt before it is
	// summarized as the start of a split turn.
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte("[compaction]\nkeep_recent_tokens = 1\n"), 0o644)
	srv := openai.NewServer(t,
		openai.Reply{Text: "hi there"},
		openai.Reply{Text: "THE SUMMARY"},
		openai.Reply{Text: "after"},
	)
	var stdout, stderr bytes.Buffer
	in := strings.NewReader("hello\n/compact keep the greeting\nnext\n")
	if code := run([]string{"--interactive", "--base-url", srv.URL, "--model", "m", "--cwd", dir}, in, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Compacted:") {
		t.Fatalf("stdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	reqs := srv.RawRequests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[1]), "Focus especially on: keep the greeting") {
		t.Fatalf("%d requests; the summarizing one: %.400s", len(reqs), reqs[1])
	}
	if !strings.Contains(string(reqs[2]), "THE SUMMARY") || !strings.Contains(string(reqs[2]), `"next"`) {
		t.Fatalf("the prompt after /compact: %s", reqs[2])
	}
	files := sessionFiles(t, home, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), `"type":"compaction"`) {
		t.Fatal("no compaction entry in the session file")
	}
}

// /compact with the default keep_recent_tokens on a short conversation
// compacts as the reference does: nothing is summarized, the whole
// conversation is kept after the summary. Before any conversation, and
// right after a compaction, it is refused in the reference's words.
func TestInteractiveCompactShortConversation(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	srv := openai.NewServer(t,
		openai.Reply{Text: "hi there", Usage: &openai.Usage{PromptTokens: 40, CompletionTokens: 2, TotalTokens: 42}},
		openai.Reply{Text: "THE SUMMARY"},
		openai.Reply{Text: "after"},
	)
	var stdout, stderr bytes.Buffer
	in := strings.NewReader("/compact\nhello\n/compact\n/compact\nnext\n")
	if code := run([]string{"--interactive", "--base-url", srv.URL, "--model", "m", "--cwd", dir}, in, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"pi: compact: Nothing to compact (session too small)\n", "pi: compact: Already compacted\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "Compacted:") {
		t.Fatalf("stdout %s\nstderr %s", stdout.String(), stderr.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	summarizing, _ := json.Marshal(reqs[1]["messages"])
	if !strings.Contains(string(summarizing), `\u003cconversation\u003e\n\n\u003c/conversation\u003e`) && !strings.Contains(string(summarizing), `<conversation>\n\n</conversation>`) {
		t.Fatalf("the summarizing request does not get an empty conversation: %s", summarizing)
	}
	next, _ := json.Marshal(reqs[2]["messages"])
	for _, want := range []string{"THE SUMMARY", `"hello"`, `"hi there"`, `"next"`} {
		if !strings.Contains(string(next), want) {
			t.Errorf("the prompt after /compact lacks %s: %s", want, next)
		}
	}
	files := sessionFiles(t, home, dir)
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	// Everything is kept: from the first entry on (the model change
	// written before the first prompt; the cut moves back over it).
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var first, compaction map[string]any
	for i, line := range lines[1:] {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = e
		}
		if e["type"] == "compaction" {
			compaction = e
		}
	}
	if compaction == nil || first["type"] != "model_change" || compaction["firstKeptEntryId"] != first["id"] || compaction["tokensBefore"] != float64(42) {
		t.Fatalf("compaction entry %v, first entry %v", compaction, first)
	}
}

// A pi -p run whose model request fails keeps its session, as the
// reference does: the prompt, the failed answer (stopReason error, with the
// error) and the pi.dropped-prompt entry that takes the leaf back before
// the prompt; the run exits 1 with the error once on stderr.
func TestFailedPrintRunKeepsItsSession(t *testing.T) {
	home := isolate(t)
	t.Setenv("OPENAI_API_KEY", "sk-wrong-0123456789")
	dir := t.TempDir()
	srv := openai.NewServer(t, openai.Reply{Status: 401, ErrorMessage: "Incorrect API key provided"})
	var stdout, stderr bytes.Buffer
	code := run([]string{"-p", "hello there", "--base-url", srv.URL, "--model", "m", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d\n%s", code, exitError, stderr.String())
	}
	if n := strings.Count(stderr.String(), "model request failed:"); n != 1 || !strings.Contains(stderr.String(), "rejected by "+srv.URL) {
		t.Fatalf("stderr (the error %d times):\n%s", n, stderr.String())
	}
	files := sessionFiles(t, home, dir)
	if len(files) != 1 {
		t.Fatalf("session files %v, want the failed run's one", files)
	}
	s, err := session.Read(files[0], session.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range s.Entries() {
		k := e.Type
		if m, err := e.Message(); err == nil {
			k += ":" + m.Role
			if m.Role == session.RoleAssistant && (m.StopReason != "error" || !strings.Contains(m.ErrorMessage, "401")) {
				t.Errorf("failed answer: stopReason %q, errorMessage %q", m.StopReason, m.ErrorMessage)
			}
		}
		if e.Type == session.TypeCustom {
			k += ":" + e.CustomType
		}
		kinds = append(kinds, k)
	}
	want := []string{"model_change", "thinking_level_change", "message:user", "message:assistant", "custom:pi.dropped-prompt"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("entries %v, want %v", kinds, want)
	}
}

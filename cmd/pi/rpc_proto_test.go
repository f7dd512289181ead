package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/proc"
)

// rpcPeer is a client of an in-process `pi --mode rpc` (run with pipes).
type rpcPeer struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]any
	raw   chan string
	// exited is closed when run returned, with its exit code in code.
	exited chan struct{}
	code   int
}

// startRPC runs pi --mode rpc in-process with args and PI_HOME home ("":
// an empty one) and returns its peer.
func startRPC(t *testing.T, home string, args ...string) *rpcPeer {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	t.Setenv("PI_HOME", home)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("PI_TRUST", "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &rpcPeer{t: t, in: inW, lines: make(chan map[string]any, 1000), raw: make(chan string, 1000), exited: make(chan struct{})}
	var stderr strings.Builder
	go func() {
		p.code = run(append([]string{"--mode", "rpc"}, args...), inR, outW, &lockedWriter{w: &stderr})
		outW.Close()
		close(p.exited)
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				p.raw <- "NOT JSON: " + sc.Text()
				continue
			}
			p.raw <- sc.Text()
			p.lines <- m
		}
		close(p.lines)
		close(p.raw)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			t.Errorf("pi --mode rpc did not exit after its input ended\nstderr: %s", stderr.String())
		}
	})
	return p
}

// lockedWriter serializes writes (stderr of the in-process pi).
type lockedWriter struct {
	mu chan struct{}
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	if l.mu == nil {
		l.mu = make(chan struct{}, 1)
	}
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.w.Write(b)
}

// send writes one line as is.
func (p *rpcPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// expect returns the first line (skipping others) for which match is true.
func (p *rpcPeer) expect(what string, match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("output ended while waiting for %s", what)
			}
			if match(m) {
				return m
			}
		case <-timeout:
			p.t.Fatalf("no %s within 30s", what)
		}
	}
}

// response waits for the response with id.
func (p *rpcPeer) response(id string) map[string]any {
	p.t.Helper()
	return p.expect("response "+id, func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}

func isType(t string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == t }
}

// Malformed input never ends the stream: each bad line gets an error
// response (command "parse", or the command's own), and the next command
// is answered. Lines split on LF only: a U+2028 inside a string and a
// CRLF ending are fine.
func TestRPCMalformedInput(t *testing.T) {
	p := startRPC(t, "", "--no-session", "--script", writeScript(t, `{"turns":[{"text":"ok"}]}`))
	p.expect("session_start", isType("session_start"))
	for _, bad := range []string{
		`not json`, `{"type":"get_state"`, `42`, `[]`, `"get_state"`, `null`, `{"type":5}`,
		`{"id":{"x":1},"type":"get_state","extra":`, "\x00\xff\xfe", `{"type":"prompt","message":7,"id":"p"}`,
	} {
		p.send(bad)
		r := p.expect("error for "+bad, isType("response"))
		if r["success"] != false || r["error"] == "" {
			t.Errorf("line %q: %v", bad, r)
		}
	}
	p.send(`{}`)
	if r := p.expect("no type", isType("response")); r["success"] != false || !strings.Contains(r["error"].(string), `no "type"`) {
		t.Errorf("{}: %v", r)
	}
	p.send(`{"id":"u","type":"no_such_command"}`)
	if r := p.response("u"); r["success"] != false || r["error"] != "Unknown command: no_such_command" || r["command"] != "no_such_command" {
		t.Errorf("unknown command: %v", r)
	}
	// Numbers are ids too, echoed as they came.
	p.send(`{"id":7,"type":"get_state"}`)
	p.expect("numeric id", func(m map[string]any) bool { return m["type"] == "response" && m["id"] == 7.0 })
	// Responses to dialogs nobody asked for are dropped silently.
	p.send(`{"type":"extension_ui_response","id":"nobody","confirmed":true}`)
	p.send(`{"type":"extension_ui_response","id":5}`)
	// Blank lines are skipped; CRLF is accepted; U+2028 stays inside.
	p.send("")
	p.send(`{"id":"crlf","type":"get_state"}` + "\r")
	p.response("crlf")
	p.send(`{"id":"ls","type":"prompt","message":"a` + "\u2028" + `b"}`)
	p.response("ls")
	end := p.expect("agent_end", isType("agent_end"))
	if end["stopReason"] != "stop" {
		t.Fatalf("agent_end %v", end)
	}
	p.send(`{"id":"m","type":"get_messages"}`)
	msgs := p.response("m")["data"].(map[string]any)["messages"].([]any)
	if txt := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; txt != "a\u2028b" {
		t.Fatalf("prompt text %q", txt)
	}
}

func writeScript(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A prompt while the agent works is refused unless it says how to queue
// it; steer and follow_up queue; the queued messages reach the model.
func TestRPCBusyAndQueues(t *testing.T) {
	dir := t.TempDir()
	sl := filepath.Join(dir, "gate")
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: fmt.Sprintf(`{"command":"while [ ! -e %s ]; do sleep 0.01; done"}`, sl)}}},
		openai.Reply{Text: "steered"},
		openai.Reply{Text: "followed"},
		openai.Reply{Text: "right away"},
	)
	p := startRPC(t, "", "--no-session", "--base-url", srv.URL, "--model", "m", "--cwd", dir)
	p.send(`{"id":"1","type":"prompt","message":"wait for the gate"}`)
	p.response("1")
	p.expect("tool start", isType("tool_execution_start"))
	p.send(`{"id":"2","type":"prompt","message":"again"}`)
	if r := p.response("2"); r["success"] != false || !strings.Contains(r["error"].(string), "streamingBehavior") {
		t.Fatalf("busy prompt: %v", r)
	}
	p.send(`{"id":"3","type":"prompt","message":"steer me","streamingBehavior":"steer"}`)
	p.response("3")
	p.send(`{"id":"4","type":"follow_up","message":"then this"}`)
	p.response("4")
	p.send(`{"id":"5","type":"get_state"}`)
	st := p.response("5")["data"].(map[string]any)
	if st["isStreaming"] != true || st["pendingMessageCount"] != 2.0 {
		t.Fatalf("state while busy: %v", st)
	}
	if err := os.WriteFile(sl, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	end := p.expect("agent_end", isType("agent_end"))
	if end["stopReason"] != "stop" {
		t.Fatalf("agent_end %v", end)
	}
	// A client that saw agent_end may prompt at once (RpcClient's
	// waitForIdle does): the prompt is accepted, not "already processing".
	p.send(`{"id":"6","type":"prompt","message":"next"}`)
	if r := p.response("6"); r["success"] != true {
		t.Fatalf("prompt right after agent_end: %v", r)
	}
	p.expect("agent_end 2", isType("agent_end"))
	reqs := srv.Requests()
	if len(reqs) != 4 || !strings.HasSuffix(requestText(reqs[1]), "steer me") || !strings.HasSuffix(requestText(reqs[2]), "then this") {
		t.Fatalf("%d requests; second ends %q", len(reqs), requestText(reqs[len(reqs)-1]))
	}
}

// A dialog can be cancelled by the client; one that is pending when the
// input ends is declined, and pi exits after the run.
func TestRPCDialogs(t *testing.T) {
	home := t.TempDir()
	toml := "[permissions]\ndefault = \"allow\"\n\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\n"
	if err := os.WriteFile(filepath.Join(home, "pi.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	touch := openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"touch made"}`}}}
	srv := openai.NewServer(t, touch, openai.Reply{Text: "skipped"}, touch, openai.Reply{Text: "skipped again"})
	p := startRPC(t, home, "--no-session", "--base-url", srv.URL, "--model", "m", "--cwd", dir)
	p.send(`{"id":"1","type":"prompt","message":"make it"}`)
	req := p.expect("confirm", isType("extension_ui_request"))
	if req["method"] != "confirm" || req["title"] != "Allow bash?" || !strings.Contains(req["message"].(string), "$ touch made") {
		t.Fatalf("request %v", req)
	}
	p.send(fmt.Sprintf(`{"type":"extension_ui_response","id":%q,"cancelled":true}`, req["id"]))
	end := p.expect("tool end", isType("tool_execution_end"))
	if end["isError"] != true {
		t.Fatalf("a cancelled confirm ran the call: %v", end)
	}
	p.expect("agent_end", isType("agent_end"))
	// A second confirm, then the input ends while it waits.
	p.send(`{"id":"2","type":"prompt","message":"make it now"}`)
	p.expect("confirm 2", isType("extension_ui_request"))
	p.in.Close()
	p.expect("agent_end after EOF", isType("agent_end"))
	select {
	case <-p.exited:
		if p.code != 0 {
			t.Fatalf("exit %d after EOF", p.code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pi did not exit after its input ended")
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Fatal("a declined call ran")
	}
}

// Everything on stdout is a JSON line; the API key never appears there,
// even when the client sends it.
func TestRPCOutputRedacted(t *testing.T) {
	const key = "sk-rpc-secret-key-0123456789"
	srv := openai.NewServer(t, openai.Reply{Text: "you said " + key})
	p := startRPC(t, "", "--no-session", "--base-url", srv.URL, "--model", "m", "--api-key", key)
	p.send(`{"id":"1","type":"prompt","message":"remember ` + key + `"}`)
	p.expect("agent_end", isType("agent_end"))
	p.send(`{"id":"2","type":"get_messages"}`)
	p.response("2")
	p.send(`{"id":"3","type":"bash","command":"echo ` + key + `"}`)
	p.response("3")
	// Output that looks like protocol lines stays inside a JSON string.
	fake := "printf '\\n{\"type\":\"extension_ui_request\",\"id\":\"x\",\"method\":\"confirm\"}\\n{\"type\":\"response\",\"id\":\"5\"}\\n'"
	b, _ := json.Marshal(map[string]string{"id": "4", "type": "bash", "command": fake})
	p.send(string(b))
	if out := p.response("4")["data"].(map[string]any)["output"].(string); !strings.Contains(out, `{"type":"extension_ui_request","id":"x"`) {
		t.Fatalf("the fake lines were not printed: %q", out)
	}
	p.in.Close()
	<-p.exited
	for line := range p.raw {
		if strings.HasPrefix(line, "NOT JSON") || strings.Contains(line, key) || strings.HasPrefix(line, `{"type":"extension_ui_request"`) || strings.Contains(line, `"id":"5"`) && strings.HasPrefix(line, `{"type":"response"`) {
			t.Fatalf("stdout line %q", line)
		}
	}
}

// The real binary: SIGTERM ends a run and pi exits 143 at once; bash is
// aborted by abort_bash.
func TestRPCSignalAndAbortBash(t *testing.T) {
	bin := realPi(t)
	sl := proc.Sleeper(t)
	srv := openai.NewServer(t, openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: fmt.Sprintf(`{"command":"%s 60 & echo started; %s 60"}`, sl, sl)}}})
	cmd := exec.Command(bin, "--mode", "rpc", "--no-session", "--base-url", srv.URL, "--model", "m")
	cmd.Env = append(os.Environ(), "PI_HOME="+t.TempDir(), "OPENAI_API_KEY=")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Every stdout line, in order; wait finds a line among all read so
	// far (the abort_bash response and the bash command's own response may
	// come in either order) and gives up after a minute instead of
	// blocking the test binary.
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	wait := func(substr string) {
		t.Helper()
		for _, l := range seen {
			if strings.Contains(l, substr) {
				return
			}
		}
		deadline := time.After(time.Minute)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("no line with %q: pi's output ended", substr)
				}
				seen = append(seen, l)
				if strings.Contains(l, substr) {
					return
				}
			case <-deadline:
				t.Fatalf("no line with %q within a minute", substr)
			}
		}
	}
	io.WriteString(in, `{"id":"b","type":"bash","command":"echo go; `+sl+` 60"}`+"\n")
	io.WriteString(in, `{"id":"a","type":"abort_bash"}`+"\n")
	wait(`"id":"a"`)
	wait(`"cancelled":true`)
	io.WriteString(in, `{"id":"p","type":"prompt","message":"sleep"}`+"\n")
	wait(`"text":"started\n"`) // the sleepers run
	// "started" can be printed before the background sleeper has exec'd
	// under its name: wait for it in /proc (bounded).
	for deadline := time.Now().Add(10 * time.Second); len(proc.Alive(filepath.Base(sl))) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no sleeper runs: the test would prove nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v to exit after SIGTERM", d)
	}
	// Every process the run's bash call started is gone with pi.
	if pids := proc.Alive(filepath.Base(sl)); len(pids) > 0 {
		t.Fatalf("processes of the aborted run outlived pi: %v", pids)
	}
}

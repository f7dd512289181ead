package langtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
)

// guest12 is built in two forms: full (every 1.2 declaration) and plain
// (tools and the 1.0 hooks only, for tests that must pass on a host with
// only part of 1.2).
var langs12 = []struct {
	name  string
	build func(t *testing.T, plain bool) string
}{{"c", buildC12}, {"rust", buildRust12}}

func forEachLang12(t *testing.T, plain bool, fn func(t *testing.T, l, wasm string)) {
	for _, l := range langs12 {
		t.Run(l.name, func(t *testing.T) { fn(t, l.name, l.build(t, plain)) })
	}
}

func buildC12(t *testing.T, plain bool) string {
	name := map[bool]string{false: "c12", true: "c12plain"}[plain]
	return buildOnce(t, name, func(out string) (string, error) {
		if msg := plugin.Toolchain("c"); msg != "" {
			return "C guest not tested: " + msg, nil
		}
		argv := []string{plugin.CC(), "--target=wasm32-wasi", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
			"-mexec-model=reactor", "-Wl,--strip-debug", "-I", "sdk/c", "-o", out, "sdk/langtest/testdata/guest12.c"}
		if plain {
			argv = append(argv, "-DG12_PLAIN")
		}
		if err := plugin.CompileGuest(t, out, []string{"sdk/langtest/testdata", "sdk/c"}, argv...); err != nil {
			return "", fmt.Errorf("build the C guest12: %v", err)
		}
		return "", nil
	})
}

func buildRust12(t *testing.T, plain bool) string {
	name := map[bool]string{false: "rust12", true: "rust12plain"}[plain]
	return buildOnce(t, name, func(out string) (string, error) {
		rc, target, ok := plugin.RustWasm()
		if !ok {
			return "Rust guest not tested: " + plugin.Toolchain("rust"), nil
		}
		argv := []string{rc, "--edition", "2021", "--crate-type", "cdylib", "--target", target, "-O", "-C", "strip=debuginfo",
			"-D", "warnings", "-o", out, "sdk/langtest/testdata/rust12/lib.rs"}
		if plain {
			argv = append(argv, "--cfg", "g12_plain")
		}
		if err := plugin.CompileGuest(t, out, []string{"sdk/langtest/testdata", "sdk/rust"}, argv...); err != nil {
			return "", fmt.Errorf("build the Rust guest12 with %s: %v", rc, err)
		}
		return "", nil
	})
}

// newProject12 is newProject for guest12 (its pi.toml entry named so).
func newProject12(t *testing.T, wasm string, e entry) *project {
	p := newProject(t, wasm, e)
	b, err := os.ReadFile(filepath.Join(p.dir, "pi.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p.write("pi.toml", strings.Replace(string(b), `name = "guest11"`, `name = "guest12"`, 1))
	return p
}

// TestWholeResults: pi.h's pi_result and pi.rs's ToolOutput reach the
// host whole — text and image blocks, details, isError, terminate — and
// progress from pi_emit / ToolContext::emit becomes the json stream's
// tool_execution_update events; terminate ends the run.
func TestWholeResults(t *testing.T) {
	forEachLang12(t, true, func(t *testing.T, l, wasm string) {
		p := newProject12(t, wasm, entry{})
		in := `{"text":"hi <&> \"q\"","image":"PNGDATA","mime":"image/png","details":{"a":[1,true,null],"s":"\u2028"},"error":true}`
		out, stderr, code := p.run(in, "tool", "call", "whole", "-")
		want := `{"content":[{"type":"text","text":"hi \u003c\u0026\u003e \"q\""},` +
			`{"type":"image","data":"` + base64.StdEncoding.EncodeToString([]byte("PNGDATA")) + `","mimeType":"image/png"},` +
			`{"type":"text","text":"call call_1 in ` + p.dir + `"}],"details":{"a":[1,true,null],"s":"\u2028"},"isError":true}`
		if code != 1 || strings.TrimSpace(out) != want {
			t.Errorf("whole: exit %d\n got %s\nwant %s\n%s", code, out, want, stderr)
		}

		// Progress and terminate in a run: the model's second turn is never asked for.
		out, stderr, code = p.run("", "--mode", "json", "-p", "go", "--script",
			p.script(`[{"toolCalls":[{"name":"whole","arguments":{"text":"done","progress":2,"terminate":true}}]},{"text":"SHOULD NOT RUN"}]`))
		if code != 0 || strings.Contains(out, "SHOULD NOT RUN") {
			t.Fatalf("json run: exit %d\n%s%s", code, out, stderr)
		}
		var updates []string
		for _, line := range strings.Split(out, "\n") {
			var e struct {
				Type          string
				PartialResult struct {
					Content []struct{ Text string }
					Details struct{ Step int }
				}
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Type == "tool_execution_update" && len(e.PartialResult.Content) == 1 {
				updates = append(updates, fmt.Sprintf("%s/%d", e.PartialResult.Content[0].Text, e.PartialResult.Details.Step))
			}
		}
		if strings.Join(updates, ",") != "step 1 of 2/1,step 2 of 2/2" {
			t.Errorf("updates %q\n%s", updates, out)
		}
	})
}

// TestTypedHooks: the typed tool_result, bash_spawn and event hooks of
// pi.h and pi.rs, through the real host: a read's result is patched
// (content, details), bash gets the command and environment the hook
// set, and events reach the event function.
func TestTypedHooks(t *testing.T) {
	forEachLang12(t, true, func(t *testing.T, l, wasm string) {
		p := newProject12(t, wasm, entry{})
		p.write("note.txt", "NOTE BODY\n")
		out, stderr, code := p.run("", "--mode", "json", "-p", "go", "--script", p.script(
			`[{"toolCalls":[{"name":"read","arguments":{"path":"note.txt"}}]},`+
				`{"toolCalls":[{"name":"bash","arguments":{"command":"sh -c 'echo \"[$GUEST12-$GUEST12_ENV]\"'"}}]},`+
				`{"toolCalls":[{"name":"events","arguments":{}}]},{"text":"done"}]`))
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, stderr)
		}
		var ends []string
		var readDetails string
		for _, line := range strings.Split(out, "\n") {
			var e struct {
				Type     string
				ToolName string
				Result   struct {
					Content []struct{ Text string }
					Details json.RawMessage
				}
			}
			if json.Unmarshal([]byte(line), &e) != nil || e.Type != "tool_execution_end" {
				continue
			}
			var texts []string
			for _, c := range e.Result.Content {
				texts = append(texts, c.Text)
			}
			ends = append(ends, strings.Join(texts, "|"))
			if e.ToolName == "read" {
				readDetails = string(e.Result.Details)
			}
		}
		if len(ends) != 3 {
			t.Fatalf("tool ends %q\n%s", ends, out)
		}
		if !strings.Contains(ends[0], "NOTE BODY") || !strings.HasSuffix(ends[0], "|[guest12 saw read]") || readDetails != `{"guest12":true}` {
			t.Errorf("read result %q, details %s", ends[0], readDetails)
		}
		if !strings.Contains(ends[1], "[1-yes]") {
			t.Errorf("bash result %q", ends[1])
		}
		if ends[2] == "0" || ends[2] == "" {
			t.Errorf("events seen: %q", ends[2])
		}
	})
}

// TestGuest12Answers: every 1.2 guest method and the whole-result and
// typed-hook answers of pi.h and pi.rs, byte for byte, driven through the
// exports as a host does; and the 1.2 parts of the declaration go only to
// a 1.2 host.
func TestGuest12Answers(t *testing.T) {
	const init12 = `{"method":"init","params":{"abi":1,"abiMinor":2,"tui":true,"host":{"name":"pi","version":"1.2"},"cwd":"/p","config":{},"grants":{},"projectRoot":"/p","trusted":true,"mode":"interactive","hasUI":true}}`
	forEachLang12(t, false, func(t *testing.T, l, wasm string) {
		// A 1.1 host gets no 1.2 part, and a warning in the log.
		g := instantiate(t, wasm)
		res, msg := g.call(init11)
		if msg != "" {
			t.Fatal(msg)
		}
		for _, k := range []string{"flags", "shortcuts", "messageRenderers", "channels", "render", "context", "user_bash", "session_before", "llm", "model"} {
			if strings.Contains(string(res), `"`+k) {
				t.Errorf("init to a 1.1 host has %q: %s", k, res)
			}
		}
		if !strings.Contains(string(res), `"hooks":["tool_result","bash_spawn","event"]`) || !strings.Contains(string(res), `"wants":{}`) {
			t.Errorf("init to a 1.1 host = %s", res)
		}
		if len(g.logs) != 1 || !strings.Contains(g.logs[0], "the host speaks ABI 1.1: those parts stay unused") {
			t.Errorf("logs %q", g.logs)
		}

		g = instantiate(t, wasm)
		res, msg = g.call(init12)
		if msg != "" {
			t.Fatal(msg)
		}
		for _, k := range []string{`"render":true`, `"flags":[{"name":"g12-mode"`, `"shortcuts":[{"key":"ctrl+g"`, `"messageRenderers":["guest12"]`,
			`"channels":["guest12:news"]`, `"session_before_fork"]`, `"wants":{"llm":true,"model":true}`, `"commands":[{"name":"c12"`} {
			if !strings.Contains(string(res), k) {
				t.Errorf("init to a 1.2 host lacks %s: %s", k, res)
			}
		}
		if len(g.logs) != 0 {
			t.Errorf("logs %q", g.logs)
		}
		for _, tc := range []struct{ req, want string }{
			{`{"method":"tool.execute","params":{"toolName":"whole","toolCallId":"c1","input":{"text":"T","image":"AB","details":{"d":1},"terminate":true,"progress":1},"cwd":"/w"}}`,
				`{"content":[{"type":"text","text":"T"},{"type":"image","data":"QUI=","mimeType":"image/png"},{"type":"text","text":"call c1 in /w"}],"details":{"d":1},"terminate":true}`},
			{`{"method":"hook.tool_result","params":{"toolName":"read","toolCallId":"c","input":{},"content":[{"type":"text","text":"x"}],"details":null,"isError":true}}`,
				`{"content":[{"type":"text","text":"x"},{"type":"text","text":"[guest12 saw read]"}],"details":{"guest12":true},"isError":false}`},
			{`{"method":"hook.tool_result","params":{"toolName":"ls","toolCallId":"c","input":{},"content":[],"details":null,"isError":false}}`, `{}`},
			{`{"method":"hook.bash_spawn","params":{"command":"ls","cwd":"/p","env":{}}}`, `{"command":"GUEST12=1 ls","env":{"GUEST12_ENV":"yes"}}`},
			{`{"method":"event","params":{"type":"turn_start"}}`, `{}`},
			{`{"method":"component.render","params":{"id":"c7","width":40}}`, `{"lines":["component c7 width 40",[{"text":"keys: ","style":"muted"},{"text":"","style":"accent"}]]}`},
			{`{"method":"component.input","params":{"id":"c7","key":"paste","text":"<v>"}}`, `{"consumed":true,"rerender":true}`},
			{`{"method":"component.input","params":{"id":"c7","key":"enter"}}`, `{}`},
			{`{"method":"component.render","params":{"id":"c7","width":9,"editor":{"text":"ab","cursor":1}}}`, `{"lines":["component c7 width 9",[{"text":"keys: ","style":"muted"},{"text":"paste\u003cv\u003e","style":"accent"}],"editor ab cursor 1"]}`},
			{`{"method":"component.input","params":{"id":"c7","key":"q"}}`, `{"consumed":true,"close":true}`},
			{`{"method":"tool.render","params":{"toolName":"whole","toolCallId":"c","args":{},"isPartial":true,"expanded":false,"width":80}}`, `{"lines":["guest12 draws whole partial=yes"]}`},
			{`{"method":"message.render","params":{"customType":"guest12","content":"x","details":null,"expanded":false,"width":80}}`, `{"lines":[[{"text":"guest12 message ","style":"bold"},{"text":"guest12","style":"success"}]]}`},
			{`{"method":"hook.context","params":{"messages":[{"role":"user","content":"hi"}]}}`, `{"messages":[{"role":"user","content":"hi"},{"role":"user","content":[{"type":"text","text":"GUEST12 CONTEXT"}]}]}`},
			{`{"method":"hook.user_bash","params":{"command":"blocked rm","cwd":"/p"}}`, `{"block":true,"reason":"guest12 blocks this"}`},
			{`{"method":"hook.user_bash","params":{"command":"fake","cwd":"/p"}}`, `{"result":{"output":"fake output\n","exitCode":3}}`},
			{`{"method":"hook.user_bash","params":{"command":"swap ls -l","cwd":"/p"}}`, `{"command":"ls -l"}`},
			{`{"method":"hook.user_bash","params":{"command":"ls","cwd":"/p"}}`, `{}`},
			{`{"method":"hook.session_before_compact","params":{"reason":"manual","tokensBefore":9,"firstKeptEntryId":"a","messages":[]}}`, `{"compaction":{"summary":"GUEST12 SUMMARY","details":{"by":"guest12"}}}`},
			{`{"method":"hook.session_before_fork","params":{"entryId":"a"}}`, `{"cancel":true,"reason":"guest12 keeps this session"}`},
			{`{"method":"hook.session_before_switch","params":{"reason":"new"}}`, `{}`},
			{`{"method":"timer.fire","params":{"id":"t1"}}`, `{}`},
			{`{"method":"watch.fire","params":{"id":"w1","paths":["/p/a"]}}`, `{}`},
			{`{"method":"bus.message","params":{"channel":"guest12:news","data":{"x":1},"from":"other"}}`, `{}`},
		} {
			res, msg := g.call(tc.req)
			if msg != "" || string(res) != tc.want {
				t.Errorf("%s\n got %s %s\nwant %s", tc.req, res, msg, tc.want)
			}
		}
		if strings.Join(g.emits, ",") != `{"content":[{"type":"text","text":"step 1 of 1"}],"details":{"step":1}}` {
			t.Errorf("emits %q", g.emits)
		}
		// The shortcut's notify has no call in progress here: its error is the answer.
		if _, msg := g.call(`{"method":"shortcut.execute","params":{"key":"ctrl+g"}}`); msg != "host call ui.notify: host_call returned -2 (called outside a call from pi)" {
			t.Errorf("shortcut error %q", msg)
		}
	})
}

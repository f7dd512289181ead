package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// hostile is tag among the attacks on a terminal: CSI (clear the screen,
// colours), OSC 52 (write the clipboard) ended by BEL, OSC 0 (the title)
// ended by ST, DCS, CSI and OSC as UTF-8 C1 controls (U+009B, U+009D, ST
// U+009C), a carriage return and backspaces that overwrite a line, DEL,
// the bidi override and isolates, a line separator. rawBytes adds
// CSI and OSC as raw bytes (not UTF-8), for the paths that carry bytes.
func hostile(tag string) string {
	return tag + " \x1b[2J\x1b[31m\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x1b\\\x1bP1$qm\x1b\\" +
		"\u009b31m\u009d0;t\u009c ok\rfake\b\b\x7f \u202Eevil\u2066x\u2069\u2028 end"
}

const rawBytes = " \x9b1m\x9d0;raw\x07"

// printfHostile is a printf format that writes hostile(tag) with the raw
// bytes, for bash.
func printfHostile(tag string) string {
	return `printf '` + tag + ` \033[2J\033]52;c;ZXZpbA==\007\033]0;pwned\033\\ \233 1m\2350;raw\007 ok\rfake\b\b\177 \342\200\256evil\n'`
}

// tomlString is s as a TOML basic string, every control and non-ASCII
// character escaped.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r >= 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// terminalControls returns what in out a terminal would act on, or could
// reorder, described; "" when there is none. It is written here, apart
// from the rule it checks (termtext), so a mistake there fails this test.
func terminalControls(out string) string {
	var bad []string
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			bad = append(bad, fmt.Sprintf("byte %#x (not UTF-8) at %d", out[i], i))
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f),
			r == 0x2028 || r == 0x2029, r == 0x061c, r == 0x200e, r == 0x200f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			bad = append(bad, fmt.Sprintf("%U at %d", r, i))
		}
		i += n
	}
	if len(bad) == 0 {
		return ""
	}
	return strings.Join(bad[:min(len(bad), 8)], ", ")
}

// TestUntrustedTextReachesNoTerminalRaw feeds every path on which pi
// shows text it did not write escape sequences, C1 controls (as UTF-8 and
// as raw bytes), carriage returns, backspaces and bidi overrides: the
// model's words and its tool calls' arguments, results and previews in
// print and line mode (also a tool name the model made up), an extension's version, descriptions, stderr, log
// lines and notices (at install, before any trust, and in calls), slash
// command output, !COMMAND output, an MCP server's stderr and its start
// failure, a session's name and first prompt, a permission rule's reason,
// a path and JSON arguments quoted in errors. The real pi runs each row;
// its stdout and stderr must hold no control character but newline and
// tab (no styling: they are pipes), must be UTF-8, and must show each
// row's tags (the hostile text did reach the output, cleaned).
func TestUntrustedTextReachesNoTerminalRaw(t *testing.T) {
	pi := realPi(t)
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/hostile")
	server := mcpserver.Server(t)
	home, proj := t.TempDir(), t.TempDir()
	piHome := filepath.Join(home, ".pi")
	for _, d := range []string{piHome, filepath.Join(proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	toml := fmt.Sprintf(`[[mcp]]
name = "t"
command = [%q]
env = { MCPTEST_STDERR = %s }

[[mcp]]
name = "bad"
command = [%q]
env = { MCPTEST_FAIL_START = %s }

[permissions]
default = "allow"

[[permissions.rules]]
tool = "ls"
decision = "deny"
reason = %s
`, server, tomlString(hostile("MCPSTDERR")), server, tomlString(hostile("MCPFAIL")), tomlString(hostile("REASON")))
	if err := os.WriteFile(filepath.Join(piHome, "pi.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PI_HOME="+piHome, "HOME="+home, "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "PI_TRUST=", "PI_TUI=0")

	args := func(v map[string]string) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	model := func(tag string) *openai.Server {
		return openai.NewServer(t,
			openai.Reply{Text: hostile(tag) + "\x00", Chunks: 4, ToolCalls: []openai.ToolCall{
				{Name: "hostile", Arguments: `{}`},
				{Name: "bash", Arguments: args(map[string]string{"command": printfHostile("BASHOUT")})},
				{Name: "mcp__t__echo", Arguments: args(map[string]string{"text": hostile("ECHO")})},
				{Name: "mcp__t__echo", Arguments: `{"text":"` + hostile("ARGS") + `"}`},
				{Name: "madeup" + hostile("BADTOOL"), Arguments: `{}`},
			}},
			openai.Reply{Text: hostile(tag + "2")},
		)
	}
	rows := []struct {
		name  string
		args  []string
		stdin string
		want  []string // tags that must reach stdout or stderr
	}{
		{name: "ext install (inspect, before trust)", args: []string{"ext", "install", "--global", wasm},
			want: []string{"VERSION", "INIT-STDERR", "INIT-LOG", "INIT-NOTIFY"}},
		{name: "ext install of a hostile path", args: []string{"ext", "install", filepath.Join(proj, hostile("BADPATH")+rawBytes+".wasm")},
			want: []string{"BADPATH"}},
		{name: "ext list", args: []string{"ext", "list"}, want: []string{"VERSION"}},
		{name: "tools list", args: []string{"tools", "list"}, want: []string{"TOOLDESC", "INIT-LOG"}},
		{name: "mcp list", args: []string{"mcp", "list"}, want: []string{"MCPFAIL"}},
		{name: "permissions list", args: []string{"permissions", "list"}, want: []string{"REASON"}},
		{name: "permissions check", args: []string{"permissions", "check", "ls", "{}"}, want: []string{"REASON"}},
		{name: "tool call of the extension", args: []string{"tool", "call", "hostile", "{}"}, want: []string{"RESULT", "CALL-STDERR", "CALL-LOG", "CALL-NOTIFY"}},
		{name: "tool call, an MCP server that fails to start", args: []string{"tool", "call", "mcp__bad__echo", "{}"}, want: []string{"MCPFAIL"}},
		{name: "tool call with bad arguments", args: []string{"tool", "call", "read", "{" + hostile("BADARGS") + rawBytes}, want: []string{"BADARGS"}},
		{name: "print mode", args: []string{"-p", hostile("PPROMPT"), "--base-url", model("PMODEL").URL, "--model", "m"},
			want: []string{"PMODEL", "PMODEL2", "RESULT", "CALL-STDERR", "CALL-NOTIFY", "BASHOUT", "ECHO", "ARGS", "BADTOOL"}},
		{name: "print mode, json", args: []string{"--mode", "json", "-p", hostile("JPROMPT"), "--base-url", model("JMODEL").URL, "--model", "m"},
			want: []string{"JMODEL", "RESULT", "CALL-STDERR", "BASHOUT"}},
		{name: "line mode", args: []string{"--interactive", hostile("FIRSTPROMPT"), "--base-url", model("LINEMODEL").URL, "--model", "m"},
			stdin: "/hostile x\n!" + printfHostile("BANG") + "\n",
			want:  []string{"FIRSTPROMPT", "LINEMODEL", "LINEMODEL2", "RESULT2", "BASHOUT", "ECHO", "BADTOOL", "COMMANDTEXT", "COMMAND-STDERR", "BANG"}},
		{name: "session named", args: []string{"-c", "-p", "/name " + strings.NewReplacer("\r", "", "\u2028", "").Replace(hostile("SESSNAME"))}, want: []string{"SESSNAME"}},
		{name: "sessions list", args: []string{"sessions", "list"}, want: []string{"SESSNAME", "PPROMPT"}},
		{name: "resume without a terminal", args: []string{"-r", "-p", "x"}, want: []string{"SESSNAME", "PPROMPT"}},
		{name: "rpc mode", args: []string{"--mode", "rpc"}, stdin: `{"id":"1","type":"get_state"}` + "\n", want: []string{"INIT-STDERR"}},
	}
	for _, row := range rows {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, pi, row.args...)
		cmd.Env, cmd.Dir = env, proj
		cmd.Stdin = strings.NewReader(row.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("%s: pi did not end: %v\nstderr:\n%s", row.name, err, stderr.String())
		}
		for stream, out := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
			if bad := terminalControls(out); bad != "" {
				t.Errorf("%s: %s carries %s:\n%q", row.name, stream, bad, out)
			}
		}
		all := stdout.String() + stderr.String()
		for _, tag := range row.want {
			if !strings.Contains(all, tag) {
				t.Errorf("%s: the output lacks %s (the path did not run?) (exit %v):\n%s", row.name, tag, err, all)
			}
		}
	}
}

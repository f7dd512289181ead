package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

// toolTexts returns the text of every tool message of a request, in order.
func toolTexts(req map[string]any) []string {
	var out []string
	for _, m := range req["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] != "tool" {
			continue
		}
		switch c := mm["content"].(type) {
		case string:
			out = append(out, c)
		case []any:
			var b strings.Builder
			for _, p := range c {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					b.WriteString(s)
					b.WriteString("\n")
				}
			}
			out = append(out, b.String())
		}
	}
	return out
}

// sentArgs returns the arguments of every tool call of the assistant
// messages a request sends back to the model.
func sentArgs(req map[string]any) []string {
	var out []string
	for _, m := range req["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["role"] != "assistant" {
			continue
		}
		calls, _ := mm["tool_calls"].([]any)
		for _, c := range calls {
			out = append(out, c.(map[string]any)["function"].(map[string]any)["arguments"].(string))
		}
	}
	return out
}

// Without pass_env, bash never gets the variable holding the key (the one
// api_key_env names, OPENAI_API_KEY, or any holding the --api-key value);
// with it, the model sees [REDACTED].
func TestBashDoesNotGetTheKey(t *testing.T) {
	const key = "sk-bash-env-KEY-0123456789"
	cmd := `echo "open=[${OPENAI_API_KEY-unset}] mine=[${MY_KEY-unset}] copy=[${KEY_COPY-unset}] other=[$PI_OTHER]"`
	tests := []struct {
		name, toml    string
		openai, myKey string // values of OPENAI_API_KEY and MY_KEY
		flagKey       bool   // the key comes from --api-key
		want          string
	}{
		{"OPENAI_API_KEY", "", key, "my-own-value", false, "open=[unset] mine=[my-own-value] copy=[unset] other=[kept]"},
		{"api_key_env", "[model]\napi_key_env = \"MY_KEY\"\n", "sk-another-value-000", key, false, "open=[unset] mine=[unset] copy=[unset] other=[kept]"},
		{"--api-key", "", "sk-another-value-000", "my-own-value", true, "open=[unset] mine=[my-own-value] copy=[unset] other=[kept]"},
		{"pass_env", "[tools.bash]\npass_env = [\"OPENAI_API_KEY\", \"KEY_COPY\"]\n", key, "my-own-value", false, "open=[[REDACTED]] mine=[my-own-value] copy=[[REDACTED]] other=[kept]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := isolate(t)
			if tt.toml != "" {
				os.WriteFile(filepath.Join(home, "pi.toml"), []byte(tt.toml), 0o644)
			}
			t.Setenv("OPENAI_API_KEY", tt.openai)
			t.Setenv("MY_KEY", tt.myKey)
			t.Setenv("KEY_COPY", key)
			t.Setenv("PI_OTHER", "kept")
			srv := openai.NewServer(t,
				openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: mustJSON(map[string]string{"command": cmd})}}},
				openai.Reply{Text: "done"},
			)
			args := []string{"-p", "go", "--base-url", srv.URL, "--model", "M", "--cwd", t.TempDir()}
			if tt.flagKey {
				args = append(args, "--api-key", key)
			}
			var stdout, stderr bytes.Buffer
			if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if h := srv.Headers()[0].Get("Authorization"); h != "Bearer "+key {
				t.Fatalf("the model request used %q, not the key under test", h)
			}
			got := toolTexts(srv.Requests()[1])
			if len(got) != 1 || strings.TrimSpace(got[0]) != tt.want {
				t.Fatalf("bash output sent to the model: %q, want %q", got, tt.want)
			}
		})
	}
}

// A short key (--api-key test, x, ollama) is not a secret: nothing is
// redacted, so files get their names and bash runs the exact command.
// A long key is redacted only in outputs: the tools and the conversation
// get the model's exact arguments even when they hold the key or parts of it.
func TestRedactionNeverRewritesTheWork(t *testing.T) {
	const long = "sk-abcdefghijklmnopqrst"
	tests := []struct {
		key  string
		file string // a name made of the key or parts of it
	}{
		{"test", "test.txt"},
		{"x", "a.txt"},
		{"ollama", "ollama-notes.txt"},
		{long, "notes-abcdefghijkl.txt"},  // a 12-byte part of the key
		{long, "key-" + long + ".txt"},    // the whole key
		{"sk-0123456789", "sk-012345678"}, // 13-byte key, file its 12-byte prefix
	}
	for _, tt := range tests {
		t.Run(tt.key+"/"+tt.file, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			content := "content of " + tt.file + " by " + tt.key + "\n"
			writeArgs := mustJSON(map[string]string{"path": tt.file, "content": content})
			bashArgs := mustJSON(map[string]string{"command": "cat " + tt.file + "; printf '%s\\n' " + tt.key + "-made > made-" + tt.file + "; echo ok"})
			srv := openai.NewServer(t,
				openai.Reply{Text: "Writing " + tt.file, ToolCalls: []openai.ToolCall{{Name: "write", Arguments: writeArgs}}},
				openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: bashArgs}}},
				openai.Reply{Text: "done"},
			)
			var stdout, stderr bytes.Buffer
			code := run([]string{"-p", "go", "--base-url", srv.URL, "--model", "M", "--api-key", tt.key, "--log-level", "debug", "--cwd", dir}, strings.NewReader(""), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			const note = "the API key is shorter than the secret minimum; it is not redacted"
			if short := len(tt.key) < 12; short != strings.Contains(stderr.String(), note) {
				t.Errorf("debug note about a short key: present=%v for key %q", !short, tt.key)
			}
			if b, err := os.ReadFile(filepath.Join(dir, tt.file)); err != nil || string(b) != content {
				t.Fatalf("write did not get its exact arguments: %q, %v", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "made-"+tt.file)); err != nil || string(b) != tt.key+"-made\n" {
				t.Fatalf("bash did not run the exact command: %q, %v", b, err)
			}
			reqs := srv.Requests()
			// The conversation sent back keeps the model's own arguments.
			if got := sentArgs(reqs[2]); len(got) != 2 || got[0] != writeArgs || got[1] != bashArgs {
				t.Fatalf("arguments sent back to the model: %q, want %q and %q", got, writeArgs, bashArgs)
			}
			if !strings.Contains(string(srv.RawRequests()[1]), "Writing "+tt.file) {
				t.Fatalf("the assistant's text was rewritten in the conversation")
			}
			results := toolTexts(reqs[2])
			if len(tt.key) < 12 {
				// Not a secret: results are untouched.
				if !strings.Contains(results[1], content) || strings.Contains(strings.Join(results, ""), "[REDACTED]") {
					t.Fatalf("short key redacted in results: %q", results)
				}
				return
			}
			all := strings.Join(results, "\n") + stdout.String() + stderr.String()
			if strings.Contains(all, tt.key) {
				t.Fatalf("the key is in an output: %q", all)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// spyWasm builds the hostile test extension.
func spyWasm(t *testing.T) string { return plugin.BuildGo(t, "examples/plugins/internal/spy") }

// decodeSpy returns what the spy smuggled out in the tool messages (both
// its base64 and hex blocks, decoded).
func decodeSpy(t *testing.T, texts []string) []string {
	t.Helper()
	var out []string
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			switch {
			case strings.HasPrefix(line, "SPY:"):
				b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, "SPY:"))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
			case strings.HasPrefix(line, "SPYHEX:"):
				b, err := hex.DecodeString(strings.TrimPrefix(line, "SPYHEX:"))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
			}
		}
	}
	return out
}

// A hostile extension granted the key's variable, with bash_spawn,
// tool_result and event hooks and an exec grant: its spawn hook sees only
// granted names that bash has (never the key's variable) and cannot delete
// the others; its exec child lacks the key; and what its tool_result and
// event hooks saw (results, inputs, events, re-encoded in base64 and hex so
// that the last redaction cannot catch them) never holds the key, though
// the key was printed by a tool and written by the model.
func TestHostileExtensionNeverSeesTheKey(t *testing.T) {
	home := isolate(t)
	const key = "sk-spy-e2e-KEY-0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("SPY_GRANTED", "granted-value")
	t.Setenv("PI_UNGRANTED", "ungranted-value")
	// The spy's dumps make the context larger than the default window;
	// compaction would add a summarizing call this test does not script.
	toml := fmt.Sprintf(`[compaction]
enabled = false
[tools.bash]
pass_env = ["KEY_PRINTER"]
[[extensions]]
name = "spy"
path = %q
sha256 = %q
[extensions.grants]
env = ["SPY_GRANTED", "OPENAI_API_KEY"]
exec = ["env"]
fs = ["ro:."]
`, spyWasm(t), sha256File(t, spyWasm(t)))
	os.WriteFile(filepath.Join(home, "pi.toml"), []byte(toml), 0o644)
	// KEY_PRINTER holds the key under another name the user passed to bash
	// on purpose, so a tool result really holds the key.
	t.Setenv("KEY_PRINTER", key)
	spawnProbe := `echo "saw=[$SPY_SAW] seen=[$SPY_SEEN] ungranted=[${PI_UNGRANTED-deleted}] granted=[${SPY_GRANTED-deleted}] key=[${OPENAI_API_KEY-unset}]"`
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{
			{Name: "bash", Arguments: mustJSON(map[string]string{"command": spawnProbe})},
			{Name: "spy_exec", Arguments: `{}`},
			{Name: "bash", Arguments: mustJSON(map[string]string{"command": `echo "printed=$KEY_PRINTER"`})},
			{Name: "bash", Arguments: mustJSON(map[string]string{"command": "echo model-wrote " + key})},
			{Name: "bash", Arguments: mustJSON(map[string]string{"command": "printf %s " + key + " | wc -c"})},
			{Name: "bash", Arguments: mustJSON(map[string]string{"command": `printf %s "$KEY_PRINTER" | wc -c`})},
		}},
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: `{"command":"true"}`}}},
		openai.Reply{Text: "done"},
	)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--mode", "json", "-p", "go", "--base-url", srv.URL, "--model", "M", "--cwd", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := toolTexts(reqs[1])
	if len(first) != 6 {
		t.Fatalf("%d tool messages", len(first))
	}
	// The spawn hook was shown a redacted command and environment, yet bash
	// ran the model's command with the real values: the key's length, not
	// that of [REDACTED].
	for i, what := range map[int]string{4: "command", 5: "environment"} {
		if got := strings.TrimSpace(strings.SplitN(first[i], "\n", 2)[0]); got != fmt.Sprint(len(key)) {
			t.Errorf("bash ran with a rewritten %s: wc -c says %q, want %d", what, got, len(key))
		}
	}
	// bash_spawn: shown only SPY_GRANTED (OPENAI_API_KEY is granted but
	// bash never had it), could not delete PI_UNGRANTED, did delete the
	// granted variable it left out.
	probe := strings.SplitN(first[0], "\n", 2)[0]
	seenJSON := base64.StdEncoding.EncodeToString([]byte(`{"SPY_GRANTED":"granted-value"}`))
	if want := "saw=[SPY_GRANTED] seen=[" + seenJSON + "] ungranted=[ungranted-value] granted=[deleted] key=[unset]"; probe != want {
		t.Errorf("spawn probe:\n got %q\nwant %q", probe, want)
	}
	// exec child: no key variable, though granted.
	if strings.Contains(first[1], "OPENAI_API_KEY") || !strings.Contains(first[1], "SPY_GRANTED=granted-value") {
		t.Errorf("exec child environment:\n%s", first[1])
	}
	if !strings.Contains(first[2], "printed=[REDACTED]") || !strings.Contains(first[3], "model-wrote [REDACTED]") {
		t.Errorf("results not redacted: %q / %q", first[2], first[3])
	}
	// What the spy smuggled out, decoded.
	dumps := decodeSpy(t, toolTexts(reqs[2]))
	if len(dumps) == 0 {
		t.Fatal("the spy smuggled nothing: the test would prove nothing")
	}
	all := strings.Join(dumps, "\n")
	if strings.Contains(all, key) {
		t.Fatalf("the spy saw the key:\n%s", all)
	}
	for _, want := range []string{"printed=[REDACTED]", "model-wrote [REDACTED]", `event {"type":"tool_execution_start"`, `"type":"turn_end"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the spy's view lacks %q (so it did not see what it should have)", want)
		}
	}
	for _, r := range srv.RawRequests() {
		for _, enc := range []string{key, base64.StdEncoding.EncodeToString([]byte(key)), hex.EncodeToString([]byte(key))} {
			if bytes.Contains(r, []byte(enc)) && enc != key {
				t.Fatalf("an encoded key reached the model")
			}
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), key) {
		t.Fatal("the key is in pi's output")
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	sum, err := extensions.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// The review's attack: a bash call reads pi's own environment and command
// line through /proc/$PPID and reverses the text so that redaction does
// not see the key. pi is non-dumpable (its environ, mem and fd are closed
// to every process it starts, and to any other process of the user) and
// overwrites an --api-key value in its command line; what the model gets
// back holds neither key in any order.
func TestNothingPiStartsReadsItsKey(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc on this system: the environ attack does not apply")
	}
	const envKey = "sk-env-KEY-in-pi-environ-0123456789"
	const flagKey = "sk-flag-KEY-in-pi-cmdline-987654321"
	cmd := `p=$PPID
echo "environ:"; { tr '\0' '\n' </proc/$p/environ | rev; } 2>&1
echo "fd:"; ls -l /proc/$p/fd 2>&1 | rev
echo "mem:"; grep -a -c . /proc/$p/mem 2>&1 | rev
echo "cmdline:"; tr '\0' ' ' </proc/$p/cmdline | rev; echo
echo "comm: $(cat /proc/$p/comm)"`
	srv := openai.NewServer(t,
		openai.Reply{ToolCalls: []openai.ToolCall{{Name: "bash", Arguments: mustJSON(map[string]string{"command": cmd})}}},
		openai.Reply{Text: "done"},
	)
	bin, err := exec.LookPath("pi")
	if err != nil {
		t.Skipf("no pi command on PATH: %v", err)
	}
	home := t.TempDir()
	c := exec.Command(bin, "-p", "go", "--base-url", srv.URL, "--model", "M", "--api-key", flagKey)
	c.Env = append(os.Environ(), "PI_HOME="+filepath.Join(home, ".pi"), "HOME="+home, "OPENAI_API_KEY="+envKey, "OPENAI_BASE_URL=", "PI_TRUST=")
	c.Dir = home
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := startAsAUser(t, c, home); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("pi: %v\n%s", err, out.String())
	}
	if h := srv.Headers()[0].Get("Authorization"); h != "Bearer "+flagKey {
		t.Fatalf("the model request used %q, not the flag's key", h)
	}
	got := strings.Join(toolTexts(srv.Requests()[1]), "\n")
	for _, k := range []string{envKey, flagKey} {
		for _, form := range []string{k, reverse(k), k[len(k)-12:], reverse(k[len(k)-12:])} {
			if strings.Contains(got, form) {
				t.Errorf("bash read the key %q (as %q) from pi:\n%s", k, form, got)
			}
		}
	}
	environ, _, _ := strings.Cut(strings.SplitN(got, "environ:\n", 2)[1], "fd:")
	if !strings.Contains(environ, "Permission denied") {
		t.Errorf("/proc/$PPID/environ was not refused:\n%s", environ)
	}
	if !strings.Contains(got, reverse("--api-key "+strings.Repeat("*", len(flagKey)))) {
		t.Errorf("pi's command line does not show the flag's value hidden:\n%s", got)
	}
	if !strings.Contains(got, "comm: pi") && !strings.Contains(got, "comm: "+filepath.Base(bin)) {
		t.Errorf("$PPID of the bash call is not pi:\n%s", got)
	}
}

// startAsAUser starts c as a user without privileges would run it. Root
// (the tests often run as root in containers) may read every process's
// /proc files, so as root c runs as nobody (65534): home is handed to
// nobody, the folders above it opened to nobody, and the binary linked
// into a folder nobody can reach.
func startAsAUser(t *testing.T, c *exec.Cmd, home string) error {
	if os.Geteuid() != 0 {
		return c.Start()
	}
	const nobody = 65534
	real, err := filepath.EvalSymlinks(c.Path)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pi-as-nobody-")
	if err != nil {
		return err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "pi")
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if err := os.Link(real, bin); err != nil {
		return fmt.Errorf("link the pi binary for nobody: %w", err)
	}
	if err := filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	}); err != nil {
		return err
	}
	for d := filepath.Dir(home); strings.HasPrefix(d, os.TempDir()+string(filepath.Separator)); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil { // t.TempDir's folders are 0700
			return err
		}
	}
	c.Path, c.Args[0] = bin, bin
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return c.Start()
}

// reverse returns s with its bytes in reverse order (the keys are ASCII).
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

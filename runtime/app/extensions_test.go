package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
)

// rawGuest is the ABI 1.1 test guest written without the SDK.
const rawGuest = "extensions/testdata/guests/raw11"

// rawEntry is an [[extensions]] block loading the raw guest.
type rawEntry struct {
	name   string
	grants string // TOML lines under [extensions.grants]
	limits string // TOML lines under [extensions.limits]
	config string // TOML lines under [extensions.config] (name is added)
}

// rawProject writes a project pi.toml with the entries and returns the
// project folder and PI_HOME.
func rawProject(t *testing.T, entries ...rawEntry) (dir, home string) {
	t.Helper()
	dir, home = project(t)
	wasm := plugin.BuildGo(t, rawGuest)
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "[[extensions]]\nname = %q\npath = %q\nsha256 = %q\n", e.name, wasm, sha(t, wasm))
		if e.grants != "" {
			fmt.Fprintf(&b, "[extensions.grants]\n%s\n", e.grants)
		}
		if e.limits != "" {
			fmt.Fprintf(&b, "[extensions.limits]\n%s\n", e.limits)
		}
		fmt.Fprintf(&b, "[extensions.config]\nname = %q\n%s\n", e.name, e.config)
	}
	write(t, filepath.Join(dir, "pi.toml"), b.String())
	return dir, home
}

func openRT(t *testing.T, o Options) *Runtime {
	t.Helper()
	if o.LogOutput == nil {
		o.LogOutput = &syncBuf{}
	}
	rt, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestABI11InitFacts(t *testing.T) {
	dir, home := rawProject(t, rawEntry{name: "raw11"})
	for _, tc := range []struct {
		opts              Options
		mode              string
		trusted, hasUI    bool
		trustBeforeLoader bool
	}{
		{Options{Trust: true}, "print", true, false, false},
		{Options{Trust: true, Mode: ModeJSON}, "json", true, false, false},
		{Options{Mode: ModeInteractive, UI: &personUI{}}, "interactive", true, true, true},
		{Options{Mode: ModeTool}, "tool", true, false, true},
	} {
		o := tc.opts
		o.Cwd, o.PIHome = dir, home
		if tc.trustBeforeLoader {
			if err := config.Trust(home, filepath.Join(dir, "pi.toml")); err != nil {
				t.Fatal(err)
			}
		}
		rt := openRT(t, o)
		res, _ := rt.CallTool(context.Background(), "facts", "c", json.RawMessage(`{}`), nil)
		var f struct {
			Init struct {
				ABIMinor    int    `json:"abiMinor"`
				ProjectRoot string `json:"projectRoot"`
				Trusted     bool   `json:"trusted"`
				Mode        string `json:"mode"`
				HasUI       bool   `json:"hasUI"`
			} `json:"init"`
		}
		if err := json.Unmarshal([]byte(res.Text()), &f); err != nil {
			t.Fatalf("facts = %s: %v", res.Text(), err)
		}
		if f.Init.ABIMinor != 1 || f.Init.ProjectRoot != mustReal(t, dir) && f.Init.ProjectRoot != dir || f.Init.Trusted != tc.trusted || f.Init.Mode != tc.mode || f.Init.HasUI != tc.hasUI {
			t.Errorf("%+v: init facts %+v", tc.opts, f.Init)
		}
		rt.Close()
	}
	// Loaded from the global pi.toml, with no project pi.toml: not trusted.
	os.Rename(filepath.Join(dir, "pi.toml"), filepath.Join(home, "pi.toml"))
	b, _ := os.ReadFile(filepath.Join(home, "pi.toml"))
	write(t, filepath.Join(home, "pi.toml"), string(b))
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	res, _ := rt.CallTool(context.Background(), "facts", "c", json.RawMessage(`{}`), nil)
	if !strings.Contains(res.Text(), `"trusted":false`) || !strings.Contains(res.Text(), `"projectRoot":"`+dir) {
		t.Errorf("global extension, no project pi.toml: facts %s", res.Text())
	}
}

func TestABI11LoadErrors(t *testing.T) {
	// Two extensions with the same command.
	dir, home := rawProject(t, rawEntry{name: "one"}, rawEntry{name: "two", config: `prefix = ""`})
	_, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true})
	if err == nil || !strings.Contains(err.Error(), "command /raw of extension two clashes with command /raw of extension one") {
		t.Errorf("a command clash: %v", err)
	}
	// A command named like a built-in one.
	dir, home = rawProject(t, rawEntry{name: "one", config: `prefix = "he"`})
	write(t, filepath.Join(dir, "x"), "")
	// prefix "he" makes /heraw and /heprobe; a prefix that makes /help:
	dir, home = rawProject(t, rawEntry{name: "one", config: `prefix = "hel"`})
	if rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true}); err != nil {
		t.Errorf("prefix hel: %v", err)
	} else {
		rt.Close()
	}
	// The config does not match the configSchema.
	dir, home = rawProject(t, rawEntry{name: "one", config: "greeting = 5\nschema = { type = \"object\", properties = { greeting = { type = \"string\" } } }"})
	_, err = Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true})
	if err == nil || !strings.Contains(err.Error(), "extensions[0].config.greeting: expected string, got number") || !strings.Contains(err.Error(), filepath.Join(dir, "pi.toml")) {
		t.Errorf("a config against its schema: %v", err)
	}
	dir, home = rawProject(t, rawEntry{name: "one", config: "greeting = \"hi\"\nschema = { type = \"object\", properties = { greeting = { type = \"string\" } } }"})
	if rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true}); err != nil {
		t.Errorf("a config that matches: %v", err)
	} else {
		rt.Close()
	}
}

// TestInstallConfigCheck: the install transaction's configSchema check:
// a wrong type refuses, a missing required key is a note naming the flag.
func TestInstallConfigCheck(t *testing.T) {
	info := ExtensionInfo{ConfigSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"n":{"type":"integer"}},"required":["command"],"additionalProperties":false}`)}
	notes, err := checkInstallConfig(info, nil, "/p/pi.toml")
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "config key command: give it with --ext-config command=VALUE") {
		t.Errorf("missing required key: %q, %v", notes, err)
	}
	_, err = checkInstallConfig(info, map[string]any{"command": "x", "n": "five"}, "/p/pi.toml")
	if err == nil || !strings.Contains(err.Error(), "extensions.config.n: expected integer, got string") {
		t.Errorf("wrong type: %v", err)
	}
	_, err = checkInstallConfig(info, map[string]any{"command": "x", "other": 1}, "/p/pi.toml")
	if err == nil || !strings.Contains(err.Error(), "extensions.config.other: unknown key") {
		t.Errorf("unknown key: %v", err)
	}
	if notes, err := checkInstallConfig(ExtensionInfo{}, map[string]any{"x": 1}, "/p/pi.toml"); notes != nil || err != nil {
		t.Errorf("no schema: %q, %v", notes, err)
	}
}

// TestABI11DefaultEvents: a guest that names no events gets the six of
// ABI 1.0 and nothing new.
func TestABI11DefaultEvents(t *testing.T) {
	dir, home := rawProject(t, rawEntry{name: "raw11"})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	p := llm.NewScripted(llm.Script{Turns: []llm.ScriptTurn{{ToolCalls: []llm.ScriptToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"pi.toml"}`)}}}, {Text: "ok"}}})
	ag, _ := rt.NewAgent(AgentOptions{Provider: p})
	if _, err := ag.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	res, _ := rt.CallTool(context.Background(), "facts", "c", json.RawMessage(`{}`), nil)
	var f struct{ Events []string }
	json.Unmarshal([]byte(res.Text()), &f)
	seen := map[string]bool{}
	for _, e := range f.Events {
		seen[e] = true
	}
	for _, want := range []string{"agent_start", "agent_end", "turn_start", "turn_end", "tool_execution_start", "tool_execution_end"} {
		if !seen[want] {
			t.Errorf("default events lack %s: %q", want, f.Events)
		}
		delete(seen, want)
	}
	if len(seen) != 0 {
		t.Errorf("default events include %v", seen)
	}
}

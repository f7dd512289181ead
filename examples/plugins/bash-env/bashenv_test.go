//go:build !wasip1

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// grantedEnv are the variables the tests grant the extension, as its README
// says to: PATH for path_prepend, and those its values refer to.
var grantedEnv = []string{"PATH", "USER_NAME"}

func load(t *testing.T, root string, config map[string]any) *plugin.Loaded {
	wasm := plugin.BuildGo(t, "examples/plugins/bash-env")
	return plugin.Load(t, wasm, root, extensions.Spec{Name: "bash-env", Config: config, Grants: extensions.Grants{Env: grantedEnv}})
}

func TestSpawnHookRewritesEnv(t *testing.T) {
	root := t.TempDir()
	l := load(t, root, map[string]any{
		"env":          map[string]any{"APP_ENV": "test", "GREETING": "hi ${USER_NAME}", "EMPTY": ""},
		"path_prepend": []any{".venv/bin", "/opt/tools/bin"},
	})
	if len(l.Spawn) != 1 || !strings.Contains(l.Spawn[0].Name, "bash-env") {
		t.Fatalf("spawn hooks %+v", l.Spawn)
	}
	tests := []struct {
		name string
		in   tool.BashSpawn
		want map[string]string
	}{
		{"adds and expands", tool.BashSpawn{Command: "ls", Cwd: root, Env: map[string]string{"PATH": "/usr/bin:/bin", "USER_NAME": "ada"}},
			map[string]string{"APP_ENV": "test", "GREETING": "hi ada", "EMPTY": "", "USER_NAME": "ada",
				"PATH": filepath.Join(root, ".venv/bin") + ":/opt/tools/bin:/usr/bin:/bin"}},
		{"relative to the spawn's cwd", tool.BashSpawn{Command: "ls", Cwd: filepath.Join(root, "sub"), Env: map[string]string{"APP_ENV": "prod"}},
			map[string]string{"APP_ENV": "test", "GREETING": "hi ", "EMPTY": "",
				"PATH": filepath.Join(root, "sub/.venv/bin") + ":/opt/tools/bin"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := l.SpawnChain(t, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Command != tc.in.Command || got.Cwd != tc.in.Cwd {
				t.Errorf("command/cwd changed: %+v", got)
			}
			if len(got.Env) != len(tc.want) {
				t.Errorf("env %v, want %v", got.Env, tc.want)
			}
			for k, v := range tc.want {
				if got.Env[k] != v {
					t.Errorf("%s=%q, want %q", k, got.Env[k], v)
				}
			}
		})
	}
}

// The real bash tool runs the command with the hook's environment.
func TestBashSeesTheEnvironment(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, ".venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "projtool"), []byte("#!/bin/sh\necho projtool ran with $APP_ENV\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := load(t, root, map[string]any{"env": map[string]any{"APP_ENV": "staging"}, "path_prepend": []any{".venv/bin"}})
	tools, err := tool.WrapAll(builtin.Definitions(builtin.Options{Bash: builtin.BashOptions{SpawnHooks: l.Spawn}}),
		func(string) tool.Context { return tool.Context{Cwd: root} })
	if err != nil {
		t.Fatal(err)
	}
	r := plugin.RunWith(t, tools, nil, "bash", map[string]any{"command": "projtool; command -v projtool; echo PATH=$PATH"})
	want := "projtool ran with staging\n" + filepath.Join(bin, "projtool") + "\nPATH=" + bin + ":" + os.Getenv("PATH") + "\n"
	if r.IsError || r.Text() != want {
		t.Errorf("bash output %q (isError %v), want %q", r.Text(), r.IsError, want)
	}
}

// Without grants the hook is shown nothing: it cannot read the environment
// (the API key included), and what it does not set is kept.
func TestUngrantedVariablesStayHidden(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-bash-env-test-0123456789")
	t.Setenv("USER_NAME", "ada")
	root := t.TempDir()
	wasm := plugin.BuildGo(t, "examples/plugins/bash-env")
	l := plugin.Load(t, wasm, root, extensions.Spec{Name: "bash-env", Config: map[string]any{
		"env": map[string]any{"LEAK": "${OPENAI_API_KEY}", "WHO": "${USER_NAME}"},
	}})
	tools, err := tool.WrapAll(builtin.Definitions(builtin.Options{Bash: builtin.BashOptions{SpawnHooks: l.Spawn}}),
		func(string) tool.Context { return tool.Context{Cwd: root} })
	if err != nil {
		t.Fatal(err)
	}
	r := plugin.RunWith(t, tools, nil, "bash", map[string]any{"command": `echo "leak=[$LEAK] who=[$WHO] user=$USER_NAME key=${#OPENAI_API_KEY}"`})
	if want := "leak=[] who=[] user=ada key=27\n"; r.Text() != want {
		t.Errorf("bash output %q, want %q", r.Text(), want)
	}
}

func TestBadConfigFailsLoad(t *testing.T) {
	wasm := plugin.BuildGo(t, "examples/plugins/bash-env")
	tests := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{"unknown key", map[string]any{"path_append": []any{"x"}}, `unknown field "path_append"`},
		{"bad variable name", map[string]any{"env": map[string]any{"A=B": "x"}}, `"A=B" is not a valid variable name`},
		{"value not a string", map[string]any{"env": map[string]any{"N": 3}}, `must be string (got number)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := plugin.LoadErr(t, wasm, t.TempDir(), extensions.Spec{Name: "bash-env", Config: tc.config})
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

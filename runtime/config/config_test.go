package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

// writeFile writes content to path, creating folders.
func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// env is a fresh PI_HOME and project folder.
type env struct {
	home, proj string
}

func newEnv(t *testing.T) env {
	t.Helper()
	root := t.TempDir()
	e := env{home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj")}
	for _, d := range []string{e.home, e.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func boolPtr(b bool) *bool { return &b }

func TestLoadLayering(t *testing.T) {
	const global = `tool_execution = "sequential"
[model]
base_url = "http://localhost:8080/v1"
name = "global-model"
api_key_env = "GLOBAL_KEY"
images = true
[tools]
active = ["read", "bash"]
[tools.bash]
shell = "/bin/sh"
command_prefix = "set -e"
[[extensions]]
name = "aaa"
path = "ext/aaa.wasm"
sha256 = "` + shaA + `"
[[extensions]]
name = "shared"
path = "ext/shared.wasm"
sha256 = "` + shaB + `"
`
	const project = `[model]
name = "project-model"
images = false
[tools]
active = ["read", "loc"]
[tools.bash]
command_prefix = "source .venv/bin/activate"
[[extensions]]
name = "loc"
path = ".pi/extensions/loc.wasm"
sha256 = "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
override = true
[extensions.grants]
fs = ["ro:.", "rw:/tmp/x"]
exec = ["git", "go*"]
env = ["HOME"]
[extensions.limits]
memory_mb = 32
timeout_ms = 1000
[extensions.config]
level = 3
ratio = 0.5
tags = ["a", "b"]
nested = { deep = true }
when = 1979-05-27
[[extensions]]
name = "shared"
path = "/abs/shared.wasm"
sha256 = "` + shaA + `"
`
	tests := []struct {
		name    string
		global  string // "" = no global file
		project string // "" = no project file
		check   func(t *testing.T, e env, c *Config)
	}{
		{
			name: "no files gives defaults",
			check: func(t *testing.T, e env, c *Config) {
				want := &Config{
					ToolExecution: "parallel",
					ProjectRoot:   e.proj,
					GlobalFile:    filepath.Join(e.home, "pi.toml"),
				}
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got  %+v\nwant %+v", c, want)
				}
			},
		},
		{
			name:   "global only",
			global: global,
			check: func(t *testing.T, e env, c *Config) {
				if c.ToolExecution != "sequential" || c.Model.Name != "global-model" || c.Model.BaseURL != "http://localhost:8080/v1" ||
					c.Model.APIKeyEnv != "GLOBAL_KEY" || c.Model.Images == nil || !*c.Model.Images {
					t.Errorf("scalars: %+v %+v", c.ToolExecution, c.Model)
				}
				if !reflect.DeepEqual(c.Tools, Tools{Active: []string{"read", "bash"}, ActiveAt: filepath.Join(e.home, "pi.toml") + ":8", Bash: Bash{Shell: "/bin/sh", CommandPrefix: "set -e"}}) {
					t.Errorf("tools: %+v", c.Tools)
				}
				if got := extNames(c); !reflect.DeepEqual(got, []string{"aaa", "shared"}) {
					t.Errorf("extensions: %v", got)
				}
				a := c.Extensions[0]
				if a.Path != filepath.Join(e.home, "ext", "aaa.wasm") || a.Scope != "global" || a.File != filepath.Join(e.home, "pi.toml") || a.Line != 12 {
					t.Errorf("aaa: %+v", a)
				}
				if !reflect.DeepEqual(c.Files, []string{filepath.Join(e.home, "pi.toml")}) || c.ProjectFile != "" || c.ProjectRoot != e.proj {
					t.Errorf("files: %v project %q root %q", c.Files, c.ProjectFile, c.ProjectRoot)
				}
			},
		},
		{
			name:    "project over global",
			global:  global,
			project: project,
			check: func(t *testing.T, e env, c *Config) {
				// scalars: the project's where it sets them, else the global's
				if c.ToolExecution != "sequential" || c.Model.Name != "project-model" || c.Model.APIKeyEnv != "GLOBAL_KEY" ||
					c.Model.Images == nil || *c.Model.Images {
					t.Errorf("scalars: %q %+v", c.ToolExecution, c.Model)
				}
				// tools.active replaces; bash keys override one by one
				if !reflect.DeepEqual(c.Tools, Tools{Active: []string{"read", "loc"}, ActiveAt: filepath.Join(e.proj, "pi.toml") + ":5", Bash: Bash{Shell: "/bin/sh", CommandPrefix: "source .venv/bin/activate"}}) {
					t.Errorf("tools: %+v", c.Tools)
				}
				// global first; the project's "shared" takes the global one's place
				if got := extNames(c); !reflect.DeepEqual(got, []string{"aaa", "shared", "loc"}) {
					t.Errorf("extensions: %v", got)
				}
				shared := c.Extensions[1]
				if shared.Scope != "project" || shared.Path != "/abs/shared.wasm" || shared.SHA256 != shaA || shared.Line != 26 {
					t.Errorf("shared: %+v", shared)
				}
				want := Extension{
					Name:     "loc",
					Path:     filepath.Join(e.proj, ".pi", "extensions", "loc.wasm"),
					SHA256:   shaC,
					Override: true,
					Grants:   Grants{FS: []string{"ro:.", "rw:/tmp/x"}, Exec: []string{"git", "go*"}, Env: []string{"HOME"}},
					Limits:   Limits{MemoryMB: 32, TimeoutMS: 1000},
					Config: map[string]any{
						"level": int64(3), "ratio": 0.5, "tags": []any{"a", "b"},
						"nested": map[string]any{"deep": true}, "when": "1979-05-27",
					},
					Scope: "project",
					File:  filepath.Join(e.proj, "pi.toml"),
					Line:  8,
				}
				if !reflect.DeepEqual(c.Extensions[2], want) {
					t.Errorf("loc:\n got  %+v\n want %+v", c.Extensions[2], want)
				}
				if !reflect.DeepEqual(c.Files, []string{filepath.Join(e.home, "pi.toml"), filepath.Join(e.proj, "pi.toml")}) {
					t.Errorf("files: %v", c.Files)
				}
				if c.ProjectFile != filepath.Join(e.proj, "pi.toml") || c.ProjectRoot != e.proj || len(c.Warnings) != 0 {
					t.Errorf("project %q root %q warnings %q", c.ProjectFile, c.ProjectRoot, c.Warnings)
				}
			},
		},
		{
			name:    "empty tools.active is set, not nil",
			project: "[tools]\nactive = []\n",
			check: func(t *testing.T, e env, c *Config) {
				if c.Tools.Active == nil || len(c.Tools.Active) != 0 {
					t.Errorf("active = %#v, want empty non-nil", c.Tools.Active)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.global != "" {
				writeFile(t, filepath.Join(e.home, "pi.toml"), tt.global)
			}
			if tt.project != "" {
				writeFile(t, filepath.Join(e.proj, "pi.toml"), tt.project)
			}
			c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, e, c)
		})
	}
}

func extNames(c *Config) []string {
	var names []string
	for _, e := range c.Extensions {
		names = append(names, e.Name)
	}
	return names
}

func TestLoadFindsProject(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.proj, "pi.toml"), "[model]\nname = \"m\"\n[[extensions]]\nname = \"x\"\npath = \"x.wasm\"\nsha256 = \""+shaA+"\"\n")
	deep := filepath.Join(e.proj, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// The project root: pi.toml is searched from the cwd up to it.
	if err := os.Mkdir(filepath.Join(e.proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A folder named pi.toml on the way up is not a config file.
	if err := os.MkdirAll(filepath.Join(e.proj, "a", "pi.toml"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Load(LoadOptions{Cwd: deep, PIHome: e.home, Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProjectRoot != e.proj || c.ProjectFile != filepath.Join(e.proj, "pi.toml") || c.Model.Name != "m" {
		t.Errorf("root %q file %q model %q", c.ProjectRoot, c.ProjectFile, c.Model.Name)
	}
	if len(c.Extensions) != 1 || c.Extensions[0].Path != filepath.Join(e.proj, "x.wasm") {
		t.Errorf("extension path not relative to its pi.toml: %+v", c.Extensions)
	}

	t.Run("config file replaces the project's", func(t *testing.T) {
		other := writeFile(t, filepath.Join(t.TempDir(), "conf", "other.toml"), "[model]\nname = \"other\"\n[[extensions]]\nname = \"y\"\npath = \"y.wasm\"\nsha256 = \""+shaA+"\"\n")
		c, err := Load(LoadOptions{Cwd: deep, PIHome: e.home, ConfigFile: other, Trust: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.Model.Name != "other" || c.ProjectFile != other || c.ProjectRoot != deep {
			t.Errorf("model %q file %q root %q", c.Model.Name, c.ProjectFile, c.ProjectRoot)
		}
		if len(c.Extensions) != 1 || c.Extensions[0].Path != filepath.Join(filepath.Dir(other), "y.wasm") {
			t.Errorf("extensions: %+v", c.Extensions)
		}
	})
	t.Run("missing config file is an error", func(t *testing.T) {
		missing := filepath.Join(e.proj, "nope.toml")
		_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, ConfigFile: "nope.toml"})
		if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("global file is not also the project file", func(t *testing.T) {
		// Working inside PI_HOME: its pi.toml is read once, as the global file.
		writeFile(t, filepath.Join(e.home, "pi.toml"), "[model]\nname = \"g\"\n")
		c, err := Load(LoadOptions{Cwd: e.home, PIHome: e.home})
		if err != nil {
			t.Fatal(err)
		}
		if c.ProjectFile != "" || len(c.Files) != 1 || c.Model.Name != "g" || c.ProjectRoot != e.home {
			t.Errorf("files %v project %q", c.Files, c.ProjectFile)
		}
	})
}

func TestDefaultPIHome(t *testing.T) {
	t.Setenv("PI_HOME", "/opt/pi-home")
	if got := DefaultPIHome(); got != "/opt/pi-home" {
		t.Errorf("with PI_HOME: %q", got)
	}
	t.Setenv("PI_HOME", "")
	t.Setenv("HOME", "/home/someone")
	if got := DefaultPIHome(); got != "/home/someone/.pi/agent" {
		t.Errorf("without PI_HOME: %q", got)
	}
	// Load uses it when LoadOptions.PIHome is empty.
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "pi.toml"), "[model]\nname = \"from-env-home\"\n")
	t.Setenv("PI_HOME", home)
	c, err := Load(LoadOptions{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Name != "from-env-home" || c.GlobalFile != filepath.Join(home, "pi.toml") {
		t.Errorf("model %q global %q", c.Model.Name, c.GlobalFile)
	}
}

// TestLoadErrors checks every kind of problem: the message, the key and
// the line. FILE stands for the pi.toml's path.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"unknown top-level key", "tool_execution = \"parallel\"\nmodels = {}\n",
			`FILE:2: unknown key "models" (known keys: tool_execution, model, tools, extensions, permissions, compaction, mcp, sandbox, checkpoints, skills, agents, fleet)`},
		{"unknown implicit table", "[model]\nname = \"m\"\n\n[foo.bar]\nx = 1\n",
			`FILE:4: unknown key "foo" (known keys: tool_execution, model, tools, extensions, permissions, compaction, mcp, sandbox, checkpoints, skills, agents, fleet)`},
		{"unknown nested key", "[model]\nname = \"m\"\n\n[tools]\nactive = []\n\n[tools.bash]\npromt = \"x\"\n",
			`FILE:8: unknown key "tools.bash.promt" (known keys: command_prefix, shell, pass_env, full_output_max_mb, default_timeout)`},
		{"unknown key in a dotted key", "model.nme = \"x\"\n",
			`FILE:1: unknown key "model.nme" (known keys: base_url, name, provider, api_key_env, images, context_window)`},
		{"unknown quoted key", "[model]\n\"na me\" = 1\n",
			`FILE:2: unknown key "model.\"na me\"" (known keys: base_url, name, provider, api_key_env, images, context_window)`},
		{"unknown key in second extension", ext("a", shaA) + ext("b", shaB) + "sha265 = \"x\"\n",
			`FILE:9: unknown key "extensions[1].sha265" (known keys: name, path, sha256, override, grants, limits, config)`},
		{"unknown grant", ext("a", shaA) + "[extensions.grants]\nnet = [\"x\"]\n",
			`FILE:6: unknown key "extensions[0].grants.net" (known keys: fs, exec, env, http, tools, llm, model)`},
		{"llm grant type", ext("a", shaA) + "[extensions.grants]\nllm = \"yes\"\n",
			`FILE:6: key "extensions[0].grants.llm" must be a boolean, got string`},
		{"llm_tokens zero", ext("a", shaA) + "[extensions.limits]\nllm_tokens = 0\n",
			`FILE:6: key "extensions[0].limits.llm_tokens" must be positive, got 0 (leave it out for the default)`},
		{"unknown limit", ext("a", shaA) + "limits = { memory_mb = 1, cpu = 2 }\n",
			`FILE:5: unknown key "extensions[0].limits.cpu" (known keys: memory_mb, timeout_ms, kv_mb, llm_tokens)`},
		{"tool_execution value", "\ntool_execution = \"paralel\"\n",
			`FILE:2: key "tool_execution": must be "parallel" or "sequential", got "paralel"`},
		{"tool_execution type", "tool_execution = true\n",
			`FILE:1: key "tool_execution" must be a string, got boolean`},
		{"model not a table", "model = \"gpt\"\n",
			`FILE:1: key "model" must be a table, got string`},
		{"model.images type", "[model]\nimages = \"yes\"\n",
			`FILE:2: key "model.images" must be a boolean, got string`},
		{"model.name empty", "[model]\nname = \"\"\n",
			`FILE:2: key "model.name" must not be empty`},
		{"model.base_url", "[model]\nbase_url = \"localhost:8080\"\n",
			`FILE:2: key "model.base_url": "localhost:8080" is not an http(s) URL`},
		{"model.api_key_env", "[model]\napi_key_env = \"MY-KEY\"\n",
			`FILE:2: key "model.api_key_env": "MY-KEY" is not an environment variable name`},
		{"tools.active not an array", "[tools]\nactive = \"read\"\n",
			`FILE:2: key "tools.active" must be an array of strings, got string`},
		{"tools.active element on its own line", "[tools]\nactive = [\n  \"read\",\n  # comment\n  42,\n]\n",
			`FILE:5: key "tools.active[1]" must be a string, got integer`},
		{"tools.active duplicate", "[tools]\nactive = [\"read\", \"bash\", \"read\"]\n",
			`FILE:2: key "tools.active[2]": tool "read" is listed twice`},
		{"tools.bash.shell empty", "[tools.bash]\nshell = \"\"\n",
			`FILE:2: key "tools.bash.shell" must not be empty`},
		{"extensions not an array", "extensions = { name = \"x\" }\n",
			`FILE:1: key "extensions" must be an array of tables ([[extensions]]), got table`},
		{"missing sha256", "[[extensions]]\nname = \"a\"\npath = \"a.wasm\"\n",
			`FILE:1: key "extensions[0].sha256" is required`},
		{"sha256 not 64 hex", ext("a", "abc123"),
			`FILE:4: key "extensions[0].sha256" must be 64 hex digits, got "abc123"`},
		{"sha256 with a non-hex digit", ext("a", "g"+shaA[1:]),
			`FILE:4: key "extensions[0].sha256" must be 64 hex digits, got "g` + shaA[1:] + `"`},
		{"bad extension name", ext("Loc", shaA),
			`FILE:2: key "extensions[0].name": "Loc" is not an extension name (want [a-z][a-z0-9_-]*)`},
		{"name starting with a digit", ext("1x", shaA),
			`FILE:2: key "extensions[0].name": "1x" is not an extension name (want [a-z][a-z0-9_-]*)`},
		{"duplicate extension names", ext("a", shaA) + "\n" + ext("b", shaB) + "\n" + ext("a", shaC),
			`FILE:12: duplicate extension name "a" (first at line 2)`},
		{"empty path", "[[extensions]]\nname = \"a\"\npath = \"\"\nsha256 = \"" + shaA + "\"\n",
			`FILE:3: key "extensions[0].path" must not be empty`},
		{"path with ~", "[[extensions]]\nname = \"a\"\npath = \"~/x.wasm\"\nsha256 = \"" + shaA + "\"\n",
			`FILE:3: key "extensions[0].path": "~/x.wasm": ~ is not expanded; write the path absolute or relative to this file's folder`},
		{"fs grant with ~", ext("a", shaA) + "[extensions.grants]\nfs = [\"ro:~/notes\"]\n",
			`FILE:6: key "extensions[0].grants.fs[0]": bad fs grant "ro:~/notes": ~ is not expanded; write PATH relative to the project root or absolute`},
		{"override type", ext("a", shaA) + "override = \"yes\"\n",
			`FILE:5: key "extensions[0].override" must be a boolean, got string`},
		{"fs grant without mode", ext("a", shaA) + "[extensions.grants]\nfs = [\"ro:.\", \"./src\"]\n",
			`FILE:6: key "extensions[0].grants.fs[1]": bad fs grant "./src": want "ro:PATH" or "rw:PATH"`},
		{"fs grant with empty path", ext("a", shaA) + "[extensions.grants]\nfs = [\"rw:\"]\n",
			`FILE:6: key "extensions[0].grants.fs[0]": bad fs grant "rw:": empty PATH`},
		{"exec pattern", ext("a", shaA) + "[extensions.grants]\nexec = [\"git[\"]\n",
			`FILE:6: key "extensions[0].grants.exec[0]": bad exec pattern "git[": syntax error in pattern`},
		{"exec pattern with a dangling escape", ext("a", shaA) + "[extensions.grants]\nexec = [\"git status*\", \"git log \\\\\"]\n",
			`FILE:6: key "extensions[0].grants.exec[1]": bad exec pattern "git log \\": it ends in a lone \ (write \\ for a backslash)`},
		{"env name", ext("a", shaA) + "[extensions.grants]\nenv = [\"HOME\", \"A=B\"]\n",
			`FILE:6: key "extensions[0].grants.env[1]": "A=B" is not an environment variable name`},
		{"negative memory", ext("a", shaA) + "[extensions.limits]\nmemory_mb = -64\n",
			`FILE:6: key "extensions[0].limits.memory_mb" must be positive, got -64 (leave it out for the default)`},
		{"zero timeout", ext("a", shaA) + "[extensions.limits]\ntimeout_ms = 0\n",
			`FILE:6: key "extensions[0].limits.timeout_ms" must be positive, got 0 (leave it out for the default)`},
		{"memory too large", ext("a", shaA) + "[extensions.limits]\nmemory_mb = 8192\n",
			`FILE:6: key "extensions[0].limits.memory_mb" must be at most 4096 MiB, got 8192`},
		{"limit as float", ext("a", shaA) + "[extensions.limits]\ntimeout_ms = 1.5\n",
			`FILE:6: key "extensions[0].limits.timeout_ms" must be an integer, got float`},
		{"config not a table", ext("a", shaA) + "config = [1]\n",
			`FILE:5: key "extensions[0].config" must be a table, got array`},
		{"config NaN", ext("a", shaA) + "[extensions.config]\nratio = nan\n",
			`FILE:6: key "extensions[0].config.ratio": NaN cannot be passed as JSON`},
		{"error inside an inline array of tables", "extensions = [\n  { name = \"a\", path = \"a.wasm\", sha256 = \"" + shaA + "\" },\n  { name = \"b\", path = \"b.wasm\", sha256 = \"x\" },\n]\n",
			`FILE:3: key "extensions[1].sha256" must be 64 hex digits, got "x"`},
		{"line of a key after a multi-line string", "[tools.bash]\ncommand_prefix = \"\"\"\n[model]\nname = 1\n\"\"\"\nshel = \"x\"\n",
			`FILE:6: unknown key "tools.bash.shel" (known keys: command_prefix, shell, pass_env, full_output_max_mb, default_timeout)`},
		// Syntax errors: line and column from the byte offset.
		{"syntax: unterminated string", "[model]\nname = \"x\n",
			`FILE:2:10: syntax error: strings cannot contain newlines`},
		{"syntax: unterminated table header", "[tools\n",
			`FILE:1:7: syntax error: expected '.' or ']' to end table name, but got '\n' instead`},
		{"syntax: duplicate key", "[model]\nname = \"a\"\nname = \"b\"\n",
			`FILE:3:1: syntax error: Key 'model.name' has already been defined.`},
		{"syntax: column counts characters", "[model]\nname = \"é\n",
			`FILE:2:10: syntax error: strings cannot contain newlines`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			file := writeFile(t, filepath.Join(e.proj, "pi.toml"), tt.toml)
			_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
			if err == nil {
				t.Fatal("no error")
			}
			want := strings.ReplaceAll(tt.want, "FILE", file)
			if err.Error() != want {
				t.Errorf("got  %s\nwant %s", err, want)
			}
			ce, ok := err.(*Error) // one problem: the *Error itself
			if !ok || ce.File != file || ce.Line == 0 {
				t.Errorf("not an *Error naming the file and a line: %#v", err)
			}
		})
	}
}

// ext is a minimal [[extensions]] block of 4 lines.
func ext(name, sha string) string {
	return "[[extensions]]\nname = \"" + name + "\"\npath = \"" + name + ".wasm\"\nsha256 = \"" + sha + "\"\n"
}

// TestLoadManyErrors checks that all problems of both files are reported
// in order, against a golden file.
func TestLoadManyErrors(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.home, "pi.toml"), "[model]\nimages = 1\n")
	writeFile(t, filepath.Join(e.proj, "pi.toml"), `tool_execution = "paralel"
[model]
name = 3
[tools]
active = ["read",
  "bad name",
  "read"]
[tools.bash]
promt = "x"
[[extensions]]
name = "loc"
path = "a.wasm"
sha256 = "00"
[[extensions]]
name = "Loc"
path = "a.wasm"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
grants = { fs = ["rx:."], env = ["A-B"] }
limits.memory_mb = -1
[extensions.config]
x = nan
`)
	_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home})
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.ReplaceAll(strings.ReplaceAll(err.Error(), e.home, "$PI_HOME"), e.proj, "$PROJECT") + "\n"
	golden(t, filepath.Join("testdata", "errors", "many.golden"), got)
}

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		writeFile(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestLoadUnreadable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads unreadable files")
	}
	e := newEnv(t)
	file := writeFile(t, filepath.Join(e.home, "pi.toml"), "")
	if err := os.Chmod(file, 0); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home})
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("err = %v", err)
	}
}

func TestWith(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.proj, "pi.toml"), "[model]\nname = \"m\"\nimages = true\n[tools]\nactive = [\"read\"]\n"+ext("a", shaA)+"[extensions.config]\nk = [1, 2]\n")
	c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		o       Overrides
		wantErr string
		check   func(t *testing.T, n *Config)
	}{
		{name: "zero overrides keep everything", check: func(t *testing.T, n *Config) {
			if !reflect.DeepEqual(n, c) {
				t.Errorf("got %+v", n)
			}
		}},
		{name: "values replace", o: Overrides{Model: "x", BaseURL: "http://h/v1", APIKeyEnv: "K", ToolExecution: "sequential", Images: boolPtr(false), Tools: []string{"bash"}},
			check: func(t *testing.T, n *Config) {
				want := Model{BaseURL: "http://h/v1", Name: "x", APIKeyEnv: "K", Images: boolPtr(false)}
				if !reflect.DeepEqual(n.Model, want) || n.ToolExecution != "sequential" || !reflect.DeepEqual(n.Tools.Active, []string{"bash"}) || n.Tools.ActiveAt != "" {
					t.Errorf("got %+v %q %v", n.Model, n.ToolExecution, n.Tools.Active)
				}
			}},
		{name: "empty tool list is no tools", o: Overrides{Tools: []string{}}, check: func(t *testing.T, n *Config) {
			if n.Tools.Active == nil || len(n.Tools.Active) != 0 {
				t.Errorf("active = %#v", n.Tools.Active)
			}
		}},
		{name: "bad tool_execution", o: Overrides{ToolExecution: "both"}, wantErr: `override tool_execution: must be "parallel" or "sequential", got "both"`},
		{name: "bad base url", o: Overrides{BaseURL: "ftp://x"}, wantErr: `override model.base_url: "ftp://x" is not an http(s) URL`},
		{name: "bad key env", o: Overrides{APIKeyEnv: "A B"}, wantErr: `override model.api_key_env: "A B" is not an environment variable name`},
		{name: "bad tool name", o: Overrides{Tools: []string{"read", "read"}}, wantErr: `override tools.active: tool "read" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := c.With(tt.o)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, n)
			// The original is untouched, even through shared-looking fields.
			n.Tools.Active = append(n.Tools.Active[:0], "changed")
			*n.Model.Images = !*n.Model.Images
			n.Extensions[0].Config["k"].([]any)[0] = "changed"
			if c.Tools.Active[0] != "read" || !*c.Model.Images || c.Extensions[0].Config["k"].([]any)[0] != int64(1) {
				t.Errorf("With changed the original: %+v", c)
			}
		})
	}
}

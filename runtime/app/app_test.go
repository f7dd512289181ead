package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	testproject "github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
)

// TestMain makes the test binary a child subreaper, as pi's main does (a
// program that embeds runtimes should), and runs the tests.
func TestMain(m *testing.M) {
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := plugin.Main(m)
	mcpserver.Cleanup()
	os.Exit(code)
}

// The project helpers are the test kit's (shared with
// runtime/conversation's tests).
var (
	project = testproject.New
	write   = testproject.Write
	sha     = testproject.SHA
)

// helloExtension writes a global pi.toml that loads the hello-wat example.
func helloExtension(t *testing.T, home string) {
	wasm := plugin.BuildWAT(t, "examples/plugins/hello-wat/hello.wat")
	write(t, filepath.Join(home, "pi.toml"), testproject.Extension(t, "hello-wat", wasm))
}

func TestOpenWiresConfigExtensionsAndTools(t *testing.T) {
	dir, home := project(t)
	helloExtension(t, home)
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if exts := rt.Extensions(); len(exts) != 1 || exts[0].Name != "hello-wat" {
		t.Fatalf("extensions = %+v", exts)
	}
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"read", "bash", "edit", "write", "hello"}) {
		t.Errorf("active = %v", got)
	}
	res, err := rt.CallTool(context.Background(), "hello", "c1", json.RawMessage(`{"name":"lib"}`), nil)
	if err != nil || res.IsError || res.Text() != "Hello, lib!" {
		t.Errorf("hello = %+v, %v", res, err)
	}
	// A registered tool that is not active can still be called by name.
	write(t, filepath.Join(dir, "a.txt"), "x")
	res, err = rt.CallTool(context.Background(), "ls", "c2", json.RawMessage(`{}`), nil)
	if err != nil || !strings.Contains(res.Text(), "a.txt") {
		t.Errorf("ls = %+v, %v", res, err)
	}
	_, err = rt.CallTool(context.Background(), "nope", "c3", json.RawMessage(`{}`), nil)
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "hello") {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestOpenActiveSetPrecedence(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(dir, "pi.toml"), "[tools]\nactive = [\"read\", \"grep\"]\n")
	rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"read", "grep"}) {
		t.Errorf("pi.toml's active set: %v", got)
	}
	rt.Close()
	rt, err = Open(context.Background(), Options{Cwd: dir, PIHome: home, Tools: []string{"ls"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"ls"}) {
		t.Errorf("Options.Tools: %v", got)
	}
	rt.Close()
}

func TestOpenRefusesWhatCannotLoad(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), "[[extensions]]\nname = \"gone\"\npath = \"/no/such.wasm\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\n")
	if _, err := Open(context.Background(), Options{Cwd: dir, PIHome: home}); err == nil || !strings.Contains(err.Error(), "such.wasm") {
		t.Errorf("missing module: %v", err)
	}
	if _, err := Open(context.Background(), Options{Cwd: filepath.Join(dir, "missing")}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("missing cwd: %v", err)
	}
}

func TestResolveModel(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "env-key-0123456789")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OTHER_KEY", "other-key-0123456789")
	cfg := func(m config.Model) *config.Config { return &config.Config{Model: m} }
	tests := []struct {
		name    string
		cfg     *config.Config
		o       ModelOptions
		want    ModelSettings
		wantErr string
	}{
		{"env key, default URL", cfg(config.Model{Name: "m"}), ModelOptions{},
			ModelSettings{BaseURL: llm.DefaultBaseURL, Name: "m", APIKey: "env-key-0123456789", KeySource: "OPENAI_API_KEY", Images: true}, ""},
		{"flags win", cfg(config.Model{Name: "m", BaseURL: "http://toml"}), ModelOptions{Name: "f", BaseURL: "http://flag", APIKey: "flag-key"},
			ModelSettings{BaseURL: "http://flag", Name: "f", APIKey: "flag-key", KeySource: "--api-key", Images: true}, ""},
		{"pi.toml over env", cfg(config.Model{Name: "m", BaseURL: "http://toml", APIKeyEnv: "OTHER_KEY"}), ModelOptions{},
			ModelSettings{BaseURL: "http://toml", Name: "m", APIKey: "other-key-0123456789", KeySource: "OTHER_KEY", Images: true}, ""},
		{"unset api_key_env falls back to OPENAI_API_KEY", cfg(config.Model{Name: "m", APIKeyEnv: "UNSET_KEY_VAR"}), ModelOptions{},
			ModelSettings{BaseURL: llm.DefaultBaseURL, Name: "m", APIKey: "env-key-0123456789", KeySource: "OPENAI_API_KEY", Images: true}, ""},
		{"no name", cfg(config.Model{}), ModelOptions{}, ModelSettings{}, "no model name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveModel(tt.cfg, nil, tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.BaseURL != tt.want.BaseURL || got.Name != tt.want.Name || got.APIKey != tt.want.APIKey || got.KeySource != tt.want.KeySource || got.Images != tt.want.Images {
				t.Errorf("got %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
	t.Setenv("OPENAI_API_KEY", "")
	if _, err := ResolveModel(cfg(config.Model{Name: "m"}), nil, ModelOptions{}); !errors.Is(err, ErrNoModel) {
		t.Errorf("no key, default URL: %v", err)
	}
	if s, err := ResolveModel(cfg(config.Model{Name: "m"}), nil, ModelOptions{BaseURL: "http://localhost:11434/v1"}); err != nil || s.APIKey != "" {
		t.Errorf("a local endpoint needs no key: %+v, %v", s, err)
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestActiveToolNotLoadedIsAWarning: a name in [tools] active or --tools
// that no loaded tool has is a warning naming it, where it was asked for,
// why it may be missing and the closest name, and is left out: the start
// goes on. An untrusted clone of a project whose tools.active names an
// extension's tool starts with the tools it can have.
func TestActiveToolNotLoadedIsAWarning(t *testing.T) {
	dir, home := project(t)
	var warns []string
	open := func(o Options) *Runtime {
		t.Helper()
		warns = nil
		o.Cwd, o.PIHome, o.OnWarning = dir, home, func(w string) { warns = append(warns, w) }
		rt, err := Open(context.Background(), o)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(rt.Close)
		return rt
	}
	rt := open(Options{Tools: []string{"lss", "read"}})
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"read"}) {
		t.Errorf("--tools lss,read: active %v", got)
	}
	if w := strings.Join(warns, "\n"); !strings.Contains(w, `active tool "lss" (--tools) is not loaded, so it is left out`) || !strings.Contains(w, `did you mean "ls"?`) {
		t.Errorf("--tools typo warning: %q", w)
	}

	// A clone of a project that installs an extension, not trusted here.
	wasm := plugin.BuildWAT(t, "examples/plugins/hello-wat/hello.wat")
	write(t, filepath.Join(dir, "pi.toml"), fmt.Sprintf("[tools]\nactive = [\"read\", \"hello\"]\n\n[[extensions]]\nname = \"hello-wat\"\npath = %q\nsha256 = %q\n", wasm, sha(t, wasm)))
	rt = open(Options{})
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"read"}) {
		t.Errorf("untrusted clone: active %v", got)
	}
	if w := strings.Join(warns, "\n"); !strings.Contains(w, `active tool "hello" (tools.active in `+filepath.Join(dir, "pi.toml")+`:2) is not loaded`) || !strings.Contains(w, "this project is not trusted") {
		t.Errorf("untrusted clone warning: %q", w)
	}
	// Trusted, the same file loads the tool.
	rt = open(Options{Trust: true})
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"read", "hello"}) || len(warns) != 0 {
		t.Errorf("trusted: active %v, warnings %q", got, warns)
	}
}

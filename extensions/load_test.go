package extensions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

func TestLoadAndExecute(t *testing.T) {
	var logs logBuffer
	h := newHost(t, extensions.Options{Logger: newLogger(&logs)})
	path := wat(t, "good")
	sum, err := extensions.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, h, extensions.Spec{Name: "good", Path: path, SHA256: sum, Scope: "project", Grants: extensions.Grants{Exec: []string{"echo"}, FS: []string{"ro:."}}})
	info := e.Info()
	if info.Name != "good" || info.Version != "1.2.3" || info.SHA256 != sum || info.Path != path || info.Scope != "project" {
		t.Fatalf("info = %+v", info)
	}
	if len(info.Tools) != 5 || info.Tools[0].Name != "hello" || info.Tools[0].PromptSnippet != "hello: say hello" {
		t.Fatalf("tools = %+v", info.Tools)
	}
	if strings.Join(info.Hooks, ",") != "tool_call,tool_result,bash_spawn,event" {
		t.Fatalf("hooks = %v", info.Hooks)
	}
	if strings.Join(info.Wants.Exec, ",") != "echo" {
		t.Fatalf("wants = %+v", info.Wants)
	}
	if got := h.Extensions(); len(got) != 1 || got[0] != e {
		t.Fatalf("Extensions() = %v", got)
	}

	defs := e.Definitions()
	d := defs[0]
	want := tool.Source{Kind: tool.SourceExtension, Name: "good", Version: "1.2.3", Path: path, SHA256: sum}
	if d.Source != want || d.Label != "Hello" || d.Description != "Says hello." || len(d.PromptGuidelines) != 1 || d.ExecutionMode != "" {
		t.Fatalf("definition = %+v", d)
	}
	if defs[1].ExecutionMode != tool.Sequential || defs[1].Label != "progress" {
		t.Fatalf("progress definition = %+v", defs[1])
	}

	ts := tools(t, e)
	t.Run("hello", func(t *testing.T) {
		r := run(context.Background(), ts, nil, "hello", `{"name":"x"}`)
		if r.IsError || r.Text() != "hello from wat" {
			t.Fatalf("hello = %+v", r)
		}
		if det, _ := r.Details.(json.RawMessage); string(det) != `{"by":"good"}` {
			t.Fatalf("details = %#v", r.Details)
		}
		if !strings.Contains(logs.String(), "ext.good: hello called") {
			t.Fatalf("guest log line missing from logs:\n%s", logs.String())
		}
	})
	t.Run("ok false becomes an error result", func(t *testing.T) {
		r := run(context.Background(), ts, nil, "fail", `{}`)
		if !r.IsError || r.Text() != "the fail tool always fails" {
			t.Fatalf("fail = %+v", r)
		}
	})
	t.Run("emit becomes updates", func(t *testing.T) {
		var updates []tool.Result
		r := tool.Run(context.Background(), ts, nil, "progress", "c", []byte(`{}`), func(p tool.Result) { updates = append(updates, p) })
		if r.Text() != "progress done" || len(updates) != 2 || updates[0].Text() != "step 1" || updates[1].Text() != "step 2" {
			t.Fatalf("progress = %+v, updates %+v", r, updates)
		}
		if det, _ := updates[1].Details.(json.RawMessage); string(det) != `{"step":2}` {
			t.Fatalf("update details = %#v", updates[1].Details)
		}
	})
	t.Run("exec granted, through host_take", func(t *testing.T) {
		r := run(context.Background(), ts, nil, "exec", `{}`)
		det, _ := r.Details.(json.RawMessage)
		var ans struct {
			OK     bool
			Result struct {
				Stdout   string
				ExitCode int
			}
		}
		if err := json.Unmarshal(det, &ans); err != nil || !ans.OK || ans.Result.Stdout != "hi from exec\n" || ans.Result.ExitCode != 0 {
			t.Fatalf("exec answer = %s (%v)", det, err)
		}
	})
	t.Run("exec not granted is an error answer", func(t *testing.T) {
		r := run(context.Background(), ts, nil, "forbidden", `{}`)
		det, _ := r.Details.(json.RawMessage)
		var ans struct {
			OK    bool
			Error struct{ Message string }
		}
		if err := json.Unmarshal(det, &ans); err != nil || ans.OK || !strings.HasPrefix(ans.Error.Message, "permission denied: ") || !strings.Contains(ans.Error.Message, `"rm"`) {
			t.Fatalf("forbidden answer = %s (%v)", det, err)
		}
		if _, err := os.Stat("/nonexistent-pi-test"); err == nil {
			t.Fatal("the denied command ran")
		}
	})
}

func TestLoadRefusals(t *testing.T) {
	good := wat(t, "good")
	sum, _ := extensions.FileSHA256(good)
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "junk.wasm")
	os.WriteFile(notWasm, []byte("this is not wasm"), 0o644)
	file := filepath.Join(dir, "file.txt")
	os.WriteFile(file, []byte("x"), 0o644)

	cases := []struct {
		name string
		spec extensions.Spec
		want []string
	}{
		{"sha256 mismatch", extensions.Spec{Name: "good", Path: good, SHA256: strings.Repeat("0", 64)},
			[]string{"load extension good (" + good + ")", "sha256 mismatch", sum}},
		{"missing marker", extensions.Spec{Name: "nomarker", Path: wat(t, "nomarker")},
			[]string{"load extension nomarker", "missing export pi_abi_v1"}},
		{"unknown import", extensions.Spec{Name: "unknownimport", Path: wat(t, "unknownimport")},
			[]string{"load extension unknownimport", "unknown import env.foo"}},
		{"not wasm", extensions.Spec{Name: "junk", Path: notWasm},
			[]string{"load extension junk", "compile", "not a WebAssembly module"}},
		{"missing file", extensions.Spec{Name: "gone", Path: filepath.Join(dir, "gone.wasm")},
			[]string{"load extension gone", "no such file"}},
		{"relative path", extensions.Spec{Name: "good", Path: "good.wasm"},
			[]string{"load extension good", "path must be absolute"}},
		{"name differs from init", extensions.Spec{Name: "other", Path: good},
			[]string{"load extension other", `init says the extension is named "good"`}},
		{"bad name", extensions.Spec{Name: "Bad Name", Path: good},
			[]string{"load extension Bad Name", "must match"}},
		{"bad fs grant", extensions.Spec{Name: "good", Path: good, Grants: extensions.Grants{FS: []string{"rx:."}}},
			[]string{"load extension good", `grants.fs: parse fs grant "rx:."`}},
		{"fs grant is a file", extensions.Spec{Name: "good", Path: good, Grants: extensions.Grants{FS: []string{"ro:" + file}}},
			[]string{"load extension good", "is not a directory"}},
		{"fs grant missing", extensions.Spec{Name: "good", Path: good, Grants: extensions.Grants{FS: []string{"ro:nope"}}},
			[]string{"load extension good", "no such file"}},
		{"negative memory", extensions.Spec{Name: "good", Path: good, Limits: extensions.Limits{MemoryMB: -1}},
			[]string{"load extension good", "memory_mb"}},
		{"memory too big", extensions.Spec{Name: "good", Path: good, Limits: extensions.Limits{MemoryMB: 5000}},
			[]string{"load extension good", "limits.memory_mb must be at most 4096 MiB, got 5000"}},
		{"negative timeout", extensions.Spec{Name: "good", Path: good, Limits: extensions.Limits{TimeoutMS: -5}},
			[]string{"load extension good", "limits.timeout_ms must be positive, got -5"}},
		// The bounds are extspec's, the same pi.toml's decoder applies.
		{"timeout over a day", extensions.Spec{Name: "good", Path: good, Limits: extensions.Limits{TimeoutMS: 86_400_001}},
			[]string{"load extension good", "limits.timeout_ms must be at most 86400000 ms"}},
		{"bad env grant", extensions.Spec{Name: "good", Path: good, Grants: extensions.Grants{Env: []string{"A-B"}}},
			[]string{"load extension good", `grants.env: "A-B" is not an environment variable name`}},
		{"env grant with =", extensions.Spec{Name: "good", Path: good, Grants: extensions.Grants{Env: []string{"A=B"}}},
			[]string{"load extension good", `grants.env: "A=B" is not an environment variable name`}},
		{"bad exec grant", extensions.Spec{Name: "good", Path: good, Grants: extensions.Grants{Exec: []string{" git"}}},
			[]string{"load extension good", `grants.exec: bad exec pattern " git"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, extensions.Options{ProjectRoot: dir})
			_, err := h.Load(context.Background(), c.spec)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if n := len(h.Extensions()); n != 0 {
				t.Errorf("%d extensions loaded after a refusal", n)
			}
		})
	}
}

func TestLoadDuplicateName(t *testing.T) {
	h := newHost(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: wat(t, "good")})
	_, err := h.Load(context.Background(), extensions.Spec{Name: "good", Path: wat(t, "good")})
	if err == nil || !strings.Contains(err.Error(), `an extension named "good" is already loaded`) {
		t.Fatalf("err = %v", err)
	}
}

func TestInspect(t *testing.T) {
	path := wat(t, "good")
	info, err := extensions.Inspect(context.Background(), path, extensions.Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := extensions.FileSHA256(path)
	if info.Name != "good" || info.SHA256 != sum || len(info.Tools) != 5 || len(info.Grants.FS)+len(info.Grants.Exec)+len(info.Grants.Env) != 0 {
		t.Fatalf("info = %+v", info)
	}
	if _, err := extensions.Inspect(context.Background(), wat(t, "nomarker"), extensions.Options{}); err == nil || !strings.Contains(err.Error(), "pi_abi_v1") {
		t.Fatalf("inspect nomarker: %v", err)
	}
}

func TestFileSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	os.WriteFile(p, []byte("abc"), 0o644)
	got, err := extensions.FileSHA256(p)
	// sha256("abc") is a published test vector (FIPS 180-2, appendix B.1).
	if err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("FileSHA256 = %q, %v", got, err)
	}
	if _, err := extensions.FileSHA256(p + ".missing"); err == nil {
		t.Fatal("no error for a missing file")
	}
}

func TestClosedHost(t *testing.T) {
	h, err := extensions.NewHost(context.Background(), extensions.Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, h, extensions.Spec{Path: wat(t, "good")})
	ts := tools(t, e)
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := run(context.Background(), ts, nil, "hello", `{}`)
	if !r.IsError || !strings.Contains(r.Text(), "closed") {
		t.Fatalf("call after close = %+v", r)
	}
	if _, err := h.Load(context.Background(), extensions.Spec{Path: wat(t, "good")}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("load after close: %v", err)
	}
}

package manage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
)

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUpdateReplacesModuleKeepingEverythingElse(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	v1, v2 := plugin.ScaffoldWAT(t, "greet", "v1", `["tool_call"]`), plugin.ScaffoldWAT(t, "greet", "v2", `["tool_call"]`)
	scope := Scope{Cwd: dir, PIHome: home}
	inst, err := Install(ctx, InstallRequest{Scope: scope, Source: v1,
		Grants: config.Grants{FS: []string{"ro:."}}, Limits: config.Limits{MemoryMB: 32},
		Config: map[string]any{"greeting": "Hi", "n": int64(3)}})
	if err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(dir, "pi.toml")
	// The user adds a comment and a setting of their own.
	before := "# mine\n" + string(readFile(t, toml)) + "\n[model]\nname = \"m\"\n"
	write(t, toml, before)
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}

	up, err := Update(ctx, UpdateRequest{Scope: scope, Name: "greet", Source: v2})
	if err != nil {
		t.Fatal(err)
	}
	if !up.Copied || !up.Trusted || up.OldSHA256 != inst.SHA256 || up.SHA256 != sha(t, v2) || up.Path != inst.Dest {
		t.Errorf("updated = %+v", up)
	}
	if want := strings.Replace(before, inst.SHA256, sha(t, v2), 1); string(readFile(t, toml)) != want {
		t.Errorf("pi.toml:\n%s\nwant\n%s", readFile(t, toml), want)
	}
	if !bytes.Equal(readFile(t, inst.Dest), readFile(t, v2)) {
		t.Error("the installed module is not the new one")
	}
	if ok, err := config.IsTrusted(home, toml); !ok || err != nil {
		t.Errorf("trust lost: %v %v", ok, err)
	}
	rt, err := app.Open(ctx, app.Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if text, _ := callText(t, rt, "greet", `{}`); text != "Hello from v2!" {
		t.Errorf("greet = %q", text)
	}
	e, _ := rt.Config().Extension("greet")
	if e.Limits.MemoryMB != 32 || len(e.Grants.FS) != 1 || e.Config["greeting"] != "Hi" {
		t.Errorf("entry after update = %+v", e)
	}

	// Again with the same file: nothing to do, nothing changes.
	again, err := Update(ctx, UpdateRequest{Scope: scope, Name: "greet", Source: v2})
	if err != nil || again.OldSHA256 != again.SHA256 {
		t.Errorf("same file again: %+v, %v", again, err)
	}
}

// Every refused update leaves pi.toml, the installed module and the trust
// record as they were.
func TestUpdateRefusedWritesNothing(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := Scope{Cwd: dir, PIHome: home}
	v1 := plugin.ScaffoldWAT(t, "greet", "v1", `["tool_call"]`)
	inst, err := Install(ctx, InstallRequest{Scope: scope, Source: v1})
	if err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(dir, "pi.toml")
	garbage := filepath.Join(t.TempDir(), "garbage.wasm")
	write(t, garbage, "not wasm")
	other := plugin.ScaffoldWAT(t, "other", "x", `[]`)
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "keep me")

	for _, c := range []struct {
		name, source, want string
		setup              func()
	}{
		{"greet", garbage, "inspect", nil},
		{"greet", filepath.Join(t.TempDir(), "missing.wasm"), "no such file", nil},
		{"greet", other, `declares the extension "other"`, nil},
		{"nope", v1, "no extension of that name", nil},
		// A link planted where the module is: never written through.
		{"greet", v1, "not a regular file", func() {
			os.Remove(inst.Dest)
			if err := os.Symlink(secret, inst.Dest); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		if c.setup != nil {
			c.setup()
		}
		tomlBefore, modBefore := readFile(t, toml), readLink(t, inst.Dest)
		_, err := Update(ctx, UpdateRequest{Scope: scope, Name: c.name, Source: c.source})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s from %s: err = %v, want %q", c.name, c.source, err, c.want)
		}
		if !bytes.Equal(readFile(t, toml), tomlBefore) || readLink(t, inst.Dest) != modBefore {
			t.Errorf("%s from %s: something was written", c.name, c.source)
		}
	}
	if string(readFile(t, secret)) != "keep me" {
		t.Error("the link's target was written")
	}
}

// readLink describes what is at p: a link's target, or the file's bytes.
func readLink(t *testing.T, p string) string {
	if target, err := os.Readlink(p); err == nil {
		return "link:" + target
	}
	return string(readFile(t, p))
}

// An entry whose path is the author's own build output: update with a
// FILE does not overwrite it; update without one pins what is there, and
// a module that changed behind pi's back until then is disabled.
func TestUpdateWithoutFileRepinsInPlace(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := Scope{Cwd: dir, PIHome: home}
	build := filepath.Join(dir, "build", "greet.wasm")
	if err := os.MkdirAll(filepath.Dir(build), 0o755); err != nil {
		t.Fatal(err)
	}
	v1, v2 := readFile(t, plugin.ScaffoldWAT(t, "greet", "v1", `[]`)), plugin.ScaffoldWAT(t, "greet", "v2", `[]`)
	write(t, build, string(v1))
	toml := filepath.Join(dir, "pi.toml")
	write(t, toml, "[[extensions]]\nname = \"greet\"\npath = \"build/greet.wasm\"\nsha256 = \""+sha(t, build)+"\"\n")
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}
	if _, err := Update(ctx, UpdateRequest{Scope: scope, Name: "greet", Source: v2}); err == nil || !strings.Contains(err.Error(), "where pi installs modules") {
		t.Errorf("update over a build output: %v", err)
	}
	if !bytes.Equal(readFile(t, build), v1) {
		t.Fatal("the build output was overwritten")
	}
	rt, err := app.Open(ctx, app.Options{Cwd: dir, PIHome: home}) // a run with the pinned build
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := callText(t, rt, "greet", `{}`); text != "Hello from v1!" {
		t.Errorf("greet = %q", text)
	}
	rt.Close()
	write(t, build, string(readFile(t, v2))) // the author rebuilds in place
	rt, err = app.Open(ctx, app.Options{Cwd: dir, PIHome: home, OnWarning: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, rt, "greet", `{}`); !isErr || !strings.Contains(text, "pi ext update greet") {
		t.Errorf("changed module answered %q", text)
	}
	rt.Close()
	up, err := Update(ctx, UpdateRequest{Scope: scope, Name: "greet"})
	if err != nil || up.Copied || up.SHA256 != sha(t, build) || !up.Trusted {
		t.Fatalf("re-pin: %+v, %v", up, err)
	}
	rt, err = app.Open(ctx, app.Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if text, _ := callText(t, rt, "greet", `{}`); text != "Hello from v2!" {
		t.Errorf("greet = %q", text)
	}
}

func TestUpdateKeepsAnUntrustedProjectUntrusted(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	toml := filepath.Join(dir, "pi.toml")
	write(t, toml, "[model]\nname = \"m\"\n") // a project pi.toml nobody trusted
	scope := Scope{Cwd: dir, PIHome: home}
	if _, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`)}); err != nil {
		t.Fatal(err)
	}
	up, err := Update(ctx, UpdateRequest{Scope: scope, Name: "greet", Source: plugin.ScaffoldWAT(t, "greet", "v2", `[]`)})
	if err != nil || up.Trusted {
		t.Fatalf("update: %+v, %v", up, err)
	}
	if ok, _ := config.IsTrusted(home, toml); ok {
		t.Error("update trusted a project that was not trusted")
	}
}

func TestRemoveLeavesNothingInstallCreated(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	for _, global := range []bool{false, true} {
		scope := Scope{Cwd: dir, PIHome: home, Global: global}
		if _, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`)}); err != nil {
			t.Fatal(err)
		}
		rm, err := Remove(scope, "greet")
		if err != nil {
			t.Fatal(err)
		}
		root, extDir := dir, filepath.Join(dir, ".pi", "extensions")
		if global {
			root, extDir = home, filepath.Join(home, "extensions")
		}
		for _, p := range []string{filepath.Join(root, "pi.toml"), extDir} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("global=%v: %s left behind (tidied %v)", global, p, rm.Tidied)
			}
		}
		if !global {
			if _, err := os.Lstat(filepath.Join(dir, ".pi")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf(".pi left behind")
			}
			if ok, _ := config.IsTrusted(home, filepath.Join(dir, "pi.toml")); ok {
				t.Error("trust record of the deleted pi.toml left")
			}
		}
	}
	// What the user had stays: a pi.toml with other content, a .pi folder
	// with other files.
	toml := filepath.Join(dir, "pi.toml")
	write(t, toml, "# mine\n")
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".pi"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".pi", "notes"), "x")
	scope := Scope{Cwd: dir, PIHome: home}
	if _, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(scope, "greet"); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, toml)); got != "# mine\n" {
		t.Errorf("pi.toml = %q", got)
	}
	if ok, err := config.IsTrusted(home, toml); !ok || err != nil {
		t.Errorf("trust lost by the removal: %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pi", "notes")); err != nil {
		t.Error(".pi/notes removed")
	}
}

func TestInstallWritesExtConfig(t *testing.T) {
	dir, home := project(t)
	cfg := map[string]any{"greeting": "Hi", "list": []any{"a", int64(1)}, "t": map[string]any{"depth": int64(2)}}
	inst, err := Install(context.Background(), InstallRequest{Scope: Scope{Cwd: dir, PIHome: home}, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.LoadOptions{Cwd: dir, PIHome: home, Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := c.Extension("greet")
	if got, _ := json.Marshal(e.Config); string(got) != `{"greeting":"Hi","list":["a",1],"t":{"depth":2}}` {
		t.Errorf("config = %s (pi.toml %s)", got, inst.TOML)
	}
}

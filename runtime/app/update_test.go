package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/scaffold"
	"github.com/pi-go/pi/runtime/config"
)

// watExt builds a real module from the WAT scaffold of `pi ext new`: an
// extension named name whose tool name answers "Hello from TEXT!" and
// which declares hooks (a JSON list such as ["tool_call"]; its tool_call
// hook blocks arguments holding "rm -rf"). Different texts give different
// modules (and sha256s) of the same extension.
func watExt(t *testing.T, name, text, hooks string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, err := scaffold.Write(scaffold.Options{Dir: dir, Name: name, Lang: "wat"}); err != nil {
		t.Fatal(err)
	}
	watFile := filepath.Join(dir, name+".wat")
	src, err := os.ReadFile(watFile)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(src), "Hello from "+name+"!", "Hello from "+text+"!")
	s = strings.Replace(s, `\"hooks\":[\"tool_call\"]`, `\"hooks\":`+strings.ReplaceAll(hooks, `"`, `\"`), 1)
	if err := os.WriteFile(watFile, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name+".wasm")
	if b, err := execWat2wasm(watFile, out); err != nil {
		t.Fatalf("wat2wasm (Debian package wabt): %v\n%s", err, b)
	}
	return out
}

func execWat2wasm(src, out string) ([]byte, error) {
	return exec.Command("wat2wasm", src, "-o", out).CombinedOutput()
}

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
	v1, v2 := watExt(t, "greet", "v1", `["tool_call"]`), watExt(t, "greet", "v2", `["tool_call"]`)
	scope := ExtensionScope{Cwd: dir, PIHome: home}
	inst, err := InstallExtension(ctx, InstallRequest{ExtensionScope: scope, Source: v1,
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

	up, err := UpdateExtension(ctx, UpdateRequest{ExtensionScope: scope, Name: "greet", Source: v2})
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
	rt, err := Open(ctx, Options{Cwd: dir, PIHome: home})
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
	again, err := UpdateExtension(ctx, UpdateRequest{ExtensionScope: scope, Name: "greet", Source: v2})
	if err != nil || again.OldSHA256 != again.SHA256 {
		t.Errorf("same file again: %+v, %v", again, err)
	}
}

// Every refused update leaves pi.toml, the installed module and the trust
// record as they were.
func TestUpdateRefusedWritesNothing(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := ExtensionScope{Cwd: dir, PIHome: home}
	v1 := watExt(t, "greet", "v1", `["tool_call"]`)
	inst, err := InstallExtension(ctx, InstallRequest{ExtensionScope: scope, Source: v1})
	if err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(dir, "pi.toml")
	garbage := filepath.Join(t.TempDir(), "garbage.wasm")
	write(t, garbage, "not wasm")
	other := watExt(t, "other", "x", `[]`)
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
		_, err := UpdateExtension(ctx, UpdateRequest{ExtensionScope: scope, Name: c.name, Source: c.source})
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
	scope := ExtensionScope{Cwd: dir, PIHome: home}
	build := filepath.Join(dir, "build", "greet.wasm")
	if err := os.MkdirAll(filepath.Dir(build), 0o755); err != nil {
		t.Fatal(err)
	}
	v1, v2 := readFile(t, watExt(t, "greet", "v1", `[]`)), watExt(t, "greet", "v2", `[]`)
	write(t, build, string(v1))
	toml := filepath.Join(dir, "pi.toml")
	write(t, toml, "[[extensions]]\nname = \"greet\"\npath = \"build/greet.wasm\"\nsha256 = \""+sha(t, build)+"\"\n")
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateExtension(ctx, UpdateRequest{ExtensionScope: scope, Name: "greet", Source: v2}); err == nil || !strings.Contains(err.Error(), "where pi installs modules") {
		t.Errorf("update over a build output: %v", err)
	}
	if !bytes.Equal(readFile(t, build), v1) {
		t.Fatal("the build output was overwritten")
	}
	rt, err := Open(ctx, Options{Cwd: dir, PIHome: home}) // a run with the pinned build
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := callText(t, rt, "greet", `{}`); text != "Hello from v1!" {
		t.Errorf("greet = %q", text)
	}
	rt.Close()
	write(t, build, string(readFile(t, v2))) // the author rebuilds in place
	rt, err = Open(ctx, Options{Cwd: dir, PIHome: home, OnWarning: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, rt, "greet", `{}`); !isErr || !strings.Contains(text, "pi ext update greet") {
		t.Errorf("changed module answered %q", text)
	}
	rt.Close()
	up, err := UpdateExtension(ctx, UpdateRequest{ExtensionScope: scope, Name: "greet"})
	if err != nil || up.Copied || up.SHA256 != sha(t, build) || !up.Trusted {
		t.Fatalf("re-pin: %+v, %v", up, err)
	}
	rt, err = Open(ctx, Options{Cwd: dir, PIHome: home})
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
	scope := ExtensionScope{Cwd: dir, PIHome: home}
	if _, err := InstallExtension(ctx, InstallRequest{ExtensionScope: scope, Source: watExt(t, "greet", "v1", `[]`)}); err != nil {
		t.Fatal(err)
	}
	up, err := UpdateExtension(ctx, UpdateRequest{ExtensionScope: scope, Name: "greet", Source: watExt(t, "greet", "v2", `[]`)})
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
		scope := ExtensionScope{Cwd: dir, PIHome: home, Global: global}
		if _, err := InstallExtension(ctx, InstallRequest{ExtensionScope: scope, Source: watExt(t, "greet", "v1", `[]`)}); err != nil {
			t.Fatal(err)
		}
		rm, err := RemoveExtension(scope, "greet")
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
	scope := ExtensionScope{Cwd: dir, PIHome: home}
	if _, err := InstallExtension(ctx, InstallRequest{ExtensionScope: scope, Source: watExt(t, "greet", "v1", `[]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveExtension(scope, "greet"); err != nil {
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
	inst, err := InstallExtension(context.Background(), InstallRequest{ExtensionScope: ExtensionScope{Cwd: dir, PIHome: home}, Source: watExt(t, "greet", "v1", `[]`), Config: cfg})
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

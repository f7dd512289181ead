package manage

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
)

func TestInstallAndRemoveExtension(t *testing.T) {
	dir, home := project(t)
	wasm := plugin.BuildWAT(t, "examples/plugins/hello-wat/hello.wat")
	scope := Scope{Cwd: dir, PIHome: home}

	// A refused install writes nothing.
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	write(t, bad, "not wasm")
	if _, err := Install(context.Background(), InstallRequest{Scope: scope, Source: bad}); err == nil {
		t.Fatal("a file that is not WebAssembly was installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "pi.toml")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote pi.toml (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pi")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote .pi/ (%v)", err)
	}

	inst, err := Install(context.Background(), InstallRequest{Scope: scope, Source: wasm,
		Grants: config.Grants{FS: []string{"ro:."}}})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Info.Name != "hello-wat" || inst.Scope != config.ScopeProject || !inst.Trusted || inst.SHA256 != sha(t, wasm) {
		t.Errorf("installed %+v", inst)
	}
	// A new project is trusted, so the extension loads.
	rt, err := app.Open(context.Background(), app.Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	if exts := rt.Extensions(); len(exts) != 1 || exts[0].Grants.FS[0] != "ro:"+mustReal(t, dir) {
		t.Errorf("loaded %+v", exts)
	}
	rt.Close()
	list, err := ListExtensions(context.Background(), scope)
	if err != nil || len(list) != 1 || list[0].Problem != "" || !slices.Equal(list[0].Tools, []string{"hello"}) {
		t.Errorf("list = %+v, %v", list, err)
	}
	// Installing it again is refused and changes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, "pi.toml"))
	if _, err := Install(context.Background(), InstallRequest{Scope: scope, Source: wasm}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second install: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "pi.toml"))
	if string(before) != string(after) {
		t.Errorf("a refused install changed pi.toml")
	}

	rm, err := Remove(scope, "hello-wat")
	if err != nil || rm.Deleted != inst.Dest {
		t.Errorf("remove = %+v, %v", rm, err)
	}
	if list, _ := ListExtensions(context.Background(), scope); len(list) != 0 {
		t.Errorf("after remove: %+v", list)
	}
	// The pi.toml and folders the install created are gone with it
	// (TestRemoveLeavesNothingInstallCreated has the details).
	if _, err := os.Stat(filepath.Join(dir, "pi.toml")); !os.IsNotExist(err) {
		t.Errorf("the emptied pi.toml was left: %v", err)
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

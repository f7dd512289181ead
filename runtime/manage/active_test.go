package manage

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
)

// snapshot reads every file under dir (and their modes), to compare a
// tree before and after a refused transaction byte for byte.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if d.Type().IsRegular() {
			v += ":" + string(readFile(t, p))
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstallRefusesAToolClash: a module whose tool has a built-in's name,
// or the name of an installed extension's tool, is refused without
// --override and writes nothing (the project's files and PI_HOME's
// pi.toml and trust.json are byte for byte as they were); with Override
// it installs, and a run loads it.
func TestInstallRefusesAToolClash(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := Scope{Cwd: dir, PIHome: home}
	write(t, filepath.Join(dir, "pi.toml"), "# mine\n[model]\nname = \"m\"\n")
	if err := config.Trust(home, filepath.Join(dir, "pi.toml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`)}); err != nil {
		t.Fatal(err)
	}
	before, trustBefore := snapshot(t, dir), string(readFile(t, filepath.Join(home, "trust.json")))

	for _, c := range []struct{ name, source, want string }{
		{"built-in", plugin.ScaffoldWATTool(t, "myread", "read", "x", `[]`), `its tool "read" has the name of a built-in tool`},
		{"installed", plugin.ScaffoldWATTool(t, "other", "greet", "x", `[]`), `its tool "greet" has the name of a tool of the extension greet (` + filepath.Join(dir, "pi.toml")},
	} {
		_, err := Install(ctx, InstallRequest{Scope: scope, Source: c.source})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--override") {
			t.Errorf("%s clash: %v", c.name, err)
		}
		if after := snapshot(t, dir); !maps.Equal(before, after) {
			t.Errorf("%s clash: the refused install changed the project:\nbefore %q\nafter  %q", c.name, slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
		}
		if got := string(readFile(t, filepath.Join(home, "trust.json"))); got != trustBefore {
			t.Errorf("%s clash: trust.json changed", c.name)
		}
	}

	if _, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWATTool(t, "myread", "read", "override", `[]`), Override: true}); err != nil {
		t.Fatalf("install with override: %v", err)
	}
	rt, err := app.Open(ctx, app.Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatalf("a run after the override install: %v", err)
	}
	defer rt.Close()
	if text, _ := callText(t, rt, "read", `{}`); text != "Hello from override!" {
		t.Errorf("read = %q, want the extension's", text)
	}
}

// TestInstallIntoAnActiveList: a project whose [tools] active leaves the
// new tool out is told so (Off, ActiveAt) and its pi.toml gets only the
// extension; with Activate the tool is added to the list, the rest of the
// file stays byte for byte, the project stays trusted and a run has the
// tool active. Removing the extension later leaves the name in the list,
// and a run still starts (a warning).
func TestInstallIntoAnActiveList(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := Scope{Cwd: dir, PIHome: home}
	toml := filepath.Join(dir, "pi.toml")
	const head = "[tools]\nactive = [\n  \"read\", # the one I need\n  \"grep\",\n]\n"
	write(t, toml, head)
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}
	inst, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inst.Off, []string{"greet"}) || inst.ActiveAt != toml+":2" || inst.Activated != nil {
		t.Errorf("without Activate: %+v", inst.Active)
	}
	if !strings.HasPrefix(string(readFile(t, toml)), head) {
		t.Errorf("the list changed without Activate:\n%s", readFile(t, toml))
	}
	if _, err := Remove(scope, "greet"); err != nil {
		t.Fatal(err)
	}

	inst, err = Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`), Activate: true})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Off != nil || !slices.Equal(inst.Activated, []string{"greet"}) || inst.ActiveFile != toml || inst.ActivateErr != nil {
		t.Errorf("with Activate: %+v", inst.Active)
	}
	want := "[tools]\nactive = [\n  \"read\", # the one I need\n  \"grep\", \"greet\",\n]\n"
	if got := string(readFile(t, toml)); !strings.HasPrefix(got, want) {
		t.Errorf("activated list:\n%s\nwant it to start with\n%s", got, want)
	}
	if ok, err := config.IsTrusted(home, toml); !ok || err != nil {
		t.Errorf("the project is no longer trusted: %v, %v", ok, err)
	}
	rt, err := app.Open(ctx, app.Options{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.Registry().ActiveNames(); !slices.Equal(got, []string{"read", "grep", "greet"}) {
		t.Errorf("active = %v", got)
	}
	rt.Close()

	if _, err := Remove(scope, "greet"); err != nil {
		t.Fatal(err)
	}
	var warns []string
	rt, err = app.Open(ctx, app.Options{Cwd: dir, PIHome: home, OnWarning: func(w string) { warns = append(warns, w) }})
	if err != nil {
		t.Fatalf("a run after pi ext remove: %v", err)
	}
	defer rt.Close()
	if w := strings.Join(warns, "\n"); !strings.Contains(w, `active tool "greet"`) || !strings.Contains(w, "was its extension removed?") {
		t.Errorf("warnings after remove: %q", w)
	}
}

// TestEditsRefuseAnUnreadableTrust: when the project's trust cannot be
// read (a corrupt trust.json), a removal is refused before anything is
// written, as an install is; it used to go on and leave the project's
// trust however it fell.
func TestEditsRefuseAnUnreadableTrust(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := Scope{Cwd: dir, PIHome: home}
	if _, err := Install(ctx, InstallRequest{Scope: scope, Source: plugin.ScaffoldWAT(t, "greet", "v1", `[]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddMCPServer(ctx, MCPAddRequest{Scope: scope, Server: MCPServer{Name: "s", Command: []string{"true"}}}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(home, "trust.json"), "{not json")
	before := snapshot(t, dir)
	if _, err := Remove(scope, "greet"); err == nil || !strings.Contains(err.Error(), "trust") {
		t.Errorf("remove with a corrupt trust.json: %v", err)
	}
	if _, err := RemoveMCPServer(scope, "s"); err == nil || !strings.Contains(err.Error(), "trust") {
		t.Errorf("mcp remove with a corrupt trust.json: %v", err)
	}
	if after := snapshot(t, dir); !maps.Equal(before, after) {
		t.Errorf("a refused removal changed the project")
	}
}

// TestMCPAddActivate: adding a server to a project with [tools] active
// says its tools are off; with Activate and Tools the named tools are
// added; with Activate and no Tools the server is started once and the
// tools it lists are added.
func TestMCPAddActivate(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	scope := Scope{Cwd: dir, PIHome: home}
	toml := filepath.Join(dir, "pi.toml")
	write(t, toml, "[tools]\nactive = [\"read\"]\n")
	if err := config.Trust(home, toml); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.Server(t)

	add, err := AddMCPServer(ctx, MCPAddRequest{Scope: scope, Server: MCPServer{Name: "a", Command: []string{srv}}})
	if err != nil || add.ActiveAt != toml+":2" || add.Activated != nil || !add.Trusted {
		t.Fatalf("add without Activate: %+v, %v", add, err)
	}
	add, err = AddMCPServer(ctx, MCPAddRequest{Scope: scope, Server: MCPServer{Name: "b", Command: []string{srv}, Tools: []string{"echo"}}, Activate: true})
	if err != nil || !slices.Equal(add.Activated, []string{"mcp__b__echo"}) {
		t.Fatalf("add with Tools: %+v, %v", add, err)
	}
	add, err = AddMCPServer(ctx, MCPAddRequest{Scope: scope, Server: MCPServer{Name: "c", Command: []string{srv}}, Activate: true})
	if err != nil || add.ListErr != "" || !slices.Contains(add.Activated, "mcp__c__echo") {
		t.Fatalf("add listing its tools: %+v, %v", add, err)
	}
	cfg, err := config.Load(config.LoadOptions{Cwd: dir, PIHome: home})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tools.Active; len(got) < 3 || !slices.Equal(got[:2], []string{"read", "mcp__b__echo"}) || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "mcp__a__") }) {
		t.Errorf("active = %v", got)
	}
	if _, err := os.Stat(toml); err != nil {
		t.Fatal(err)
	}
}

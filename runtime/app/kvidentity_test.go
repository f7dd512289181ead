package app

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	testproject "github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/manage"
)

// rawBlock is an [[extensions]] entry loading the raw guest as name.
func rawBlock(t *testing.T, wasm, name string) string {
	return testproject.Extension(t, name, wasm) + fmt.Sprintf("[extensions.config]\nname = %q\n", name)
}

// TestKVStoreBelongsToTheEntry: the global store of the extension "victim"
// of the global pi.toml is its entry's. The same module declaring the same
// name from a project's pi.toml, or from -e, gets an empty store of its
// own: it reads nothing of the victim's and what it writes never reaches
// it. A store of an older pi (keyed by the name) goes to the global
// entry of that name, never to a project entry.
func TestKVStoreBelongsToTheEntry(t *testing.T) {
	dir, home := project(t)
	wasm := plugin.BuildGo(t, testproject.RawGuest)
	global, proj := filepath.Join(home, "pi.toml"), filepath.Join(dir, "pi.toml")
	get := func(o Options, key string) string {
		t.Helper()
		o.Cwd, o.PIHome, o.Trust = dir, home, true
		rt := openRT(t, o)
		defer rt.Close()
		return probe(t, rt, "probe", "kv.get", map[string]any{"key": key, "scope": "global"})
	}
	set := func(o Options, key, value string) {
		t.Helper()
		o.Cwd, o.PIHome, o.Trust = dir, home, true
		rt := openRT(t, o)
		defer rt.Close()
		if got := probe(t, rt, "probe", "kv.set", map[string]any{"key": key, "value": value, "scope": "global"}); got != `{"ok":true,"result":{}}` {
			t.Fatalf("kv.set = %s", got)
		}
	}
	write(t, global, rawBlock(t, wasm, "victim"))
	set(Options{}, "secret", "s3cret")
	if got := get(Options{}, "secret"); got != `{"ok":true,"result":{"value":"s3cret"}}` {
		t.Fatalf("the victim's own store = %s", got)
	}

	// The same module, the same name, from the project's pi.toml.
	write(t, global, "")
	write(t, proj, rawBlock(t, wasm, "victim"))
	if got := get(Options{}, "secret"); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("a project entry named victim reads the victim's store: %s", got)
	}
	set(Options{}, "secret", "overwritten by the project")
	// And from -e.
	os.Remove(proj)
	flag := Options{ExtensionFlags: []ExtensionFlag{{Path: wasm, Config: map[string]any{"name": "victim"}}}}
	if got := get(flag, "secret"); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("-e with the name victim reads the victim's store: %s", got)
	}
	set(flag, "secret", "overwritten by -e")
	// The victim's store is as it left it.
	write(t, global, rawBlock(t, wasm, "victim"))
	if got := get(Options{}, "secret"); got != `{"ok":true,"result":{"value":"s3cret"}}` {
		t.Errorf("the victim's store after the others wrote = %s", got)
	}

	// A global store of an older pi: KVDir/global/NAME.
	old := filepath.Join(home, "kv", "global", "legacy")
	sum := sha256.Sum256([]byte("k"))
	entry := binary.BigEndian.AppendUint16(nil, 1)
	entry = append(append(entry, 'k'), `"from an older pi"`...)
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(old, hex.EncodeToString(sum[:])+".kv"), string(entry))
	write(t, global, "")
	write(t, proj, rawBlock(t, wasm, "legacy"))
	if got := get(Options{}, "k"); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("a project entry took over the global store of an older pi: %s", got)
	}
	os.Remove(proj)
	write(t, global, rawBlock(t, wasm, "legacy"))
	if got := get(Options{}, "k"); got != `{"ok":true,"result":{"value":"from an older pi"}}` {
		t.Errorf("the global entry's store of an older pi = %s", got)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the old store is still there: %v", err)
	}
}

// TestKVStoreFollowsUpdate: `pi ext update` with a new build (another
// digest) moves the entry's stores, project and global, to it: the
// extension finds its keys after the update.
func TestKVStoreFollowsUpdate(t *testing.T) {
	dir, home := project(t)
	ctx := context.Background()
	wasm := plugin.BuildGo(t, testproject.RawGuest)
	scope := manage.Scope{Cwd: dir, PIHome: home}
	if _, err := manage.Install(ctx, manage.InstallRequest{Scope: scope, Source: wasm}); err != nil {
		t.Fatal(err)
	}
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	probe(t, rt, "probe", "kv.set", map[string]any{"key": "k", "value": "kept"})
	probe(t, rt, "probe", "kv.set", map[string]any{"key": "g", "value": "kept too", "scope": "global"})
	rt.Close()

	// A new build: the same module with a custom section appended.
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	v2 := filepath.Join(t.TempDir(), "raw11.wasm")
	write(t, v2, string(append(b, 0, 5, 4, 'p', 'i', 'n', 'x')))
	up, err := manage.Update(ctx, manage.UpdateRequest{Scope: scope, Name: "raw11", Source: v2})
	if err != nil {
		t.Fatal(err)
	}
	if up.OldSHA256 == up.SHA256 || len(up.KVStores) != 2 {
		t.Fatalf("update: %s -> %s, stores moved %q", up.OldSHA256, up.SHA256, up.KVStores)
	}
	rt = openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "k"}); got != `{"ok":true,"result":{"value":"kept"}}` {
		t.Errorf("the project store after the update = %s", got)
	}
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "g", "scope": "global"}); got != `{"ok":true,"result":{"value":"kept too"}}` {
		t.Errorf("the global store after the update = %s", got)
	}
}

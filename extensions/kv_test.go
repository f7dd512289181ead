package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestKVKeysNeverNamePaths: keys are hashed into file names, so no key
// reaches outside the store, and every key reads back as itself.
func TestKVKeysNeverNamePaths(t *testing.T) {
	e := golden11Ext(t, Grants{})
	ctx := context.Background()
	keys := []string{"../../../evil", "/etc/passwd", "a/b/../../c", "a\x00b", "ROOT", strings.Repeat("é", 256), "."}
	for i, k := range keys {
		req, _ := json.Marshal(map[string]any{"method": "kv.set", "params": map[string]any{"key": k, "value": i}})
		if got := string(e.handleHostCall(ctx, req)); got != `{"ok":true,"result":{}}` {
			t.Fatalf("kv.set %q = %s", k, got)
		}
	}
	for i, k := range keys {
		req, _ := json.Marshal(map[string]any{"method": "kv.get", "params": map[string]any{"key": k}})
		if got, want := string(e.handleHostCall(ctx, req)), fmt.Sprintf(`{"ok":true,"result":{"value":%d}}`, i); got != want {
			t.Errorf("kv.get %q = %s, want %s", k, got, want)
		}
	}
	base := e.host.opts.KVDir
	var files []string
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	st, _ := e.kvStore("")
	for _, f := range files {
		if filepath.Dir(f) != st.dir && filepath.Base(f) != kvRootFile {
			t.Errorf("a file outside the store: %s", f)
		}
	}
	if len(files) != len(keys)+2 { // and ROOT, USAGE
		t.Errorf("%d files for %d keys: %v", len(files), len(keys), files)
	}
	req := []byte(`{"method":"kv.list","params":{}}`)
	var list struct{ Result struct{ Keys []string } }
	json.Unmarshal(e.handleHostCall(ctx, req), &list)
	if len(list.Result.Keys) != len(keys) {
		t.Errorf("kv.list = %q", list.Result.Keys)
	}
}

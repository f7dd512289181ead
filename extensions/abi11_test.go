package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDecodeInit11: the 1.1 fields of init's answer are checked.
func TestDecodeInit11(t *testing.T) {
	base := `{"name":"x","version":"1","tools":[],"hooks":[]`
	for _, tc := range []struct{ extra, want string }{
		{`,"commands":[{"name":"todo","description":"d"}]`, ""},
		{`,"commands":[{"name":"Todo","description":"d"}]`, `name "Todo" must match [a-z][a-z0-9-]*`},
		{`,"commands":[{"name":"/todo","description":"d"}]`, `must match`},
		{`,"commands":[{"name":"to_do","description":"d"}]`, `must match`},
		{`,"commands":[{"name":"a","description":"d"},{"name":"a","description":"e"}]`, "command /a declared twice"},
		{`,"commands":[{"name":"help","description":"d"}]`, "command /help clashes with the built-in command /help"},
		{`,"commands":[{"name":"permissions","description":"d"}]`, "clashes with the built-in command /permissions"},
		{`,"commands":[{"name":"a"}]`, ""},
		{`,"events":["message_end","agent_end"]`, ""},
		{`,"events":["message_update"]`, `unknown event type "message_update"`},
		{`,"configSchema":{"type":"object"}`, ""},
		{`,"configSchema":[1]`, "configSchema must be a JSON Schema object"},
		{`,"configSchema":{"type":"nope"}`, "configSchema"},
		{`,"hooks":["input","before_agent_start","stop"]`, ""}, // the later "hooks" wins
		{`,"commandz":[]`, `unknown field "commandz"`},
	} {
		raw := base + tc.extra + "}"
		_, err := decodeInit(json.RawMessage(raw))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.extra, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.extra, err, tc.want)
		}
	}
}

// TestToolCallAnswerIsOneOf: ask goes alone; with block or input the
// answer is malformed (a fault: the call is blocked).
func TestToolCallAnswerIsOneOf(t *testing.T) {
	for _, raw := range []string{`{"ask":"q","block":true}`, `{"ask":"q","input":{"a":1}}`, `{"ask":1}`} {
		if _, err := decodeToolCall(json.RawMessage(raw)); err == nil {
			t.Errorf("%s decoded", raw)
		}
	}
	d, err := decodeToolCall(json.RawMessage(`{"ask":"may I?"}`))
	if err != nil || d.Ask != "may I?" || d.Block || d.Input != nil {
		t.Errorf("ask = %+v, %v", d, err)
	}
	// A 1.0 answer keeps its meaning: input is ignored when blocking.
	d, err = decodeToolCall(json.RawMessage(`{"block":true,"input":{"a":1}}`))
	if err != nil || !d.Block || d.Input != nil {
		t.Errorf("block+input = %+v, %v", d, err)
	}
}

// TestCtxMutex: a waiter gives up when its context ends; the lock still
// works afterwards.
func TestCtxMutex(t *testing.T) {
	var m ctxMutex
	m.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := m.LockContext(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockContext on a held lock = %v", err)
	}
	got := make(chan error)
	go func() { got <- m.LockContext(context.Background()) }()
	m.Unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	m.Unlock()
	if err := m.LockContext(ctx); err != nil { // free: taken even with a dead context
		t.Fatalf("LockContext on a free lock = %v", err)
	}
	m.Unlock()
}

// TestValidateConfigMessages: field-level messages naming the key path.
func TestValidateConfigMessages(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"greeting":{"type":"string"},"list":{"type":"array","items":{"type":"integer","minimum":1}},"nested":{"type":"object","properties":{"a b":{"type":"boolean"}}}},"required":["greeting"],"additionalProperties":false}`)
	err := ValidateConfig(schema, map[string]any{"greeting": 5, "list": []any{int64(1), int64(0), "x"}, "nested": map[string]any{"a b": "yes"}, "extra": true}, "extensions[2].config")
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		`extensions[2].config.extra: unknown key (the extension's configSchema does not allow it)`,
		`extensions[2].config.greeting: expected string, got number`,
		`extensions[2].config.list[1]: minimum: got 0, want 1`,
		`extensions[2].config.list[2]: expected integer, got string`,
		`extensions[2].config.nested."a b": expected boolean, got string`,
	}
	if strings.Join(ce.Problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(ce.Problems, "\n"), strings.Join(want, "\n"))
	}
	if err := ValidateConfig(schema, nil, ""); err == nil || !strings.Contains(err.Error(), "config.greeting: missing (the extension requires it)") {
		t.Errorf("missing: %v", err)
	}
	missing, err := ValidateConfigValues(schema, nil, "c")
	if err != nil || strings.Join(missing, ",") != "c.greeting" {
		t.Errorf("values only: %v, %v", missing, err)
	}
}

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
	if len(files) != len(keys)+1 { // and ROOT
		t.Errorf("%d files for %d keys: %v", len(files), len(keys), files)
	}
	req := []byte(`{"method":"kv.list","params":{}}`)
	var list struct{ Result struct{ Keys []string } }
	json.Unmarshal(e.handleHostCall(ctx, req), &list)
	if len(list.Result.Keys) != len(keys) {
		t.Errorf("kv.list = %q", list.Result.Keys)
	}
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/extensions"
	testproject "github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/config"
)

// The raw ABI 1.1 test guest's projects are the test kit's.
type rawEntry = testproject.RawEntry

var rawProject = testproject.Raw

func openRT(t *testing.T, o Options) *Runtime {
	t.Helper()
	if o.LogOutput == nil {
		o.LogOutput = &syncBuf{}
	}
	rt, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// probe sends one host call through the tool PREFIXprobe and returns the
// host's raw answer.
func probe(t *testing.T, rt *Runtime, tool, method string, params any) string {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"method": method, "params": params})
	res, err := rt.CallTool(context.Background(), tool, "c", in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s %s: %s", tool, method, res.Text())
	}
	return res.Text()
}

// denied is the raw answer of a refused host call.
func denied(msg string) string {
	b, _ := json.Marshal(msg)
	return `{"ok":false,"error":{"message":` + string(b) + `}}`
}

func TestABI11InitFacts(t *testing.T) {
	dir, home := rawProject(t, rawEntry{Name: "raw11"})
	for _, tc := range []struct {
		opts              Options
		mode              string
		trusted, hasUI    bool
		trustBeforeLoader bool
	}{
		{Options{Trust: true}, "print", true, false, false},
		{Options{Trust: true, Mode: ModeJSON}, "json", true, false, false},
		{Options{Mode: ModeInteractive, UI: &personUI{}}, "interactive", true, true, true},
		{Options{Mode: ModeTool}, "tool", true, false, true},
	} {
		o := tc.opts
		o.Cwd, o.PIHome = dir, home
		if tc.trustBeforeLoader {
			if err := config.Trust(home, filepath.Join(dir, "pi.toml")); err != nil {
				t.Fatal(err)
			}
		}
		rt := openRT(t, o)
		res, _ := rt.CallTool(context.Background(), "facts", "c", json.RawMessage(`{}`), nil)
		var f struct {
			Init struct {
				ABIMinor    int    `json:"abiMinor"`
				ProjectRoot string `json:"projectRoot"`
				Trusted     bool   `json:"trusted"`
				Mode        string `json:"mode"`
				HasUI       bool   `json:"hasUI"`
			} `json:"init"`
		}
		if err := json.Unmarshal([]byte(res.Text()), &f); err != nil {
			t.Fatalf("facts = %s: %v", res.Text(), err)
		}
		if f.Init.ABIMinor != extensions.ABIMinor || f.Init.ProjectRoot != mustReal(t, dir) && f.Init.ProjectRoot != dir || f.Init.Trusted != tc.trusted || f.Init.Mode != tc.mode || f.Init.HasUI != tc.hasUI {
			t.Errorf("%+v: init facts %+v", tc.opts, f.Init)
		}
		rt.Close()
	}
	// Loaded from the global pi.toml, with no project pi.toml: not trusted.
	os.Rename(filepath.Join(dir, "pi.toml"), filepath.Join(home, "pi.toml"))
	b, _ := os.ReadFile(filepath.Join(home, "pi.toml"))
	write(t, filepath.Join(home, "pi.toml"), string(b))
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	res, _ := rt.CallTool(context.Background(), "facts", "c", json.RawMessage(`{}`), nil)
	if !strings.Contains(res.Text(), `"trusted":false`) || !strings.Contains(res.Text(), `"projectRoot":"`+dir) {
		t.Errorf("global extension, no project pi.toml: facts %s", res.Text())
	}
}

// personUI is a person who answers every question with answer, or waits
// until the question times out when wait is set (an app.UI).
type personUI struct {
	mu       sync.Mutex
	answer   bool
	wait     bool
	notices  []string
	question []string
}

func (u *personUI) Notify(message string, level NotifyLevel) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.notices = append(u.notices, string(level)+" "+message)
}

func (u *personUI) Confirm(ctx context.Context, title, message string) (bool, error) {
	u.mu.Lock()
	u.question = append(u.question, strings.TrimSpace(title+" "+message))
	wait, answer := u.wait, u.answer
	u.mu.Unlock()
	if wait {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return answer, nil
}

func (u *personUI) Select(context.Context, string, []string) (string, bool, error) {
	return "", false, nil
}

func (u *personUI) Input(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}

func TestABI11KV(t *testing.T) {
	dir, home := rawProject(t, rawEntry{Name: "raw11", Limits: "kv_mb = 1"}, rawEntry{Name: "other", Config: `prefix = "o"`})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	okEmpty := `{"ok":true,"result":{}}`
	if got := probe(t, rt, "probe", "kv.set", map[string]any{"key": "todo/a", "value": []any{"milk", map[string]any{"n": 1}}}); got != okEmpty {
		t.Fatalf("kv.set = %s", got)
	}
	probe(t, rt, "probe", "kv.set", map[string]any{"key": "todo/b", "value": 2})
	probe(t, rt, "probe", "kv.set", map[string]any{"key": "g", "value": "global one", "scope": "global"})
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "todo/a"}); got != `{"ok":true,"result":{"value":["milk",{"n":1}]}}` {
		t.Errorf("kv.get = %s", got)
	}
	if got := probe(t, rt, "probe", "kv.list", map[string]any{"prefix": "todo/"}); got != `{"ok":true,"result":{"keys":["todo/a","todo/b"]}}` {
		t.Errorf("kv.list = %s", got)
	}
	// Scopes and extensions are separate stores.
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "g"}); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("a global key in the project scope = %s", got)
	}
	if got := probe(t, rt, "oprobe", "kv.get", map[string]any{"key": "todo/a"}); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("another extension's key = %s", got)
	}
	// Errors are answers, never traps.
	for _, tc := range []struct {
		method string
		params any
		want   string
	}{
		{"kv.get", map[string]any{"key": "a", "scope": "user"}, `invalid scope "user" (project or global)`},
		{"kv.get", map[string]any{"key": ""}, "invalid key (a key is 1 to 512 bytes of UTF-8)"},
		{"kv.set", map[string]any{"key": strings.Repeat("k", 513), "value": 1}, "invalid key (a key is 1 to 512 bytes of UTF-8)"},
		{"kv.set", map[string]any{"key": "a"}, "kv.set: params need a value (null deletes the key)"},
	} {
		got := probe(t, rt, "probe", tc.method, tc.params)
		if want := denied(tc.want); got != want {
			t.Errorf("%s %v = %s, want %s", tc.method, tc.params, got, want)
		}
	}
	// The quota counts what the disk holds: each key at least one 4 KiB
	// block plus its inode, so with kv_mb = 1 tiny keys stop near 1 MiB / 4.5 KiB.
	n := 0
	for ; n < 1000; n++ {
		got := probe(t, rt, "probe", "kv.set", map[string]any{"key": fmt.Sprintf("tiny/%d", n), "value": 1})
		if got == okEmpty {
			continue
		}
		if !strings.HasPrefix(got, `{"ok":false,"error":{"message":"kv quota exceeded (`) || !strings.HasSuffix(got, ` of 1048576 bytes on disk)"}}`) {
			t.Fatalf("set %d = %s", n, got)
		}
		break
	}
	if most := (1 << 20) / (4096 + 512); n < 100 || n > most {
		t.Errorf("%d tiny keys fit in 1 MiB; want at most %d (a block and an inode each)", n, most)
	}
	// A bigger value is refused in the full store; a replaced key counts
	// once. (Values stay small: each passes through the guest's hook and
	// tool, seconds for a MiB under the race detector.)
	if got := probe(t, rt, "probe", "kv.set", map[string]any{"key": "big", "value": strings.Repeat("x", 64<<10)}); !strings.Contains(got, "kv quota exceeded") {
		t.Errorf("a 64 KiB value = %s", got)
	}
	for range 3 {
		if got := probe(t, rt, "probe", "kv.set", map[string]any{"key": "todo/b", "value": 3}); got != okEmpty {
			t.Errorf("replacing a key in a full store = %s", got)
		}
	}
	// null deletes, and frees the room.
	for i := range n {
		if got := probe(t, rt, "probe", "kv.set", map[string]any{"key": fmt.Sprintf("tiny/%d", i), "value": nil}); got != okEmpty {
			t.Fatalf("set null = %s", got)
		}
	}
	if got := probe(t, rt, "probe", "kv.set", map[string]any{"key": "fill", "value": strings.Repeat("x", 256<<10)}); got != okEmpty {
		t.Errorf("a set after the deletes = %s", got)
	}
	probe(t, rt, "probe", "kv.delete", map[string]any{"key": "fill"})
	probe(t, rt, "probe", "kv.delete", map[string]any{"key": "todo/b"})
	if got := probe(t, rt, "probe", "kv.list", map[string]any{}); got != `{"ok":true,"result":{"keys":["todo/a"]}}` {
		t.Errorf("after delete = %s", got)
	}

	// A fault: the instance is thrown away, the store is not.
	if res, _ := rt.CallTool(context.Background(), "crash", "c", json.RawMessage(`{}`), nil); !res.IsError || !strings.Contains(res.Text(), "fault 1 of 3") {
		t.Fatalf("crash = %+v", res)
	}
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "todo/a"}); got != `{"ok":true,"result":{"value":["milk",{"n":1}]}}` {
		t.Errorf("after a fault = %s", got)
	}
	// A restart: a new runtime reads the same store.
	rt.Close()
	rt = openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "todo/a"}); got != `{"ok":true,"result":{"value":["milk",{"n":1}]}}` {
		t.Errorf("after a restart = %s", got)
	}
	if got := probe(t, rt, "probe", "kv.get", map[string]any{"key": "g", "scope": "global"}); got != `{"ok":true,"result":{"value":"global one"}}` {
		t.Errorf("global after a restart = %s", got)
	}
	// No temporary files are left in the store.
	files, _ := filepath.Glob(filepath.Join(home, "kv", "project", "*", "raw11.*", "*"))
	if len(files) == 0 {
		t.Error("no store of raw11")
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".kv") && filepath.Base(f) != "USAGE" {
			t.Errorf("stray file in the store: %s", f)
		}
	}
}

func TestABI11HTTP(t *testing.T) {
	var srvURL string
	big := bytes.Repeat([]byte("x"), 4<<20+1)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/echo", func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.RequestURI(), r.Header.Get("X-Token"), b[:n])
	})
	mux.HandleFunc("/v1/bin", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{0xff, 0xfe, 0}) })
	mux.HandleFunc("/v1/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	mux.HandleFunc("/v1/exactly4", func(w http.ResponseWriter, r *http.Request) { w.Write(big[:4<<20]) })
	mux.HandleFunc("/v1/to-ok", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/v1/echo", http.StatusFound) })
	mux.HandleFunc("/v1/to-admin", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/admin", http.StatusFound) })
	mux.HandleFunc("/v1/to-other-host", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(srvURL, "127.0.0.1", "localhost", 1)+"/v1/echo", http.StatusFound)
	})
	mux.HandleFunc("/v1/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/v1/loop", http.StatusFound) })
	mux.HandleFunc("/v1/hop/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/v1/hop/"), "%d", &n)
		if n == 0 {
			w.Write([]byte("landed"))
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/v1/hop/%d", n-1), http.StatusFound)
	})
	var adminHits int
	var adminMu sync.Mutex
	mux.HandleFunc("/admin", func(w http.ResponseWriter, r *http.Request) {
		adminMu.Lock()
		adminHits++
		adminMu.Unlock()
		w.Write([]byte("secret admin"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	srvURL = srv.URL
	grant := srv.URL + "/v1/*"
	dir, home := rawProject(t,
		rawEntry{Name: "raw11", Grants: fmt.Sprintf("http = [%q]", grant)},
		rawEntry{Name: "nogrant", Config: `prefix = "n"`})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})

	type answer struct {
		OK     bool `json:"ok"`
		Result struct {
			Status     int               `json:"status"`
			Headers    map[string]string `json:"headers"`
			Body       *string           `json:"body"`
			BodyBase64 *string           `json:"bodyBase64"`
		} `json:"result"`
		Error struct{ Message string } `json:"error"`
	}
	fetch := func(tool string, params map[string]any) answer {
		t.Helper()
		var a answer
		raw := probe(t, rt, tool, "http.request", params)
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		return a
	}
	a := fetch("probe", map[string]any{"method": "POST", "url": srv.URL + "/v1/echo?q=1", "headers": map[string]string{"X-Token": "t1"}, "body": "hello"})
	if !a.OK || a.Result.Status != 200 || a.Result.Body == nil || *a.Result.Body != "POST /v1/echo?q=1 t1 hello" || a.Result.Headers["X-Multi"] != "a, b" {
		t.Errorf("granted POST = %+v", a)
	}
	if a := fetch("probe", map[string]any{"url": srv.URL + "/v1/bin"}); !a.OK || a.Result.Body != nil || a.Result.BodyBase64 == nil || *a.Result.BodyBase64 != "//4A" {
		t.Errorf("binary body = %+v", a)
	}
	if a := fetch("probe", map[string]any{"url": srv.URL + "/v1/to-ok"}); !a.OK || *a.Result.Body != "GET /v1/echo  " {
		t.Errorf("a granted redirect = %+v", a)
	}
	if a := fetch("probe", map[string]any{"url": srv.URL + "/v1/hop/5"}); !a.OK || *a.Result.Body != "landed" {
		t.Errorf("5 redirects = %+v", a)
	}
	if a := fetch("probe", map[string]any{"url": srv.URL + "/v1/exactly4"}); !a.OK || len(*a.Result.Body) != 4<<20 {
		t.Errorf("a 4 MiB body is allowed: ok %v, %d bytes", a.OK, len(*a.Result.Body))
	}
	deny := func(tool, ext, u, grants string) string {
		return fmt.Sprintf("permission denied: extension %s may not fetch %s (grants.http: %s)", ext, u, grants)
	}
	for _, tc := range []struct {
		tool, url, want string
	}{
		{"nprobe", srv.URL + "/v1/echo", deny("nprobe", "nogrant", srv.URL+"/v1/echo", "none")},
		{"probe", srv.URL + "/admin", deny("probe", "raw11", srv.URL+"/admin", grant)},
		{"probe", srv.URL + "/v1/../admin", deny("probe", "raw11", srv.URL+"/v1/../admin", grant)},
		{"probe", srv.URL + "/v1/%2e%2e/admin", deny("probe", "raw11", srv.URL+"/v1/%2e%2e/admin", grant)},
		{"probe", srv.URL + "/v1", deny("probe", "raw11", srv.URL+"/v1", grant)},
		{"probe", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/v1/echo", deny("probe", "raw11", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/v1/echo", grant)},
		{"probe", strings.Replace(srv.URL, "http:", "https:", 1) + "/v1/echo", deny("probe", "raw11", strings.Replace(srv.URL, "http:", "https:", 1)+"/v1/echo", grant)},
		{"probe", srv.URL + "/v1/to-admin", deny("probe", "raw11", srv.URL+"/admin", grant)},
		{"probe", srv.URL + "/v1/to-other-host", deny("probe", "raw11", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/v1/echo", grant)},
		{"probe", srv.URL + "/v1/loop", "too many redirects"},
		{"probe", srv.URL + "/v1/hop/6", "too many redirects"},
		{"probe", srv.URL + "/v1/big", "response body over 4 MiB"},
		{"probe", srv.URL + "/v1/..%2fadmin", "http.request: invalid url \"" + srv.URL + "/v1/..%2fadmin\": an encoded slash or backslash in the path"},
		{"probe", "file:///etc/passwd", deny("probe", "raw11", "file:///etc/passwd", grant)},
	} {
		if got := probe(t, rt, tc.tool, "http.request", map[string]any{"url": tc.url}); got != denied(tc.want) {
			t.Errorf("%s %s = %s, want %s", tc.tool, tc.url, got, denied(tc.want))
		}
	}
	adminMu.Lock()
	if adminHits != 0 {
		t.Errorf("the ungranted /admin was fetched %d times", adminHits)
	}
	adminMu.Unlock()
	if got := probe(t, rt, "probe", "http.request", map[string]any{"url": srv.URL + "/v1/echo", "body": "a", "bodyBase64": "YQ=="}); got != denied("http.request: give body or bodyBase64, not both") {
		t.Errorf("both bodies = %s", got)
	}
}

// TestABI11HTTPAddresses is the attack of a grant on a name that resolves
// to a loopback service (DNS rebinding, or a domain the author controls):
// a real guest, a real loopback server, and a check that the server saw
// no request by name, while grants that name the address literally work.
func TestABI11HTTPAddresses(t *testing.T) {
	var secretHits sync.Map
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/secret", func(w http.ResponseWriter, r *http.Request) {
		secretHits.Store(r.Host, true)
		w.Write([]byte("loopback secret"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	byName := "http://localhost:" + port
	mux.HandleFunc("/v1/to-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, byName+"/v1/secret", http.StatusFound)
	})
	mapped := "http://[::ffff:127.0.0.1]:" + port
	grants := fmt.Sprintf("http = [%q, %q, %q]", byName+"/v1/*", srv.URL+"/v1/*", mapped+"/v1/*")
	dir, home := rawProject(t, rawEntry{Name: "raw11", Grants: grants})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})

	// By name, and by a granted redirect from a literal grant to the name.
	for _, u := range []string{byName + "/v1/secret", srv.URL + "/v1/to-name"} {
		refused := regexp.MustCompile(`^\{"ok":false,"error":\{"message":"http.request GET ` + regexp.QuoteMeta(u) +
			`: address (127\.0\.0\.1|::1) of host localhost is loopback; grant the address literally to allow it \(http\(s\)://(127\.0\.0\.1|\[::1\]):` + port + `/...\)"\}\}$`)
		if got := probe(t, rt, "probe", "http.request", map[string]any{"url": u}); !refused.MatchString(got) {
			t.Errorf("%s = %s", u, got)
		}
	}
	secretHits.Range(func(host, _ any) bool {
		t.Errorf("the loopback server answered a request for host %v", host)
		return true
	})
	// Grants that name the address literally (also IPv4-mapped) still reach it.
	for _, u := range []string{srv.URL + "/v1/secret", mapped + "/v1/secret"} {
		if got := probe(t, rt, "probe", "http.request", map[string]any{"url": u}); !strings.Contains(got, `"status":200`) || !strings.Contains(got, "loopback secret") {
			t.Errorf("literal %s = %s", u, got)
		}
	}
}

func TestABI11ToolCall(t *testing.T) {
	dir, home := rawProject(t,
		rawEntry{Name: "raw11", Grants: `tools = ["ls", "read", "grep", "find", "probe", "bprobe"]`, Config: `block = "grep"`},
		rawEntry{Name: "guard", Config: "prefix = \"g\"\nblock = \"read\"\nask = \"find\""},
		rawEntry{Name: "b", Grants: `tools = ["probe"]`, Config: `prefix = "b"`},
	)
	write(t, filepath.Join(dir, "notes.txt"), "hello notes")
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	type answer struct {
		OK     bool `json:"ok"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	call := func(name string, input any) (answer, string) {
		t.Helper()
		raw := probe(t, rt, "probe", "tool.call", map[string]any{"name": name, "input": input})
		var a answer
		json.Unmarshal([]byte(raw), &a)
		return a, raw
	}
	if a, raw := call("ls", map[string]any{}); !a.OK || a.Result.IsError || !strings.Contains(a.Result.Content[0].Text, "notes.txt") {
		t.Errorf("granted ls = %s", raw)
	}
	// Blocked by another extension's hook: an ordinary answer with the reason.
	if _, raw := call("read", map[string]any{"path": "notes.txt"}); raw != `{"ok":true,"result":{"content":[{"type":"text","text":"raw11 blocks read"}],"isError":true}}` {
		t.Errorf("a blocked call = %s", raw)
	}
	// The caller's own tool_call hook (which blocks grep) is skipped.
	if a, raw := call("grep", map[string]any{"pattern": "hello", "path": "."}); !a.OK || a.Result.IsError || !strings.Contains(raw, "hello notes") {
		t.Errorf("grep, blocked only by the caller's own hook = %s", raw)
	}
	// Another extension asks: a guest never waits for a person.
	if _, raw := call("find", map[string]any{"pattern": "*.txt"}); !strings.Contains(raw, "needs approval: may find run? (run interactively, or pass --yes)") || !strings.Contains(raw, `"isError":true`) {
		t.Errorf("an ask in tool.call = %s", raw)
	}
	// Validation runs as for the model's calls.
	if _, raw := call("read", map[string]any{"nope": 1}); !strings.Contains(raw, "Validation failed") {
		t.Errorf("invalid input = %s", raw)
	}
	for _, tc := range []struct {
		tool string
		in   map[string]any
		want string
	}{
		{"probe", map[string]any{"name": "bash", "input": map[string]any{"command": "id"}}, `permission denied: extension raw11 may not call tool "bash" (grants.tools: ls, read, grep, find, probe, bprobe)`},
		{"gprobe", map[string]any{"name": "ls"}, `permission denied: extension guard may not call tool "ls" (grants.tools: none)`},
		{"probe", map[string]any{"name": "probe", "input": map[string]any{}}, `extension raw11 cannot call its own tool "probe"`},
		{"probe", map[string]any{"name": "ls", "input": []int{1}}, "tool.call: input must be a JSON object"},
	} {
		if got := probe(t, rt, tc.tool, "tool.call", tc.in); got != denied(tc.want) {
			t.Errorf("%s tool.call %v = %s, want %s", tc.tool, tc.in, got, denied(tc.want))
		}
	}
	// raw11 -> b's bprobe -> raw11's probe: raw11 waits for the call.
	inner := map[string]any{"method": "tool.call", "params": map[string]any{"name": "probe", "input": map[string]any{}}}
	_, raw := call("bprobe", inner)
	if !strings.Contains(raw, `extension b cannot call tool \\\"probe\\\": its extension raw11 is waiting for this call`) {
		t.Errorf("a call back into the waiting caller = %s", raw)
	}

	// With --yes, the ask is approved; a block still blocks.
	rt.Close()
	rt = openRT(t, Options{Cwd: dir, PIHome: home, Trust: true, Approver: YesApprover{}})
	if a, raw := call("find", map[string]any{"pattern": "*.txt"}); !a.OK || a.Result.IsError || !strings.Contains(raw, "notes.txt") {
		t.Errorf("an ask with --yes = %s", raw)
	}
	if _, raw := call("read", map[string]any{"path": "notes.txt"}); !strings.Contains(raw, "raw11 blocks read") {
		t.Errorf("a block with --yes = %s", raw)
	}
}

// TestABI11DelegateMeetsTheGuardsHooks: a guard extension (its tool_call
// hook blocks bash) whose tool or command delegates to another extension
// does not switch its guard off for that extension's tool.calls: the
// delegate's `touch` through bash is blocked by the guard's hook (run in
// an instance beside the guard's busy one) and the file never appears.
// Only the caller's own hook is skipped: the guard's own tool.call of read,
// which it would block for anyone else, runs.
func TestABI11DelegateMeetsTheGuardsHooks(t *testing.T) {
	dir, home := rawProject(t,
		rawEntry{Name: "guard", Grants: `tools = ["bprobe", "read"]`, Config: "prefix = \"g\"\nblock = \"bash\"\nask = \"read\""},
		rawEntry{Name: "b", Grants: `tools = ["bash"]`, Config: `prefix = "b"`},
	)
	write(t, filepath.Join(dir, "notes.txt"), "hello notes")
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	pwned := filepath.Join(dir, "pwned")
	touch := map[string]any{"method": "tool.call", "params": map[string]any{"name": "bash", "input": map[string]any{"command": "touch " + pwned}}}
	check := func(how, raw string) {
		t.Helper()
		if !strings.Contains(raw, "raw11 blocks bash") {
			t.Errorf("%s: the delegate's bash = %s, want it blocked by the guard's hook", how, raw)
		}
		if _, err := os.Stat(pwned); !os.IsNotExist(err) {
			t.Fatalf("%s: the delegate's bash ran: %v", how, err)
		}
	}
	// The model calls b's tool: the guard's hook blocks b's bash.
	check("direct", probe(t, rt, "bprobe", touch["method"].(string), touch["params"]))
	// The guard's tool delegates to b.
	check("from the guard's tool", probe(t, rt, "gprobe", "tool.call", map[string]any{"name": "bprobe", "input": touch}))
	// The guard's command delegates to b.
	in, _ := json.Marshal(map[string]any{"name": "bprobe", "input": touch})
	res, err := rt.RunCommand(context.Background(), "gprobe", "tool.call "+string(in))
	if err != nil {
		t.Fatal(err)
	}
	check("from the guard's command", res.Text)
	// The guard's own call: its own hook (which asks about read) is skipped.
	if raw := probe(t, rt, "gprobe", "tool.call", map[string]any{"name": "read", "input": map[string]any{"path": "notes.txt"}}); !strings.Contains(raw, "hello notes") {
		t.Errorf("the guard's own read = %s", raw)
	}
	// Its live instance is unharmed by the side instances: its tools still answer.
	if raw := probe(t, rt, "gprobe", "kv.set", map[string]any{"key": "k", "value": 1}); raw != `{"ok":true,"result":{}}` {
		t.Errorf("the guard after the delegations = %s", raw)
	}
}

// TestABI11ToolCallDepth: tool.call nests at most 3 deep.
func TestABI11ToolCallDepth(t *testing.T) {
	dir, home := rawProject(t,
		rawEntry{Name: "a", Grants: `tools = ["bprobe"]`, Config: `prefix = "a"`},
		rawEntry{Name: "b", Grants: `tools = ["cprobe"]`, Config: `prefix = "b"`},
		rawEntry{Name: "c", Grants: `tools = ["dprobe"]`, Config: `prefix = "c"`},
		rawEntry{Name: "d", Grants: `tools = ["ls"]`, Config: `prefix = "d"`},
	)
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true})
	nest := func(tool string, input any) map[string]any {
		return map[string]any{"method": "tool.call", "params": map[string]any{"name": tool, "input": input}}
	}
	// a -> b -> c -> d: three nested calls, d's ls would be the fourth.
	deep := nest("bprobe", nest("cprobe", nest("dprobe", nest("ls", map[string]any{}))))
	raw := probe(t, rt, "aprobe", deep["method"].(string), deep["params"])
	if !strings.Contains(raw, `tool.call nested deeper than 3`) {
		t.Errorf("4 nested calls = %s", raw)
	}
	// Three are fine: c's ls.
	write(t, filepath.Join(dir, "here.txt"), "")
	rt.Close()
	dir2, home2 := rawProject(t,
		rawEntry{Name: "a", Grants: `tools = ["bprobe"]`, Config: `prefix = "a"`},
		rawEntry{Name: "b", Grants: `tools = ["cprobe"]`, Config: `prefix = "b"`},
		rawEntry{Name: "c", Grants: `tools = ["ls"]`, Config: `prefix = "c"`},
	)
	write(t, filepath.Join(dir2, "here.txt"), "")
	rt = openRT(t, Options{Cwd: dir2, PIHome: home2, Trust: true})
	three := nest("bprobe", nest("cprobe", nest("ls", map[string]any{})))
	if raw := probe(t, rt, "aprobe", "tool.call", three["params"]); !strings.Contains(raw, "here.txt") || strings.Contains(raw, "deeper") {
		t.Errorf("3 nested calls = %s", raw)
	}
}

func TestABI11UIAndSession(t *testing.T) {
	dir, home := rawProject(t, rawEntry{Name: "raw11"})
	logs := &syncBuf{}
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true, LogOutput: logs, LogLevel: "info"})
	if got := probe(t, rt, "probe", "ui.notify", map[string]any{"message": "tests pass"}); got != `{"ok":true,"result":{}}` {
		t.Errorf("notify = %s", got)
	}
	if !strings.Contains(logs.String(), "notify: tests pass") {
		t.Errorf("notify without a person is not logged:\n%s", logs.String())
	}
	if got := probe(t, rt, "probe", "ui.confirm", map[string]any{"title": "T", "message": "M"}); got != `{"ok":true,"result":{"confirmed":false,"reason":"no-ui"}}` {
		t.Errorf("confirm without a person = %s", got)
	}
	if got := probe(t, rt, "probe", "ui.notify", map[string]any{"message": "x", "level": "loud"}); got != denied(`ui.notify: level "loud" must be info, warning or error`) {
		t.Errorf("bad level = %s", got)
	}
	// Without a conversation bound to the runtime (pi tool call, the test
	// kit) the entries live in a session in memory.
	got := probe(t, rt, "probe", "session.append", map[string]any{"customType": "x", "data": 1})
	var appended struct {
		Result struct{ ID string } `json:"result"`
	}
	if json.Unmarshal([]byte(got), &appended) != nil || len(appended.Result.ID) != 8 {
		t.Errorf("session.append without a conversation = %s", got)
	}
	if got := probe(t, rt, "probe", "session.entries", map[string]any{"customType": "x"}); !strings.Contains(got, `"id":"`+appended.Result.ID+`","customType":"x","data":1`) {
		t.Errorf("session.entries without a conversation = %s", got)
	}
	if got := probe(t, rt, "probe", "net.open", map[string]any{}); !strings.Contains(got, `unknown host method \"net.open\"`) {
		t.Errorf("unknown method = %s", got)
	}
	rt.Close()

	ui := &personUI{answer: true}
	rt = openRT(t, Options{Cwd: dir, PIHome: home, Trust: true, Mode: ModeInteractive, UI: ui})
	if got := probe(t, rt, "probe", "ui.confirm", map[string]any{"title": "Deploy", "message": "now?"}); got != `{"ok":true,"result":{"confirmed":true}}` {
		t.Errorf("confirm yes = %s", got)
	}
	probe(t, rt, "probe", "ui.notify", map[string]any{"message": "careful", "level": "warning"})
	ui.mu.Lock()
	ui.wait = true
	if !slices.Equal(ui.question, []string{"[raw11] Deploy now?"}) || !slices.Equal(ui.notices, []string{"warning [raw11] careful"}) {
		t.Errorf("the person saw %q and %q", ui.question, ui.notices)
	}
	ui.mu.Unlock()
	if got := probe(t, rt, "probe", "ui.confirm", map[string]any{"title": "T", "message": "M", "timeoutMs": 50}); got != `{"ok":true,"result":{"confirmed":false,"reason":"timeout"}}` {
		t.Errorf("confirm timeout = %s", got)
	}
}

func TestABI11LoadErrors(t *testing.T) {
	// Two extensions with the same command.
	dir, home := rawProject(t, rawEntry{Name: "one"}, rawEntry{Name: "two", Config: `prefix = ""`})
	_, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true})
	if err == nil || !strings.Contains(err.Error(), "command /raw of extension two clashes with command /raw of extension one") {
		t.Errorf("a command clash: %v", err)
	}
	// A command named like a built-in one.
	dir, home = rawProject(t, rawEntry{Name: "one", Config: `prefix = "he"`})
	write(t, filepath.Join(dir, "x"), "")
	// prefix "he" makes /heraw and /heprobe; a prefix that makes /help:
	dir, home = rawProject(t, rawEntry{Name: "one", Config: `prefix = "hel"`})
	if rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true}); err != nil {
		t.Errorf("prefix hel: %v", err)
	} else {
		rt.Close()
	}
	// The config does not match the configSchema.
	dir, home = rawProject(t, rawEntry{Name: "one", Config: "greeting = 5\nschema = { type = \"object\", properties = { greeting = { type = \"string\" } } }"})
	_, err = Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true})
	if err == nil || !strings.Contains(err.Error(), "extensions[0].config.greeting: expected string, got number") || !strings.Contains(err.Error(), filepath.Join(dir, "pi.toml")) {
		t.Errorf("a config against its schema: %v", err)
	}
	dir, home = rawProject(t, rawEntry{Name: "one", Config: "greeting = \"hi\"\nschema = { type = \"object\", properties = { greeting = { type = \"string\" } } }"})
	if rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home, Trust: true}); err != nil {
		t.Errorf("a config that matches: %v", err)
	} else {
		rt.Close()
	}
}

// barrierUI answers ui.confirm only once n questions are waiting: two
// guests that ask it are then both inside a call at the same time.
type barrierUI struct {
	mu      sync.Mutex
	n       int
	waiting int
	all     chan struct{}
}

func (u *barrierUI) Notify(string, NotifyLevel) {}

func (u *barrierUI) Select(context.Context, string, []string) (string, bool, error) {
	return "", false, nil
}

func (u *barrierUI) Input(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}

func (u *barrierUI) Confirm(ctx context.Context, _, _ string) (bool, error) {
	u.mu.Lock()
	u.waiting++
	if u.waiting == u.n {
		close(u.all)
	}
	u.mu.Unlock()
	select {
	case <-u.all:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// TestABI11CrossToolCallsDoNotHang: extensions a and b, both inside a
// call at once (a barrier in ui.confirm makes sure), each call the other's
// tool, which must wait for the other's instance: every wait is bounded by
// the caller's deadline, so both calls come back, failed or timed out,
// instead of hanging.
func TestABI11CrossToolCallsDoNotHang(t *testing.T) {
	dir, home := rawProject(t,
		rawEntry{Name: "a", Grants: `tools = ["bprobe"]`, Limits: "timeout_ms = 2000", Config: "prefix = \"a\"\nnoToolCall = true"},
		rawEntry{Name: "b", Grants: `tools = ["aprobe"]`, Limits: "timeout_ms = 2000", Config: "prefix = \"b\"\nnoToolCall = true"},
	)
	ui := &barrierUI{n: 2, all: make(chan struct{})}
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true, Mode: ModeInteractive, UI: ui})
	seq := func(other string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"calls": []any{
			map[string]any{"method": "ui.confirm", "params": map[string]any{"title": "t", "message": "m"}},
			map[string]any{"method": "tool.call", "params": map[string]any{"name": other, "input": map[string]any{"method": "ui.notify", "params": map[string]any{"message": "hi"}}}},
		}})
		return b
	}
	type out struct {
		res string
		err error
	}
	done := make(chan out, 2)
	for _, c := range [][2]string{{"aseq", "bprobe"}, {"bseq", "aprobe"}} {
		go func() {
			res, err := rt.CallTool(context.Background(), c[0], "c", seq(c[1]), nil)
			done <- out{res.Text(), err}
		}()
	}
	for range 2 {
		o := <-done
		if o.err != nil {
			t.Errorf("CallTool: %v", o.err)
		}
		if !strings.Contains(o.res, "it stayed busy with another call") && !strings.Contains(o.res, "timed out") {
			t.Errorf("a cross call ended with %q; want it failed on the busy instance or timed out", o.res)
		}
	}
	select {
	case <-ui.all: // both were inside their calls at once
	default:
		t.Error("the two calls never overlapped")
	}
}

// TestABI11ToolCallResultsAreRedacted: what a guest gets back from
// tool.call has the model's API key redacted, as the model's results do.
func TestABI11ToolCallResultsAreRedacted(t *testing.T) {
	const key = "sk-abi11-secret-0123456789"
	dir, home := rawProject(t, rawEntry{Name: "raw11", Grants: `tools = ["bash"]`})
	rt := openRT(t, Options{Cwd: dir, PIHome: home, Trust: true, Model: ModelOptions{APIKey: key}})
	got := probe(t, rt, "probe", "tool.call", map[string]any{"name": "bash", "input": map[string]any{"command": "printf '%s' " + key}})
	if strings.Contains(got, key) || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("tool.call bash answered %s", got)
	}
}

package langtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// hostile are strings that a careless JSON writer gets wrong: quotes and
// backslashes, every kind of control character, HTML's specials, the
// JavaScript line separators, non-ASCII, invalid UTF-8 of every kind
// (a lone continuation byte, a cut sequence, an overlong form, a
// surrogate, past U+10FFFF) and text that would escape its string and
// rewrite the request if it were pasted in unescaped. None holds a NUL:
// C strings cannot.
var hostile = []string{
	`quote" back\slash /solidus`,
	"ctl \b\f\n\r\t\x01\x1f\x7f end",
	"<script>&amp;</script>",
	"seps \u2028\u2029 é 😀 \ufffd",
	"bad \x80 \xc3 \xe2\x82 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xff",
	`x","scope":"global","k":"`,
	`\u0000 \" not escapes`,
}

// goString is what a string becomes in a guest of language l: a Rust &str
// cannot hold bytes that are not UTF-8, which its test guest turns into
// U+FFFD one per byte, as Go does.
func goString(l, s string) string {
	if l == "rust" {
		return string([]rune(s))
	}
	return s
}

// TestKV: a round trip of every kv helper through the real host, across
// pi processes (each call is one), with hostile keys and values; scopes
// are separate stores; errors are the host's, worded as the Go SDK
// words them.
func TestKV(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{limits: "kv_mb = 1"})
		for i, s := range hostile {
			key := fmt.Sprintf("k%d/%s", i, s)
			value, _ := json.Marshal(map[string]any{"s": s, "n": []any{i, true, nil}})
			if got := p.ok(map[string]any{"op": "kv.set", "keyB64": b64(key), "valueB64": b64(string(value))}); got != "set" {
				t.Fatalf("kv.set %q = %s", key, got)
			}
			got := p.ok(map[string]any{"op": "kv.get", "keyB64": b64(key)})
			var v struct {
				S string
				N []any
			}
			if err := json.Unmarshal([]byte(got), &v); err != nil || len(v.N) != 3 {
				t.Errorf("kv.get %q = %s (%v)", key, got, err)
			}
			// Go reads invalid UTF-8 as one U+FFFD per byte: so must the round trip.
			if v.S != string([]rune(s)) {
				t.Errorf("kv.get %q: s = %q, want %q", key, v.S, string([]rune(s)))
			}
		}
		// The keys come back, sorted, each as Go would read the key sent.
		var keys []string
		if err := json.Unmarshal([]byte(p.ok(map[string]any{"op": "kv.list", "prefix": "k"})), &keys); err != nil || len(keys) != len(hostile) {
			t.Fatalf("kv.list = %v (%v)", keys, err)
		}
		for i, k := range keys {
			if want := fmt.Sprintf("k%d/%s", i, string([]rune(hostile[i]))); k != want {
				t.Errorf("key %d = %q, want %q", i, k, want)
			}
		}
		// An injection in the key does not change the scope.
		if got := p.ok(map[string]any{"op": "kv.get", "key": "k5/" + hostile[5], "scope": "global"}); got != "(not set)" {
			t.Errorf("the key's text reached the global scope: %s", got)
		}
		p.ok(map[string]any{"op": "kv.set", "key": "g", "value": "global one", "scope": "global"})
		if got := p.ok(map[string]any{"op": "kv.get", "key": "g"}); got != "(not set)" {
			t.Errorf("a global key in the project scope = %s", got)
		}
		if got := p.ok(map[string]any{"op": "kv.get", "key": "g", "scope": "global"}); got != `"global one"` {
			t.Errorf("global = %s", got)
		}
		if got := p.ok(map[string]any{"op": "kv.delete", "key": "g", "scope": "global"}); got != "deleted" {
			t.Errorf("kv.delete = %s", got)
		}
		if got := p.ok(map[string]any{"op": "kv.get", "key": "g", "scope": "global"}); got != "(not set)" {
			t.Errorf("after delete = %s", got)
		}
		// A null value deletes too.
		p.ok(map[string]any{"op": "kv.set", "key": "n", "value": 1})
		p.ok(map[string]any{"op": "kv.set", "key": "n", "value": nil})
		if got := p.ok(map[string]any{"op": "kv.get", "key": "n"}); got != "(not set)" {
			t.Errorf("after set null = %s", got)
		}
		// A command reads the store too.
		if out, errs, code := p.run("", "-p", "/kv k0/"+hostile[0], "--script", p.script(`[{"text":"the model answered"}]`)); code != 0 || !strings.Contains(out, `"s":"quote\" back\\slash /solidus"`) {
			t.Errorf("/kv: exit %d, %q %s", code, out, errs)
		}

		for _, tc := range []struct {
			in   map[string]any
			want string
		}{
			{map[string]any{"op": "kv.get", "key": "a", "scope": "user"}, `host call kv.get: invalid scope "user" (project or global)`},
			{map[string]any{"op": "kv.get", "key": ""}, "host call kv.get: invalid key (a key is 1 to 512 bytes of UTF-8)"},
			{map[string]any{"op": "kv.set", "key": strings.Repeat("k", 513), "value": 1}, "host call kv.set: invalid key (a key is 1 to 512 bytes of UTF-8)"},
			{map[string]any{"op": "kv.delete", "key": "a", "scope": "Global"}, `host call kv.delete: invalid scope "Global" (project or global)`},
			{map[string]any{"op": "kv.set", "key": "big", "value": strings.Repeat("x", 1<<20)}, "host call kv.set: kv quota exceeded ("},
		} {
			if got := p.fails(tc.in); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%v = %s, want %s", tc.in["op"], got, tc.want)
			}
		}
		if l == "c" {
			// JSON that is not one value never reaches the host, where it
			// could have been pasted into the request.
			for _, bad := range []string{`1,"scope":"global"`, `{"a":`, `"x`, ``, `[1] [2]`} {
				if got := p.fails(map[string]any{"op": "kv.set", "key": "inj", "valueB64": b64(bad)}); got != "host call kv.set: the value is not one JSON value" {
					t.Errorf("value %q: %s", bad, got)
				}
			}
			if got := p.ok(map[string]any{"op": "kv.get", "key": "inj", "scope": "global"}); got != "(not set)" {
				t.Errorf("a bad value was stored: %s", got)
			}
		}
	})
}

// TestHTTP: requests through the host against a loopback server, with the
// grant: method, headers, text and binary bodies both ways, repeated
// headers; refused URLs never reach the server.
func TestHTTP(t *testing.T) {
	var mu sync.Mutex
	var adminHits int
	var lastBody []byte
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		lastBody = b
		mu.Unlock()
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		fmt.Fprintf(w, "%s %s %s %d", r.Method, r.URL.RequestURI(), r.Header.Get("X-Token"), len(b))
	})
	mux.HandleFunc("/v1/bin", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{0xff, 0xfe, 0, 1}) })
	mux.HandleFunc("/v1/to-admin", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/admin", http.StatusFound) })
	mux.HandleFunc("/admin", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		adminHits++
		mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	grant := srv.URL + "/v1/*"

	type answer struct {
		Status  int
		Multi   string
		BodyB64 string
	}
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{grants: fmt.Sprintf("http = [%q]", grant)})
		get := func(in map[string]any) (answer, []byte) {
			t.Helper()
			var a answer
			if err := json.Unmarshal([]byte(p.ok(in)), &a); err != nil {
				t.Fatal(err)
			}
			body, err := base64.StdEncoding.DecodeString(a.BodyB64)
			if err != nil {
				t.Fatal(err)
			}
			return a, body
		}
		a, body := get(map[string]any{"op": "http", "method": "POST", "url": srv.URL + "/v1/echo?q=1", "headers": map[string]string{"X-Token": hostile[0]}, "body": "hello"})
		if a.Status != 200 || string(body) != "POST /v1/echo?q=1 "+hostile[0]+" 5" || a.Multi != "a, b" {
			t.Errorf("POST = %+v %q", a, body)
		}
		// A body that is not UTF-8 goes as base64 and arrives byte for byte.
		bin := "\xff\x00\xfe\x80 text"
		if a, body := get(map[string]any{"op": "http", "method": "PUT", "url": srv.URL + "/v1/echo", "bodyB64": b64(bin)}); a.Status != 200 || string(body) != fmt.Sprintf("PUT /v1/echo  %d", len(bin)) {
			t.Errorf("binary PUT = %+v %q", a, body)
		}
		mu.Lock()
		if string(lastBody) != bin {
			t.Errorf("the server got %q, want %q", lastBody, bin)
		}
		mu.Unlock()
		if a, body := get(map[string]any{"op": "http", "url": srv.URL + "/v1/bin"}); a.Status != 200 || !bytes.Equal(body, []byte{0xff, 0xfe, 0, 1}) {
			t.Errorf("binary response = %+v %q", a, body)
		}
		if a, _ := get(map[string]any{"op": "http", "url": srv.URL + "/v1/nothing"}); a.Status != 404 {
			t.Errorf("a 404 = %+v", a)
		}
		deny := func(u string) string {
			return fmt.Sprintf("host call http.request: permission denied: extension guest11 may not fetch %s (grants.http: %s)", u, grant)
		}
		for _, tc := range []struct{ url, want string }{
			{srv.URL + "/admin", deny(srv.URL + "/admin")},
			{srv.URL + "/v1/../admin", deny(srv.URL + "/v1/../admin")},
			{srv.URL + "/v1/to-admin", deny(srv.URL + "/admin")},
			{strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/v1/echo", deny(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/v1/echo")},
			{"file:///etc/passwd", deny("file:///etc/passwd")},
		} {
			if got := p.fails(map[string]any{"op": "http", "url": tc.url}); got != tc.want {
				t.Errorf("%s = %s, want %s", tc.url, got, tc.want)
			}
		}
		// The URL cannot smuggle fields into the request.
		inj := srv.URL + `/admin","url":"` + srv.URL + `/v1/echo`
		if got := p.fails(map[string]any{"op": "http", "url": inj}); !strings.Contains(got, "permission denied") && !strings.Contains(got, "invalid url") {
			t.Errorf("an injected url = %s", got)
		}
		mu.Lock()
		if adminHits != 0 {
			t.Errorf("the ungranted /admin was fetched %d times", adminHits)
		}
		mu.Unlock()
		// Without a grant, nothing.
		q := newProject(t, wasm, entry{})
		if got := q.fails(map[string]any{"op": "http", "url": srv.URL + "/v1/echo"}); got != fmt.Sprintf("host call http.request: permission denied: extension guest11 may not fetch %s/v1/echo (grants.http: none)", srv.URL) {
			t.Errorf("no grant = %s", got)
		}
	})
}

// TestToolCall: tool.call of a built-in through the whole pipeline, the
// grant, and the host's refusals.
func TestToolCall(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{grants: `tools = ["read", "ls", "write", "probe"]`})
		p.write("notes.txt", "hello "+hostile[3])
		var r struct {
			IsError bool
			Text    string
			Result  struct {
				Content []map[string]any
				IsError bool
			}
		}
		if err := json.Unmarshal([]byte(p.ok(map[string]any{"op": "tool.call", "name": "read", "input": map[string]any{"path": "notes.txt"}})), &r); err != nil {
			t.Fatal(err)
		}
		if r.IsError || r.Result.IsError || r.Text != "hello "+hostile[3] || len(r.Result.Content) != 1 {
			t.Errorf("read = %+v", r)
		}
		// The model's pipeline: validation runs.
		if got := p.ok(map[string]any{"op": "tool.call", "name": "read", "input": map[string]any{"nope": 1}}); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "Validation failed") {
			t.Errorf("invalid input = %s", got)
		}
		for _, tc := range []struct {
			in   map[string]any
			want string
		}{
			{map[string]any{"op": "tool.call", "name": "bash", "input": map[string]any{"command": "id"}}, `host call tool.call: permission denied: extension guest11 may not call tool "bash" (grants.tools: read, ls, write, probe)`},
			{map[string]any{"op": "tool.call", "name": "probe", "input": map[string]any{}}, `host call tool.call: extension guest11 cannot call its own tool "probe"`},
			{map[string]any{"op": "tool.call", "name": "ls", "input": []int{1}}, "host call tool.call: tool.call: input must be a JSON object"},
			{map[string]any{"op": "tool.call", "name": hostile[5]}, `host call tool.call: permission denied: extension guest11 may not call tool "x\",\"scope\":\"global\",\"k\":\""`},
		} {
			if got := p.fails(tc.in); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%v = %s, want %s", tc.in, got, tc.want)
			}
		}
		if l == "c" {
			if got := p.fails(map[string]any{"op": "tool.call", "name": "ls", "inputB64": b64(`{}, "name": "bash"`)}); got != "host call tool.call: the input is not one JSON value" {
				t.Errorf("bad input JSON = %s", got)
			}
		}
		// The extension's own tool_call hook does not see its calls; write
		// is granted and runs.
		if got := p.ok(map[string]any{"op": "tool.call", "name": "write", "input": map[string]any{"path": "out.txt", "content": "x"}}); strings.Contains(got, `"isError":true`) {
			t.Errorf("write = %s", got)
		}
		if b, err := os.ReadFile(filepath.Join(p.dir, "out.txt")); err != nil || string(b) != "x" {
			t.Errorf("out.txt = %q, %v", b, err)
		}
	})
}

// TestUIWithoutAPerson: in pi tool call nobody can answer: notify is
// logged, confirm says no-ui, a bad level is the host's error.
func TestUIWithoutAPerson(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{})
		if got := p.ok(map[string]any{"op": "ui.notify", "message": hostile[1]}); got != "notified" {
			t.Errorf("notify = %s", got)
		}
		if got := p.ok(map[string]any{"op": "ui.confirm", "title": "T", "message": "M"}); got != `{"confirmed":false,"reason":"no-ui"}` {
			t.Errorf("confirm = %s", got)
		}
		if got := p.fails(map[string]any{"op": "ui.notify", "message": "x", "level": "loud"}); got != `host call ui.notify: ui.notify: level "loud" must be info, warning or error` {
			t.Errorf("bad level = %s", got)
		}
		if got := p.fails(map[string]any{"op": "raw", "method": "net.open", "params": map[string]any{}}); !strings.HasPrefix(got, `host call net.open: unknown host method "net.open"`) {
			t.Errorf("unknown method = %s", got)
		}
		if got := p.fails(map[string]any{"op": "raw", "method": "kv.get", "params": []int{1}}); got != "host call kv.get: params must be a JSON object" && got != "host call kv.get: params must be one JSON object" {
			t.Errorf("params not an object = %s", got)
		}
	})
}

// TestExec: exec (ABI 1.0, missing from pi.h and pi.rs until 1.1's
// helpers) runs a granted command with stdin and reports its exit code;
// an ungranted one is the host's refusal.
func TestExec(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{grants: "fs = [\"ro:.\"]\nexec = [\"cat\", \"sh -c exit\\\\ 3\"]"})
		var r struct {
			ExitCode int
			Stdout   string
		}
		if err := json.Unmarshal([]byte(p.ok(map[string]any{"op": "exec", "argv": []string{"cat"}, "stdin": hostile[3] + "\n"})), &r); err != nil || r.ExitCode != 0 || r.Stdout != hostile[3]+"\n" {
			t.Errorf("cat = %+v (%v)", r, err)
		}
		if err := json.Unmarshal([]byte(p.ok(map[string]any{"op": "exec", "argv": []string{"sh", "-c", "exit 3"}})), &r); err != nil || r.ExitCode != 3 {
			t.Errorf("exit 3 = %+v (%v)", r, err)
		}
		if got := p.fails(map[string]any{"op": "exec", "argv": []string{"id"}}); !strings.HasPrefix(got, `host call exec: permission denied: extension guest11 may not exec ["id"]`) {
			t.Errorf("id = %s", got)
		}
		if got := p.fails(map[string]any{"op": "exec", "argv": []string{}}); got != "host call exec: argv is empty" {
			t.Errorf("no argv = %s", got)
		}
	})
}

// TestConfirmThroughTheLineUI: ui.confirm and ui.notify reach a person
// through pi's line UI (interactive mode); the answer comes back.
func TestConfirmThroughTheLineUI(t *testing.T) {
	turns := `[{"toolCalls":[{"name":"probe","arguments":{"op":"ui.confirm","title":"Deploy","message":"now? \u001b[2K"}}]},` +
		`{"toolCalls":[{"name":"probe","arguments":{"op":"ui.notify","message":"careful <&>","level":"warning"}}]},{"text":"done"}]`
	forEachLang(t, func(t *testing.T, l, wasm string) {
		for _, tc := range []struct{ answer, want string }{
			{"y", `{"confirmed":true,"reason":""}`},
			{"", `{"confirmed":false,"reason":""}`},
			{"no", `{"confirmed":false,"reason":""}`},
		} {
			p := newProject(t, wasm, entry{})
			out, stderr, code := p.run("go\n"+tc.answer+"\n/exit\n", "--interactive", "--script", p.script(turns))
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, stderr)
			}
			if !strings.Contains(out, "? [guest11] Deploy: now? [2K [y/N]") || strings.Contains(out, "\x1b") {
				t.Errorf("the question:\n%s", out)
			}
			if !strings.Contains(out, "    "+tc.want+"\n") {
				t.Errorf("answered %q: want %s in\n%s", tc.answer, tc.want, out)
			}
			if !strings.Contains(out, "warning: [guest11] careful <&>\n") {
				t.Errorf("the notice:\n%s", out)
			}
		}
	})
}

// TestSession: session.append and session.entries in a real session, with
// a hostile payload; a bad customType and a run without a session are the
// host's errors.
func TestSession(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{})
		data, _ := json.Marshal(map[string]any{"s": hostile[3] + hostile[5], "n": 1})
		turns := `[{"toolCalls":[{"name":"probe","arguments":{"op":"session.append","customType":"guest11","data":` + string(data) + `}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.append","customType":"other","data":2}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.entries","customType":"guest11"}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.entries"}}]},` +
			`{"toolCalls":[{"name":"probe","arguments":{"op":"session.append","customType":"bad type","data":1}}]},{"text":"done"}]`
		texts, isErr := p.toolEnds("go", turns)
		if len(texts) != 5 {
			t.Fatalf("tool results %q", texts)
		}
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(texts[0]) || isErr[0] {
			t.Errorf("session.append = %q", texts[0])
		}
		var entries []struct {
			ID, CustomType string
			Data           json.RawMessage
		}
		if err := json.Unmarshal([]byte(texts[2]), &entries); err != nil || len(entries) != 1 || entries[0].ID != texts[0] || entries[0].CustomType != "guest11" {
			t.Fatalf("session.entries guest11 = %s (%v)", texts[2], err)
		}
		var got map[string]any
		if err := json.Unmarshal(entries[0].Data, &got); err != nil || got["s"] != hostile[3]+hostile[5] {
			t.Errorf("data = %s", entries[0].Data)
		}
		if err := json.Unmarshal([]byte(texts[3]), &entries); err != nil || len(entries) != 2 || entries[1].CustomType != "other" {
			t.Errorf("all entries = %s", texts[3])
		}
		if !isErr[4] || !strings.HasPrefix(texts[4], "host call session.append: session.append: invalid custom entry: customType \"bad type\"") {
			t.Errorf("a bad customType = %q", texts[4])
		}
		// pi tool call keeps the entries in memory: none yet.
		if got := p.ok(map[string]any{"op": "session.entries"}); got != "[]" && got != "null" {
			t.Errorf("pi tool call's session in memory = %s", got)
		}
	})
}

package langtest

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/testkit/abigolden"
)

// reqCase is one host call request: the guest's "request" tool input and
// what Go (the host's types, encoded as the Go SDK encodes them) writes.
type reqCase struct {
	in     map[string]any
	method string
	params any
	// exact says the bytes must be Go's; false when a raw JSON member
	// carries text that is not UTF-8, which Go's RawMessage keeps as a
	// \ufffd escape and pi.h and pi.rs write as the character U+FFFD: the
	// same string once read.
	exact bool
}

// goRequest is the Go SDK's encoding of a host call (sdk.HostCall).
func goRequest(t *testing.T, method string, params any) []byte {
	b, err := json.Marshal(abi.Request[any]{Method: method, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostileCases are the requests of every helper with s in every string.
func hostileCases(l, s string) []reqCase {
	g := goString(l, s) // s as the guest holds it
	v := string([]rune(s))
	raw, _ := json.Marshal(map[string]any{"s": s, "list": []any{1, true, nil, 2.5}})
	body := &s
	var body64 *string
	if !utf8.ValidString(s) {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		body, body64 = nil, &e
	}
	valid := utf8.ValidString(s)
	return []reqCase{
		{map[string]any{"op": "kv.get", "aB64": b64(s), "c": "global"}, "kv.get", abi.KVGetParams{Key: g, Scope: "global"}, true},
		{map[string]any{"op": "kv.get", "a": "k", "cB64": b64(s)}, "kv.get", abi.KVGetParams{Key: "k", Scope: g}, true},
		{map[string]any{"op": "kv.delete", "aB64": b64(s)}, "kv.delete", abi.KVDeleteParams{Key: g}, true},
		{map[string]any{"op": "kv.list", "aB64": b64(s)}, "kv.list", abi.KVListParams{Prefix: g}, true},
		{map[string]any{"op": "kv.set", "aB64": b64(s), "jsonB64": b64(string(raw))}, "kv.set", abi.KVSetParams{Key: g, Value: raw}, valid},
		{map[string]any{"op": "http.request", "aB64": b64("https://x/" + s), "bB64": b64(s), "c": "POST", "headers": map[string]string{"X-H": s}, "timeoutMs": 1500},
			"http.request", abi.HTTPParams{Method: "POST", URL: goString(l, "https://x/"+s), Headers: map[string]string{"X-H": v}, Body: body, BodyBase64: body64, TimeoutMS: 1500}, true},
		{map[string]any{"op": "tool.call", "aB64": b64(s), "jsonB64": b64(string(raw))}, "tool.call", abi.ToolCallHostParams{Name: g, Input: raw}, valid},
		{map[string]any{"op": "ui.notify", "aB64": b64(s), "c": "warning"}, "ui.notify", abi.NotifyParams{Message: g, Level: "warning"}, true},
		{map[string]any{"op": "ui.confirm", "aB64": b64(s), "bB64": b64(s), "timeoutMs": 60000}, "ui.confirm", abi.ConfirmParams{Title: g, Message: g, TimeoutMS: 60000}, true},
		{map[string]any{"op": "session.append", "aB64": b64(s), "jsonB64": b64(string(raw))}, "session.append", abi.SessionAppendParams{CustomType: g, Data: raw}, valid},
		{map[string]any{"op": "session.entries", "aB64": b64(s)}, "session.entries", abi.SessionEntriesParams{CustomType: g}, true},
	}
}

// goldenCases are the inputs that give internal/abi/testdata's host
// request goldens, the ones the Go SDK's tests check too.
var goldenCases = map[string]map[string]any{
	"host.kv.get.request.json":       {"op": "kv.get", "a": "todo/items", "c": "project"},
	"host.kv.set.request.json":       {"op": "kv.set", "a": "todo/items", "json": []string{"buy milk"}, "c": "global"},
	"host.kv.delete.request.json":    {"op": "kv.delete", "a": "todo/items"},
	"host.kv.list.request.json":      {"op": "kv.list", "a": "todo/"},
	"host.http.request.request.json": {"op": "http.request", "c": "POST", "a": "https://api.example.com/v1/items?q=1", "headers": map[string]string{"Content-Type": "application/json"}, "b": `{"name":"x"}`, "timeoutMs": 5000},
	"host.tool.call.request.json":    {"op": "tool.call", "a": "read", "json": map[string]string{"path": "README.md"}},
	"host.ui.notify.request.json":    {"op": "ui.notify", "a": "tests pass", "c": "info"},
	"host.ui.confirm.request.json":   {"op": "ui.confirm", "a": "Deploy", "b": "Deploy to production?", "timeoutMs": 60000},
}

// TestRequestsMatchGo: every helper of pi.h and pi.rs writes the request
// the Go SDK writes, byte for byte — for the goldens, and for hostile
// strings in every string field (quotes, control characters, HTML's
// specials, U+2028, invalid UTF-8, text that would close its string). And
// each request decodes strictly into the host's type, so no text became a
// field of its own.
func TestRequestsMatchGo(t *testing.T) {
	forEachLang(t, func(t *testing.T, l, wasm string) {
		p := newProject(t, wasm, entry{})
		var cases []reqCase
		for name, in := range goldenCases {
			cases = append(cases, reqCase{in: in, method: name, params: json.RawMessage(abigolden.Wire(t, name)), exact: true})
		}
		for _, s := range hostile {
			cases = append(cases, hostileCases(l, s)...)
		}
		batch := make([]map[string]any, len(cases))
		for i, c := range cases {
			batch[i] = c.in
		}
		text, isErr := p.call("requests", map[string]any{"batch": batch})
		var got []json.RawMessage
		if err := json.Unmarshal([]byte(text), &got); isErr || err != nil || len(got) != len(cases) {
			t.Fatalf("requests: %v %d answers for %d (%v)\n%s", isErr, len(got), len(cases), err, text)
		}
		for i, c := range cases {
			var req string
			if err := json.Unmarshal(got[i], &req); err != nil {
				t.Errorf("%v: %s", c.in, got[i])
				continue
			}
			want := goRequest(t, c.method, c.params)
			if raw, golden := c.params.(json.RawMessage); golden {
				want = raw // the golden file itself
			}
			if c.exact && req != string(want) {
				t.Errorf("%s %v:\n got  %s\n want %s", c.method, c.in, req, want)
			}
			if !c.exact && !sameJSON(t, []byte(req), want) {
				t.Errorf("%s %v means something else:\n got  %s\n want %s", c.method, c.in, req, want)
			}
			if !strictly(c.method, []byte(req)) {
				t.Errorf("%s: %s does not decode strictly into the host's type", c.method, req)
			}
		}
	})
}

// strictly reports whether req decodes strictly into the host's request
// type of method (for a golden file name, the method it names).
func strictly(method string, req []byte) bool {
	method = strings.TrimSuffix(strings.TrimPrefix(method, "host."), ".request.json")
	var v any
	switch method {
	case "kv.get":
		v = new(abi.Request[abi.KVGetParams])
	case "kv.set":
		v = new(abi.Request[abi.KVSetParams])
	case "kv.delete":
		v = new(abi.Request[abi.KVDeleteParams])
	case "kv.list":
		v = new(abi.Request[abi.KVListParams])
	case "http.request":
		v = new(abi.Request[abi.HTTPParams])
	case "tool.call":
		v = new(abi.Request[abi.ToolCallHostParams])
	case "ui.notify":
		v = new(abi.Request[abi.NotifyParams])
	case "ui.confirm":
		v = new(abi.Request[abi.ConfirmParams])
	case "session.append":
		v = new(abi.Request[abi.SessionAppendParams])
	case "session.entries":
		v = new(abi.Request[abi.SessionEntriesParams])
	default:
		return false
	}
	return abi.DecodeStrict(req, v) == nil
}

// sameJSON reports whether a and b decode (as Go decodes) to the same
// value.
func sameJSON(t *testing.T, a, b []byte) bool {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Errorf("not JSON: %s: %v", a, err)
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

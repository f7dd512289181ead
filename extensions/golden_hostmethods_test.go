package extensions

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/testkit/abigolden"
	"github.com/pi-go/pi/runtime/tool"
)

// The host methods' goldens (ABI 1.1's kv.*, http.request, tool.call, ui.*
// and session.*), answered by the real host_call handlers. The goldens of
// the requests the host sends and the answers it decodes are in
// golden_test.go.

// golden11Ext is an extension value for the host methods, with a real
// host (kv folder, http transport, tool runner) and no instance.
func golden11Ext(t *testing.T, grants Grants) *Extension {
	t.Helper()
	root := t.TempDir()
	h := &Host{opts: Options{ProjectRoot: root, Cwd: root, KVDir: filepath.Join(t.TempDir(), "kv")}, http: newHTTPTransport()}
	e := &Extension{name: "greeter", host: h, grants: grants, logger: hclog.NewNullLogger()}
	e.info.Name = "greeter"
	h.exts = []*Extension{e}
	return e
}

// TestGolden11HostCalls: each 1.1 host request golden runs through the
// real host_call handler and answers its golden.
func TestGolden11HostCalls(t *testing.T) {
	ctx := context.Background()
	e := golden11Ext(t, Grants{HTTP: []string{"https://api.example.com/v1/*"}, Tools: []string{"read"}})

	// kv: set in the global scope, then get it from there.
	abigolden.Match(t, "the host", "host.empty.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.kv.set.request.json")))
	get := strings.Replace(string(abigolden.Wire(t, "host.kv.get.request.json")), `"project"`, `"global"`, 1)
	if got := string(e.handleHostCall(ctx, []byte(get))); got != `{"ok":true,"result":{"value":["buy milk"]}}` {
		t.Errorf("kv.get after kv.set = %s", got)
	}
	// The golden get, in the project scope, after a project set.
	e.handleHostCall(ctx, []byte(`{"method":"kv.set","params":{"key":"todo/items","value":["buy milk",{"done":true}]}}`))
	e.handleHostCall(ctx, []byte(`{"method":"kv.set","params":{"key":"todo/count","value":1}}`))
	e.handleHostCall(ctx, []byte(`{"method":"kv.set","params":{"key":"other","value":1}}`))
	abigolden.Match(t, "the host", "host.kv.get.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.kv.get.request.json")))
	abigolden.Match(t, "the host", "host.kv.list.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.kv.list.request.json")))
	abigolden.Match(t, "the host", "host.empty.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.kv.delete.request.json")))
	if got := string(e.handleHostCall(ctx, abigolden.Wire(t, "host.kv.get.request.json"))); got != `{"ok":true,"result":{"value":null}}` {
		t.Errorf("kv.get after kv.delete = %s", got)
	}

	// http.request: a real TLS server standing in for api.example.com.
	var seen *http.Request
	var seenBody string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		seen, seenBody = r, string(b[:n])
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusCreated)
		w.(http.Flusher).Flush() // chunked: no Content-Length
		w.Write([]byte(`{"id":7}`))
	}))
	defer srv.Close()
	e.host.http.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	e.host.http.TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}
	abigolden.Match(t, "the host", "host.http.request.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.http.request.request.json")))
	if seen == nil || seen.Method != "POST" || seen.URL.Path != "/v1/items" || seen.URL.RawQuery != "q=1" || seen.Host != "api.example.com" || seen.Header.Get("Content-Type") != "application/json" || seenBody != `{"name":"x"}` {
		t.Errorf("the server saw %+v with body %q", seen, seenBody)
	}

	// tool.call: a real tool through the real pipeline.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Project"), 0o644)
	read, err := tool.Wrap(tool.ToolDefinition{
		Name: "read", Label: "read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Execute: func(ctx context.Context, c tool.Call, tc tool.Context) (tool.Result, error) {
			var in struct{ Path string }
			json.Unmarshal(c.Input, &in)
			b, err := os.ReadFile(filepath.Join(dir, in.Path))
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Content: []tool.ContentBlock{tool.Text(string(b))}, Details: map[string]int{"lines": 1}}, nil
		},
	}, func(string) tool.Context { return tool.Context{} })
	if err != nil {
		t.Fatal(err)
	}
	e.host.SetToolRunner(func(ctx context.Context, name, callID string, input json.RawMessage) (tool.Result, error) {
		return tool.Run(ctx, []tool.AgentTool{read}, nil, name, callID, input, nil), nil
	})
	abigolden.Match(t, "the host", "host.tool.call.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.tool.call.request.json")))

	// ui without a person.
	abigolden.Match(t, "the host", "host.empty.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.ui.notify.request.json")))
	abigolden.Match(t, "the host", "host.ui.confirm.response.json", e.handleHostCall(ctx, abigolden.Wire(t, "host.ui.confirm.request.json")))
}

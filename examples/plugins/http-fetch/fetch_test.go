//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/apptest"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

func TestFetchOnLoopback(t *testing.T) {
	var private atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/docs/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page for %s", r.Header.Get("User-Agent"))
	})
	mux.HandleFunc("/docs/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such page", 404) })
	mux.HandleFunc("/docs/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/private/keys", http.StatusFound) })
	mux.HandleFunc("/private/keys", func(w http.ResponseWriter, r *http.Request) {
		private.Add(1)
		w.Write([]byte("secret"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	grant := srv.URL + "/docs/*"
	p := apptest.New(t, "http-fetch", plugin.BuildGo(t, "examples/plugins/http-fetch"), fmt.Sprintf("[extensions.grants]\nhttp = [%q]\n", grant))
	rt := p.Open(t, app.Options{})
	fetch := func(u string) (string, bool) {
		t.Helper()
		in, _ := json.Marshal(map[string]string{"url": u})
		res, err := rt.CallTool(context.Background(), "fetch", "c", in, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text(), res.IsError
	}
	if got, isErr := fetch(srv.URL + "/docs/page"); isErr || got != "HTTP 200\n\npage for pi-http-fetch/1.0" {
		t.Errorf("granted page = %q", got)
	}
	if got, isErr := fetch(srv.URL + "/docs/missing"); !isErr || got != "HTTP 404\n\nno such page\n" {
		t.Errorf("404 = %q", got)
	}
	for _, u := range []string{srv.URL + "/private/keys", srv.URL + "/docs/../private/keys"} {
		want := fmt.Sprintf("permission denied: extension http-fetch may not fetch %s (grants.http: %s)\nGranted URL patterns: %s", u, grant, grant)
		if got, isErr := fetch(u); !isErr || got != want {
			t.Errorf("%s = %q, want %q", u, got, want)
		}
	}
	want := fmt.Sprintf("permission denied: extension http-fetch may not fetch %s/private/keys (grants.http: %s)", srv.URL, grant)
	if got, isErr := fetch(srv.URL + "/docs/moved"); !isErr || !strings.HasPrefix(got, want) {
		t.Errorf("a redirect out of the grant = %q", got)
	}
	if n := private.Load(); n != 0 {
		t.Errorf("the ungranted path was fetched %d times", n)
	}
}

func TestFetchWithoutGrant(t *testing.T) {
	p := apptest.New(t, "http-fetch", plugin.BuildGo(t, "examples/plugins/http-fetch"), "")
	rt := p.Open(t, app.Options{})
	res, err := rt.CallTool(context.Background(), "fetch", "c", json.RawMessage(`{"url":"https://example.com/"}`), nil)
	if err != nil || !res.IsError || res.Text() != "permission denied: extension http-fetch may not fetch https://example.com/ (grants.http: none)" {
		t.Errorf("ungranted = %+v, %v", res, err)
	}
}

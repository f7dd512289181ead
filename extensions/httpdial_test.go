package extensions

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pi-go/pi/internal/netguard"
)

// TestHTTPTransportAddresses dials a real loopback server through the
// transport of http.request: by a name that resolves to it (refused, and
// the server sees nothing) and by its literal address (allowed).
func TestHTTPTransportAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "inside")
	}))
	defer srv.Close()
	tr := newHTTPTransport()
	defer tr.CloseIdleConnections()
	if tr.Proxy != nil {
		t.Error("the transport takes a proxy from the environment; a proxy resolves names where pi cannot check the address")
	}
	client := &http.Client{Transport: tr}
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	_, err := client.Get("http://localhost:" + port + "/")
	var ae *netguard.AddressError
	if !errors.As(err, &ae) || ae.Host != "localhost" || ae.Kind != "loopback" ||
		!strings.Contains(err.Error(), "of host localhost is loopback; grant the address literally to allow it") {
		t.Errorf("by name = %v", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the server was reached by name %d times", hits.Load())
	}
	for _, u := range []string{srv.URL + "/", "http://[::ffff:127.0.0.1]:" + port + "/"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("literal %s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "inside" {
			t.Errorf("literal %s = %q", u, b)
		}
	}
}

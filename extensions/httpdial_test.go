package extensions

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestAddressKind(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1", "loopback"},
		{"127.255.1.2", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:7f00:1", "loopback"},
		{"64:ff9b::127.0.0.1", "loopback"},
		{"64:ff9b::a9fe:a9fe", "link-local"},
		{"2002:7f00:1::1", "loopback"},
		{"::127.0.0.1", "reserved (IPv4-compatible)"},
		{"169.254.169.254", "link-local"},
		{"::ffff:169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"::ffff:192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"100.64.0.1", "private (shared address space)"},
		{"100.127.255.255", "private (shared address space)"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved or broadcast"},
		{"2001:db8::1", "reserved"},
		{"64:ff9b:1::a00:1", "private (local NAT64)"},
		// Public addresses, also when an IPv6 form embeds a public IPv4.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::8.8.8.8", ""},
		{"2002:808:808::1", ""},
		{"2606:4700:4700::1111", ""},
	} {
		if got := addressKind(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("addressKind(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

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
	var ae *addressError
	if !errors.As(err, &ae) || ae.host != "localhost" || ae.kind != "loopback" ||
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

package extensions

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Where http.request may connect. A grant names a host; what the host
// resolves to is decided by whoever runs its DNS (the extension's author,
// a rebinding attacker), so pi checks the address each connection really
// goes to, in the dialer's Control (called once per address tried, also
// for every address Happy Eyeballs races and every redirect's connection).
// An address that is not globally reachable — loopback, link-local (cloud
// metadata at 169.254.169.254), private, shared (CGNAT), unspecified,
// multicast, broadcast, reserved, documentation, and these same addresses
// written as IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 — is refused
// unless the URL names that very address literally: a URL's host is fetched
// only after it matched a grant whose host is the same string, so a literal
// address in the URL is one the grant names. Requests never go through
// HTTP_PROXY/HTTPS_PROXY: a proxy resolves the name itself, where pi cannot
// see the address.

// nonPublic are the ranges of IANA's special-purpose registries that are not
// globally reachable, plus multicast; an IPv6 address that embeds an IPv4
// one is judged by the IPv4 address too (embeddedIPv4).
var nonPublic = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "private (shared address space)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved (IPv4-compatible)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private (local NAT64)"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard-only)"},
	{netip.MustParsePrefix("2001::/23"), "reserved"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},
	{netip.MustParsePrefix("3fff::/20"), "reserved"},
	{netip.MustParsePrefix("5f00::/16"), "reserved"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "link-local (site-local)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// addressKind says why addr is not a public address ("loopback",
// "private", ...), or "" when it is one.
func addressKind(addr netip.Addr) string {
	addr = addr.WithZone("")
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(addr) {
			return r.what
		}
	}
	if v4, ok := embeddedIPv4(addr); ok {
		if k := addressKind(v4); k != "" {
			return k
		}
	}
	return ""
}

// embeddedIPv4 is the IPv4 address a NAT64 (64:ff9b::/96) or 6to4
// (2002::/16) address leads to.
func embeddedIPv4(addr netip.Addr) (netip.Addr, bool) {
	b := addr.As16()
	switch {
	case addr.Is6() && nat64.Contains(addr):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case addr.Is6() && sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// addressError is the refusal of one address a host resolved to.
type addressError struct {
	host, addr, port, kind string
}

func (e *addressError) Error() string {
	return fmt.Sprintf("address %s of host %s is %s; grant the address literally to allow it (http(s)://%s/...)",
		e.addr, e.host, e.kind, net.JoinHostPort(e.addr, e.port))
}

type dialHostKey struct{}

// dialChecked is the transport's DialContext: a literal address is dialed
// as it is (it was granted literally); a name is dialed with a Control
// that refuses every non-public address it resolves to.
func dialChecked(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		literal, err := netip.ParseAddr(host)
		if err != nil {
			literal = netip.Addr{}
		}
		ctx = context.WithValue(ctx, dialHostKey{}, dialHost{name: host, literal: literal})
		conn, err := d.DialContext(ctx, network, address)
		var ae *addressError
		if errors.As(err, &ae) {
			return nil, ae
		}
		return conn, err
	}
}

type dialHost struct {
	name    string
	literal netip.Addr
}

// controlAddress is the dialer's ControlContext: it sees every address
// before the socket connects to it.
func controlAddress(ctx context.Context, network, address string, _ syscall.RawConn) error {
	h, _ := ctx.Value(dialHostKey{}).(dialHost)
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: not an address", address)
	}
	if h.literal.IsValid() && h.literal.WithZone("").Unmap() == addr.WithZone("").Unmap() {
		return nil
	}
	if k := addressKind(addr); k != "" {
		name := h.name
		if name == "" {
			name = "?"
		}
		return &addressError{host: name, addr: addr.WithZone("").Unmap().String(), port: port, kind: k}
	}
	return nil
}

// newHTTPTransport is the transport of a host's http.request calls: Go's
// default settings (HTTP/2, timeouts) without a proxy, dialing only public
// addresses unless the URL names the address literally, with a connection
// pool of its own that Close empties.
func newHTTPTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: controlAddress}
	t.DialContext = dialChecked(d)
	return t
}

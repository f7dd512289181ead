// Package netguard owns the one rule about where pi's own network
// connections may go on a guest's or a sandboxed command's behalf: only
// to globally reachable addresses, unless the address was named
// literally. A host name is decided by whoever runs its DNS (a rebinding
// attacker), so the check is made on each address a connection really
// goes to, in the dialer's Control (called once per address tried, also
// for every address Happy Eyeballs races). An address that is not
// globally reachable — loopback, link-local (cloud metadata at
// 169.254.169.254), private, shared (CGNAT), unspecified, multicast,
// broadcast, reserved, documentation, and these same addresses written as
// IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 — is refused unless the
// host dialed is that very address written literally. Users: the
// extensions' http.request and the sandbox's network proxy.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

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

// Kind says why addr is not a public address ("loopback", "private",
// ...), or "" when it is one.
func Kind(addr netip.Addr) string {
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
		if k := Kind(v4); k != "" {
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

// AddressError is the refusal of one address a host resolved to.
type AddressError struct {
	// Host is the name dialed, Addr the address it resolved to, Port the
	// port, Kind what the address is (Kind).
	Host, Addr, Port, Kind string
	// Hint, when set, is added to the message (how to allow it).
	Hint string
}

func (e *AddressError) Error() string {
	s := fmt.Sprintf("address %s of host %s is %s", e.Addr, e.Host, e.Kind)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

type dialHostKey struct{}

type dialHost struct {
	name    string
	literal netip.Addr
}

// Dialer returns d's DialContext guarded by the rule: a literal address is
// dialed as it is (the caller allowed it literally); a name is dialed with
// a Control that refuses every non-public address it resolves to, with an
// *AddressError (its Hint from hint, when not nil). d's ControlContext is
// replaced.
func Dialer(d *net.Dialer, hint func(*AddressError) string) func(ctx context.Context, network, address string) (net.Conn, error) {
	dd := *d
	dd.Control = nil
	dd.ControlContext = controlAddress
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
		conn, err := dd.DialContext(ctx, network, address)
		var ae *AddressError
		if errors.As(err, &ae) {
			if hint != nil {
				ae.Hint = hint(ae)
			}
			return nil, ae
		}
		return conn, err
	}
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
	if k := Kind(addr); k != "" {
		name := h.name
		if name == "" {
			name = "?"
		}
		return &AddressError{Host: name, Addr: addr.WithZone("").Unmap().String(), Port: port, Kind: k}
	}
	return nil
}

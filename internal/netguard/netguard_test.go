package netguard

import (
	"net/netip"
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
		if got := Kind(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Kind(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

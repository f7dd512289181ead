package proxy

import "testing"

// TestAllowed: names match whole (any case, a final dot ignored), *.domain
// matches names under it and not the domain itself, an address matches
// as written or as its IPv4-mapped form.
func TestAllowed(t *testing.T) {
	p, err := Start([]string{"proxy.golang.org", "*.npmjs.org", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for host, want := range map[string]bool{
		"proxy.golang.org":      true,
		"PROXY.golang.org.":     true,
		"sum.golang.org":        false,
		"registry.npmjs.org":    true,
		"a.b.npmjs.org":         true,
		"npmjs.org":             false,
		"evilnpmjs.org":         false,
		"127.0.0.1":             true,
		"::ffff:127.0.0.1":      true,
		"127.0.0.2":             false,
		"proxy.golang.org.evil": false,
	} {
		if got := p.Allowed(host); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

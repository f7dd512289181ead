package extensions

import (
	"net"
	"net/http"
	"time"

	"github.com/pi-go/pi/internal/netguard"
)

// Where http.request may connect: a grant names a host, and pi checks the
// address each connection really goes to (internal/netguard): an address
// that is not globally reachable is refused unless the URL names that very
// address literally — a URL's host is fetched only after it matched a grant
// whose host is the same string, so a literal address in the URL is one the
// grant names. Requests never go through HTTP_PROXY/HTTPS_PROXY: a proxy
// resolves the name itself, where pi cannot see the address.

// grantHint is how an extension's grant allows a refused address.
func grantHint(e *netguard.AddressError) string {
	return "grant the address literally to allow it (http(s)://" + net.JoinHostPort(e.Addr, e.Port) + "/...)"
}

// newHTTPTransport is the transport of a host's http.request calls: Go's
// default settings (HTTP/2, timeouts) without a proxy, dialing only public
// addresses unless the URL names the address literally, with a connection
// pool of its own that Close empties.
func newHTTPTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = netguard.Dialer(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, grantHint)
	return t
}

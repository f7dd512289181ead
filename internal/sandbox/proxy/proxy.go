// Package proxy is the network proxy of the sandbox's network "allow"
// (internal/sandbox, docs/sandbox.md): an HTTP proxy on a Unix socket
// letting through only the allowed hosts. It is a package of its own so
// that the sandbox's helper, which starts before every call, does not
// carry net/http's initialisation (docs/performance.md).
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pi-go/pi/internal/netguard"
)

// Proxy is the network proxy of network "allow": an HTTP proxy (CONNECT
// tunnels and plain HTTP forwarding) on a Unix socket, letting through only
// the allowed hosts. Inside the command's network namespace nothing else is
// reachable; the helper listens on the namespace's 127.0.0.1 and relays
// each connection to Socket (docs/sandbox.md, "The network").
//
// Names are resolved by the proxy itself, and an address that is not
// globally reachable (loopback, private, link-local: internal/netguard) is
// refused unless the request names that very address and an allow entry
// is that address written literally.
type Proxy struct {
	// Socket is the absolute path of the proxy's Unix socket, in a folder
	// of its own (sandbox.Policy.Proxy).
	Socket string
	allow  []string
	dir    string
	srv    *http.Server
	tr     *http.Transport
	dial   func(ctx context.Context, network, address string) (net.Conn, error)
	once   sync.Once
}

// Start starts a proxy letting through the hosts allow (patterns:
// a name, *.domain, or a literal address), on a Unix socket in a new
// folder of os.TempDir (mode 0700). Close stops it.
//
// # Errors
//
// The folder or the socket cannot be made.
func Start(allow []string) (*Proxy, error) {
	dir, err := os.MkdirTemp("", "pi-proxy-")
	if err != nil {
		return nil, fmt.Errorf("sandbox proxy: %w", err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox proxy: %w", err)
	}
	p := &Proxy{Socket: sock, dir: dir}
	for _, a := range allow {
		p.allow = append(p.allow, strings.ToLower(strings.TrimSuffix(a, ".")))
	}
	p.dial = netguard.Dialer(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, nil)
	p.tr = http.DefaultTransport.(*http.Transport).Clone()
	p.tr.Proxy = nil
	p.tr.DialContext = p.dial
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy (open tunnels end) and removes its socket.
func (p *Proxy) Close() error {
	var err error
	p.once.Do(func() {
		err = p.srv.Close()
		p.tr.CloseIdleConnections()
		os.RemoveAll(p.dir)
	})
	return err
}

// Allowed reports whether host (a name or a literal address, no port)
// matches an allow entry: the same name (any case, a final dot ignored),
// or a pattern such as *.npmjs.org ('*' any run of characters).
func (p *Proxy) Allowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.WithZone("").Unmap().String()
	}
	for _, a := range p.allow {
		if a == host {
			return true
		}
		if ok, _ := path.Match(a, host); ok {
			return true
		}
	}
	return false
}

// ServeHTTP is the proxy: CONNECT tunnels and absolute-URL requests to the
// allowed hosts; everything else is refused with a 403 (a host not
// allowed, an address not public) or a 400.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hostport := r.Host
	if r.Method != http.MethodConnect {
		if r.URL.Host == "" || r.URL.Scheme != "http" {
			http.Error(w, "pi sandbox proxy: only CONNECT and http:// requests with an absolute URL are served", http.StatusBadRequest)
			return
		}
		hostport = r.URL.Host
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, "80"
	}
	if !p.Allowed(host) {
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("pi sandbox proxy: host %s is not in [sandbox] allow_hosts (network = \"allow\"): add it to allow_hosts in pi.toml to let it through", host), http.StatusForbidden)
		return
	}
	target := net.JoinHostPort(host, port)
	if r.Method == http.MethodConnect {
		p.tunnel(w, r, target)
		return
	}
	p.forward(w, r)
}

// refuse writes the answer to a failed dial: a 403 for an address the
// rule refuses, a 502 otherwise.
func refuse(w http.ResponseWriter, host string, err error) {
	w.Header().Set("Connection", "close")
	var ae *netguard.AddressError
	if errors.As(err, &ae) {
		http.Error(w, fmt.Sprintf("pi sandbox proxy: host %s resolves to %s, a %s address: only an allow_hosts entry naming that address literally (and a request to it) lets it through", host, ae.Addr, ae.Kind), http.StatusForbidden)
		return
	}
	http.Error(w, "pi sandbox proxy: "+err.Error(), http.StatusBadGateway)
}

// tunnel is CONNECT: dial target, answer 200 and relay both ways.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, target string) {
	host, _, _ := net.SplitHostPort(target)
	up, err := p.dial(r.Context(), "tcp", target)
	if err != nil {
		refuse(w, host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "pi sandbox proxy: CONNECT needs HTTP/1", http.StatusBadRequest)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		up.Close()
		down.Close()
		return
	}
	// What the client sent after its CONNECT line is already buffered.
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			up.Close()
			down.Close()
			return
		}
	}
	relay(down, up)
}

// hopHeaders are the headers of one hop, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward is a plain http:// request: sent on through the guarded
// transport, its answer copied back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		refuse(w, r.URL.Hostname(), err)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// relay copies a and b into each other until both directions end, passing
// on each end of stream as a half close.
func relay(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	go half(a, b)
	go half(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

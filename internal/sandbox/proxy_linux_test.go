//go:build linux

package sandbox

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/sandbox/proxy"
)

// hostServer is an HTTP server on the host's loopback answering
// "hello-from-host", counting its requests.
func hostServer(t *testing.T) (port string, hits *atomic.Int32) {
	t.Helper()
	hits = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "hello-from-host\n")
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, hits
}

// allowPolicy is w's workspace-write policy with network allow through a
// new proxy letting allow through.
func (w world) allowPolicy(t *testing.T, allow ...string) Policy {
	t.Helper()
	px, err := proxy.Start(allow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	p := w.policy(t, ModeWorkspaceWrite, NetworkAllow)
	p.Proxy, p.AllowHosts = px.Socket, allow
	return p
}

// viaProxy is a bash script sending raw (printf format) to the proxy that
// $HTTPS_PROXY names and printing the answer.
func viaProxy(raw string) string {
	return `hp=${HTTPS_PROXY#http://}; exec 3<>/dev/tcp/127.0.0.1/${hp##*:} || exit 9; printf '` + raw + `' >&3; timeout 10 cat <&3`
}

// TestNetworkAllow: under network "allow" a host on the list is reached
// through the proxy (CONNECT and plain HTTP), other hosts get the proxy's
// 403 naming the host and the setting, a name that resolves to loopback is
// refused even when listed, and nothing is reachable around the proxy:
// neither the host's loopback server directly (the control reaches it with
// the network on) nor UDP.
func TestNetworkAllow(t *testing.T) {
	needKernel(t)
	port, hits := hostServer(t)
	w := newWorld(t)
	p := w.allowPolicy(t, "127.0.0.1", "localhost")

	get := `GET / HTTP/1.1\r\nHost: 127.0.0.1:` + port + `\r\nConnection: close\r\n\r\n`
	out, code := runIn(t, p, w.project, w.home, viaProxy(`CONNECT 127.0.0.1:`+port+` HTTP/1.1\r\nHost: 127.0.0.1:`+port+`\r\n\r\n`+get))
	if code != 0 || !strings.Contains(out, "200 Connection established") || !strings.Contains(out, "hello-from-host") {
		t.Fatalf("CONNECT to an allowed literal address: exit %d:\n%s", code, out)
	}
	out, _ = runIn(t, p, w.project, w.home, viaProxy(`GET http://127.0.0.1:`+port+`/ HTTP/1.1\r\nHost: 127.0.0.1:`+port+`\r\nConnection: close\r\n\r\n`))
	if !strings.Contains(out, "hello-from-host") {
		t.Fatalf("plain HTTP to an allowed literal address:\n%s", out)
	}
	if out, _ := runIn(t, p, w.project, w.home, `env | grep -i _proxy=`); !strings.Contains(out, "HTTPS_PROXY=http://127.0.0.1:") || !strings.Contains(out, "all_proxy=") {
		t.Fatalf("the proxy variables are not set:\n%s", out)
	}
	if _, code := runIn(t, p, w.project, w.home, `exit 7`); code != 7 {
		t.Errorf("the command's exit code %d came back as %d", 7, code)
	}
	before := hits.Load() // the refused requests below must not reach it

	out, _ = runIn(t, p, w.project, w.home, viaProxy(`CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n`))
	if !strings.Contains(out, "403 Forbidden") || !strings.Contains(out, "host evil.example is not in [sandbox] allow_hosts") {
		t.Fatalf("a host not on the list:\n%s", out)
	}
	if got := strings.Join(p.Refusals(out, w.project, w.home), "\n"); !strings.Contains(got, "Sandbox refused: network: host evil.example is not in [sandbox] allow_hosts") {
		t.Errorf("refusal lines:\n%s", got)
	}
	out, _ = runIn(t, p, w.project, w.home, viaProxy(`CONNECT localhost:`+port+` HTTP/1.1\r\nHost: localhost\r\n\r\n`+get))
	if !strings.Contains(out, "403 Forbidden") || !strings.Contains(out, "resolves to 127.0.0.1, a loopback address") {
		t.Fatalf("a listed name resolving to loopback:\n%s", out)
	}
	out, _ = runIn(t, p, w.project, w.home, viaProxy(`GET http://10.1.2.3/ HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n`))
	if !strings.Contains(out, "host 10.1.2.3 is not in [sandbox] allow_hosts") {
		t.Fatalf("plain HTTP to a host not on the list:\n%s", out)
	}

	if _, err := exec.LookPath("curl"); err == nil {
		// What a real client does with the variables, and what the model
		// then reads.
		out, _ = runIn(t, p, w.project, w.home, `curl -sS --max-time 10 http://127.0.0.1:`+port+`/; curl -sS --max-time 10 https://evil.example/`)
		if !strings.Contains(out, "hello-from-host") {
			t.Errorf("curl did not reach the listed host through the proxy:\n%s", out)
		}
		if got := strings.Join(p.Refusals(out, w.project, w.home), "\n"); !strings.Contains(got, "Sandbox refused: network: the proxy refused a host that is not in allow_hosts (sandbox network allow: only 127.0.0.1, localhost through pi's proxy)") {
			t.Errorf("curl's refused CONNECT is not named:\n%s\noutput:\n%s", got, out)
		}
	}

	if got := hits.Load() - before; got > 1 { // curl's allowed request
		t.Errorf("the refused requests reached the host's server (%d requests)", got)
	}
	before = hits.Load()
	direct := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && printf '` + get + `' >&3 && timeout 10 cat <&3`
	for _, network := range []string{NetworkOn, NetworkAllow} {
		q := w.policy(t, ModeWorkspaceWrite, network)
		if network == NetworkAllow {
			q = p
		}
		out, _ := runIn(t, q, w.project, w.home, direct)
		reached := strings.Contains(out, "hello-from-host")
		if network == NetworkOn && !reached {
			t.Fatalf("control (network on): the host's server was not reached directly:\n%s", out)
		}
		if network == NetworkAllow && reached {
			t.Fatalf("network allow reached the host's server around the proxy:\n%s", out)
		}
	}
	if got := hits.Load() - before; got != 1 { // the control's request only
		t.Errorf("the host's server got %d requests after the allowed ones, want 1 (the control's)", got)
	}
}

// TestNetworkAllowUDP: UDP (DNS included) does not leave the namespace
// under network "allow": a datagram to a UDP server on the host's loopback
// arrives with the network on (the control), not with allow; and no route
// leads out (a datagram to a public DNS server is unreachable).
func TestNetworkAllowUDP(t *testing.T) {
	needKernel(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	got := make(chan string, 8)
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			got <- string(buf[:n])
		}
	}()
	_, port, _ := net.SplitHostPort(pc.LocalAddr().String())
	w := newWorld(t)
	for _, network := range []string{NetworkOn, NetworkAllow} {
		q := w.policy(t, ModeWorkspaceWrite, network)
		if network == NetworkAllow {
			q = w.allowPolicy(t, "127.0.0.1")
		}
		out, _ := runIn(t, q, w.project, w.home, `printf '`+network+`' > /dev/udp/127.0.0.1/`+port+`; printf x > /dev/udp/9.9.9.9/53 && echo public-sent`)
		// The datagram of "on" is waited for; "allow"'s would come before
		// the marker the test sends itself after the command ended.
		if network == NetworkAllow {
			if _, err := pc.WriteTo([]byte("marker"), pc.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case s := <-got:
			if network == NetworkOn && s != NetworkOn {
				t.Fatalf("control got %q", s)
			}
			if network == NetworkAllow && s != "marker" {
				t.Fatalf("network allow sent a datagram to the host's loopback: %q\n%s", s, out)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing arrived:\n%s", network, out)
		}
		if network == NetworkAllow && (strings.Contains(out, "public-sent") || !strings.Contains(out, "Network is unreachable")) {
			t.Fatalf("network allow has a route out:\n%s", out)
		}
	}
}

// TestProxySocketProtected: under network "allow" the command can neither
// remove nor replace the proxy's socket (its folder is read-only inside),
// so the proxy keeps serving, even with the folder around it writable;
// the control, with the sandbox off, removes
// it.
func TestProxySocketProtected(t *testing.T) {
	needKernel(t)
	for _, mode := range []string{ModeOff, ModeWorkspaceWrite} {
		w := newWorld(t)
		p := w.allowPolicy(t, "127.0.0.1")
		p.Mode = mode
		// The folder holding the proxy's (the temporary folder) is
		// writable, as /tmp is by default: only the protection holds.
		p.Writable = append(p.Writable, filepath.Dir(filepath.Dir(p.Proxy)))
		out, _ := runIn(t, p, w.project, w.home, `rm -f `+p.Proxy+`; ln -sf /dev/null `+p.Proxy+`; mv `+filepath.Dir(p.Proxy)+` `+filepath.Dir(p.Proxy)+`.x; echo tried`)
		fi, err := os.Lstat(p.Proxy)
		intact := err == nil && fi.Mode()&os.ModeSocket != 0
		if mode == ModeOff && intact {
			t.Fatalf("control (sandbox off): the socket was not touched: %s", out)
		}
		if mode != ModeOff && !intact {
			t.Fatalf("the command removed or replaced the proxy's socket (%v): %s", err, out)
		}
	}
}

//go:build linux

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/sandbox"
)

// TestStdioServerSandbox: a stdio server with Sandbox runs under the
// policy of Options.Sandbox (this test binary is the helper): it works,
// but its write outside the writable roots (the marker the slow tool
// writes) is refused; the control, without Sandbox, writes it. With
// Sandbox and no sandbox to run it in, the server does not start and the
// warning says why.
func TestStdioServerSandbox(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, boxed := range []bool{false, true} {
		f := newFixture(t, func(s *Server, o *Options) {
			s.Sandbox = boxed
			p := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{o.Cwd}}
			o.Sandbox = func() *sandbox.Policy { return p }
		}).start()
		res := f.call(t, context.Background(), "mcp__t__slow", `{"ms":1,"id":"s"}`)
		if res.IsError || res.Text() != "slept" {
			t.Fatalf("boxed=%v: %+v (warnings %s)", boxed, res, f.warned())
		}
		_, err := os.Stat(filepath.Join(f.markers, "started-s"))
		if !boxed && err != nil {
			t.Fatal("control: the server without the sandbox could not write its marker")
		}
		if boxed && err == nil {
			t.Fatal("the sandboxed server wrote outside its writable roots")
		}
	}

	f := newFixture(t, func(s *Server, o *Options) { s.Sandbox = true }).start()
	if w := f.warned(); !strings.Contains(w, "sandbox = true, but commands run without the sandbox here") {
		t.Errorf("warnings: %s", w)
	}
}

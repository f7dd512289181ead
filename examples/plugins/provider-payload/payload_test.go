//go:build !wasip1

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/porttest"
	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestPayloadLogged: every request pi POSTs to the model is written to
// .pi/provider-payload.log as it is sent, redacted (the key never shows).
func TestPayloadLogged(t *testing.T) {
	p := porttest.New(t, "provider-payload", porttest.Build(t, "."), "[extensions.grants]\nfs = [\"rw:.pi\"]")
	p.Write(".pi/.keep", "")
	srv := openai.NewServer(t, openai.Reply{Text: "hello back"})
	out, stderr, code := p.Run("", "-p", "say hello", "--base-url", srv.URL, "--model", "M", "--api-key", "sk-secret-123")
	if code != 0 || !strings.Contains(out, "hello back") {
		t.Fatalf("exit %d, %q %s", code, out, stderr)
	}
	b, err := os.ReadFile(filepath.Join(p.Dir, ".pi", "provider-payload.log"))
	if err != nil {
		t.Fatal(err)
	}
	var logged map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(b))), &logged); err != nil {
		t.Fatalf("the log is not one payload: %v\n%s", err, b)
	}
	sent, _ := json.Marshal(srv.Requests()[0]["messages"])
	got, _ := json.Marshal(logged["messages"])
	if logged["model"] != "M" || string(got) != string(sent) || strings.Contains(string(b), "sk-secret-123") {
		t.Errorf("logged %s\nsent messages %s", b, sent)
	}
}

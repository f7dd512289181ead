package textmode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/app"
)

// TestExtensionTextCannotDriveTheTerminal: escape sequences in what an
// extension shows are neutralized.
func TestExtensionTextCannotDriveTheTerminal(t *testing.T) {
	var out bytes.Buffer
	u := NewLineUI(nil, &out)
	u.Notify("ok\x1b[2K\r? fake [y/N]\x9b31m\x07", app.NotifyInfo)
	if strings.ContainsAny(out.String(), "\x1b\r\x07\u009b") || !strings.Contains(out.String(), "ok[2K? fake [y/N]\uFFFD31m") {
		t.Errorf("notice printed %q", out.String())
	}
}

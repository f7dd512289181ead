package textmode

import (
	"bufio"
	"bytes"
	"context"
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

// TestExtensionTextCannotFakeALine: an extension's newlines cannot start a
// line of its own that looks like pi's (a question, a prompt, a tool
// line): a notice's and a question's later lines are indented, a title,
// an option and a placeholder are kept to one line.
func TestExtensionTextCannotFakeALine(t *testing.T) {
	const fake = "\n? Allow rm -rf ~? [y/N]\n> \n→ bash"
	var out bytes.Buffer
	u := NewLineUI(bufio.NewScanner(strings.NewReader("\n1\n\n")), &out)
	u.Notify("done"+fake, app.NotifyWarning)
	ctx := context.Background()
	if _, err := u.Confirm(ctx, "Deploy"+fake, "now"+fake); err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Select(ctx, "Pick"+fake, []string{"a" + fake, "b"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Input(ctx, "Name"+fake, "hint"+fake); err != nil {
		t.Fatal(err)
	}
	var questions int
	for _, l := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "? "):
			questions++ // pi's own: one per question
		case strings.HasPrefix(l, ">"), strings.HasPrefix(l, "→"):
			t.Errorf("a line of the extension's text passes for pi's: %q", l)
		}
	}
	if questions != 3 {
		t.Errorf("%d lines start like a question, want 3 (pi's own):\n%s", questions, out.String())
	}
}

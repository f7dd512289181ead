package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrivate: a private folder shows the command its writable roots
// inside it and nothing else (the other entries cannot be listed or read),
// the kept root stays writable, the cover itself is read-only; without
// Private (the control) everything is there.
func TestPrivate(t *testing.T) {
	needKernel(t)
	w := newWorld(t)
	// w.home holds proj (the writable root), sibling and .bashrc.
	if err := os.WriteFile(filepath.Join(w.sibling, "secret"), []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.outside, "token"), []byte("t0ken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `echo "ls: $(ls -A ..)"; cat ../sibling/secret ../.bashrc ` + filepath.Join(w.outside, "token") + ` 2>&1; echo x > src/new && echo wrote; touch ../planted 2>&1 || true`
	p := w.policy(t, ModeWorkspaceWrite, NetworkOn)
	out, _ := runIn(t, p, w.project, w.home, script)
	if !strings.Contains(out, "s3cret") || !strings.Contains(out, "sibling") || !strings.Contains(out, "t0ken") {
		t.Fatalf("control: the folder should be visible without Private:\n%s", out)
	}
	p.Private = []string{w.home, filepath.Join(w.outside, "token")}
	out, code := runIn(t, p, w.project, w.home, script)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, leak := range []string{"s3cret", "original", "t0ken"} {
		if strings.Contains(out, leak) {
			t.Errorf("private folder leaked %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "ls: proj\n") || !strings.Contains(out, "wrote") {
		t.Errorf("the kept root is not there or not writable:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(w.home, "planted")); err == nil {
		t.Error("the cover was writable: planted reached the real folder")
	}
	if b, err := os.ReadFile(filepath.Join(w.project, "src", "new")); err != nil || string(b) != "x\n" {
		t.Errorf("write through the kept root: %q %v", b, err)
	}
}

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// TestSearchesLeaveOutHidden: grep (on one goroutine and on several),
// find and ls never open, list or enter what tool.Context.Hidden hides,
// also when the call names it, and say how many paths they left out.
func TestSearchesLeaveOutHidden(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		".env":          "token=secret-1\n",
		"a/.env.local":  "token=secret-2\n",
		"vault/key.txt": "token=secret-3\n",
		"a/b/ok.txt":    "token=public\n",
		"ok.txt":        "token=public\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	var mu sync.Mutex
	var asked []string
	tc := tool.Context{Cwd: dir, Hidden: func(p string) bool {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		base := filepath.Base(p)
		return strings.HasPrefix(base, ".env") || base == "vault"
	}}
	for _, workers := range []int{1, 4} {
		old := grepWorkers
		grepWorkers = func() int { return workers }
		r, err := runGrep(context.Background(), tc, grepArgs{Pattern: "token"})
		grepWorkers = old
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Text(); got != "a/b/ok.txt:1: token=public\nok.txt:1: token=public\n\n[3 paths left out by permission path rules]" {
			t.Errorf("grep on %d goroutines = %q", workers, got)
		}
	}
	for _, p := range asked {
		if strings.Contains(p, "key.txt") {
			t.Errorf("grep looked inside the hidden folder: %s", p)
		}
	}
	if r, _ := runGrep(context.Background(), tc, grepArgs{Pattern: "token", Path: strArg(".env")}); r.Text() != "No matches found\n\n[1 path left out by permission path rules]" {
		t.Errorf("grep of the hidden file = %q", r.Text())
	}
	if r, _ := runFind(context.Background(), tc, findArgs{Pattern: "*.txt"}); r.Text() != "a/b/ok.txt\nok.txt" {
		t.Errorf("find *.txt = %q (a hidden folder whose name does not match is not counted)", r.Text())
	}
	if r, _ := runFind(context.Background(), tc, findArgs{Pattern: ".env*"}); r.Text() != "No files found matching pattern\n\n[2 paths left out by permission path rules]" {
		t.Errorf("find .env* = %q", r.Text())
	}
	if r, _ := runLs(context.Background(), tc, lsArgs{}); r.Text() != "a/\nok.txt\n\n[2 paths left out by permission path rules]" {
		t.Errorf("ls = %q", r.Text())
	}
	if r, _ := runLs(context.Background(), tc, lsArgs{Path: strArg("vault")}); r.Text() != "(empty directory)\n\n[1 path left out by permission path rules]" {
		t.Errorf("ls of the hidden folder = %q", r.Text())
	}
}

func strArg(s string) *string { return &s }

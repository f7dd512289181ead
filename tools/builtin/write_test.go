package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		args    string
		want    string
		file    string // file to check, relative to dir
		content string
		mode    os.FileMode
	}{
		{"new file", nil, `{"path":"a.txt","content":"hello\n"}`, "Successfully wrote 6 bytes to a.txt", "a.txt", "hello\n", 0o644},
		{"parent folders created", nil, `{"path":"x/y/z.go","content":"package z"}`, "Successfully wrote 9 bytes to x/y/z.go", "x/y/z.go", "package z", 0o644},
		{"bytes are UTF-8 bytes", nil, `{"path":"u.txt","content":"héllo 😀"}`, "Successfully wrote 11 bytes to u.txt", "u.txt", "héllo 😀", 0o644},
		{"empty content", nil, `{"path":"e.txt","content":""}`, "Successfully wrote 0 bytes to e.txt", "e.txt", "", 0o644},
		{"overwrite keeps the mode", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "run.sh"), "old old old")
			os.Chmod(filepath.Join(dir, "run.sh"), 0o750)
		}, `{"path":"run.sh","content":"echo hi\n"}`, "Successfully wrote 8 bytes to run.sh", "run.sh", "echo hi\n", 0o750},
		{"through a symlink", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "real.txt"), "old")
			os.Symlink("real.txt", filepath.Join(dir, "link.txt"))
		}, `{"path":"link.txt","content":"new"}`, "Successfully wrote 3 bytes to link.txt", "real.txt", "new", 0o644},
		{"@ prefix dropped", nil, `{"path":"@at.txt","content":"x"}`, "Successfully wrote 1 bytes to @at.txt", "at.txt", "x", 0o644},
		{"absolute path", nil, `{"path":"ABS/abs.txt","content":"x"}`, "Successfully wrote 1 bytes to ABS/abs.txt", "abs.txt", "x", 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			args := strings.ReplaceAll(tt.args, "ABS", dir)
			want := strings.ReplaceAll(tt.want, "ABS", dir)
			r := callTool(t, dir, "write", args)
			if r.IsError || r.Text() != want {
				t.Fatalf("got %q (isError %v), want %q", r.Text(), r.IsError, want)
			}
			path := filepath.Join(dir, tt.file)
			if got := mustRead(t, path); got != tt.content {
				t.Errorf("file = %q, want %q", got, tt.content)
			}
			assertMode(t, path, tt.mode)
			assertNoTemp(t, dir)
		})
	}
}

func TestWriteBadInput(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []string // substrings of the error text, in order
	}{
		{"content null", `{"path":"a.txt","content":null}`, []string{"Validation failed for tool \"write\":", "  - content: must be string (got null)"}},
		{"content number", `{"path":"a.txt","content":42}`, []string{"  - content: must be string (got number)"}},
		{"content object", `{"path":"a.txt","content":{"x":1}}`, []string{"  - content: must be string (got object)"}},
		{"content missing", `{"path":"a.txt"}`, []string{"  - content: must have required property 'content'"}},
		{"path missing", `{"content":"x"}`, []string{"  - path: must have required property 'path'"}},
		{"path number", `{"path":7,"content":"x"}`, []string{"  - path: must be string (got number)"}},
		{"not an object", `["a.txt","x"]`, []string{"Validation failed for tool \"write\":"}},
		{"not JSON", `{"path":`, []string{"Validation failed for tool \"write\":"}},
		{"read-only file", `{"path":"ro.txt","content":"new"}`, []string{"write file ", "ro.txt", "permission denied"}},
		{"directory", `{"path":"sub","content":"new"}`, []string{"write file ", "sub", "is a directory"}},
		{"parent is a file", `{"path":"ro.txt/child","content":"new"}`, []string{"write file ", "ro.txt/child", "not a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "ro.txt"), "old")
			os.Chmod(filepath.Join(dir, "ro.txt"), 0o444)
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
			before := dirSnapshot(t, dir)
			r := callTool(t, dir, "write", tt.args)
			if !r.IsError {
				t.Fatalf("no error: %q", r.Text())
			}
			text := r.Text()
			at := 0
			for _, w := range tt.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("error text %q lacks %q", text, w)
				}
				at += i + len(w)
			}
			if after := dirSnapshot(t, dir); !mapsEqual(before, after) {
				t.Errorf("disk changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

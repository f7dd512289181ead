package gitignore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWalkTree(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		links map[string]string // link name -> target
		want  []string          // visit order; directories end in '/', symlinks in '@'
	}{
		{
			name:  "depth first, names in byte order, directory before its contents",
			files: map[string]string{"b.txt": "", "a/z.txt": "", "a.go": "", "A/x": "", "a/b/c": "", "empty/": ""},
			want:  []string{"A/", "A/x", "a/", "a/b/", "a/b/c", "a/z.txt", "a.go", "b.txt", "empty/"},
		},
		{
			name:  ".git skipped at every depth, as directory or file",
			files: map[string]string{".git/config": "", "sub/.git": "gitdir: x", "sub/f": "", ".github/w.yml": "", ".env": ""},
			want:  []string{".env", ".github/", ".github/w.yml", "sub/", "sub/f"},
		},
		{
			name:  "symlinks listed, not followed",
			files: map[string]string{"real/f": ""},
			links: map[string]string{"link": "real", "dangling": "nowhere"},
			want:  []string{"dangling@", "link@", "real/", "real/f"},
		},
		{
			name:  "no repository: the root's own .gitignore applies",
			files: map[string]string{".gitignore": "*.tmp\nout/\n", "x.tmp": "", "out/y": "", "keep": "", "d/.gitignore": "!*.tmp\n", "d/z.tmp": ""},
			want:  []string{".gitignore", "d/", "d/.gitignore", "d/z.tmp", "keep"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			for name, target := range tt.links {
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			err := Walk(context.Background(), dir, func(e Entry) error {
				switch {
				case e.IsDir:
					got = append(got, e.Rel+"/")
				case e.Type&fs.ModeSymlink != 0:
					got = append(got, e.Rel+"@")
				default:
					got = append(got, e.Rel)
				}
				if e.Path != filepath.Join(dir, filepath.FromSlash(e.Rel)) {
					t.Errorf("entry %s: Path %s", e.Rel, e.Path)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("visited\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}

func TestWalkTreeControl(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a/1": "", "a/2": "", "b/3": "", "c": ""})
	t.Run("SkipDir", func(t *testing.T) {
		var got []string
		err := Walk(context.Background(), dir, func(e Entry) error {
			got = append(got, e.Rel)
			if e.Rel == "a" {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil || strings.Join(got, ",") != "a,b,b/3,c" {
			t.Errorf("got %q, %v", got, err)
		}
	})
	t.Run("stop", func(t *testing.T) {
		n := 0
		err := Walk(context.Background(), dir, func(e Entry) error {
			n++
			return ErrStop
		})
		if err != nil || n != 1 {
			t.Errorf("visited %d, err %v", n, err)
		}
	})
	t.Run("error from fn", func(t *testing.T) {
		boom := errors.New("boom")
		err := Walk(context.Background(), dir, func(e Entry) error { return boom })
		if !errors.Is(err, boom) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestWalkTreeCancel cancels a walk over a large tree from inside the walk
// and checks that it stops at once with the context's error.
func TestWalkTreeCancel(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		for j := range 50 {
			files[fmt.Sprintf("d%02d/f%03d", i, j)] = ""
		}
	}
	writeTree(t, dir, files)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	err := Walk(ctx, dir, func(e Entry) error {
		seen++
		if seen == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if seen > 10+64 {
		t.Errorf("walk went on for %d entries after cancellation", seen-10)
	}
}

// TestReadDirMatchesOS: the walk's directory listing gives the names, in
// order, and the types os.ReadDir gives, for every kind of entry and for a
// directory larger than one getdents buffer.
func TestReadDirMatchesOS(t *testing.T) {
	dir := t.TempDir()
	for i := range 1500 {
		name := fmt.Sprintf("file-%04d-%s.txt", i, strings.Repeat("n", i%40))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"sub", ".hidden", "Zed", "a b", "\xff\xfe"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	got, _, err := readDir(dir, &buf, false, false, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, os.ReadDir %d", len(got), len(want))
	}
	for i := range want {
		if got[i].name != want[i].Name() || got[i].typ != want[i].Type() {
			t.Fatalf("entry %d: %q %v, os.ReadDir %q %v", i, got[i].name, got[i].typ, want[i].Name(), want[i].Type())
		}
	}
	if _, _, err := readDir(filepath.Join(dir, "missing"), &buf, false, false, -1); err == nil {
		t.Fatal("no error for a missing directory")
	}
	if _, _, err := readDir(filepath.Join(dir, "fifo"), &buf, true, false, -1); err == nil {
		t.Fatal("no error for a FIFO")
	}
}

// TestWalkDoesNotFollowSwappedDir: a directory swapped for a symbolic link
// (to outside the tree) between its parent's listing and its own is not
// entered: the walk never leaves the tree through it.
func TestWalkDoesNotFollowSwappedDir(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"a/in.txt": "", "b/in.txt": ""})
	writeTree(t, outside, map[string]string{"secret.txt": ""})
	var got []string
	err := Walk(context.Background(), dir, func(e Entry) error {
		got = append(got, e.Rel)
		if e.Rel == "a" {
			if err := os.RemoveAll(e.Path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, e.Path); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "a,b,b/in.txt" {
		t.Errorf("visited %q, want a (not entered), b, b/in.txt", got)
	}
}

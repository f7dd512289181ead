package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func write(t testing.TB, path, data string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file whose size, modification time, inode and mode are unchanged is
// not read again (its content changed in place behind the snapshot's
// back is not seen: git's rule), unless it is racy: modified in the clock
// tick of the previous snapshot, when it is read again. Ignored files and
// .git are not recorded; files over the size limit are listed, not
// stored; an unchanged tree gives the previous manifest back.
func TestSnapshotRereadsOnlyChangedFiles(t *testing.T) {
	root, store := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".gitignore"), "build/\n")
	write(t, filepath.Join(root, "a.txt"), "aaaa")
	write(t, filepath.Join(root, "big.bin"), "0123456789")
	write(t, filepath.Join(root, "build", "out"), "x")
	write(t, filepath.Join(root, ".git", "HEAD"), "ref")
	hour := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(root, "a.txt"), hour, hour)
	s := Open(store, root, Options{MaxFileSize: 8})
	m1, err := s.Snapshot(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range m1.Files {
		paths = append(paths, f.Path)
	}
	if fmt.Sprint(paths) != "[.gitignore a.txt big.bin]" {
		t.Fatalf("recorded %v", paths)
	}
	if f, _ := m1.Get("big.bin"); !f.TooLarge || f.Hash != "" {
		t.Fatalf("big.bin %+v", f)
	}
	if m2, err := s.Snapshot(context.Background(), m1); err != nil || m2 != m1 {
		t.Fatalf("an unchanged tree gave a new manifest: %v", err)
	}
	// Same size, same mtime, same inode: not read.
	f, _ := os.OpenFile(filepath.Join(root, "a.txt"), os.O_WRONLY, 0)
	f.WriteString("bbbb")
	f.Close()
	os.Chtimes(filepath.Join(root, "a.txt"), hour, hour)
	if m3, _ := s.Snapshot(context.Background(), m1); m3 != m1 {
		t.Fatal("a file with the same stat was read again")
	}
	// Racy: modified after the previous snapshot started.
	m4 := *m1
	m4.byPath = nil
	m4.Time = hour.Add(-time.Second).UnixNano()
	m5, err := s.Snapshot(context.Background(), &m4)
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := m1.Get("a.txt")
	a5, _ := m5.Get("a.txt")
	if a5.Hash == a1.Hash {
		t.Fatal("a racy file was not read again")
	}
	if d := Diff(m1, m5); len(d) != 1 || d[0].Path != "a.txt" || d[0].Kind() != "modified" {
		t.Fatalf("diff %+v", d)
	}
	// The store is outside the project: nothing was written there.
	if _, err := os.Stat(filepath.Join(root, ".git", "objects")); err == nil {
		t.Fatal("the store wrote into .git")
	}
}

// makeProject writes n small files in folders of 100.
func makeProject(b testing.TB, n int) string {
	root := b.TempDir()
	write(b, filepath.Join(root, ".gitignore"), "node_modules/\n*.o\n")
	for i := 0; i < n; i++ {
		write(b, filepath.Join(root, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%03d.go", i%100)), fmt.Sprintf("package p // %d\n", i))
	}
	return root
}

// BenchmarkSnapshotAfterFirst is a checkpoint of a 20k-file project
// after the first (nothing changed: every file's stat matches);
// BenchmarkStatWalk the bare walk that stats the same tree, timed beside
// it (docs/performance.md).
func BenchmarkSnapshotAfterFirst(b *testing.B) {
	root := makeProject(b, 20000)
	s := Open(b.TempDir(), root, Options{})
	first, err := s.Snapshot(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	// Past the racy window of the first snapshot.
	first.Time = time.Now().Add(time.Second).UnixNano()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Snapshot(context.Background(), first); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatWalk(b *testing.B) {
	root := makeProject(b, 20000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if _, err := os.Lstat(p); err == nil {
				n++
			}
			return nil
		})
		if n < 20000 {
			b.Fatal(n)
		}
	}
}

// BenchmarkSnapshotFirst is the first checkpoint of a 20k-file project:
// every file read, hashed and stored.
func BenchmarkSnapshotFirst(b *testing.B) {
	root := makeProject(b, 20000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := Open(b.TempDir(), root, Options{})
		b.StartTimer()
		if _, err := s.Snapshot(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A project with more entries than MaxFiles gives an Incomplete
// snapshot; a file created before the cut moves it, and the path that
// then falls out is not taken for deleted: restoring never removes it.
func TestIncompleteSnapshotRemovesNothingUnknown(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "b.txt"), "b")
	write(t, filepath.Join(root, "c.txt"), "c")
	write(t, filepath.Join(root, "d.txt"), "d")
	s := Open(t.TempDir(), root, Options{MaxFiles: 2})
	before, err := s.Snapshot(context.Background(), nil)
	if err != nil || !before.Incomplete {
		t.Fatalf("%v %+v", err, before)
	}
	write(t, filepath.Join(root, "a.txt"), "a") // c.txt falls out
	after, err := s.Snapshot(context.Background(), before)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(context.Background(), after, before, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

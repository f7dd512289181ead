package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pi-go/pi/internal/fileutil"
	"github.com/pi-go/pi/runtime/tool"
)

// withTreeShape sets the parallel search's task size and look-ahead for
// one test.
func withTreeShape(t *testing.T, chunk, ahead int) {
	t.Helper()
	oldC, oldA := grepChunk, grepAhead
	grepChunk, grepAhead = chunk, ahead
	t.Cleanup(func() { grepChunk, grepAhead = oldC, oldA })
}

// treeShapes are task sizes and look-aheads the ordering must not depend
// on: one file per task and no look-ahead (the merge runs most tasks
// itself), small ones that cut directories into many tasks, and the
// defaults.
var treeShapes = []struct{ chunk, ahead int }{{1, 1}, {1, 0}, {2, 3}, {3, 1000}, {16, 64}}

// deepWideTree writes a tree that is deep (a chain of 30 directories) and
// wide (a directory of 300 files, one of 60 subdirectories), with
// .gitignore files at several levels that ignore, re-include and ignore
// again, symbolic links (to a file, to a directory, to the root — a loop
// if followed — and dangling), a FIFO, binary files, CRLF text, empty
// directories and files, and files over the whole-file size.
func deepWideTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	files := map[string]string{
		".gitignore":               "*.skip\nbuild/\n!keep.skip\n",
		"a/.gitignore":             "!*.skip\nsecret*\n",
		"a/b/.gitignore":           "*.skip\n/local.txt\n",
		"a/b/c/.gitignore":         "!secret-c.txt\n",
		"a/x.skip":                 "needle in a re-included file\n",
		"a/secret.txt":             "needle secret\n",
		"a/b/y.skip":               "needle ignored again\n",
		"a/b/local.txt":            "needle anchored ignore\n",
		"a/b/c/local.txt":          "needle not anchored here\n",
		"a/b/c/secret-c.txt":       "needle re-included secret\n",
		"keep.skip":                "needle kept\n",
		"build/out.txt":            "needle in build\n",
		"src/build":                "needle: a file named build is not a directory\n",
		"empty/":                   "",
		"deep/empty.txt":           "",
		"bin/x.dat":                "needle\x00binary\n",
		"crlf/w.txt":               "needle one\r\nneedle two\r\n",
		"big/huge.txt":             strings.Repeat("a needle in a big file\n", 2000),
		"big/huge-bin.txt":         strings.Repeat("x", 70_000) + "\x00needle\n",
		"big/late-nul.txt":         strings.Repeat("needle line\n", 7000) + "\x00needle after\n",
		"Z/upper.txt":              "needle upper-case directory\n",
		"a.txt":                    "needle: a file sorting after the directory a\n",
		"a-b/n.txt":                "needle: a directory sorting after a.txt\n",
		"\xff-bad-utf8/needle.txt": "needle \xff\xfe invalid\n",
	}
	chain := "deep"
	for i := range 30 {
		chain += fmt.Sprintf("/d%02d", i)
		files[chain+"/f.txt"] = fmt.Sprintf("needle at depth %d\nno\nneedle again %d\n", i, i)
		if i%7 == 3 {
			files[chain+"/.gitignore"] = "*.tmp\n"
			files[chain+"/t.tmp"] = "needle in a tmp\n"
		}
	}
	for i := range 300 {
		var b strings.Builder
		for l := range rng.IntN(12) {
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "needle %d of wide %d\n", l, i)
			} else {
				fmt.Fprintf(&b, "hay %d\n", l)
			}
		}
		files[fmt.Sprintf("wide/f%03d.txt", i)] = b.String()
	}
	for i := range 60 {
		files[fmt.Sprintf("many/s%02d/x.txt", i)] = fmt.Sprintf("needle in s%02d\n", i)
		if i%5 == 0 {
			files[fmt.Sprintf("many/s%02d/sub/y.txt", i)] = "needle below\n"
		}
	}
	writeTree(t, dir, files)
	for link, target := range map[string]string{
		"links/to-file": "../a.txt", "links/to-dir": "../wide", "links/loop": "..", "links/dangling": "nowhere",
	} {
		if err := os.MkdirAll(filepath.Join(dir, "links"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "links", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// treeCases are grep calls that reach every path of the merge: limits that
// fall inside a task, at its edges and past every match, context, the
// 50KB cut, globs that keep and drop files and directories.
func treeCases() []grepArgs {
	many := benchPtrF(1e6)
	cases := []grepArgs{
		{Pattern: "needle", Limit: many},
		{Pattern: "needle", Context: benchPtrF(1), Limit: many},
		{Pattern: "needle", Context: benchPtrF(5), Limit: benchPtrF(40)},
		{Pattern: "NEEDLE", IgnoreCase: benchPtr(true), Limit: many},
		{Pattern: `need+le (\d+|at)`, Limit: many},
		{Pattern: "needle", Glob: benchPtr("*.txt"), Limit: many},
		{Pattern: "needle", Glob: benchPtr("!wide"), Limit: many},
		{Pattern: "needle", Glob: benchPtr("deep/**/f.txt"), Limit: many},
		{Pattern: "needle", Glob: benchPtr("!*.txt"), Limit: many},
		{Pattern: "a", Limit: many}, // past 50KB
		{Pattern: "no such text anywhere"},
	}
	for _, l := range []float64{1, 2, 3, 5, 16, 17, 31, 100, 250} {
		cases = append(cases, grepArgs{Pattern: "needle", Limit: benchPtrF(l)})
	}
	return cases
}

// TestGrepTreeMatchesSequential: on a deep and wide tree with ignore files
// at several levels, symlinks (a loop among them), a FIFO, binary and
// large files, the parallel search gives exactly the text and details of
// the one-goroutine walk, on 2, 3 and 8 goroutines, for every task size
// and look-ahead here, including limits hit in the middle of a task.
func TestGrepTreeMatchesSequential(t *testing.T) {
	dir := deepWideTree(t)
	for _, wholeMax := range []int64{30_000, grepWholeFileMax} {
		// Files over 30KB streamed by the merge, or read whole.
		restore := setWholeFileMax(wholeMax)
		treeMatchesSequential(t, dir)
		restore()
	}
}

func treeMatchesSequential(t *testing.T, dir string) {
	t.Helper()
	for _, args := range treeCases() {
		want := grepWith(t, dir, args, 1)
		if strings.HasPrefix(want, "error") || (strings.HasPrefix(want, "No matches") && args.Pattern == "needle") {
			a, _ := json.Marshal(args)
			t.Fatalf("reference search %s failed: %s", a, want)
		}
		for _, sh := range treeShapes {
			withTreeShape(t, sh.chunk, sh.ahead)
			for _, w := range []int{2, 3, 8} {
				if got := grepWith(t, dir, args, w); got != want {
					a, _ := json.Marshal(args)
					t.Errorf("%s, chunk %d, ahead %d, %d goroutines:\n got %.400q…\nwant %.400q…", a, sh.chunk, sh.ahead, w, got, want)
				}
			}
		}
	}
}

// TestGrepTreeVanishing: files and directories removed after their
// directory was listed (before any of its files is opened) are skipped,
// exactly as if they had never been there: the result equals the
// one-goroutine search of the tree without them.
func TestGrepTreeVanishing(t *testing.T) {
	for _, sh := range treeShapes {
		for _, w := range []int{2, 3} {
			dir := deepWideTree(t)
			gone := map[string][]string{ // directory listed -> entries to remove
				"":            {"a.txt", "keep.skip"},
				"wide/":       {"f000.txt", "f017.txt", "f150.txt", "f299.txt"},
				"many/":       {"s03", "s10"},
				"deep/d00/":   {"d01"},
				"a/b/c/":      {"secret-c.txt"},
				"many/s20/":   {"sub"},
				"big/":        {"huge.txt"},
				"links/":      {"to-file"},
				"crlf/":       {"w.txt"},
				"many/s05/":   {"x.txt", "sub"},
				"a/b/":        {"c"},
				"deep/d00/d0": {"never listed"},
			}
			var mu sync.Mutex
			grepListed = func(rel string) {
				mu.Lock()
				defer mu.Unlock()
				for _, name := range gone[rel] {
					if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel), name)); err != nil {
						t.Error(err)
					}
				}
				delete(gone, rel)
			}
			withTreeShape(t, sh.chunk, sh.ahead)
			args := grepArgs{Pattern: "needle", Limit: benchPtrF(1e6)}
			got := grepWith(t, dir, args, w)
			grepListed = nil
			want := grepWith(t, dir, args, 1) // the tree as it is now
			if got != want {
				t.Errorf("chunk %d, ahead %d, %d goroutines:\n got %.600q…\nwant %.600q…", sh.chunk, sh.ahead, w, got, want)
			}
			for _, gonePath := range []string{"wide/f017.txt", "many/s03/x.txt", "deep/d00/d01/f.txt"} {
				if strings.Contains(got, gonePath+":") {
					t.Errorf("removed %s still in the result", gonePath)
				}
			}
		}
	}
}

// TestGrepTreeUnreadableDir: a directory that cannot be opened is skipped
// by both searches alike. Root reads any directory, so there the test
// makes one that cannot be listed by replacing it, after its parent was
// listed, with a file (TestGrepTreeVanishing removes some).
func TestGrepTreeUnreadableDir(t *testing.T) {
	dir := deepWideTree(t)
	locked := filepath.Join(dir, "many", "s07")
	if os.Geteuid() != 0 {
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
	} else {
		grepListed = func(rel string) {
			if rel == "many/" {
				if err := os.RemoveAll(locked); err != nil {
					t.Error(err)
				}
				if err := os.WriteFile(locked, []byte("needle, but a file now\n"), 0o644); err != nil {
					t.Error(err)
				}
			}
		}
		defer func() { grepListed = nil }()
	}
	args := grepArgs{Pattern: "needle", Glob: benchPtr("!big"), Limit: benchPtrF(1e6)} // within 50KB
	got := grepWith(t, dir, args, 2)
	grepListed = nil
	if strings.Contains(got, "many/s07") {
		t.Errorf("unreadable directory searched: %.300q", got)
	}
	if !strings.Contains(got, "many/s06/x.txt:1:") || !strings.Contains(got, "many/s08/x.txt:1:") {
		t.Errorf("its neighbours are missing: %.300q", got)
	}
	if os.Geteuid() != 0 {
		if want := grepWith(t, dir, args, 1); got != want {
			t.Errorf("parallel %.300q…, one goroutine %.300q…", got, want)
		}
	}
}

// openFds counts this process's open descriptors.
func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestGrepTreeClosesDirectories: the directories the parallel search holds
// open are all closed when it ends — after the whole tree, after a limit
// hit early (tasks left pending), and after a cancel mid-search — and no
// goroutine is left behind.
func TestGrepTreeClosesDirectories(t *testing.T) {
	dir := deepWideTree(t)
	before := openFds(t)
	goroutines := runtime.NumGoroutine()
	for _, sh := range treeShapes {
		withTreeShape(t, sh.chunk, sh.ahead)
		for _, l := range []float64{1, 7, 1e6} {
			grepWith(t, dir, grepArgs{Pattern: "needle", Limit: benchPtrF(l)}, 3)
		}
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		var mu sync.Mutex
		grepListed = func(string) {
			mu.Lock()
			defer mu.Unlock()
			if n++; n == 20 {
				cancel()
			}
		}
		old := grepWorkers
		grepWorkers = func() int { return 2 }
		_, err := runGrep(ctx, tool.Context{Cwd: dir}, grepArgs{Pattern: "needle", Limit: benchPtrF(1e6)})
		grepWorkers = old
		grepListed = nil
		cancel()
		if !errors.Is(err, errSearchAborted) {
			t.Errorf("chunk %d: cancelled search: err %v, want %v", sh.chunk, err, errSearchAborted)
		}
		if after := openFds(t); after != before {
			t.Errorf("chunk %d, ahead %d: %d descriptors open after the searches, %d before", sh.chunk, sh.ahead, after, before)
		}
	}
	if g := runtime.NumGoroutine(); g > goroutines {
		t.Errorf("%d goroutines after the searches, %d before", g, goroutines)
	}
}

// TestReadWholeAtMatchesReadWhole: reading relative to the directory
// without fstat gives what fileutil.ReadWhole gives — data, big, skipped —
// for sizes around the head and the maximum, binary heads and late NULs,
// with buffers smaller and larger than the file; it does not follow a
// symbolic link.
func TestReadWholeAtMatchesReadWhole(t *testing.T) {
	dir := t.TempDir()
	const head, max = 100, 1000
	var sizes []int
	for _, s := range []int{0, 1, head - 1, head, head + 1, 2 * head, max - 1, max, max + 1, 5 * max} {
		sizes = append(sizes, s)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dirfd := int(d.Fd())
	if runtime.GOOS != "linux" {
		dirfd = -1
	}
	for _, size := range sizes {
		for _, nulAt := range []int{-1, 0, head - 1, head, size - 1} {
			if nulAt >= size {
				continue
			}
			content := bytes.Repeat([]byte("x"), size)
			if nulAt >= 0 {
				content[nulAt] = 0
			}
			name := fmt.Sprintf("f%d-%d", size, nulAt)
			if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, bufCap := range []int{0, 10, head + 1, 3 * max} {
				wd, wbig, wskip, werr := fileutil.ReadWhole(filepath.Join(dir, name), make([]byte, 0, bufCap), max, head, hasNUL)
				gd, gbig, gskip, gerr := readWholeAt(dirfd, dir+"/", name, make([]byte, 0, bufCap), max, head, hasNUL)
				if size > max && nulAt >= 0 && nulAt < head && gskip && !gbig {
					// Over max with a binary head: skipped
					// before it is sized; grep's result is the
					// same (a big file is streamed and then
					// skipped as binary).
					gbig, gskip = wbig, wskip
				}
				if (werr == nil) != (gerr == nil) || wbig != gbig || wskip != gskip || (!wbig && !wskip && !bytes.Equal(wd, gd)) {
					t.Errorf("%s, buffer %d: got %d bytes big %v skipped %v err %v; ReadWhole %d bytes big %v skipped %v err %v",
						name, bufCap, len(gd), gbig, gskip, gerr, len(wd), wbig, wskip, werr)
				}
			}
		}
	}
	if _, _, _, err := readWholeAt(dirfd, dir+"/", "missing", nil, max, head, hasNUL); err == nil {
		t.Error("no error for a missing file")
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symbolic link is not followed, relative to the directory or as a
	// whole path (the one-goroutine walk's files).
	if err := os.Symlink(filepath.Join(dir, "f1--1"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		if _, _, _, err := readWholeAt(dirfd, dir+"/", "link", nil, max, head, hasNUL); err == nil {
			t.Error("a symbolic link was followed (openat)")
		}
		if _, _, _, err := readWholeAt(cwdFd, "", filepath.Join(dir, "link"), nil, max, head, hasNUL); err == nil {
			t.Error("a symbolic link was followed (whole path)")
		}
	}
	// A FIFO that replaced a file neither blocks the open nor the read.
	if data, _, _, err := readWholeAt(dirfd, dir+"/", "fifo", nil, max, head, hasNUL); err == nil && len(data) != 0 {
		t.Errorf("FIFO read %q", data)
	}
}

// TestGrepTreeSwappedForLinks: entries swapped for symbolic links to
// outside the tree after their directory was listed — a file, a
// directory, and a directory above ones still to be listed (moved away,
// a link to outside put in its place) — never lead the search out of the
// tree: files and directories are opened relative to the directory they
// were listed in, without following a link.
func TestGrepTreeSwappedForLinks(t *testing.T) {
	for _, sh := range treeShapes {
		for _, w := range []int{2, 3} {
			dir := deepWideTree(t)
			outside := t.TempDir()
			writeTree(t, outside, map[string]string{
				"secret.txt":      "needle SECRET file\n",
				"x.txt":           "needle SECRET dir\n",
				"d01/f.txt":       "needle SECRET below a swapped parent\n",
				"d01/d02/f.txt":   "needle SECRET deeper\n",
				"sub/y.txt":       "needle SECRET sub\n",
				"c/secret-c.txt":  "needle SECRET c\n",
				"c/local.txt":     "needle SECRET local\n",
				"wide/f010.txt":   "needle SECRET wide\n",
				"many/s04/x.txt":  "needle SECRET many\n",
				"deep/d00/f.txt":  "needle SECRET deep\n",
				"d01/.gitignore":  "",
				"d01/d02/d03/f.x": "needle SECRET x\n",
			})
			swap := func(path, target string) {
				p := filepath.Join(dir, filepath.FromSlash(path))
				if err := os.RemoveAll(p); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Error(err)
				}
			}
			var mu sync.Mutex
			grepListed = func(rel string) {
				mu.Lock()
				defer mu.Unlock()
				switch rel {
				case "wide/":
					swap("wide/f010.txt", filepath.Join(outside, "secret.txt"))
				case "many/":
					swap("many/s04", outside)
				case "a/b/":
					swap("a/b/c", filepath.Join(outside, "c"))
				case "deep/d00/":
					// The directory being searched moves; a link to
					// outside takes its place.
					d00 := filepath.Join(dir, "deep", "d00")
					if err := os.Rename(d00, d00+"-moved"); err != nil {
						t.Error(err)
					}
					if err := os.Symlink(outside, d00); err != nil {
						t.Error(err)
					}
				}
			}
			withTreeShape(t, sh.chunk, sh.ahead)
			got := grepWith(t, dir, grepArgs{Pattern: "needle", Glob: benchPtr("!big"), Limit: benchPtrF(1e6)}, w)
			grepListed = nil
			if strings.Contains(got, "SECRET") {
				t.Errorf("chunk %d, ahead %d, %d goroutines: the search left the tree:\n%s", sh.chunk, sh.ahead, w, got)
			}
			// What was under the moved directory is still searched
			// (from the directory itself, pinned by its descriptor).
			if !strings.Contains(got, "deep/d00/d01/d02/f.txt:1: needle at depth 2") {
				t.Errorf("chunk %d, ahead %d, %d goroutines: the moved directory's contents are missing", sh.chunk, sh.ahead, w)
			}
		}
	}
}

// TestGrepFileArgumentLink: a path argument naming a symbolic link to a
// file is searched (the link given by the call is followed; only links met
// in the walk are not), on one goroutine and on several.
func TestGrepFileArgumentLink(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"real.txt": "needle here\n"})
	if err := os.Symlink("real.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		got := grepWith(t, dir, grepArgs{Pattern: "needle", Path: benchPtr("link.txt")}, w)
		if !strings.HasPrefix(got, "link.txt:1: needle here") {
			t.Errorf("%d goroutines: %q", w, got)
		}
		got = grepWith(t, dir, grepArgs{Pattern: "needle"}, w)
		if !strings.HasPrefix(got, "real.txt:1: needle here\n--") {
			t.Errorf("%d goroutines, tree: %q (the link is not searched)", w, got)
		}
	}
}

//go:build linux || darwin || freebsd || openbsd || netbsd

package extensions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

// escapeFixture is a project with a read-only folder src and a read-write
// folder out, each holding symlinks of every kind (in-mount ones, escaping
// ones, a loop, a chain that leaves and comes back), and a folder outside
// the project whose content must never be read or changed.
type escapeFixture struct {
	base, root, src, out, outside, secret string
	logs                                  *logBuffer
	ts                                    []tool.AgentTool
	ext                                   *extensions.Extension
}

const secretText = "top secret"

// newEscapeFixture lays the files out (every path real: absolute links name
// real paths) and loads guest (a .wasm path) with grants.
func newEscapeFixture(t *testing.T, guest string, grants func(f *escapeFixture) []string) *escapeFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &escapeFixture{base: base, root: filepath.Join(base, "project"), outside: filepath.Join(base, "outside"), logs: &logBuffer{}}
	f.src, f.out = filepath.Join(f.root, "src"), filepath.Join(f.root, "out")
	f.secret = filepath.Join(f.outside, "secret.txt")
	for _, d := range []string{filepath.Join(f.src, "sub"), filepath.Join(f.out, "sub"), filepath.Join(f.outside, "dir")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, s string) { must(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(f.secret, secretText)
	write(filepath.Join(f.outside, "dir", "inner.txt"), "outside inner")
	must(t, os.Symlink(filepath.Join(f.src, "sub"), filepath.Join(f.outside, "back")))
	write(filepath.Join(f.src, "main.go"), "package main\n")
	write(filepath.Join(f.src, "sub", "deep.txt"), "deep inside")
	write(filepath.Join(f.out, "file.txt"), "out file")
	write(filepath.Join(f.out, "sub", "deep.txt"), "out deep")
	for _, dir := range []string{f.src, f.out} {
		links := map[string]string{
			"inlink":     "sub/deep.txt",                     // relative, inside
			"absin":      filepath.Join(dir, "sub/deep.txt"), // absolute, inside
			"absdir":     filepath.Join(dir, "sub"),          // absolute dir, inside
			"escfile":    "../../outside/secret.txt",         // relative, out
			"escdir":     "../../outside",                    // relative dir, out
			"escabs":     f.outside,                          // absolute dir, out
			"escabsfile": f.secret,                           // absolute file, out
			"etc":        "/etc",
			"loop1":      "loop2",
			"loop2":      "loop1",
			"chain":      "../../outside/back",                // leaves, then an outside link re-enters
			"updown":     "../" + filepath.Base(dir) + "/sub", // climbs above the mount and back in
			"dangling":   "../../outside/new.txt",             // would create outside
		}
		for name, target := range links {
			must(t, os.Symlink(target, filepath.Join(dir, name)))
		}
	}
	h := newHost(t, extensions.Options{Logger: newLogger(f.logs), ProjectRoot: f.root, Cwd: f.root})
	f.ext = load(t, h, extensions.Spec{Name: "", Path: guest, Grants: extensions.Grants{FS: grants(f)}})
	f.ts = tools(t, f.ext)
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot records every entry under dir without following links: type,
// permissions, size, times, content or link target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%s size=%d mtime=%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %s was %q, is %q", what, p, v, after[p])
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s changed: %s appeared (%q)", what, p, v)
		}
	}
}

// walkModes runs fn once with openat2 (where the kernel has it) and once
// with every lookup forced through the component walk, the path kernels
// without openat2 and other systems take.
func walkModes(t *testing.T, fn func(t *testing.T)) {
	for _, walk := range []bool{false, true} {
		name := "openat2"
		if walk {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			defer extensions.ForceFSWalk(walk)()
			fn(t)
		})
	}
}

func (f *escapeFixture) fs(t *testing.T, op, p, p2, text string) tool.Result {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"op": op, "path": p, "path2": p2, "text": text})
	return run(context.Background(), f.ts, nil, "fs", string(b))
}

// TestFSEscapeGoGuest attacks the sandbox through Go's os package, as an
// ordinary Go extension would: every way out through symlinks, "..", loops
// and ungranted paths must fail and leave the outside untouched, while
// in-mount symlinks and ordinary work keep working.
func TestFSEscapeGoGuest(t *testing.T) {
	walkModes(t, func(t *testing.T) {
		f := newEscapeFixture(t, goGuest(t, sandboxGuest), func(f *escapeFixture) []string { return []string{"ro:src", "rw:out"} })
		outside, src := snapshot(t, f.outside), snapshot(t, f.src)
		S := func(p string) string { return filepath.Join(f.src, p) }
		O := func(p string) string { return filepath.Join(f.out, p) }
		const denied, rofs, eperm, eloop = "Permission denied", "Read-only file system", "Operation not permitted", "Too many symbolic links"
		cases := []struct {
			name, op, path, path2, text string
			wantErr                     string // "" for success
			want                        string // in the answer
		}{
			// Ordinary work and in-mount symlinks.
			{"read in ro", "read", S("main.go"), "", "", "", "package main"},
			{"relative in-mount link", "read", S("inlink"), "", "", "", "deep inside"},
			{"absolute in-mount link", "read", S("absin"), "", "", "", "deep inside"},
			{"absolute in-mount dir link", "read", S("absdir/deep.txt"), "", "", "", "deep inside"},
			{"stat follows an in-mount link", "stat", S("absin"), "", "", "", "size=11"},
			{"lstat sees the link", "lstat", S("escfile"), "", "", "", "mode=L"},
			{"readlink shows the text", "readlink", O("escfile"), "", "", "", "../../outside/secret.txt"},
			{"readdir", "readdir", S(""), "", "", "", "absdir,absin,chain"},
			{"readdir rewinds", "readdir_rewind", S(""), "", "", "", "first=15 second=15"},
			{"getwd is the first grant", "getwd", "", "", "", "", f.src},
			{"write in rw", "write", O("made.txt"), "", "made inside", "", "written"},
			{"create excl", "create_excl", O("excl.txt"), "", "x", "", "created"},
			{"append in rw", "append", O("made.txt"), "", "+", "", "appended"},
			{"mkdir in rw", "mkdir", O("newdir"), "", "", "", "made"},
			{"mkdirall in rw", "mkdirall", O("a/b/c"), "", "", "", "made"},
			{"rename in rw", "rename", O("excl.txt"), O("newdir/moved.txt"), "", "", "renamed"},
			{"relative symlink in rw", "symlink", O("rel"), "file.txt", "", "", "symlinked"},
			{"read it", "read", O("rel"), "", "", "", "out file"},
			{"absolute symlink in rw", "symlink", O("abs"), O("sub/deep.txt"), "", "", "symlinked"},
			{"read that", "read", O("abs"), "", "", "", "out deep"},
			{"symlink up and down inside", "symlink", O("sub/up"), "../file.txt", "", "", "symlinked"},
			{"hard link in rw", "link", O("file.txt"), O("hard.txt"), "", "", "linked"},
			{"chtimes in rw", "chtimes", O("file.txt"), "", "", "", "touched"},
			{"remove in rw", "remove", O("newdir/moved.txt"), "", "", "", "removed"},

			// Following a symlink that leads out, on ro and rw, for each use.
			{"read escaping file link (ro)", "read", S("escfile"), "", "", denied, ""},
			{"read escaping file link (rw)", "read", O("escfile"), "", "", denied, ""},
			{"read through escaping dir link", "read", O("escdir/secret.txt"), "", "", denied, ""},
			{"read through absolute escaping link", "read", S("escabs/secret.txt"), "", "", denied, ""},
			{"read absolute escaping file link", "read", O("escabsfile"), "", "", denied, ""},
			{"read /etc through a link", "read", S("etc/passwd"), "", "", denied, ""},
			{"stat escaping link", "stat", O("escfile"), "", "", denied, ""},
			{"lstat through escaping dir", "lstat", O("escdir/secret.txt"), "", "", denied, ""},
			{"readdir escaping dir", "readdir", O("escdir"), "", "", denied, ""},
			{"readdir absolute escaping dir", "readdir", S("escabs"), "", "", denied, ""},
			{"write escaping link", "write", O("escfile"), "", "PWNED", denied, ""},
			{"create through escaping dir", "write", O("escdir/planted.txt"), "", "PWNED", denied, ""},
			{"create through dangling escaping link", "write", O("dangling"), "", "PWNED", denied, ""},
			{"append escaping link", "append", O("escfile"), "", "PWNED", denied, ""},
			{"overwrite escaping link", "rw_open", O("escabsfile"), "", "PWNED", denied, ""},
			{"truncate escaping link", "truncate", O("escfile"), "", "", denied, ""},
			{"chtimes escaping link", "chtimes", O("escfile"), "", "", denied, ""},
			{"chmod escaping link", "chmod", O("escfile"), "", "", denied, ""},
			{"rename through escaping dir", "rename", O("escdir/secret.txt"), O("stolen.txt"), "", denied, ""},
			{"rename into escaping dir", "rename", O("file.txt"), O("escdir/planted.txt"), "", denied, ""},
			{"unlink through escaping dir", "remove", O("escdir/secret.txt"), "", "", denied, ""},
			{"rmdir through escaping dir", "remove", O("escdir/dir"), "", "", denied, ""},
			{"mkdir through escaping dir", "mkdir", O("escdir/newdir"), "", "", denied, ""},
			{"mkdirall through escaping dir", "mkdirall", O("escabs/x/y"), "", "", "File exists", ""},
			{"hard link from escaping dir", "link", O("escdir/secret.txt"), O("hard2.txt"), "", denied, ""},
			{"hard link into escaping dir", "link", O("file.txt"), O("escdir/hard.txt"), "", denied, ""},
			{"symlink loop", "read", O("loop1"), "", "", eloop, ""},
			{"chain that leaves and re-enters", "read", S("chain/deep.txt"), "", "", denied, ""},
			{"link that climbs above the mount and back", "read", S("updown/deep.txt"), "", "", denied, ""},

			// Making a link that leads out.
			{"symlink ../..", "symlink", O("new1"), "../../outside/secret.txt", "", eperm, ""},
			{"symlink /etc", "symlink", O("new2"), "/etc", "", eperm, ""},
			{"symlink absolute outside", "symlink", O("new3"), f.outside, "", eperm, ""},
			{"symlink down then out", "symlink", O("new4"), "sub/../../outside", "", eperm, ""},
			{"symlink out and back", "symlink", O("new5"), "../out/file.txt", "", eperm, ""},

			// Paths outside every grant.
			{"dot-dot", "read", S("../../outside/secret.txt"), "", "", denied, ""},
			{"absolute outside", "read", f.secret, "", "", denied, ""},
			{"write outside", "write", filepath.Join(f.outside, "new.txt"), "", "PWNED", denied, ""},
			{"list /", "readdir", "/", "", "", denied, ""},
			{"rename out of the mount", "rename", O("file.txt"), filepath.Join(f.outside, "moved.txt"), "", "Not implemented", ""},
			{"link out of the mount", "link", O("file.txt"), filepath.Join(f.outside, "hard.txt"), "", "Not implemented", ""},

			// The read-only grant.
			{"write ro", "write", S("new.go"), "", "x", rofs, ""},
			{"overwrite ro", "rw_open", S("main.go"), "", "PWNED", rofs, ""},
			{"append ro", "append", S("main.go"), "", "x", rofs, ""},
			{"truncate ro", "truncate", S("main.go"), "", "", rofs, ""},
			{"chtimes ro", "chtimes", S("main.go"), "", "", rofs, ""},
			{"mkdir ro", "mkdir", S("d"), "", "", rofs, ""},
			{"remove ro", "remove", S("main.go"), "", "", rofs, ""},
			{"rmdir ro", "remove", S("sub"), "", "", rofs, ""},
			{"rename ro", "rename", S("main.go"), S("m.go"), "", rofs, ""},
			{"link ro", "link", S("main.go"), S("h.go"), "", rofs, ""},
			{"symlink ro", "symlink", S("l"), "main.go", "", rofs, ""},
			// Go's wasip1 os.Chmod only stats (WASI preview 1 has no
			// chmod): it reports success and changes nothing.
			{"chmod ro changes nothing", "chmod", S("main.go"), "", "", "", "chmodded"},
		}
		for _, c := range cases {
			r := f.fs(t, c.op, c.path, c.path2, c.text)
			got := r.Text()
			switch {
			case strings.Contains(got, secretText), strings.Contains(got, "outside inner"):
				t.Errorf("%s: outside content reached the guest: %q", c.name, got)
			case c.wantErr == "" && (r.IsError || !strings.Contains(got, c.want)):
				t.Errorf("%s: %s %s = %q (error %v), want %q", c.name, c.op, c.path, got, r.IsError, c.want)
			case c.wantErr != "" && (!r.IsError || !strings.Contains(got, c.wantErr)):
				t.Errorf("%s: %s %s = %q (error %v), want an error with %q", c.name, c.op, c.path, got, r.IsError, c.wantErr)
			}
		}
		sameSnapshot(t, "outside", outside, snapshot(t, f.outside))
		sameSnapshot(t, "the read-only grant", src, snapshot(t, f.src))
		if b, err := os.ReadFile(filepath.Join(f.out, "made.txt")); err != nil || string(b) != "made inside+" {
			t.Errorf("rw writes did not reach the host: %q %v", b, err)
		}
		for _, p := range []string{"stolen.txt", "hard2.txt", "new1", "new2", "new3", "new4", "new5"} {
			if _, err := os.Lstat(O(p)); err == nil {
				t.Errorf("%s was made", O(p))
			}
		}
		logs := f.logs.String()
		grants := "(grants.fs: ro:" + f.src + ", rw:" + f.out + ")"
		for _, w := range []string{
			"extension sandbox: path " + f.secret + " is outside its grants " + grants,
			"extension sandbox: path / is outside its grants",
			"extension sandbox: path " + O("escfile") + " leads outside its grant through a symlink " + grants,
			"extension sandbox: path " + O("new2") + ": a symlink to /etc would point outside its grant",
		} {
			if !strings.Contains(logs, w) {
				t.Errorf("the logs lack %q:\n%s", w, logs)
			}
		}
		if !strings.Contains(logs, "[WARN]  pi.ext.sandbox: extension sandbox: path") || !strings.Contains(logs, "to allow it, grant a folder holding it: --grant fs=ro:PATH") {
			t.Errorf("refusals are not logged at warn level with a fix hint:\n%s", logs)
		}
	})
}

// wasi errnos, as a raw guest sees them.
const (
	wasiOK      = 0
	wasiEACCES  = 2
	wasiELOOP   = 32
	wasiENOSYS  = 52
	wasiEPERM   = 63
	wasiEROFS   = 69
	wasiEEXIST  = 20
	wasiENOENT  = 44
	wasiENOTDIR = 54
)

// rawStep is one step of fsraw.wat and the answer it must give.
type rawStep struct {
	step string
	want string // "CODE=ERRNO" and, for reads and listings, ":" and a prefix of what was read
}

func (f *escapeFixture) raw(t *testing.T, steps []rawStep) {
	t.Helper()
	for _, s := range steps {
		b, _ := json.Marshal(map[string]string{"s": s.step})
		r := run(context.Background(), f.ts, nil, "run", string(b))
		got := r.Text()
		if r.IsError || strings.Contains(got, secretText) || strings.Contains(got, "outside inner") || !strings.HasPrefix(got, s.want) {
			t.Errorf("%s = %q (error %v), want %q…", s.step, got, r.IsError, s.want)
		}
	}
}

func e(code byte, errno int) string { return fmt.Sprintf("%c=%d", code, errno) }

// TestFSEscapeRawWASI attacks with raw WASI calls (fsraw.wat): no path
// cleaning by a guest runtime, explicit preopen fds, the no-follow flags,
// and fd-level calls (set size, times and append on a file of a read-only
// grant).
func TestFSEscapeRawWASI(t *testing.T) {
	walkModes(t, func(t *testing.T) {
		f := newEscapeFixture(t, wat(t, "fsraw"), func(f *escapeFixture) []string { return []string{"ro:src", "rw:out"} })
		outside, src := snapshot(t, f.outside), snapshot(t, f.src)
		// fd 3 is src (ro), 4 is out (rw), 5 the catch-all at "/".
		steps := []rawStep{
			{"r3:main.go", "r=0:package main"},
			{"r3:inlink", "r=0:deep inside"},
			{"r3:absin", "r=0:deep inside"},
			{"r3:absdir/deep.txt", "r=0:deep inside"},
			{"g3:absin", e('g', wasiOK)},
			{"d3:absdir", "d=0:.,..,deep.txt,"},
			{"k3:escfile", "k=0:../../outside/secret.txt"},
			{"G3:escfile", e('G', wasiOK)},

			{"r3:escfile", e('r', wasiEACCES)},
			{"R3:escfile", e('R', wasiELOOP)},
			{"r3:escdir/secret.txt", e('r', wasiEACCES)},
			{"R3:escdir/secret.txt", e('R', wasiEACCES)},
			{"r3:escabs/secret.txt", e('r', wasiEACCES)},
			{"r3:escabsfile", e('r', wasiEACCES)},
			{"r3:etc/passwd", e('r', wasiEACCES)},
			{"r3:loop1", e('r', wasiELOOP)},
			{"r3:chain/deep.txt", e('r', wasiEACCES)},
			{"r3:updown/deep.txt", e('r', wasiEACCES)},
			{"r3:../outside/secret.txt", e('r', wasiEPERM)},
			{"r3:sub/../../outside/secret.txt", e('r', wasiEPERM)},
			{"r3:/etc/passwd", e('r', wasiEPERM)},
			{"g3:escfile", e('g', wasiEACCES)},
			{"G3:escdir/secret.txt", e('G', wasiEACCES)},
			{"d3:escdir", e('d', wasiEACCES)},
			{"d3:escabs", e('d', wasiEACCES)},

			// The read-only grant refuses every change with EROFS, by path
			// and on an fd opened for reading.
			{"w3:new.txt", e('w', wasiEROFS)},
			{"w3:main.go", e('w', wasiEROFS)},
			{"a3:main.go", e('a', wasiEROFS)},
			{"t3:main.go", e('t', wasiEROFS)},
			{"T3:main.go", e('T', wasiEROFS)},
			{"F3:main.go", e('F', wasiEROFS)},
			{"A3:main.go", e('A', wasiEROFS)},
			{"u3:main.go", e('u', wasiEROFS)},
			{"U3:main.go", e('U', wasiEROFS)},
			{"m3:d", e('m', wasiEROFS)},
			{"x3:main.go", e('x', wasiEROFS)},
			{"X3:sub", e('X', wasiEROFS)},
			{"n3:main.go 3:m.go", e('n', wasiEROFS)},
			{"l3:main.go 3:h.go", e('l', wasiEROFS)},
			{"s3:l main.go", e('s', wasiEROFS)},
			{"w3:escfile", e('w', wasiEROFS)},

			// The read-write grant: escapes fail, for every call.
			{"w4:escfile", e('w', wasiEACCES)},
			{"w4:escdir/planted.txt", e('w', wasiEACCES)},
			{"w4:escabs/planted.txt", e('w', wasiEACCES)},
			{"w4:dangling", e('w', wasiEACCES)},
			{"a4:escfile", e('a', wasiEACCES)},
			{"t4:escfile", e('t', wasiEACCES)},
			{"u4:escfile", e('u', wasiEACCES)},
			{"U4:escdir/secret.txt", e('U', wasiEACCES)},
			{"g4:escabsfile", e('g', wasiEACCES)},
			{"d4:escdir", e('d', wasiEACCES)},
			{"m4:escdir/newdir", e('m', wasiEACCES)},
			{"x4:escdir/secret.txt", e('x', wasiEACCES)},
			{"X4:escdir/dir", e('X', wasiEACCES)},
			{"n4:escdir/secret.txt 4:stolen.txt", e('n', wasiEACCES)},
			{"n4:file.txt 4:escdir/planted.txt", e('n', wasiEACCES)},
			{"n4:file.txt 4:escabs/planted.txt", e('n', wasiEACCES)},
			{"l4:escdir/secret.txt 4:hard.txt", e('l', wasiEACCES)},
			{"l4:file.txt 4:escdir/hard.txt", e('l', wasiEACCES)},
			{"s4:new1 ../../outside", e('s', wasiEPERM)},
			{"s4:new2 /etc", e('s', wasiEPERM)},
			{"s4:new3 " + f.outside, e('s', wasiEPERM)},
			{"s4:sub/new4 ../../../outside", e('s', wasiEPERM)},
			{"s4:new5 " + f.src, e('s', wasiEPERM)},
			{"s4:escdir/new6 x", e('s', wasiEACCES)},
			{"l3:main.go 4:stolen.go", e('l', wasiENOSYS)},
			{"n4:file.txt 5:tmp/moved.txt", e('n', wasiENOSYS)},

			// The catch-all at "/".
			{"D5:", e('D', wasiEACCES)},
			{"r5:etc/passwd", e('r', wasiEACCES)},
			{"r5:" + strings.TrimPrefix(f.secret, "/"), e('r', wasiEACCES)},
			{"w5:" + strings.TrimPrefix(filepath.Join(f.outside, "new.txt"), "/"), e('w', wasiEACCES)},
			{"m5:" + strings.TrimPrefix(filepath.Join(f.outside, "d"), "/"), e('m', wasiEACCES)},
			{"g5:etc", e('g', wasiEACCES)},

			// Ordinary work in the read-write grant.
			{"w4:made.txt", e('w', wasiOK)},
			{"r4:made.txt", "r=0:PWNED"},
			{"a4:made.txt", e('a', wasiOK)},
			{"r4:made.txt", "r=0:PWNEDPWNED"},
			{"t4:made.txt", e('t', wasiOK)},
			{"s4:rel file.txt", e('s', wasiOK)},
			{"r4:rel", "r=0:out file"},
			{"s4:sub/abs " + filepath.Join(f.out, "file.txt"), e('s', wasiOK)},
			{"r4:sub/abs", "r=0:out file"},
			{"m4:nd", e('m', wasiOK)},
			{"m4:nd", e('m', wasiEEXIST)},
			{"n4:made.txt 4:nd/moved", e('n', wasiOK)},
			{"d4:nd", "d=0:.,..,moved,"},
			{"l4:nd/moved 4:nd/hard", e('l', wasiOK)},
			{"x4:nd/moved", e('x', wasiOK)},
			{"x4:nd/hard", e('x', wasiOK)},
			{"X4:nd", e('X', wasiOK)},
			{"r4:nd/moved", e('r', wasiENOENT)},
			{"d4:file.txt", e('d', wasiENOTDIR)},
			{"u4:file.txt", e('u', wasiOK)},
			{"F4:file.txt", e('F', wasiOK)},
			{"x4:escfile", e('x', wasiOK)}, // unlinking the link itself is fine
		}
		f.raw(t, steps)
		sameSnapshot(t, "outside", outside, snapshot(t, f.outside))
		sameSnapshot(t, "the read-only grant", src, snapshot(t, f.src))
		if _, err := os.Lstat(filepath.Join(f.out, "escfile")); err == nil {
			t.Errorf("unlinking the escaping link itself did not work")
		}
		if _, err := os.Stat(f.secret); err != nil {
			t.Errorf("unlinking the escaping link touched its target: %v", err)
		}
	})
}

// TestFSNestedGrants: a read-write folder inside a read-only one. Writes
// through the outer (read-only) preopen are refused even where the inner
// grant allows them through its own; a link in the inner grant to the outer
// one leads out of the inner mount. A read-only grant inside a read-write
// one is refused at load: the wider grant would make it meaningless.
func TestFSNestedGrants(t *testing.T) {
	walkModes(t, func(t *testing.T) {
		f := newEscapeFixture(t, wat(t, "fsraw"), func(f *escapeFixture) []string { return []string{"ro:.", "rw:out"} })
		must(t, os.Symlink("../src", filepath.Join(f.out, "up")))
		// fd 3 is the project (ro), 4 is out (rw).
		f.raw(t, []rawStep{
			{"w3:out/x.txt", e('w', wasiEROFS)},
			{"x3:out/file.txt", e('x', wasiEROFS)},
			{"w4:x.txt", e('w', wasiOK)},
			{"r3:out/x.txt", "r=0:PWNED"},
			{"r4:up/main.go", e('r', wasiEACCES)},
			{"r3:out/up/main.go", "r=0:package main"},
			{"r3:out/escfile", e('r', wasiEACCES)},
			{"r3:src/escdir/secret.txt", e('r', wasiEACCES)},
		})
	})
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(root, "src"), 0o755))
	must(t, os.Symlink("src", filepath.Join(root, "alias")))
	h := newHost(t, extensions.Options{ProjectRoot: root, Cwd: root})
	for _, c := range []struct {
		grants []string
		want   string
	}{
		{[]string{"rw:.", "ro:src"}, `grants.fs "ro:src": ` + filepath.Join(root, "src") + ` lies inside the read-write grant "rw:."`},
		{[]string{"ro:src", "rw:."}, `grants.fs "rw:.": the read-only grant "ro:src" lies inside`},
		{[]string{"ro:src", "rw:src"}, `grants.fs "rw:src": ` + filepath.Join(root, "src") + ` is already granted by "ro:src"`},
		{[]string{"ro:src", "ro:alias"}, `grants.fs "ro:alias": ` + filepath.Join(root, "src") + ` is already granted by "ro:src"`},
	} {
		_, err := h.Load(context.Background(), extensions.Spec{Path: wat(t, "fsraw"), Grants: extensions.Grants{FS: c.grants}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("grants %v: error %v, want %q", c.grants, err, c.want)
		}
	}
	// A read-write grant inside a read-only one is fine (tested above).
	load(t, h, extensions.Spec{Path: wat(t, "fsraw"), Grants: extensions.Grants{FS: []string{"ro:.", "rw:src"}}})
}

// TestFSGrantSwappedForLink: a project-relative grant whose folder has been
// replaced by a symlink out of the project is refused at load; an absolute
// grant through a symlink mounts (and tells init) the real path only.
func TestFSGrantSwappedForLink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	root := filepath.Join(base, "project")
	must(t, os.MkdirAll(root, 0o755))
	must(t, os.Symlink("/", filepath.Join(root, "data")))
	h := newHost(t, extensions.Options{ProjectRoot: root, Cwd: root})
	_, err = h.Load(context.Background(), extensions.Spec{Path: wat(t, "fsraw"), Grants: extensions.Grants{FS: []string{"ro:data"}}})
	if err == nil || !strings.Contains(err.Error(), "outside the project root") {
		t.Fatalf("a grant swapped for a link to / loaded: %v", err)
	}
	real := filepath.Join(base, "real")
	must(t, os.MkdirAll(real, 0o755))
	must(t, os.WriteFile(filepath.Join(real, "f.txt"), []byte("real"), 0o644))
	must(t, os.Symlink(real, filepath.Join(base, "alias")))
	e := load(t, h, extensions.Spec{Path: wat(t, "fsraw"), Grants: extensions.Grants{FS: []string{"ro:" + filepath.Join(base, "alias")}}})
	if got := e.Info().Grants.FS; len(got) != 1 || got[0] != "ro:"+real {
		t.Fatalf("grants = %v, want the real path", got)
	}
	ts := tools(t, e)
	r := run(context.Background(), ts, nil, "run", `{"s":"r3:f.txt"}`)
	if r.Text() != "r=0:real;" {
		t.Fatalf("read = %q", r.Text())
	}
	// The mount holds the folder it opened: swapping the alias now moves
	// nothing.
	must(t, os.Remove(filepath.Join(base, "alias")))
	must(t, os.Symlink("/", filepath.Join(base, "alias")))
	must(t, os.Rename(real, real+".old"))
	must(t, os.MkdirAll(real, 0o755))
	must(t, os.WriteFile(filepath.Join(real, "f.txt"), []byte("swapped"), 0o644))
	if r := run(context.Background(), ts, nil, "run", `{"s":"r3:f.txt"}`); r.Text() != "r=0:real;" {
		t.Fatalf("after the swap, read = %q", r.Text())
	}
}

// TestFSSwapRace: while the guest opens one file over and over, a host
// goroutine keeps swapping its folder for a symlink out of the mount
// (relative and absolute in turn). The guest may see the file or an error,
// never the outside file.
func TestFSSwapRace(t *testing.T) {
	walkModes(t, func(t *testing.T) {
		f := newEscapeFixture(t, goGuest(t, sandboxGuest), func(f *escapeFixture) []string { return []string{"ro:src", "rw:out"} })
		d := filepath.Join(f.out, "d")
		must(t, os.MkdirAll(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "f"), []byte("inside"), 0o644))
		must(t, os.MkdirAll(filepath.Join(f.outside, "d"), 0o755))
		must(t, os.WriteFile(filepath.Join(f.outside, "d", "f"), []byte(secretText), 0o644))
		stop := make(chan struct{})
		first := make(chan struct{})
		var swaps atomic.Int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			targets := []string{"../../outside/d", filepath.Join(f.outside, "d")}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := os.Rename(d, d+".real"); err != nil {
					t.Error(err)
					return
				}
				if err := os.Symlink(targets[i%2], d); err != nil {
					t.Error(err)
					return
				}
				if err := os.Remove(d); err != nil {
					t.Error(err)
					return
				}
				if err := os.Rename(d+".real", d); err != nil {
					t.Error(err)
					return
				}
				if swaps.Add(1) == 1 {
					close(first)
				}
			}
		}()
		<-first
		r := f.fs(t, "loop", filepath.Join(d, "f"), "", "")
		close(stop)
		wg.Wait()
		if r.IsError || strings.Contains(r.Text(), secretText) {
			t.Fatalf("loop = %q", r.Text())
		}
		t.Logf("%d swaps; the guest saw %s", swaps.Load(), r.Text())
	})
}

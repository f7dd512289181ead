package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// grepWith runs one grep over dir with the given number of searching
// goroutines and returns its text and details as JSON.
func grepWith(t *testing.T, dir string, args grepArgs, workers int) string {
	t.Helper()
	old := grepWorkers
	grepWorkers = func() int { return workers }
	defer func() { grepWorkers = old }()
	r, err := runGrep(context.Background(), tool.Context{Cwd: dir}, args)
	if err != nil {
		return "error: " + err.Error()
	}
	d, _ := json.Marshal(r.Details)
	return r.Text() + "\n--details: " + string(d)
}

// TestGrepParallelMatchesSequential: on a tree with files of every kind —
// many matches, none, long lines, CRLF, binary, files over the whole-file
// size (streamed), output past the 50KB limit — grep on 2, 3 and 8
// goroutines gives exactly the text and details of one goroutine, for
// every limit, context and pattern kind here.
func TestGrepParallelMatchesSequential(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{}
	for i := range 120 {
		var b strings.Builder
		lines := rng.IntN(60)
		for l := range lines {
			switch rng.IntN(12) {
			case 0:
				fmt.Fprintf(&b, "needle %d in file %d\n", l, i)
			case 1:
				fmt.Fprintf(&b, "NEEDLE long %s\n", strings.Repeat("x", 400+rng.IntN(400)))
			case 2:
				fmt.Fprintf(&b, "a needle with crlf\r\n")
			default:
				fmt.Fprintf(&b, "plain line %d of %d %s\n", l, i, strings.Repeat("y", rng.IntN(300)))
			}
		}
		name := fmt.Sprintf("d%d/s%d/f%03d.txt", i%4, i%3, i)
		if i%17 == 5 {
			name = fmt.Sprintf("d%d/bin%03d.dat", i%4, i)
			b.WriteString("needle\x00binary\n")
		}
		files[name] = b.String()
	}
	files["big/huge.txt"] = strings.Repeat("needle in a big file\n", 3000)
	files[".gitignore"] = "ignored/\n"
	files["ignored/x.txt"] = "needle\n"
	writeTree(t, dir, files)
	defer setWholeFileMax(20_000)()

	many := benchPtrF(100000)
	cases := []grepArgs{
		{Pattern: "needle"},
		{Pattern: "needle", Limit: benchPtrF(1)},
		{Pattern: "needle", Limit: benchPtrF(7)},
		{Pattern: "needle", Limit: many},
		{Pattern: "needle", IgnoreCase: benchPtr(true), Limit: many},
		{Pattern: "needle", Context: benchPtrF(2), Limit: benchPtrF(50)},
		{Pattern: "needle", Context: benchPtrF(3), Limit: many},
		{Pattern: "needle", Context: benchPtrF(40), Limit: many},
		{Pattern: `nee+dle \d+`, Limit: many},
		{Pattern: `^a needle.*crlf$`, Limit: many},
		{Pattern: "NEEDLE long", Limit: many},
		{Pattern: "needle", Glob: benchPtr("d1/**"), Limit: many},
		{Pattern: "needle", Glob: benchPtr("!*.dat"), Context: benchPtrF(1), Limit: many},
		{Pattern: "no such text"},
		{Pattern: "y", Limit: benchPtrF(3)},
	}
	for _, args := range cases {
		want := grepWith(t, dir, args, 1)
		for _, w := range []int{2, 3, 8} {
			if got := grepWith(t, dir, args, w); got != want {
				a, _ := json.Marshal(args)
				t.Errorf("%s on %d goroutines differs from one:\n got %.300q…\nwant %.300q…", a, w, got, want)
			}
		}
	}
}

// TestGlobShapesMatchDoublestar: grep's glob filter with its compiled name
// shapes keeps exactly what doublestar keeps, for files and directories,
// with and without '!', whether given the whole path (keep) or the
// directory and the name (keepIn).
func TestGlobShapesMatchDoublestar(t *testing.T) {
	for _, p := range findShapePatterns {
		for _, neg := range []string{"", "!"} {
			f, err := newGlobFilter(neg + p)
			if err != nil {
				continue
			}
			slow := *f
			slow.name = nameMatch{}
			for _, n := range findShapeNames {
				for _, dir := range []bool{false, true} {
					if got, want := f.keep(n, dir), slow.keep(n, dir); got != want {
						t.Errorf("glob %q, %q (dir %v): compiled %v, doublestar %v", neg+p, n, dir, got, want)
					}
					// keepIn (the parallel search's) agrees
					// with keep on the whole path.
					i := strings.LastIndexByte(n, '/') + 1
					if got, want := f.keepIn(n[:i], n[i:], dir), f.keep(n, dir); got != want {
						t.Errorf("glob %q, %q (dir %v): keepIn %v, keep %v", neg+p, n, dir, got, want)
					}
				}
			}
		}
	}
}

// TestByteOrderComplete: the byte-frequency order that picks the needle
// byte to scan for lists every printable ASCII byte, tab, newline and
// carriage return exactly once, so every ASCII byte has its own rank, and
// the picks follow it: the rarest byte of the needle, counting both cases
// of a case-folded letter.
func TestByteOrderComplete(t *testing.T) {
	seen := map[byte]int{}
	for i := range len(byteOrder) {
		seen[byteOrder[i]]++
	}
	for c := range byte(0x7f) {
		want := 0
		if c >= ' ' || c == '\t' || c == '\n' || c == '\r' {
			want = 1
		}
		if seen[c] != want {
			t.Errorf("byte %q listed %d times, want %d", c, seen[c], want)
		}
	}
	for _, tt := range []struct {
		expr string
		want byte
	}{
		{"CloseWithError", 'W'},           // 'W' is rarer than 'C' and 'E' in source
		{"(?i)closewitherror", 'w'},       // w+W rarer than h+H, c+C, ...
		{"(?i)zebra", 'z'},                // z+Z
		{"the text", 'h'},                 // x (hex digits) is more common than h in source
		{"eeeeeeee tttttttt", 0xff},       // only the commonest bytes: bytes.Index
		{"\u00e9t\u00e9 en France", 0xc3}, // non-ASCII ranks rarest
	} {
		n := requiredNeedle(tt.expr)
		got := byte(0xff)
		if n.rare >= 0 {
			got = n.text[n.rare]
		}
		if got != tt.want {
			t.Errorf("%q: scans for %q, want %q", tt.expr, got, tt.want)
		}
	}
}

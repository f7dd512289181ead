package builtin

import (
	"bytes"
	"context"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pi-go/pi/internal/fileutil"
	"github.com/pi-go/pi/internal/gitignore"
	"github.com/pi-go/pi/internal/output"
)

// grep searches files on up to GOMAXPROCS goroutines while its output stays
// exactly that of one goroutine searching in walk order: the walk hands
// each file to a searcher and, in walk order, to the merge; a searcher
// finds and formats a file's matches (at most limit of them, and whether
// there is one more); the merge takes the files' results in walk order and
// applies everything that depends on what came before — the match limit,
// the output byte limit, the notices — as the one-goroutine search did.
// Files too large to read whole are streamed by the merge itself, in
// their turn.

// grepHit is one match with its context lines, formatted.
type grepHit struct {
	lines []string
	cut   bool // a line was cut to grepMaxLineLength
}

// fileHits is what searching one file found.
type fileHits struct {
	hits   []grepHit
	more   bool  // a match past the quota exists
	stream bool  // too large to read whole: the merge streams it
	err    error // the search was cancelled
}

// grepSearcher searches whole files for one grep call, with its own
// buffers; each goroutine has one.
type grepSearcher struct {
	g    *grepper // read only: the patterns, context and limit
	ctx  context.Context
	full *atomic.Bool // the merged output is past the byte limit
	buf  []byte       // file contents, reused across files
	// dirBuf is the directory listing buffer of the parallel search.
	dirBuf []byte
}

func (g *grepper) newSearcher(ctx context.Context, full *atomic.Bool) *grepSearcher {
	s := &grepSearcher{g: g, ctx: ctx, full: full}
	if b, ok := grepBufs.Get().(*searchBufs); ok {
		s.buf, s.dirBuf = b.file, b.dir
	} else {
		s.buf = make([]byte, 0, 64*1024)
	}
	return s
}

// searchBufs are a searcher's buffers, kept between calls.
type searchBufs struct{ file, dir []byte }

// grepBufs holds the buffers of finished searchers (their file buffers
// grow to the largest file read whole), so that the next call does not
// allocate and zero them again.
var grepBufs sync.Pool

// grepKeepBuf is the largest file buffer kept for the next call.
const grepKeepBuf = 4 << 20

// done hands the searcher's buffers on to the next call.
func (s *grepSearcher) done() {
	if cap(s.buf) > grepKeepBuf {
		s.buf = make([]byte, 0, 64*1024)
	}
	grepBufs.Put(&searchBufs{file: s.buf[:0], dir: s.dirBuf})
	s.buf, s.dirBuf = nil, nil
}

// searchFile searches one file for at most quota matches; display is the
// path shown in the output. A file that cannot be read is skipped, as is a
// binary one (a NUL byte in its first 64KB; a NUL byte later ends the
// search of the file at that line).
//
// With nofollow (a file the walk met) a symbolic link in its place is not
// followed (on Linux): it was swapped in since the listing.
func (s *grepSearcher) searchFile(name, display string, quota int, nofollow bool) fileHits {
	var data []byte
	var big, binary bool
	var err error
	if nofollow {
		data, big, binary, err = readWholeAt(cwdFd, "", name, s.buf, grepWholeFileMax, grepPeekSize, hasNUL)
	} else {
		data, big, binary, err = fileutil.ReadWhole(name, s.buf, grepWholeFileMax, grepPeekSize, hasNUL)
	}
	if big {
		return fileHits{stream: true}
	}
	if err != nil || binary {
		return fileHits{}
	}
	s.buf = data[:0]
	return s.searchData(data, "", display, quota)
}

func hasNUL(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }

// merge adds one file's results to the output, in walk order. It returns
// gitignore.ErrStop once a match past the limit is found.
func (g *grepper) merge(h fileHits, name, display string) error {
	if h.err != nil {
		return h.err
	}
	if h.stream {
		return g.searchLarge(name, display)
	}
	for _, hit := range h.hits {
		if g.matches >= g.limit {
			g.limitReached = true
			return gitignore.ErrStop
		}
		g.matches++
		if g.context > 0 && g.outBytes > output.DefaultMaxBytes {
			// Past the byte limit nothing more is shown (and the
			// searcher may not have formatted it).
			continue
		}
		if hit.cut {
			g.linesTruncated = true
		}
		g.emit(hit.lines)
	}
	if h.more {
		g.limitReached = true
		return gitignore.ErrStop
	}
	return nil
}

// grepWorkers is how many goroutines search files.
var grepWorkers = func() int { return runtime.GOMAXPROCS(0) }

// searchTree walks root and searches the files the filter keeps on
// workers goroutines, merging in walk order.
func (g *grepper) searchTree(root string, filter *globFilter, workers int) error {
	keep := func(e gitignore.Entry) (search bool, err error) {
		if !filter.keep(e.Rel, e.IsDir) {
			if e.IsDir {
				return false, fs.SkipDir
			}
			return false, nil
		}
		// Directories are walked; symlinks and devices are not searched.
		if (e.IsDir || e.Type == 0) && g.hidden.skip(e.Path) {
			if e.IsDir {
				return false, fs.SkipDir
			}
			return false, nil
		}
		return e.Type == 0, nil
	}
	if workers <= 1 {
		// One goroutine: the reference the parallel search must equal.
		s := g.newSearcher(g.ctx, nil)
		defer s.done()
		return gitignore.Walk(g.ctx, root, func(e gitignore.Entry) error {
			if ok, err := keep(e); !ok {
				return err
			}
			return g.merge(s.searchFile(e.Path, e.Rel, g.limit-g.matches, true), e.Path, e.Rel)
		})
	}

	return g.searchTreeParallel(root, filter, workers)
}

// bothCtx is the call's context with the cancel of an early stop: Err
// asks the call's context itself too, so a context whose Err changes
// without its Done channel (as some callers' do) still stops the walk.
type bothCtx struct {
	context.Context
	outer context.Context
}

func (c bothCtx) Err() error {
	if err := c.outer.Err(); err != nil {
		return err
	}
	return c.Context.Err()
}

// byteOrder is the printable ASCII bytes and the whitespace of source
// text, most common first, as counted over Go's source tree (98 MB of Go,
// assembly, C and test data; space 15%, 'e' 5%, ... 'W' 0.13%, ... '^'
// 0.01%).
const byteOrder = " et\trn0\nasio,xclfdu.1p/()mg:2\"h=bAS43_6TEy{}8vRCOI5PD9" +
	"7kMLwNVFB-[]\\U*GXH|W!+&Y<z;>%'Kq" + "Q$jZ`#J^@~?\r"

// byteRank is rareByte's table: 255 for the most common byte of byteOrder,
// one less for each next one.
var byteRank = func() (r [256]uint8) {
	for i := range r {
		if i < 0x80 {
			r[i] = 60 // ASCII not in the list: rare
		} else {
			r[i] = 40 // non-ASCII: rarer still, as before
		}
	}
	for i := range len(byteOrder) {
		r[byteOrder[i]] = uint8(255 - i)
	}
	return r
}()

// rareByte ranks bytes by how common they are in source code (higher:
// more common), to pick the needle byte to scan for.
func rareByte(c byte) int { return int(byteRank[c]) }

// index finds the needle in hay: a scan for its rarest byte, each hit
// checked whole (fewer false starts than scanning for its first byte when
// that byte is common).
func (n *grepNeedle) index(hay []byte) int {
	if n.rare < 0 {
		return bytes.Index(hay, n.text)
	}
	c, off, m := n.text[n.rare], n.rare, len(n.text)
	for i := 0; i+m <= len(hay); {
		j := bytes.IndexByte(hay[i+off:len(hay)-m+off+1], c)
		if j < 0 {
			return -1
		}
		start := i + j
		if bytes.Equal(hay[start:start+m], n.text) {
			return start
		}
		i = start + 1
	}
	return -1
}

// pickRare sets the offset of the needle's rarest byte (-1: use
// bytes.Index, for needles whose bytes are all common).
func (n *grepNeedle) pickRare() {
	n.rare = -1
	best := 250
	for i, c := range n.text {
		r := rareByte(c)
		if n.fold && 'a' <= c && c <= 'z' {
			// Both cases are scanned for: as common as the more
			// common of the two.
			r = max(r, rareByte(c-('a'-'A')))
		}
		if r < best {
			best, n.rare = r, i
		}
	}
}

// foldFinder finds a case-folded needle in one file without lower-casing
// the file: it scans for the needle's rarest byte in both cases, keeping
// the next position of each (so each case is scanned once per file), and
// checks every candidate ignoring ASCII case.
type foldFinder struct {
	hay    []byte
	text   []byte // the needle, lower-case ASCII
	off    int    // offset of the scanned byte in the needle
	lo, up byte
	// next position of lo and of up at or after the last asked one; -1:
	// none left; -2: not looked for yet.
	nextLo, nextUp int
}

func newFoldFinder(n *grepNeedle, hay []byte) *foldFinder {
	off := max(n.rare, 0)
	lo := n.text[off]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	return &foldFinder{hay: hay, text: n.text, off: off, lo: lo, up: up, nextLo: -2, nextUp: -2}
}

// next returns the position of c at or after from, given the cached one.
func (f *foldFinder) next(cached, from int, c byte) int {
	if cached == -1 || cached >= from {
		return cached
	}
	if from >= len(f.hay) {
		return -1
	}
	if i := bytes.IndexByte(f.hay[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// index returns the first start at or after from where the needle occurs
// ignoring ASCII case, or -1.
func (f *foldFinder) index(from int) int {
	m := len(f.text)
	for from+m <= len(f.hay) {
		at := from + f.off
		f.nextLo = f.next(f.nextLo, at, f.lo)
		p := f.nextLo
		if f.up != f.lo {
			f.nextUp = f.next(f.nextUp, at, f.up)
			if p < 0 || (f.nextUp >= 0 && f.nextUp < p) {
				p = f.nextUp
			}
		}
		if p < 0 {
			return -1
		}
		start := p - f.off
		if start+m > len(f.hay) {
			return -1
		}
		if equalFoldASCII(f.hay[start:start+m], f.text) {
			return start
		}
		from = start + 1
	}
	return -1
}

// equalFoldASCII reports whether b equals lower (lower-case ASCII) when
// b's ASCII letters are lower-cased.
func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

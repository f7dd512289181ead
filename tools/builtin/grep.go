package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/pi-go/pi/internal/fileutil"
	"github.com/pi-go/pi/internal/gitignore"
	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// grepDefaultLimit is the number of matches grep returns when the call gives
// no limit.
const grepDefaultLimit = 100

// grepMaxLineLength is the most characters of one grep match line.
const grepMaxLineLength = 500

const grepSchema = `{
  "type": "object",
  "required": ["pattern"],
  "properties": {
    "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
    "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
    "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
    "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
    "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
    "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
    "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
  }
}`

// grepArgs are the arguments of a grep call.
type grepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       *string  `json:"path,omitempty"`
	Glob       *string  `json:"glob,omitempty"`
	IgnoreCase *bool    `json:"ignoreCase,omitempty"`
	Literal    *bool    `json:"literal,omitempty"`
	Context    *float64 `json:"context,omitempty"`
	Limit      *float64 `json:"limit,omitempty"`
}

// grepDetails are the details of a grep result, for the UI and the event
// stream. Zero fields are left out.
type grepDetails struct {
	// MatchLimitReached is the limit when more matches than it exist.
	MatchLimitReached int `json:"matchLimitReached,omitempty"`
	// Truncation is set when the text was cut to 50KB. Its totals describe
	// the whole output, except that with context the blocks of matches after
	// the cut are not formatted, so not counted.
	Truncation *output.Truncation `json:"truncation,omitempty"`
	// LinesTruncated is set when a line was cut to grepMaxLineLength.
	LinesTruncated bool `json:"linesTruncated,omitempty"`
}

// grepDefinition returns the grep tool: a regular-expression (or literal)
// search of file contents below a directory, or in one file, honouring
// .gitignore and skipping .git/ and binary files.
func grepDefinition() tool.ToolDefinition {
	return define(toolMeta{
		name: "grep",
		description: fmt.Sprintf("Search file contents for a pattern. Returns matching lines with file paths and line numbers. "+
			"Respects .gitignore. Output is truncated to %d matches or %dKB (whichever is hit first). "+
			"Long lines are truncated to %d chars.", grepDefaultLimit, output.DefaultMaxBytes/1024, grepMaxLineLength),
		parameters: grepSchema,
		snippet:    "Search file contents for patterns (respects .gitignore)",
		strict:     true,
	}, func(ctx context.Context, _ tool.Call, tc tool.Context, args grepArgs) (tool.Result, error) {
		return runGrep(ctx, tc, args)
	}, func(cwd string, a *grepArgs) string { return searchTarget(cwd, a.Path) })
}

// errSearchAborted is the model-visible text of a grep, find or ls call
// stopped by cancellation, as in the reference agent.
var errSearchAborted = errors.New("Operation aborted") //nolint:staticcheck // model-visible text

// runGrep runs one grep call in the working directory cwd. Mistakes the model
// can fix (a missing path, a bad regular expression or glob) come back as
// errors whose text names the field; the caller turns them into error
// results. Files and folders the permission rules keep from being read
// (tc.Hidden) are not searched (a folder is not entered), and a note says
// how many were left out.
//
// # Errors
//
// runGrep fails with `Path not found: PATH`, an `invalid pattern` or `invalid
// glob` error, or `Operation aborted` when ctx is cancelled.
func runGrep(ctx context.Context, tc tool.Context, args grepArgs) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, errSearchAborted
	}
	searchPath := searchTarget(tc.Cwd, args.Path)
	info, err := os.Stat(searchPath)
	if err != nil {
		return tool.Result{}, fmt.Errorf("Path not found: %s", searchPath) //nolint:staticcheck // model-visible text
	}
	expr := args.Pattern
	if deref(args.Literal, false) {
		expr = regexp.QuoteMeta(expr)
	}
	if deref(args.IgnoreCase, false) {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return tool.Result{}, fmt.Errorf("invalid pattern: %w (set literal to true to search for the text as it is)", err)
	}
	g := &grepper{
		ctx:     ctx,
		re:      re,
		context: intArg(args.Context, 0, 0),
		limit:   intArg(args.Limit, grepDefaultLimit, 1),
		hidden:  newHiddenPaths(tc),
	}
	g.reWhole = wholeTextRegexp(expr)
	g.needle = requiredNeedle(expr)
	switch {
	case g.hidden.skip(searchPath):
	case info.IsDir():
		filter, ferr := newGlobFilter(deref(args.Glob, ""))
		if ferr != nil {
			return tool.Result{}, ferr
		}
		err = g.searchTree(searchPath, filter, grepWorkers())
	case info.Mode().IsRegular(): // never block on a named pipe or device
		s := g.newSearcher(ctx, nil)
		defer s.done()
		// The file named by the call: a symbolic link is followed.
		err = g.merge(s.searchFile(searchPath, filepath.Base(searchPath), g.limit-g.matches, false), searchPath, filepath.Base(searchPath))
	}
	if errors.Is(err, gitignore.ErrStop) {
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, errSearchAborted
		}
		return tool.Result{}, err
	}
	if g.matches == 0 {
		return listingResult("No matches found", g.hidden.withNotice(nil), nil, false), nil
	}
	var details grepDetails
	notices := g.hidden.withNotice(nil)
	if g.limitReached {
		notices = append(notices, fmt.Sprintf("%d matches limit reached. Use limit=%d for more, or refine pattern", g.limit, g.limit*2))
		details.MatchLimitReached = g.limit
	}
	text, trunc := truncateListing(g.out)
	if trunc != nil {
		// Describe the whole output, not just the part kept.
		trunc.TotalLines, trunc.TotalBytes = g.allLines, g.allBytes-1
		notices = append(notices, output.FormatSize(output.DefaultMaxBytes)+" limit reached")
		details.Truncation = trunc
	}
	if g.linesTruncated {
		notices = append(notices, fmt.Sprintf("Some lines truncated to %d chars. Use read tool to see full lines", grepMaxLineLength))
		details.LinesTruncated = true
	}
	return listingResult(text, notices, details, details != grepDetails{}), nil
}

// grepper holds the state of one grep call across files.
type grepper struct {
	ctx     context.Context
	re      *regexp.Regexp // matches one line (without its line ending)
	reWhole *regexp.Regexp // re in multi-line mode, to find candidate lines; nil to go line by line
	// needle is text every match contains: candidate lines are found by a
	// plain index (into the ASCII-lower-cased file for a case-insensitive
	// needle), far faster than running the regular expression over the file.
	needle  *grepNeedle
	context int
	limit   int
	// hidden is what the permission rules keep from being read.
	hidden *hiddenPaths

	reader *bufio.Reader // for files over grepWholeFileMax, reused

	matches        int // matches reported (at most limit)
	limitReached   bool
	linesTruncated bool
	out            []string
	outBytes       int // bytes of out, newlines included
	allLines       int // lines of the whole output, kept or not
	allBytes       int // bytes of the whole output, a newline after each line
}

// grepBlock is one match with its context lines, waiting for the lines after
// the match.
type grepBlock struct {
	lines []string
	after int
}

// ringLine is a line kept for the context before a match.
type ringLine struct {
	n    int
	text string
}

const grepPeekSize = 64 * 1024

// grepWholeFileMax is the largest file grep reads whole; larger files are
// read line by line in bounded memory. A variable so tests can run both ways.
var grepWholeFileMax int64 = 16 << 20

// searchLarge searches a file too large to read whole (over
// grepWholeFileMax), streaming it on the goroutine that merges the output,
// in its turn. A file that cannot be opened is skipped.
func (g *grepper) searchLarge(name, display string) error {
	// ReadAtMost opens as the searchers do (a named pipe that replaced
	// the file does not block) and hands back the open file after the
	// first chunk.
	data, rest, err := fileutil.ReadAtMost(name, make([]byte, 0, grepPeekSize), 0)
	if err != nil {
		return nil
	}
	if rest == nil {
		return g.searchStream(bytes.NewReader(data), display)
	}
	defer rest.Close()
	return g.searchStream(io.MultiReader(bytes.NewReader(data), rest), display)
}

var (
	newline = []byte("\n")
	cr      = []byte("\r")
)

// searchData searches the whole contents of a file for at most quota
// matches (h.more is set when there is one more). With reWhole it jumps
// from candidate to candidate (every line with a match holds the start of
// a multi-line-mode match) and checks each candidate line with re;
// otherwise, and for text with '\r', it checks every line.
//
// The path shown is dirRel+name, built only for a file with a match. The
// caller has checked that the first grepPeekSize bytes hold no NUL (a
// binary file is not searched); a NUL after them ends the search at the
// line before it.
func (s *grepSearcher) searchData(data []byte, dirRel, name string, quota int) (h fileHits) {
	g := s.g
	if len(data) > grepPeekSize {
		if i := bytes.IndexByte(data[grepPeekSize:], 0); i >= 0 {
			i += grepPeekSize
			data = data[:bytes.LastIndexByte(data[:i], '\n')+1]
		}
	}
	fast := g.needle != nil || (g.reWhole != nil && bytes.IndexByte(data, '\r') < 0)
	var folded *foldFinder
	if g.needle != nil && g.needle.fold {
		folded = newFoldFinder(g.needle, data)
	}
	display := ""
	pos, n := 0, 1 // pos is the start of line n
	for steps := 1; pos < len(data); steps++ {
		if steps%1024 == 0 && s.ctx.Err() != nil {
			h.err = s.ctx.Err()
			return h
		}
		if fast {
			at := -1
			if folded != nil {
				if at = folded.index(pos); at >= 0 {
					at -= pos
				}
			} else if g.needle != nil {
				at = g.needle.index(data[pos:])
			} else if loc := g.reWhole.FindIndex(data[pos:]); loc != nil {
				at = loc[0]
			}
			if at < 0 {
				break
			}
			start := pos + bytes.LastIndexByte(data[pos:pos+at], '\n') + 1
			n += bytes.Count(data[pos:start], newline)
			pos = start
		}
		end, next := lineEnd(data, pos)
		if g.re.Match(bytes.TrimSuffix(data[pos:end], cr)) {
			if len(h.hits) >= quota {
				h.more = true
				return h
			}
			if display == "" {
				display = dirRel + name
			}
			h.hits = append(h.hits, s.block(data, pos, end, next, n, display))
		}
		pos, n = next, n+1
	}
	return h
}

// wholeTextRegexp compiles expr in multi-line mode, to find in a whole file
// the lines that may match. Every line match is then a match of the result
// at the same place, unless expr anchors at the start or end of the text
// (\A, \z, or ^ and $ after (?-m)); for those it returns nil.
func wholeTextRegexp(expr string) *regexp.Regexp {
	src := "(?m)" + expr
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil || hasTextAnchor(tree) {
		return nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil
	}
	return re
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if hasTextAnchor(sub) {
			return true
		}
	}
	return false
}

// grepNeedle is text that every match of a pattern contains. With fold it is
// lower-cased ASCII, to be found in the ASCII-lower-cased text.
type grepNeedle struct {
	text []byte
	fold bool
	rare int // offset of the byte index scans for (pickRare)
}

// requiredNeedle finds in expr a literal that every match must contain (the
// longest one of a top-level sequence, looking through groups and
// repetitions of at least one), or nil. Of a case-insensitive literal only
// its longest run of ASCII without 'k' or 's' (which also fold to U+212A
// and U+017F) is used; one-byte needles are not used.
func requiredNeedle(expr string) *grepNeedle {
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	n := requiredLiteral(tree.Simplify())
	if n == nil || len(n.text) < 2 {
		return nil
	}
	n.pickRare()
	return n
}

func requiredLiteral(re *syntax.Regexp) *grepNeedle {
	switch re.Op {
	case syntax.OpLiteral:
		return literalNeedle(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best *grepNeedle
		for _, sub := range re.Sub {
			if n := requiredLiteral(sub); n != nil && (best == nil || len(n.text) > len(best.text)) {
				best = n
			}
		}
		return best
	}
	return nil
}

func literalNeedle(runes []rune, fold bool) *grepNeedle {
	if !fold {
		out := make([]byte, 0, len(runes))
		for _, r := range runes {
			out = utf8.AppendRune(out, r)
		}
		return &grepNeedle{text: out}
	}
	// Case-insensitive: the longest run of ASCII letters other than k and
	// s (which also fold to U+212A and U+017F) and other ASCII, lower-cased.
	var best, run []byte
	for _, r := range runes {
		c := byte(r)
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if r >= utf8.RuneSelf || c == 'k' || c == 's' {
			run = nil
			continue
		}
		run = append(run, c)
		if len(run) > len(best) {
			best = append(best[:0], run...)
		}
	}
	if len(best) == 0 {
		return nil
	}
	return &grepNeedle{text: best, fold: true}
}

// lineEnd returns the end of the line starting at pos (before its '\n')
// and the start of the next line.
func lineEnd(data []byte, pos int) (end, next int) {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i, pos + i + 1
	}
	return len(data), len(data)
}

// block formats the match on line n (data[start:end]) with the context
// lines before and after it. Once the merged output is past the byte
// limit, a block with context is not formatted: the merge drops it anyway
// (formatting every block would cost up to limit × 2×context lines).
func (s *grepSearcher) block(data []byte, start, end, next, n int, display string) grepHit {
	g := s.g
	if g.context > 0 && s.full != nil && s.full.Load() {
		return grepHit{}
	}
	first := start
	k := 0
	for ; k < g.context && first > 0; k++ {
		first = bytes.LastIndexByte(data[:first-1], '\n') + 1
	}
	var h grepHit
	add := func(ln int, body []byte, match bool) {
		line, cut := formatGrepLine(display, ln, body, match)
		h.lines = append(h.lines, line)
		h.cut = h.cut || cut
	}
	h.lines = make([]string, 0, min(2*g.context+1, 64))
	for p, ln := first, n-k; p < start; ln++ {
		e, nx := lineEnd(data, p)
		add(ln, data[p:e], false)
		p = nx
	}
	add(n, data[start:end], true)
	for p, ln := next, n+1; ln <= n+g.context && p < len(data); ln++ {
		e, nx := lineEnd(data, p)
		add(ln, data[p:e], false)
		p = nx
	}
	return h
}

// searchStream searches a large file line by line, keeping only the context
// lines before the current one and the blocks still waiting for lines after
// their match.
func (g *grepper) searchStream(f io.Reader, display string) error {
	if g.reader == nil {
		g.reader = bufio.NewReaderSize(f, grepPeekSize)
	} else {
		g.reader.Reset(f)
	}
	r := g.reader
	if head, _ := r.Peek(grepPeekSize); bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	var err error
	var (
		before  []ringLine // the last g.context lines, a ring starting at head
		head    int
		pending []*grepBlock
		line    []byte
		n       int
	)
	// Once the output is past the byte limit nothing more is shown, so
	// lines are no longer formatted (with a large context that would cost
	// up to limit × 2×context lines).
	full := func() bool { return g.outBytes > output.DefaultMaxBytes }
	for {
		line, err = readLine(r, line[:0])
		if len(line) == 0 && err != nil {
			break
		}
		n++
		if n%4096 == 0 && g.ctx.Err() != nil {
			return g.ctx.Err()
		}
		if bytes.IndexByte(line, 0) >= 0 {
			break // binary after all
		}
		body := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		// Lines after earlier matches.
		for _, b := range pending {
			if b.after > 0 {
				if !full() {
					b.lines = append(b.lines, g.format(display, n, body, false))
				}
				b.after--
			}
		}
		for len(pending) > 0 && pending[0].after == 0 {
			g.emit(pending[0].lines)
			pending = pending[1:]
		}
		if g.re.Match(body) {
			if g.matches >= g.limit {
				g.limitReached = true
			} else {
				g.matches++
				b := &grepBlock{after: g.context}
				if g.context == 0 || !full() {
					for i := range before {
						bl := before[(head+i)%len(before)]
						b.lines = append(b.lines, g.format(display, bl.n, []byte(bl.text), false))
					}
					b.lines = append(b.lines, g.format(display, n, body, true))
				}
				if b.after == 0 && len(pending) == 0 {
					g.emit(b.lines)
				} else {
					pending = append(pending, b)
				}
			}
		}
		if g.limitReached && len(pending) == 0 {
			return gitignore.ErrStop
		}
		if g.context > 0 {
			if len(before) < g.context {
				before = append(before, ringLine{n: n, text: string(body)})
			} else {
				before[head] = ringLine{n: n, text: string(body)}
				head = (head + 1) % len(before)
			}
		}
		if err != nil {
			break
		}
	}
	// End of file: blocks still waiting for lines after their match are done.
	for _, b := range pending {
		g.emit(b.lines)
	}
	if g.limitReached {
		return gitignore.ErrStop
	}
	return nil
}

// format renders one output line (formatGrepLine), noting a cut line.
func (g *grepper) format(display string, n int, body []byte, match bool) string {
	line, cut := formatGrepLine(display, n, body, match)
	if cut {
		g.linesTruncated = true
	}
	return line
}

// formatGrepLine renders one output line: `REL:N: TEXT` for a match,
// `REL-N- TEXT` for a context line, with '\r' removed, invalid UTF-8
// replaced and the text cut to grepMaxLineLength characters (cut reports
// that).
func formatGrepLine(display string, n int, body []byte, match bool) (line string, cut bool) {
	text := strings.ReplaceAll(string(body), "\r", "")
	text = strings.ToValidUTF8(text, "\uFFFD")
	text, cut = output.TruncateLine(text, grepMaxLineLength)
	sep := "-"
	if match {
		sep = ":"
	}
	return display + sep + strconv.Itoa(n) + sep + " " + text, cut
}

// emit adds a finished block to the output. Once the output is past the
// byte limit, further lines are counted but not kept: they would be cut.
func (g *grepper) emit(lines []string) {
	for _, l := range lines {
		g.allLines++
		g.allBytes += len(l) + 1
		if g.outBytes > output.DefaultMaxBytes {
			continue
		}
		g.out = append(g.out, l)
		g.outBytes += len(l) + 1
	}
}

// readLine appends the next line of r, with its '\n', to buf.
func readLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(buf) == 0 {
			return buf, io.EOF
		}
		return buf, err
	}
}

// globFilter is grep's glob argument, read as ripgrep reads --glob: a
// pattern without '/' matches a file's name at any depth; one with a '/' is
// matched against the path from the search directory (a leading '/' anchors
// it there too); '**' crosses directories and {a,b} picks alternatives. A
// leading '!' excludes what matches (directories too) instead of keeping
// only what matches.
type globFilter struct {
	pattern  string
	negate   bool
	fullPath bool
	dirOnly  bool
	name     nameMatch // a name pattern's simple shape (find's), else doublestar
}

func newGlobFilter(glob string) (*globFilter, error) {
	if glob == "" {
		return nil, nil
	}
	f := &globFilter{}
	p := glob
	if strings.HasPrefix(p, "!") {
		f.negate = true
		p = p[1:]
	}
	p = strings.TrimPrefix(p, "./")
	if strings.HasSuffix(p, "/") {
		f.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if strings.Contains(p, "/") {
		f.fullPath = true
		p = strings.TrimPrefix(p, "/")
	}
	if p == "" || !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("invalid glob %q: not a valid glob pattern", glob)
	}
	f.pattern = p
	if !f.fullPath {
		f.name = compileName(p)
	}
	return f, nil
}

// keep reports whether the walk keeps the entry: a file to search, or a
// directory to enter.
func (f *globFilter) keep(rel string, isDir bool) bool {
	if f == nil {
		return true
	}
	if isDir && !f.negate {
		return true // a whitelist glob selects files; every directory is entered
	}
	if f.dirOnly && !isDir {
		return f.negate // a directory-only pattern matches no file (rg --glob 'dir/')
	}
	if f.name.kind != nameGlob {
		return f.name.matchName(rel[strings.LastIndexByte(rel, '/')+1:]) != f.negate
	}
	subject := rel
	if !f.fullPath {
		subject = filepath.Base(rel)
	}
	m := doublestar.MatchUnvalidated(f.pattern, subject)
	return m != f.negate
}

// keepIn is keep for the entry name of the directory dirRel (a slash path
// with a trailing '/', or ""): the path is only built for a pattern that
// looks at more than the name.
func (f *globFilter) keepIn(dirRel, name string, isDir bool) bool {
	if f == nil {
		return true
	}
	if f.name.kind != nameGlob && !(isDir && !f.negate) && !(f.dirOnly && !isDir) {
		return f.name.matchName(name) != f.negate
	}
	return f.keep(dirRel+name, isDir)
}

// intArg reads an optional number argument as an integer (fractions are
// dropped), with a default and a least value.
func intArg(v *float64, def, least int) int {
	n := def
	if v != nil {
		f := math.Floor(*v)
		switch {
		case math.IsNaN(f) || f < float64(least):
			f = float64(least)
		case f > math.MaxInt32:
			f = math.MaxInt32
		}
		n = int(f)
	}
	if n < least {
		n = least
	}
	return n
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// truncateListing joins lines and cuts the text to output.DefaultMaxBytes, whole
// lines only. The Truncation is nil when nothing was cut.
func truncateListing(lines []string) (string, *output.Truncation) {
	t := output.TruncateHead(strings.Join(lines, "\n"), math.MaxInt, output.DefaultMaxBytes)
	if !t.Truncated {
		return t.Content, nil
	}
	return t.Content, &t
}

// listingResult is the text plus its notices (`\n\n[A. B]`), with details
// when any are set.
func listingResult(text string, notices []string, details any, hasDetails bool) tool.Result {
	if len(notices) > 0 {
		text += "\n\n[" + strings.Join(notices, ". ") + "]"
	}
	r := tool.TextResult(text)
	if hasDetails {
		r.Details = details
	}
	return r
}

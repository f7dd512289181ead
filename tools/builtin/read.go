package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/internal/imageutil"
	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// readParameters is the read tool's JSON Schema (the reference agent's).
const readParameters = `{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}}}`

// readArgs are the read tool's arguments.
type readArgs struct {
	Path   string   `json:"path"`
	Offset *float64 `json:"offset"`
	Limit  *float64 `json:"limit"`
}

// readDetails are the details of a read whose text was truncated.
type readDetails struct {
	Truncation *output.Truncation `json:"truncation,omitempty"`
}

// sniffSize is how much of a file is looked at to tell images and binary
// files from text.
const sniffSize = 8 * 1024

// readChunkSize is the read buffer of the streaming line scan.
const readChunkSize = 256 * 1024

// readDefinition is the read tool: a window of a text file in bounded
// memory, images as image blocks (downscaled when large), binary files
// described instead of sent.
func readDefinition() tool.ToolDefinition {
	return define(toolMeta{
		name:        "read",
		description: fmt.Sprintf("Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to %d lines or %dKB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.", output.DefaultMaxLines, output.DefaultMaxBytes/1024),
		parameters:  readParameters,
		snippet:     "Read file contents",
		guidelines:  []string{"Use read to examine files instead of cat or sed."},
	}, executeRead, func(cwd string, a *readArgs) string { return readTarget(cwd, a.Path) })
}

func executeRead(ctx context.Context, _ tool.Call, tc tool.Context, args readArgs) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, errAborted
	}
	if args.Limit != nil && clampLines(*args.Limit) < 1 {
		return tool.Result{}, fmt.Errorf("limit must be at least 1 (got %s): it is the number of lines to read from offset; leave it out to read to the end of the file", formatNumber(*args.Limit))
	}
	abs := readTarget(tc.Cwd, args.Path)
	// Stat before opening: opening a FIFO would block.
	fi, err := os.Stat(abs)
	if err != nil {
		return tool.Result{}, openError(abs, err)
	}
	if fi.IsDir() {
		return tool.Result{}, fmt.Errorf("Cannot read %s: it is a directory. Use ls to list its contents.", abs)
	}
	if !fi.Mode().IsRegular() {
		return tool.Result{}, fmt.Errorf("Cannot read %s: it is a %s, not a regular file.", abs, atomicfile.Kind(fi.Mode()))
	}
	f, err := os.Open(abs)
	if err != nil {
		return tool.Result{}, openError(abs, err)
	}
	defer f.Close()
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tool.Result{}, fmt.Errorf("read %s: %w", abs, err)
	}
	head = head[:n]
	if mime := imageutil.DetectMIME(head); mime != "" {
		return readImage(f, fi.Size(), mime)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return tool.TextResult(fmt.Sprintf("[Binary file %s (%s) not shown. Use bash (file, xxd, strings) to inspect it.]", args.Path, output.FormatSize(int(fi.Size())))), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", abs, err)
	}
	return readText(ctx, f, args)
}

// openError turns a failed open into a model-visible error naming the path.
func openError(abs string, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("File not found: %s", abs)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("Permission denied: %s", abs)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("Not a directory: a parent of %s is a file", abs)
	}
	return fmt.Errorf("read %s: %w", abs, err)
}

// formatNumber prints a JSON number as JavaScript would.
func formatNumber(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// clampLines turns a JSON number into a line count, truncating toward zero
// as JavaScript's slice does and keeping it far from overflow.
func clampLines(f float64) int {
	const most = 1 << 50
	switch {
	case math.IsNaN(f):
		return 0
	case f > most:
		return most
	case f < -most:
		return -most
	}
	return int(math.Trunc(f))
}

// readText streams the file once: lines before the window are skipped,
// the window is collected up to the output limits, the rest is only
// counted.
func readText(ctx context.Context, f io.Reader, args readArgs) (tool.Result, error) {
	start, end := readWindow(args)
	c := headCollector{maxLines: output.DefaultMaxLines, maxBytes: output.DefaultMaxBytes}
	newlines, err := scanWindow(ctx, f, start, end, &c)
	if errors.Is(err, errAborted) {
		return tool.Result{}, err
	}
	if err != nil {
		return tool.Result{}, fmt.Errorf("read %s: %w", args.Path, err)
	}
	total := newlines + 1
	if start >= total {
		off := "undefined"
		if args.Offset != nil {
			off = formatNumber(*args.Offset)
		}
		return tool.Result{}, fmt.Errorf("Offset %s is beyond end of file (%d lines total)", off, total)
	}
	return readResult(args, &c, start, end, total), nil
}

// readWindow is the window a read asks for, in 0-based lines: the first,
// and the one after the last (math.MaxInt: to the end of the file).
func readWindow(args readArgs) (start, end int) {
	if args.Offset != nil && *args.Offset != 0 {
		start = max(0, clampLines(*args.Offset)-1)
	}
	end = math.MaxInt
	if args.Limit != nil {
		end = start + max(0, clampLines(*args.Limit))
	}
	return start, end
}

// scanWindow reads f once, feeding the lines of the window [start, end) to
// c, and returns how many newlines f holds. Before the window only
// newlines are counted; once c is full and the window runs to the end of
// the file, the rest is only counted. It fails with errAborted when ctx is
// cancelled, or with the read error.
func scanWindow(ctx context.Context, f io.Reader, start, end int, c *headCollector) (int, error) {
	line := 0
	buf := make([]byte, readChunkSize)
	// Once the output is full and the window runs to the end of the file,
	// the rest is only counted: restLen bytes holding restNL newlines.
	fast, restLen, restNL := false, int64(0), 0
	countRest := func(chunk []byte) {
		k := bytes.Count(chunk, []byte{'\n'})
		restLen += int64(len(chunk))
		restNL += k
		line += k
	}
	for {
		if ctx.Err() != nil {
			return 0, errAborted
		}
		n, err := f.Read(buf)
		chunk := buf[:n]
		if fast {
			countRest(chunk)
			chunk = nil
		}
		if line < start {
			// Before the window only newlines matter: skip whole chunks.
			if k := bytes.Count(chunk, []byte{'\n'}); line+k < start {
				line += k
				chunk = nil
			}
		}
		for len(chunk) > 0 {
			if line >= end {
				line += bytes.Count(chunk, []byte{'\n'})
				break
			}
			i := bytes.IndexByte(chunk, '\n')
			piece := chunk
			if i >= 0 {
				piece = chunk[:i]
			}
			if line >= start {
				c.feed(piece)
			}
			if i < 0 {
				break
			}
			if line >= start {
				c.endLine()
			}
			line++
			chunk = chunk[i+1:]
			if c.done && end == math.MaxInt {
				fast = true
				countRest(chunk)
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	switch {
	case fast:
		// Each remaining line adds its bytes and the newline before it.
		c.lines += restNL + 1
		c.bytes += restLen + 1
	case line >= start && line < end:
		c.endLine() // the last piece, after the last '\n'
	}
	return line, nil
}

// readResult words the window c collected: its text with the notice of
// where to continue, and the truncation details when it was cut.
func readResult(args readArgs, c *headCollector, start, end, total int) tool.Result {
	t := c.result()
	startDisplay := start + 1
	var text string
	var details any
	switch {
	case t.FirstLineExceedsLimit:
		text = fmt.Sprintf("[Line %d is %s, exceeds %s limit. Use bash: sed -n '%dp' %s | head -c %d]",
			startDisplay, output.FormatSize(int(c.firstLineBytes)), output.FormatSize(output.DefaultMaxBytes), startDisplay, args.Path, output.DefaultMaxBytes)
		details = readDetails{Truncation: &t}
	case t.Truncated:
		endDisplay := startDisplay + t.OutputLines - 1
		text = t.Content
		if t.TruncatedBy == "lines" {
			text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", startDisplay, endDisplay, total, endDisplay+1)
		} else {
			text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Use offset=%d to continue.]", startDisplay, endDisplay, total, output.FormatSize(output.DefaultMaxBytes), endDisplay+1)
		}
		details = readDetails{Truncation: &t}
	case args.Limit != nil && end < total:
		text = fmt.Sprintf("%s\n\n[%d more lines in file. Use offset=%d to continue.]", t.Content, total-end, end+1)
	default:
		text = t.Content
	}
	r := tool.TextResult(text)
	if details != nil {
		r.Details = details
	}
	return r
}

// headCollector is output.TruncateHead over a stream of lines: it keeps the
// whole lines that fit the limits and counts the rest of the window.
type headCollector struct {
	maxLines, maxBytes int
	out                []byte
	outLines           int
	cur                []byte // the line being fed, while it may still fit
	curLen             int64
	curOver            bool // cur is past what could fit
	done               bool // stopped keeping lines
	by                 string
	lines              int   // lines in the window
	bytes              int64 // bytes of the window, newlines between lines included
	firstLineBytes     int64
}

func (c *headCollector) feed(p []byte) {
	c.curLen += int64(len(p))
	if c.done || c.curOver {
		return
	}
	sep := 0
	if c.outLines > 0 {
		sep = 1
	}
	if len(c.out)+sep+len(c.cur)+len(p) > c.maxBytes {
		c.curOver = true
		c.cur = c.cur[:0]
		return
	}
	c.cur = append(c.cur, p...)
}

func (c *headCollector) endLine() {
	if c.lines == 0 {
		c.firstLineBytes = c.curLen
	} else {
		c.bytes++
	}
	c.bytes += c.curLen
	c.lines++
	if !c.done {
		switch {
		case c.outLines >= c.maxLines:
			c.done, c.by = true, "lines"
		case c.curOver:
			c.done, c.by = true, "bytes"
		default:
			if c.outLines > 0 {
				c.out = append(c.out, '\n')
			}
			c.out = append(c.out, c.cur...)
			c.outLines++
		}
	}
	c.cur, c.curLen, c.curOver = c.cur[:0], 0, false
}

// result is the Truncation output.TruncateHead would give for the window's text.
func (c *headCollector) result() output.Truncation {
	t := output.Truncation{TotalLines: c.lines, TotalBytes: int(c.bytes)}
	if c.lines <= c.maxLines && c.bytes <= int64(c.maxBytes) {
		t.Content = strings.ToValidUTF8(string(c.out), "\uFFFD")
		t.OutputLines, t.OutputBytes = c.outLines, len(c.out)
		return t
	}
	t.Truncated = true
	if c.firstLineBytes > int64(c.maxBytes) {
		t.TruncatedBy, t.FirstLineExceedsLimit = "bytes", true
		return t
	}
	t.TruncatedBy = c.by
	if t.TruncatedBy == "" {
		t.TruncatedBy = "lines"
	}
	t.Content = strings.ToValidUTF8(string(c.out), "\uFFFD")
	t.OutputLines, t.OutputBytes = c.outLines, len(c.out)
	return t
}

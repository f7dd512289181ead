package output

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/pi-go/pi/runtime/redact"
)

// Accumulator takes a command's output as it streams in and keeps, in
// bounded memory, what the model will see: the cleaned (sanitized) tail of
// the output, enough for the last maxLines lines / maxBytes bytes, with the
// running totals of lines and bytes. When the output grows past those limits
// the raw bytes also go to a file made by Limits.NewFile (lazily, seeded
// with the raw bytes held so far, so it is complete up to its cap), with the
// secrets of the Redactor replaced, even when one is split across chunks.
// A file that reaches its cap stops growing and ends with a line saying it
// was cut. It is safe for concurrent use: one goroutine writes while another
// takes snapshots.
type Accumulator struct {
	mu       sync.Mutex
	maxLines int
	maxBytes int
	// rolling is how much cleaned tail is kept after a trim; the buffer
	// grows to twice that before it is trimmed again.
	rolling int
	newFile func() (*os.File, string, error)
	maxFile int64 // cap of the file, in bytes
	redact  *redact.Stream

	san     sanitizer
	scratch []byte

	tail        []byte // cleaned tail, valid UTF-8
	tailAtStart bool   // tail[0] begins a line (of the cleaned text)

	totalRaw   int64
	totalBytes int64 // cleaned bytes
	totalLines int64 // newline count + 1
	lineBytes  int64 // cleaned bytes of the last (current) line
	prevBytes  int64 // cleaned bytes of the line before it

	raw      []byte // raw bytes held until the temp file exists
	file     *os.File
	fileBuf  *bufio.Writer // batches the raw bytes into large writes
	filePath string
	fileErr  error
	finished bool
	// fileBytes were written to the file; cutBytes were not, for the cap.
	fileBytes int64
	cutBytes  int64
}

// DefaultMaxFileBytes caps one full-output file when Limits.MaxFileBytes
// is zero: 100 MiB.
const DefaultMaxFileBytes = 100 << 20

// errNoFile is why the full output was not saved when there is no NewFile.
var errNoFile = errors.New("no folder for the full output")

// fileBufferSize is the size of the writes to the full-output file.
const fileBufferSize = 1 << 20

// Limits are the limits of an accumulator and where its file goes.
type Limits struct {
	MaxLines int
	MaxBytes int
	// NewFile creates the full-output file and returns it with its path;
	// when nil, or when it fails, the full output is not saved and the
	// snapshot says why.
	NewFile func() (*os.File, string, error)
	// MaxFileBytes caps the file; DefaultMaxFileBytes when <= 0.
	MaxFileBytes int64
	// Redactor's secrets never reach the file.
	Redactor *redact.Redactor
}

func NewAccumulator(l Limits) *Accumulator {
	if l.MaxLines <= 0 {
		l.MaxLines = DefaultMaxLines
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	var stream *redact.Stream
	if l.Redactor.Active() {
		stream = l.Redactor.Stream()
	}
	return &Accumulator{
		maxLines:    l.MaxLines,
		maxBytes:    l.MaxBytes,
		rolling:     2 * l.MaxBytes,
		newFile:     l.NewFile,
		maxFile:     l.MaxFileBytes,
		redact:      stream,
		tailAtStart: true,
		totalLines:  1,
	}
}

// Write takes the next chunk of raw output. It never fails: a temp file that
// cannot be written is reported by the snapshot, not by Write.
func (a *Accumulator) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished || len(p) == 0 {
		return len(p), nil
	}
	a.totalRaw += int64(len(p))
	// Plain text needs no copy through the sanitizer: only its tail is kept.
	k := a.san.plainRun(p)
	a.appendClean(p[:k])
	if k < len(p) {
		a.scratch = a.san.write(a.scratch[:0], p[k:])
		a.appendClean(a.scratch)
	}
	a.keepRaw(p)
	return len(p), nil
}

// Finish ends the stream: a UTF-8 sequence cut at the very end becomes
// U+FFFD.
func (a *Accumulator) Finish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished {
		return
	}
	a.scratch = a.san.finish(a.scratch[:0])
	a.appendClean(a.scratch)
	a.finished = true
	if a.overLimits() {
		a.ensureFile()
	}
	if a.fileBuf != nil {
		if a.redact != nil {
			a.writeFileString(a.redact.Flush())
		}
		if a.cutBytes > 0 {
			a.writeFileRaw(fmt.Sprintf("\n[pi: full output cut at the %s cap; %d more bytes were not saved]\n", FormatSize(int(a.maxFile)), a.cutBytes))
		}
		if err := a.fileBuf.Flush(); err != nil && a.fileErr == nil {
			a.fileErr = fmt.Errorf("write %s: %w", a.filePath, err)
		}
	}
}

// Close closes the temp file. When the cleaned output turned out to fit the
// limits (the file was only opened because the raw bytes, escapes included,
// were over them) the file is removed: the model saw everything.
func (a *Accumulator) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file == nil {
		return nil
	}
	err := a.fileBuf.Flush()
	if cerr := a.file.Close(); err == nil {
		err = cerr
	}
	a.file, a.fileBuf = nil, nil
	if !a.truncatedLocked() {
		os.Remove(a.filePath)
		a.filePath = ""
		return nil
	}
	if err != nil {
		a.fileErr = err
		return fmt.Errorf("close %s: %w", a.filePath, err)
	}
	return a.fileErr
}

func (a *Accumulator) appendClean(c []byte) {
	if len(c) == 0 {
		return
	}
	a.totalBytes += int64(len(c))
	if n := bytes.Count(c, []byte{'\n'}); n == 0 {
		a.lineBytes += int64(len(c))
	} else {
		a.totalLines += int64(n)
		last := bytes.LastIndexByte(c, '\n')
		if n == 1 {
			a.prevBytes = a.lineBytes + int64(last)
		} else {
			a.prevBytes = int64(last - bytes.LastIndexByte(c[:last], '\n') - 1)
		}
		a.lineBytes = int64(len(c) - last - 1)
	}
	if len(c) >= a.rolling {
		if cut := len(c) - a.rolling; cut > 0 {
			a.tailAtStart = c[cut-1] == '\n'
		} else {
			a.tailAtStart = a.atLineStartAfter()
		}
		a.tail = append(a.tail[:0], c[len(c)-a.rolling:]...)
		a.alignTail()
		return
	}
	a.tail = append(a.tail, c...)
	if len(a.tail) > 2*a.rolling {
		cut := len(a.tail) - a.rolling
		a.tailAtStart = a.tail[cut-1] == '\n'
		n := copy(a.tail, a.tail[cut:])
		a.tail = a.tail[:n]
		a.alignTail()
	}
}

// atLineStartAfter reports whether the current tail ends a line (so what
// follows begins one).
func (a *Accumulator) atLineStartAfter() bool {
	if len(a.tail) == 0 {
		return a.tailAtStart
	}
	return a.tail[len(a.tail)-1] == '\n'
}

// alignTail drops continuation bytes at the start of the tail so that it
// begins on a rune boundary. Those bytes belong to a line that is cut anyway.
func (a *Accumulator) alignTail() {
	i := 0
	for i < len(a.tail) && i < utf8.UTFMax && !utf8.RuneStart(a.tail[i]) {
		i++
	}
	if i > 0 {
		a.tailAtStart = false
		n := copy(a.tail, a.tail[i:])
		a.tail = a.tail[:n]
	}
}

func (a *Accumulator) overLimits() bool {
	return a.totalRaw > int64(a.maxBytes) || a.totalBytes > int64(a.maxBytes) || a.totalLines > int64(a.maxLines)
}

func (a *Accumulator) truncatedLocked() bool {
	return a.totalLines > int64(a.maxLines) || a.totalBytes > int64(a.maxBytes)
}

func (a *Accumulator) keepRaw(p []byte) {
	if a.file == nil && a.fileErr == nil && a.overLimits() {
		a.ensureFile()
	}
	switch {
	case a.file != nil:
		a.writeFile(p)
	case a.fileErr != nil:
		// The full output cannot be kept; hold nothing.
	default:
		a.raw = append(a.raw, p...)
	}
}

// ensureFile creates the temp file and writes the raw bytes held so far.
// p, the chunk being written, is written by the caller.
func (a *Accumulator) ensureFile() {
	if a.file != nil || a.fileErr != nil || a.filePath != "" {
		return
	}
	if a.newFile == nil {
		a.fileErr = errNoFile
		a.raw = nil
		return
	}
	f, path, err := a.newFile()
	if err != nil {
		a.fileErr = err
		a.raw = nil
		return
	}
	a.file, a.filePath = f, path
	a.fileBuf = bufio.NewWriterSize(f, fileBufferSize)
	if len(a.raw) > 0 {
		a.writeFile(a.raw)
	}
	a.raw = nil
}

// writeFile sends raw output to the file: through the redactor, then
// within the cap.
func (a *Accumulator) writeFile(p []byte) {
	if a.redact == nil {
		a.writeCapped(p)
		return
	}
	a.writeFileString(a.redact.Write(string(p)))
}

func (a *Accumulator) writeFileString(s string) {
	if s != "" {
		a.writeCapped([]byte(s))
	}
}

// writeCapped writes what still fits under the cap and counts the rest.
func (a *Accumulator) writeCapped(p []byte) {
	if room := a.maxFile - a.fileBytes; int64(len(p)) > room {
		a.cutBytes += int64(len(p)) - max(room, 0)
		p = p[:max(room, 0)]
	}
	if len(p) == 0 {
		return
	}
	a.fileBytes += int64(len(p))
	if _, err := a.fileBuf.Write(p); err != nil && a.fileErr == nil {
		a.fileErr = fmt.Errorf("write %s: %w", a.filePath, err)
	}
}

// writeFileRaw writes to the file, outside the cap (for the cut line).
func (a *Accumulator) writeFileRaw(s string) {
	if _, err := a.fileBuf.WriteString(s); err != nil && a.fileErr == nil {
		a.fileErr = fmt.Errorf("write %s: %w", a.filePath, err)
	}
}

// Snapshot is what the model (or the UI, for partial results) sees of
// the output so far.
type Snapshot struct {
	// Content is the kept tail of the cleaned output.
	Content    string
	Truncation TailTruncation
	// FullOutputPath is the temp file with the complete raw output; set
	// when the output is truncated.
	FullOutputPath string
	// FileErr says why the full output could not be saved, if so.
	FileErr error
	// PartialLine and PartialLineBytes are the number and the size of the
	// line that Content shows only the end of (Truncation.LastLinePartial).
	PartialLine      int64
	PartialLineBytes int64
}

// TailTruncation is the `truncation` object of the bash tool's details, as
// in the reference agent (minus the content, which is the result's text).
type TailTruncation struct {
	Truncated             bool   `json:"truncated"`
	TruncatedBy           string `json:"truncatedBy,omitempty"`
	TotalLines            int64  `json:"totalLines"`
	TotalBytes            int64  `json:"totalBytes"`
	OutputLines           int    `json:"outputLines"`
	OutputBytes           int    `json:"outputBytes"`
	LastLinePartial       bool   `json:"lastLinePartial"`
	FirstLineExceedsLimit bool   `json:"firstLineExceedsLimit"`
	MaxLines              int    `json:"maxLines"`
	MaxBytes              int    `json:"maxBytes"`
}

// Snapshot returns the tail truncated to the limits, as TruncateTail would
// cut the whole cleaned output.
func (a *Accumulator) Snapshot() Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	text := a.tail
	if !a.tailAtStart {
		// The first line of the tail is cut; it cannot fit anyway (the
		// tail is longer than maxBytes), unless it is the last line (or
		// the one before the final newline), shown in part.
		if i := bytes.IndexByte(text, '\n'); i >= 0 && i < len(text)-1 {
			text = text[i+1:]
		}
	}
	t := TruncateTail(string(text), a.maxLines, a.maxBytes)
	partialLine, partialBytes := a.totalLines, a.lineBytes
	if t.Truncated && !t.LastLinePartial && t.Content == "" && a.maxLines >= 2 && len(text) > 0 && text[len(text)-1] == '\n' {
		// The output ends with a newline after a line longer than the
		// limit: show the end of that line rather than nothing.
		if t2 := TruncateTail(string(text[:len(text)-1]), a.maxLines, a.maxBytes-1); t2.LastLinePartial {
			t = t2
			t.Content += "\n"
			t.OutputLines, t.OutputBytes = 2, len(t.Content)
			partialLine, partialBytes = a.totalLines-1, a.prevBytes
		}
	}
	truncated := a.truncatedLocked()
	by := ""
	if truncated {
		by = t.TruncatedBy
		if by == "" {
			by = "lines"
			if a.totalBytes > int64(a.maxBytes) {
				by = "bytes"
			}
		}
	}
	s := Snapshot{
		Content: t.Content,
		Truncation: TailTruncation{
			Truncated:       truncated,
			TruncatedBy:     by,
			TotalLines:      a.totalLines,
			TotalBytes:      a.totalBytes,
			OutputLines:     t.OutputLines,
			OutputBytes:     t.OutputBytes,
			LastLinePartial: t.LastLinePartial,
			MaxLines:        a.maxLines,
			MaxBytes:        a.maxBytes,
		},
	}
	if t.LastLinePartial {
		s.PartialLine, s.PartialLineBytes = partialLine, partialBytes
	}
	if truncated {
		s.FullOutputPath = a.filePath
		s.FileErr = a.fileErr
	}
	return s
}

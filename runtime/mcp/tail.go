package mcp

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// Bounds of the stderr tail kept for messages.
const (
	tailLines = 10
	tailBytes = 2048
	// maxLogLine cuts one logged stderr line.
	maxLogLine = 1024
)

// tailBuffer reads a server's stderr to its end, passing each line on and
// keeping the last few for error messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func newTail(r io.ReadCloser, onLine func(string)) *tailBuffer {
	t := &tailBuffer{done: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer r.Close()
		br := bufio.NewReaderSize(r, 4096)
		// A line is kept up to maxLogLine bytes; the rest of a longer one
		// is read and dropped, so a server cannot make pi hold its stderr.
		var cur []byte
		long := false
		for {
			chunk, err := br.ReadSlice('\n')
			if room := maxLogLine - len(cur); room > 0 {
				cur = append(cur, chunk[:min(len(chunk), room)]...)
			} else if len(chunk) > 0 {
				long = true
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			line := strings.TrimRight(string(cur), "\r\n")
			if long {
				line += "…"
			}
			if line != "" {
				t.add(line)
				if onLine != nil {
					onLine(line)
				}
			}
			cur, long = cur[:0], false
			if err != nil {
				return
			}
		}
	}()
	return t
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// String is the last lines, joined with " | ", at most tailBytes (the end
// kept).
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.Join(t.lines, " | ")
	if len(s) > tailBytes {
		i := len(s) - tailBytes
		for i < len(s) && (s[i]&0xC0) == 0x80 {
			i++
		}
		s = "…" + s[i:]
	}
	return s
}

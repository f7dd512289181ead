package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/pi-go/pi/internal/atomicfile"
)

// MaxHistory is how many prompts the history file keeps (the latest).
const MaxHistory = 1000

// maxHistoryEntry bounds one remembered prompt, in bytes; a longer one
// (a huge paste) is not remembered.
const maxHistoryEntry = 64 << 10

// History is the prompts a person sent, oldest first, kept in a file (one
// JSON string per line, so that multi-line prompts stay one entry) that
// only its owner may read: prompts can hold things the person would not
// show others.
type History struct {
	mu      sync.Mutex
	path    string
	entries []string
}

// LoadHistory reads the history file at path ("" keeps the history in
// memory only). A missing file is an empty history; lines that do not
// parse are skipped.
//
// # Errors
//
// The file exists but cannot be read.
func LoadHistory(path string) (*History, error) {
	h := &History{path: path}
	if path == "" {
		return h, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("history %s: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4*maxHistoryEntry)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	return h, nil
}

// Entries returns a copy of the history, oldest first.
func (h *History) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.entries...)
}

// Add remembers a prompt (not when it repeats the latest one, is blank, or
// is larger than 64 KiB) and appends it to the file. The file is created
// 0600 and rewritten (trimmed to MaxHistory) when it grows past twice that.
//
// # Errors
//
// The file cannot be written; the entry is still remembered in memory.
func (h *History) Add(s string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s == "" || len(s) > maxHistoryEntry || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == s) {
		return nil
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("history %s: %w", h.path, err)
	}
	line, _ := json.Marshal(s)
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("history %s: %w", h.path, err)
	}
	_, werr := f.Write(append(line, '\n'))
	st, serr := f.Stat()
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("history %s: %w", h.path, err)
	}
	if serr == nil && st.Size() > int64(2*MaxHistory*256) {
		return h.rewrite()
	}
	return nil
}

// rewrite writes the remembered entries only (the file had grown).
func (h *History) rewrite() error {
	var b bytes.Buffer
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	if err := atomicfile.WriteFile(h.path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("history %s: %w", h.path, err)
	}
	return nil
}

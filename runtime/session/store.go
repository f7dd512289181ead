package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pi-go/pi/internal/atomicfile"
)

// File and folder modes of what this package creates: sessions hold the
// conversation, so only the owner may read them.
const (
	fileMode = 0o600
	dirMode  = 0o700
)

// ErrLocked is returned (wrapped) when another process has the session
// open for writing.
var ErrLocked = errors.New("session is in use by another pi process")

// ErrNotSession is returned (wrapped) for a file whose first line is not a
// session header.
var ErrNotSession = errors.New("not a session file")

// ErrReadOnly is returned (wrapped) by the Append methods of a session
// opened with Read.
var ErrReadOnly = errors.New("session was opened read-only")

// Session is one conversation tree, in memory and (unless in memory only)
// in its file. Its methods may be called from several goroutines.
type Session struct {
	mu       sync.Mutex
	header   Header
	path     string // "" when in memory only
	persist  bool
	readOnly bool
	closed   bool
	// customBytes counts the custom data appended (MaxCustomTotalBytes).
	customBytes int

	entries []*Entry
	byID    map[string]*Entry
	leaf    string
	// walked is the path from the root to the entry walkedTo, as last
	// walked (the leaf's, mostly): a path never changes, and an append
	// to its end extends it, so Branch is a copy, not a walk of the map.
	walked   []*Entry
	walkedTo string

	// file is open for appending and holds the lock; nil until the file
	// is created (or for in-memory and read-only sessions).
	file *os.File
	// flushed says the file holds the header and every entry.
	flushed      bool
	hasAssistant bool
	// warnings are problems found while reading (a torn last line, a
	// malformed line).
	warnings []string
}

// CreateOptions say where a new session goes.
type CreateOptions struct {
	// Cwd is the working directory recorded in the header. Required.
	Cwd string
	// Dir is the folder of the new file (see DirFor); it is created when
	// the file is. Ignored when Path is set.
	Dir string
	// Path, when set, is the file to create (--session with a file that
	// does not exist yet); else Dir/TIMESTAMP_ID.jsonl.
	Path string
	// ParentSession is recorded in the header (a fork's source).
	ParentSession string
	// ID is the session's id, chosen by the caller (the reference's
	// newSession({id})); "" generates one (NewSessionID). It names the
	// file, so CheckSessionID must accept it.
	ID string
	// InMemory keeps the session in memory only (--no-session).
	InMemory bool
	// Now is the time of the header; zero means time.Now().
	Now time.Time
}

// Create starts a new session. Nothing is written until the first
// assistant message is appended (then the header and every entry so far
// are written in one write).
//
// # Errors
//
// A missing Cwd; an ID that CheckSessionID refuses; neither Dir nor Path
// for a session kept on disk.
func Create(o CreateOptions) (*Session, error) {
	if o.Cwd == "" {
		return nil, errors.New("create session: no working directory")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	id := o.ID
	if id == "" {
		id = uuidV7(now)
	} else if err := CheckSessionID(id); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	s := &Session{
		header: Header{Type: TypeSession, Version: Version, ID: id, Timestamp: isoTime(now), Cwd: o.Cwd, ParentSession: o.ParentSession},
		byID:   map[string]*Entry{}, persist: !o.InMemory,
	}
	if o.InMemory {
		return s, nil
	}
	switch {
	case o.Path != "":
		abs, err := filepath.Abs(o.Path)
		if err != nil {
			return nil, fmt.Errorf("create session %s: %w", o.Path, err)
		}
		s.path = abs
	case o.Dir != "":
		s.path = filepath.Join(o.Dir, fileTimestamp(s.header.Timestamp)+"_"+s.header.ID+".jsonl")
	default:
		return nil, errors.New("create session: no folder for the session file")
	}
	return s, nil
}

// OpenOptions say how to open an existing session.
type OpenOptions struct {
	// Cwd is recorded in the new header when the file is empty; "" means
	// the process's working directory.
	Cwd string
	// Warn receives each problem found while reading (a torn last line,
	// a malformed line, a migration); nil drops them (they are also in
	// Warnings).
	Warn func(string)
}

// Open opens the session file at path for appending: it takes the file's
// lock, reads every entry (see Read for what is tolerated), migrates a
// version 1 or 2 file (rewriting it once, atomically) and sets the leaf to
// the last entry. An empty file (or one of white space only) is started
// afresh: a new header is written to it at once.
//
// # Errors
//
// ErrLocked when another process has the file open for writing (the
// message suggests --fork); ErrNotSession when the first line is not a
// session header; read and permission errors.
func Open(path string, o OpenOptions) (*Session, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", path, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, lockedError(abs)
		}
		return nil, fmt.Errorf("open session %s: lock: %w", abs, err)
	}
	s, err := open(abs, f, o)
	if err != nil {
		unlockFile(f)
		f.Close()
		return nil, err
	}
	return s, nil
}

func lockedError(path string) error {
	return fmt.Errorf("%w: %s is open in another pi; wait for it to exit, or continue it in a new session with --fork %s", ErrLocked, path, path)
}

func open(path string, f *os.File, o OpenOptions) (*Session, error) {
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", path, err)
	}
	s := &Session{path: path, persist: true, byID: map[string]*Entry{}}
	if len(bytes.TrimSpace(data)) == 0 {
		// An empty file (created by hand, or by a crash before the first
		// write): start afresh, and write the new header at once, as the
		// reference does (there is nothing but white space to lose), so
		// that the file is a session from now on, with the same id.
		fresh, err := Create(CreateOptions{Cwd: cwdOr(o.Cwd), Path: path})
		if err != nil {
			return nil, fmt.Errorf("open session %s: %w", path, err)
		}
		if err := f.Truncate(0); err != nil {
			return nil, fmt.Errorf("open session %s: %w", path, err)
		}
		fresh.file = f
		if err := fresh.flush(nil); err != nil {
			return nil, fmt.Errorf("open session: %w", err)
		}
		return fresh, nil
	}
	lines, torn := splitLines(data)
	if _, err := readHeader(path, lines); err != nil {
		// Refused before any migration: a file that is not a session is
		// never rewritten.
		return nil, err
	}
	if migrated, ok, err := migrate(lines); err == nil && ok {
		content := bytes.Join(migrated, []byte("\n"))
		content = append(content, '\n')
		if err := atomicfile.WriteFile(path, content, fileMode); err != nil {
			return nil, fmt.Errorf("open session %s: migrate to version %d: %w", path, Version, err)
		}
		// The rename gave the path a new file: lock that one instead.
		nf, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("open session %s: %w", path, err)
		}
		if err := lockFile(nf); err != nil {
			nf.Close()
			return nil, lockedError(path)
		}
		unlockFile(f)
		f.Close()
		f = nil
		defer func() {
			if s.file == nil {
				nf.Close()
			}
		}()
		lines, torn = migrated, nil
		s.warn(o.Warn, fmt.Sprintf("session %s was format version 1 or 2; it was migrated to version %d", path, Version))
		s.file = nf
	} else {
		s.file = f
	}
	if err := s.load(lines, torn, o.Warn); err != nil {
		s.file = nil
		return nil, err
	}
	if torn != nil || !bytes.HasSuffix(data, []byte("\n")) {
		// End the torn (or unterminated) last line, so the next entry
		// starts on a line of its own; the torn bytes stay in the file
		// and are skipped by every reader.
		if _, err := s.file.Write([]byte("\n")); err != nil {
			s.file = nil
			return nil, fmt.Errorf("open session %s: %w", path, err)
		}
	}
	s.flushed = true
	return s, nil
}

// readAll reads f from its offset to the end into one buffer sized by
// Stat (no growing copies of a large file).
func readAll(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+512))
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

func cwdOr(dir string) string {
	if dir != "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}

// Read reads the session file at path without locking it or ever writing
// it; its Append methods fail with ErrReadOnly. A torn last line is dropped
// and a malformed line skipped, each with a warning; unknown entry types
// are kept.
//
// # Errors
//
// ErrNotSession when the first line is not a session header; read errors.
func Read(path string, o OpenOptions) (*Session, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	s := &Session{path: abs, persist: true, readOnly: true, byID: map[string]*Entry{}, flushed: true}
	lines, torn := splitLines(data)
	if _, err := readHeader(abs, lines); err != nil {
		return nil, err
	}
	if migrated, ok, err := migrate(lines); err == nil && ok {
		lines, torn = migrated, nil
	}
	if err := s.load(lines, torn, o.Warn); err != nil {
		return nil, err
	}
	return s, nil
}

// splitLines splits data into its non-empty lines. A last line without a
// newline that is not valid JSON is torn (a write cut short) and returned
// apart.
func splitLines(data []byte) (lines [][]byte, torn []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
			if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
				return lines, line
			}
		} else {
			line, data = data[:i], data[i+1:]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// load fills s from the lines of a file (header first).
func (s *Session) load(lines [][]byte, torn []byte, warn func(string)) error {
	h, err := readHeader(s.path, lines)
	if err != nil {
		return err
	}
	s.header = h
	s.entries = make([]*Entry, 0, len(lines)-1)
	for i, l := range lines[1:] {
		e, err := loadEntry(l)
		if err != nil {
			s.warn(warn, fmt.Sprintf("session %s: line %d skipped: %v", s.path, i+2, err))
			continue
		}
		if e.Type == TypeSession {
			continue
		}
		s.entries = append(s.entries, e)
		s.byID[e.ID] = e
		s.leaf = e.ID
	}
	// A session read from its file is written already: whether it holds
	// an assistant message matters only before the first write.
	s.hasAssistant = true
	if torn != nil {
		s.warn(warn, fmt.Sprintf("session %s: the last line was cut short (%d bytes, a write interrupted by a crash?) and was dropped; every earlier line was kept", s.path, len(torn)))
	}
	return nil
}

// readHeader decodes the first of a file's lines as its session header:
// ErrNotSession, naming the file, when there is none.
func readHeader(path string, lines [][]byte) (Header, error) {
	if len(lines) == 0 {
		return Header{}, fmt.Errorf("%w: %s has no header line", ErrNotSession, path)
	}
	var h Header
	if err := json.Unmarshal(lines[0], &h); err != nil || h.Type != TypeSession || h.ID == "" {
		return Header{}, fmt.Errorf(`%w: %s: line 1 is not a session header (a JSON object with "type":"session" and an "id")`, ErrNotSession, path)
	}
	return h, nil
}

func (s *Session) warn(warn func(string), msg string) {
	s.warnings = append(s.warnings, msg)
	if warn != nil {
		warn(msg)
	}
}

// Fork copies every entry of the session file src into a new session (new
// id, header parentSession = src's absolute path, cwd = o.Cwd) in o.Dir or
// at o.Path, writes it at once, and opens it for appending. src is read
// without its lock, so a session in use can be forked.
//
// # Errors
//
// src cannot be read or is not a session; the new file cannot be written.
func Fork(src string, o CreateOptions) (*Session, error) {
	from, err := Read(src, OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	o.ParentSession = from.path
	o.InMemory = false
	s, err := Create(o)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	for _, e := range from.entries {
		s.entries = append(s.entries, e)
		s.byID[e.ID] = e
		s.leaf = e.ID
	}
	s.hasAssistant = from.hasAssistant
	if err := s.flush(nil); err != nil {
		return nil, fmt.Errorf("fork: %w", err)
	}
	return s, nil
}

// flush creates the file and writes the header, every entry and extra in
// one write, then holds the file's lock.
func (s *Session) flush(extra []byte) error {
	if err := os.MkdirAll(filepath.Dir(s.path), dirMode); err != nil {
		return fmt.Errorf("session %s: %w", s.path, err)
	}
	var buf bytes.Buffer
	if err := s.encodeLocked(&buf); err != nil {
		return fmt.Errorf("session %s: %w", s.path, err)
	}
	buf.Write(extra)
	var err error
	f := s.file
	if f == nil {
		f, err = os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, fileMode)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s was created by another process meanwhile; continue it with --fork %s", ErrLocked, s.path, s.path)
			}
			return fmt.Errorf("session: %w", err)
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return lockedError(s.path)
		}
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		if s.file == nil {
			unlockFile(f)
			f.Close()
		}
		return fmt.Errorf("session %s: %w", s.path, err)
	}
	s.file = f
	s.flushed = true
	return nil
}

// append adds e as a child of the leaf and makes it the leaf: ID, ParentID
// and Timestamp are set here. It returns the new id.
func (s *Session) append(e *Entry) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly {
		return "", fmt.Errorf("session %s: %w", s.path, ErrReadOnly)
	}
	if s.closed {
		return "", fmt.Errorf("session %s: closed", s.path)
	}
	e.ID = newEntryID(func(id string) bool { _, ok := s.byID[id]; return ok })
	e.ParentID = s.leaf
	e.Timestamp = isoTime(time.Now())
	var line []byte
	if s.persist {
		var err error
		if line, err = e.encode(); err != nil {
			return "", fmt.Errorf("session append: %w", err)
		}
		e.line = line
	}
	isAssistant := false
	if e.Type == TypeMessage && e.msg != nil && e.msg.Role == RoleAssistant {
		isAssistant = true
	}
	if s.persist {
		switch {
		case s.flushed:
			if _, err := s.file.Write(append(line, '\n')); err != nil {
				return "", fmt.Errorf("session %s: append: %w", s.path, err)
			}
		case s.hasAssistant || isAssistant:
			if err := s.flush(append(line, '\n')); err != nil {
				return "", err
			}
		}
	}
	s.entries = append(s.entries, e)
	s.byID[e.ID] = e
	s.leaf = e.ID
	if e.ParentID != "" && e.ParentID == s.walkedTo {
		s.walked, s.walkedTo = append(s.walked, e), e.ID
	}
	s.hasAssistant = s.hasAssistant || isAssistant
	return e.ID, nil
}

// AppendMessage appends a message entry (user, assistant, toolResult or
// bashExecution) and returns its id. The first assistant message creates
// the file.
//
// # Errors
//
// A read-only session; a message pi does not write; a failed write (the
// entry is then not added).
func (s *Session) AppendMessage(m Message) (string, error) {
	switch m.Role {
	case RoleUser, RoleAssistant, RoleToolResult, RoleBashExecution:
	default:
		return "", fmt.Errorf("session append: pi does not write %q message entries", m.Role)
	}
	if m.Timestamp == 0 {
		m.Timestamp = time.Now().UnixMilli()
	}
	e := newMessageEntry(&m)
	return s.append(e)
}

// AppendModelChange records that the conversation goes on with another
// model.
//
// # Errors
//
// As AppendMessage.
func (s *Session) AppendModelChange(provider, modelID string) (string, error) {
	return s.append(&Entry{Type: TypeModelChange, entryFields: &entryFields{Provider: provider, ModelID: modelID}})
}

// AppendThinkingLevelChange records that the conversation goes on at
// another thinking level (the reference's thinking_level_change).
//
// # Errors
//
// As AppendMessage.
func (s *Session) AppendThinkingLevelChange(level string) (string, error) {
	return s.append(&Entry{Type: TypeThinkingLevelChange, entryFields: &entryFields{ThinkingLevel: level}})
}

// AppendCompaction appends a compaction entry: the context is summary, then
// the messages from firstKeptEntryID on.
//
// # Errors
//
// As AppendMessage; an unknown firstKeptEntryID.
func (s *Session) AppendCompaction(c CompactionResult) (string, error) {
	s.mu.Lock()
	_, known := s.byID[c.FirstKeptEntryID]
	s.mu.Unlock()
	if !known {
		return "", fmt.Errorf("session append compaction: no entry %q", c.FirstKeptEntryID)
	}
	var details json.RawMessage
	if c.Details != nil {
		b, err := marshal(c.Details)
		if err != nil {
			return "", fmt.Errorf("session append compaction: details: %w", err)
		}
		details = b
	}
	return s.append(&Entry{Type: TypeCompaction, entryFields: &entryFields{Summary: c.Summary, FirstKeptEntryID: c.FirstKeptEntryID, TokensBefore: c.TokensBefore, Details: details}})
}

// AppendSessionInfo sets the session's display name.
//
// # Errors
//
// As AppendMessage.
func (s *Session) AppendSessionInfo(name string) (string, error) {
	return s.append(&Entry{Type: TypeSessionInfo, entryFields: &entryFields{Name: name}})
}

// Limits of custom entries, which extensions write.
const (
	// MaxCustomTypeLen bounds a custom entry's customType, in bytes.
	MaxCustomTypeLen = 128
	// MaxCustomDataBytes bounds a custom entry's data, as JSON.
	MaxCustomDataBytes = 256 << 10
	// MaxCustomTotalBytes bounds the custom data one Session appends in
	// all, so an extension in a loop cannot fill the disk.
	MaxCustomTotalBytes = 64 << 20
)

// customTotalLimit is MaxCustomTotalBytes (lowered by tests).
var customTotalLimit = MaxCustomTotalBytes

// ErrBadCustom is returned (wrapped) by AppendCustom for a customType or
// data outside the limits.
var ErrBadCustom = errors.New("invalid custom entry")

// AppendCustom appends a custom entry: state of an extension (customType
// names it) that follows the branch and is never sent to the model. data
// must be JSON (nil means null), at most MaxCustomDataBytes; customType 1
// to MaxCustomTypeLen printable ASCII bytes. The entry becomes the leaf.
//
// # Errors
//
// ErrBadCustom for a bad customType or data; otherwise as AppendMessage.
func (s *Session) AppendCustom(customType string, data json.RawMessage) (string, error) {
	if err := checkCustomType(customType); err != nil {
		return "", err
	}
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if len(data) > MaxCustomDataBytes {
		return "", fmt.Errorf("%w: data is %d bytes, more than the %d allowed", ErrBadCustom, len(data), MaxCustomDataBytes)
	}
	if !json.Valid(data) {
		return "", fmt.Errorf("%w: data is not valid JSON", ErrBadCustom)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return "", fmt.Errorf("%w: data: %v", ErrBadCustom, err)
	}
	s.mu.Lock()
	if s.customBytes+compact.Len() > customTotalLimit {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: this session already holds %d bytes of custom data, the most one run may append is %d", ErrBadCustom, s.customBytes, customTotalLimit)
	}
	s.customBytes += compact.Len()
	s.mu.Unlock()
	id, err := s.append(&Entry{Type: TypeCustom, entryFields: &entryFields{CustomType: customType, Data: compact.Bytes()}})
	if err != nil {
		s.mu.Lock()
		s.customBytes -= compact.Len()
		s.mu.Unlock()
	}
	return id, err
}

func checkCustomType(t string) error {
	if t == "" || len(t) > MaxCustomTypeLen {
		return fmt.Errorf("%w: customType must be 1 to %d bytes, got %d", ErrBadCustom, MaxCustomTypeLen, len(t))
	}
	for i := 0; i < len(t); i++ {
		if t[i] < 0x21 || t[i] > 0x7e {
			return fmt.Errorf("%w: customType %q must be printable ASCII without spaces", ErrBadCustom, t)
		}
	}
	return nil
}

// CustomEntry is a custom entry as CustomEntries returns it.
type CustomEntry struct {
	ID         string          `json:"id"`
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data"`
	Timestamp  string          `json:"timestamp"`
}

// CustomEntries lists the custom entries on the current branch (root to
// leaf), only those of customType when it is not empty.
func (s *Session) CustomEntries(customType string) []CustomEntry {
	out := []CustomEntry{}
	for _, e := range s.Branch() {
		if e.Type != TypeCustom || (customType != "" && e.CustomType != customType) {
			continue
		}
		data := e.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		out = append(out, CustomEntry{ID: e.ID, CustomType: e.CustomType, Data: data, Timestamp: e.Timestamp})
	}
	return out
}

// Branch returns the entries from the root to the leaf.
func (s *Session) Branch() []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.branchLocked(s.leaf)
}

// branchLocked is the path from the root to the entry from (a new
// slice): s.walked when it leads there, else walked and kept.
func (s *Session) branchLocked(from string) []*Entry {
	if from == "" {
		return nil
	}
	if from != s.walkedTo {
		path := s.walkLocked(from)
		if len(path) == 0 || path[len(path)-1].ID != from {
			return path // from is no entry (or a cycle ends the walk)
		}
		s.walked, s.walkedTo = path, from
	}
	return slices.Clone(s.walked)
}

// walkLocked walks the parents from the entry from to the root. A path
// longer than the session's entries goes round a cycle of parents (a
// damaged file): then the walk stops before the first entry it meets
// again (branchWithCycle), which the common walk need not remember.
func (s *Session) walkLocked(from string) []*Entry {
	var path []*Entry
	for id := from; id != ""; {
		e, ok := s.byID[id]
		if !ok {
			break
		}
		if len(path) == len(s.byID) {
			return s.branchWithCycle(from)
		}
		path = append(path, e)
		id = e.ParentID
	}
	slices.Reverse(path)
	return path
}

// branchWithCycle is branchLocked for parents that make a cycle.
func (s *Session) branchWithCycle(from string) []*Entry {
	var path []*Entry
	seen := map[string]bool{}
	for id := from; id != "" && !seen[id]; {
		seen[id] = true
		e, ok := s.byID[id]
		if !ok {
			break
		}
		path = append(path, e)
		id = e.ParentID
	}
	slices.Reverse(path)
	return path
}

// ResetLeaf makes the next entry a new root (parentId null): a new
// conversation in the same file, as the reference does when a run starts
// afresh.
func (s *Session) ResetLeaf() {
	s.mu.Lock()
	s.leaf = ""
	s.mu.Unlock()
}

// Leaf returns the id of the current leaf ("" before the first entry).
func (s *Session) Leaf() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// Entries returns every entry in file order.
func (s *Session) Entries() []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Entry(nil), s.entries...)
}

// Entry returns the entry with id, or nil.
func (s *Session) Entry(id string) *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// Header returns the header.
func (s *Session) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// ID returns the session's id (the header's).
func (s *Session) ID() string { return s.Header().ID }

// Path returns the session file's absolute path; "" for an in-memory
// session. A new session's file does not exist until its first assistant
// message.
func (s *Session) Path() string { return s.path }

// InMemory reports whether the session is kept in memory only.
func (s *Session) InMemory() bool { return !s.persist }

// Written reports whether the file exists and holds every entry.
func (s *Session) Written() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persist && s.flushed
}

// Warnings returns the problems found while reading.
func (s *Session) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// Name returns the latest session_info name, "" when none.
func (s *Session) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.entries) - 1; i >= 0; i-- {
		if s.entries[i].Type == TypeSessionInfo {
			return s.entries[i].Name
		}
	}
	return ""
}

// Close releases the file's lock and closes it. Entries appended after
// Close fail. It is safe to call more than once.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.file == nil {
		return nil
	}
	unlockFile(s.file)
	err := s.file.Close()
	s.file = nil
	return err
}

// encodeLocked writes the header and every entry, one line each, to buf.
func (s *Session) encodeLocked(buf *bytes.Buffer) error {
	hl, err := marshal(s.header)
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	buf.Write(hl)
	buf.WriteByte('\n')
	for _, e := range s.entries {
		line := e.line
		if line == nil { // appended to a session in memory (ForkAt)
			if line, err = e.encode(); err != nil {
				return err
			}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return nil
}

// JSONL returns the session as its file holds it (the reference's format:
// the header, then every entry of every branch, one line each), also for
// a session in memory or not yet written.
//
// # Errors
//
// An entry that cannot be encoded.
func (s *Session) JSONL() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	if err := s.encodeLocked(&buf); err != nil {
		return nil, fmt.Errorf("session %s: %w", s.path, err)
	}
	return buf.Bytes(), nil
}

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// EnvDir names the environment variable that moves the sessions folder
// (the reference's own), overridden by --session-dir.
const EnvDir = "PI_CODING_AGENT_SESSION_DIR"

// DefaultDir returns the folder holding every project's session folders:
// piHome/sessions ($PI_HOME defaults to ~/.pi/agent, the reference's agent
// folder, so both programs see the same sessions).
func DefaultDir(piHome string) string { return filepath.Join(piHome, "sessions") }

// DirFor returns the session folder of the working directory cwd under
// root: root/--CWD--, where CWD is cwd without its leading separator and
// with every '/', '\' and ':' turned into '-' (the reference's rule).
func DirFor(root, cwd string) string {
	c := cwd
	if len(cwd) > 0 && (cwd[0] == '/' || cwd[0] == '\\') {
		c = cwd[1:]
	}
	c = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(c)
	return filepath.Join(root, "--"+c+"--")
}

// Info describes a session file for listings and the picker.
type Info struct {
	Path          string    `json:"path"`
	ID            string    `json:"id"`
	Cwd           string    `json:"cwd"`
	Name          string    `json:"name,omitempty"`
	ParentSession string    `json:"parentSession,omitempty"`
	Created       time.Time `json:"created"`
	// Modified is the time of the last user or assistant message, else the
	// header's, else the file's.
	Modified     time.Time `json:"modified"`
	MessageCount int       `json:"messageCount"`
	// FirstMessage is the text of the first user message, "(no messages)"
	// when there is none.
	FirstMessage string `json:"firstMessage"`
}

// Stat reads a session file's Info.
//
// # Errors
//
// Read errors; ErrNotSession.
func Stat(path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	abs, _ := filepath.Abs(path)
	info := Info{Path: abs, FirstMessage: "(no messages)"}
	r := bufio.NewReaderSize(f, 256<<10)
	first := true
	var last int64
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if first {
				first = false
				var h Header
				if json.Unmarshal(line, &h) != nil || h.Type != TypeSession || h.ID == "" {
					return Info{}, fmt.Errorf("%w: %s", ErrNotSession, path)
				}
				info.ID, info.Cwd, info.ParentSession = h.ID, h.Cwd, h.ParentSession
				info.Created, _ = time.Parse(time.RFC3339Nano, h.Timestamp)
			} else if h, herr := scanHead(bytes.TrimSpace(line), false); herr == nil {
				switch h.typ {
				case TypeSessionInfo:
					if e, derr := decodeEntry(line); derr == nil {
						info.Name = strings.TrimSpace(e.Name)
					}
				case TypeMessage:
					// Counted and dated from the entry; only messages up
					// to the first user prompt are decoded.
					info.MessageCount++
					if t, terr := time.Parse(time.RFC3339Nano, h.timestamp); terr == nil {
						last = max(last, t.UnixMilli())
					}
					if info.FirstMessage == "(no messages)" {
						if e, derr := decodeEntry(line); derr == nil && e.msg.Role == RoleUser {
							if text := JoinTexts(e.msg.Content, " "); text != "" {
								info.FirstMessage = text
							}
						}
					}
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return Info{}, err
		}
	}
	if first {
		return Info{}, fmt.Errorf("%w: %s is empty", ErrNotSession, path)
	}
	switch {
	case last > 0:
		info.Modified = time.UnixMilli(last).UTC()
	case !info.Created.IsZero():
		info.Modified = info.Created
	default:
		info.Modified = st.ModTime()
	}
	return info, nil
}

// List returns the sessions in dir, the most recently active first. Files
// that are not sessions are left out; a missing dir is an empty list.
//
// # Errors
//
// dir exists but cannot be read.
func List(dir string) ([]Info, error) {
	names, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return []Info{}, nil
		}
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := []Info{}
	for _, n := range names {
		if n.IsDir() || !strings.HasSuffix(n.Name(), ".jsonl") {
			continue
		}
		if info, err := Stat(filepath.Join(dir, n.Name())); err == nil {
			out = append(out, info)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

// ListAll returns the sessions of every project folder under root.
//
// # Errors
//
// As List.
func ListAll(root string) ([]Info, error) {
	dirs, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return []Info{}, nil
		}
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := []Info{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		infos, err := List(filepath.Join(root, d.Name()))
		if err != nil {
			continue
		}
		out = append(out, infos...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}

// MostRecent returns the session file in dir modified last (by the file's
// modification time, as the reference picks it for --continue); "" when
// there is none.
func MostRecent(dir string) string {
	names, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestTime := "", time.Time{}
	for _, n := range names {
		if n.IsDir() || !strings.HasSuffix(n.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, n.Name())
		if !isSessionFile(p) {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if best == "" || st.ModTime().After(bestTime) {
			best, bestTime = p, st.ModTime()
		}
	}
	return best
}

// isSessionFile reports whether the first line of path is a session
// header.
func isSessionFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	var h Header
	return json.Unmarshal(line, &h) == nil && h.Type == TypeSession && h.ID != ""
}

// ErrNoMatch is returned (wrapped) by Resolve when no session matches.
var ErrNoMatch = errors.New("no session found")

// ErrAmbiguous is returned (wrapped) by Resolve when an id prefix matches
// more than one session.
var ErrAmbiguous = errors.New("session id prefix is ambiguous")

// Resolve finds the session file arg names: arg itself when it looks like
// a path (it holds a separator or ends in .jsonl), else the session whose
// id starts with arg, looked for in dir (this project's folder) first, then
// in every folder under root.
//
// # Errors
//
// ErrNoMatch, or ErrAmbiguous naming the candidates.
func Resolve(arg, dir, root string) (string, error) {
	if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl") {
		return arg, nil
	}
	if arg == "" {
		return "", fmt.Errorf("%w: empty session id", ErrNoMatch)
	}
	pick := func(infos []Info) (string, error) {
		var hits []Info
		for _, in := range infos {
			if strings.HasPrefix(in.ID, arg) {
				hits = append(hits, in)
			}
		}
		switch len(hits) {
		case 0:
			return "", nil
		case 1:
			return hits[0].Path, nil
		}
		var names []string
		for _, h := range hits {
			names = append(names, h.ID)
		}
		return "", fmt.Errorf("%w: %q matches %s; give more of the id", ErrAmbiguous, arg, strings.Join(names, ", "))
	}
	if dir != "" {
		local, _ := List(dir)
		if p, err := pick(local); p != "" || err != nil {
			return p, err
		}
	}
	if root != "" {
		all, _ := ListAll(root)
		if p, err := pick(all); p != "" || err != nil {
			return p, err
		}
	}
	return "", fmt.Errorf("%w matching %q: pass a session file path or an id prefix from 'pi sessions list'", ErrNoMatch, arg)
}

// ShortIDLen is the fewest characters of a session id that lists show.
const ShortIDLen = 8

// ShortID is the shortest prefix of id, at least ShortIDLen characters,
// that none of others (the other sessions shown beside it) starts with:
// how lists and status lines name a session, so that two sessions never
// look alike and the prefix resumes the one shown (--session PREFIX).
func ShortID(id string, others []string) string { return shortPrefix(id, others, ShortIDLen) }

// ShortIDs returns, for each of ids, its shortest prefix of at least
// minLen bytes that no other of ids starts with (the whole id when it is
// shorter, or when another id starts with all of it): the short ids a
// listing shows, each one enough for Resolve among them.
func ShortIDs(ids []string, minLen int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = shortPrefix(id, ids, minLen)
	}
	return out
}

// shortPrefix is the shortest prefix of id, at least minLen bytes, that no
// other of others starts with.
func shortPrefix(id string, others []string, minLen int) string {
	n := min(minLen, len(id))
	for _, o := range others {
		if o == id {
			continue
		}
		common := 0
		for common < len(id) && common < len(o) && id[common] == o[common] {
			common++
		}
		n = max(n, min(common+1, len(id)))
	}
	return id[:n]
}

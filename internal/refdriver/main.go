// Command refdriver serves pi's session store (runtime/session) to the
// reference agent's test suite: scripts/reftests runs the reference's own
// vitest files against pi, with the reference's SessionManager, context
// building and compaction helpers replaced by shims that send each call
// here. It is a test adapter, not part of pi's CLI.
//
// Usage: refdriver REQUEST_FIFO RESPONSE_FIFO
//
// It reads one JSON request per line from the first named pipe and writes
// one JSON response per line to the second: {"op": NAME, ...} gets
// {"ok": true, "result": ...} or {"ok": false, "error": "..."}. Pipes
// rather than stdin and stdout, because the shims call synchronously (the
// reference's API is synchronous) and Node reads a named pipe with a
// blocking read. Sessions opened or created are kept under a numeric
// handle until closed or until the driver exits (at the end of stdin's
// counterpart: the request pipe's end).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/session"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: refdriver REQUEST_FIFO RESPONSE_FIFO")
		os.Exit(2)
	}
	in, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "refdriver: %v\n", err)
		os.Exit(1)
	}
	out, err := os.OpenFile(os.Args[2], os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "refdriver: %v\n", err)
		os.Exit(1)
	}
	tmp, err := os.MkdirTemp("", "refdriver-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "refdriver: %v\n", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	d := &driver{sessions: map[int]*session.Session{}, tmp: tmp}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		res, err := d.serve(sc.Bytes())
		var resp map[string]any
		if err != nil {
			resp = map[string]any{"ok": false, "error": err.Error()}
		} else {
			resp = map[string]any{"ok": true, "result": res}
		}
		b, err := json.Marshal(resp)
		if err != nil {
			b, _ = json.Marshal(map[string]any{"ok": false, "error": "refdriver: encode the result: " + err.Error()})
		}
		w.Write(b)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			fmt.Fprintf(os.Stderr, "refdriver: %v\n", err)
			os.Exit(1)
		}
	}
	for _, s := range d.sessions {
		s.Close()
	}
}

type driver struct {
	sessions map[int]*session.Session
	next     int
	tmp      string
	files    int
}

// request holds the fields of every op; each op reads the ones it needs.
type request struct {
	Op string `json:"op"`
	H  int    `json:"h"`

	Cwd, Dir, Path, Content, ID, Name string
	ParentSession                     string            `json:"parentSession"`
	InMemory                          bool              `json:"inMemory"`
	Entries                           []json.RawMessage `json:"entries"`
	LeafID                            *string           `json:"leafId"`
	Label                             *string           `json:"label"`
	HasLeaf                           bool              `json:"hasLeaf"`
	Message                           json.RawMessage   `json:"message"`
	Messages                          []session.Message
	Provider                          string `json:"provider"`
	ModelID                           string `json:"modelId"`
	ThinkingLevel                     string `json:"thinkingLevel"`
	Summary                           string `json:"summary"`
	FirstKeptEntryID                  string `json:"firstKeptEntryId"`
	TokensBefore                      int    `json:"tokensBefore"`
	Details                           *session.CompactionDetails
	CustomType                        string          `json:"customType"`
	Data                              json.RawMessage `json:"data"`
	Start, End, KeepRecent            int
	Usage                             session.Usage
	Tokens, ContextWindow             int
	Settings                          struct {
		Enabled          bool `json:"enabled"`
		ReserveTokens    int  `json:"reserveTokens"`
		KeepRecentTokens int  `json:"keepRecentTokens"`
	}
}

func (d *driver) serve(line []byte) (any, error) {
	var r request
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("refdriver: bad request: %w", err)
	}
	switch r.Op {
	// Stateless: a list of entries or a file in, an answer out.
	case "context":
		s, err := d.readEntries(r.Entries)
		if err != nil {
			return nil, err
		}
		// No leafId: the leaf of the file read, its last entry; null:
		// before the first entry ("").
		leaf := s.Leaf()
		if r.HasLeaf {
			leaf = ""
			if r.LeafID != nil {
				leaf = *r.LeafID
			}
		}
		return contextOf(s, leaf), nil
	case "read":
		s, err := session.Read(r.Path, session.OpenOptions{})
		if err != nil {
			return nil, err
		}
		return fileEntries(s)
	case "parse":
		p, err := d.tempFile([]byte(r.Content))
		if err != nil {
			return nil, err
		}
		s, err := session.Read(p, session.OpenOptions{})
		if err != nil {
			return nil, err
		}
		return fileEntries(s)
	case "migrate":
		// Open migrates a version 1 or 2 file and rewrites it: the
		// migrated lines are read back from the file.
		var buf []byte
		for _, e := range r.Entries {
			buf = append(append(buf, e...), '\n')
		}
		p, err := d.tempFile(buf)
		if err != nil {
			return nil, err
		}
		s, err := session.Open(p, session.OpenOptions{})
		if err != nil {
			return nil, err
		}
		s.Close()
		return fileLines(p)
	case "most_recent":
		return session.MostRecent(r.Dir), nil
	case "find_cut_point":
		s, err := d.readEntries(r.Entries)
		if err != nil {
			return nil, err
		}
		es := s.Entries()
		if len(es) != len(r.Entries) {
			return nil, fmt.Errorf("pi kept %d of the %d entries", len(es), len(r.Entries))
		}
		cp := compaction.FindCutPoint(es, r.Start, r.End, r.KeepRecent)
		return map[string]any{"firstKeptEntryIndex": cp.FirstKept, "turnStartIndex": cp.TurnStart, "isSplitTurn": cp.SplitTurn}, nil
	case "serialize":
		return compaction.SerializeConversation(r.Messages), nil
	case "context_tokens":
		return r.Usage.ContextTokens(), nil
	case "default_settings":
		c := compaction.DefaultSettings()
		return map[string]any{"enabled": c.Enabled, "reserveTokens": c.ReserveTokens, "keepRecentTokens": c.KeepRecentTokens}, nil
	case "should_compact":
		c := compaction.Settings{Enabled: r.Settings.Enabled, ContextWindow: r.ContextWindow, ReserveTokens: r.Settings.ReserveTokens, KeepRecentTokens: r.Settings.KeepRecentTokens}
		return c.ShouldCompact(r.Tokens), nil

	// Sessions kept under a handle.
	case "create":
		s, err := session.Create(session.CreateOptions{Cwd: r.Cwd, Dir: r.Dir, Path: r.Path, InMemory: r.InMemory, ParentSession: r.ParentSession, ID: r.ID})
		if err != nil {
			return nil, err
		}
		return d.keep(s), nil
	case "open":
		s, err := session.Open(r.Path, session.OpenOptions{Cwd: r.Cwd})
		if err != nil {
			return nil, err
		}
		return d.keep(s), nil
	case "close":
		s, err := d.session(r.H)
		if err != nil {
			return nil, err
		}
		delete(d.sessions, r.H)
		return nil, s.Close()
	}
	s, err := d.session(r.H)
	if err != nil {
		return nil, err
	}
	switch r.Op {
	case "append_message":
		var m session.Message
		if err := json.Unmarshal(r.Message, &m); err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		return s.AppendMessage(m)
	case "append_model_change":
		return s.AppendModelChange(r.Provider, r.ModelID)
	case "append_thinking_level_change":
		return s.AppendThinkingLevelChange(r.ThinkingLevel)
	case "append_compaction":
		return s.AppendCompaction(session.CompactionResult{Summary: r.Summary, FirstKeptEntryID: r.FirstKeptEntryID, TokensBefore: r.TokensBefore, Details: r.Details})
	case "append_custom":
		return s.AppendCustom(r.CustomType, r.Data)
	case "append_session_info":
		return s.AppendSessionInfo(r.Name)
	case "set_leaf":
		leaf := ""
		if r.LeafID != nil {
			leaf = *r.LeafID
		}
		return nil, s.SetLeaf(leaf)
	case "append_label":
		label := ""
		if r.Label != nil {
			label = *r.Label
		}
		return s.AppendLabel(r.ID, label)
	case "label":
		l, ok := s.Labels()[r.ID]
		if !ok {
			return nil, nil
		}
		return l, nil
	case "tree":
		return treeJSON(s.Tree())
	case "children":
		var out []*session.Entry
		for _, e := range s.Entries() {
			if e.ParentID == r.ID && e.ID != r.ID {
				out = append(out, e)
			}
		}
		return entriesJSON(out)
	case "branch_with_summary":
		at := ""
		if r.LeafID != nil {
			at = *r.LeafID
		}
		return s.AppendBranchSummary(at, r.Summary, r.Details)
	case "leaf":
		return s.Leaf(), nil
	case "branch":
		// The path to another entry than the leaf: make it the leaf for
		// the walk, then put the leaf back.
		if r.LeafID != nil {
			leaf := s.Leaf()
			if err := s.SetLeaf(*r.LeafID); err != nil {
				return nil, err
			}
			defer s.SetLeaf(leaf)
		}
		return entriesJSON(s.Branch())
	case "entries":
		return entriesJSON(s.Entries())
	case "entry":
		e := s.Entry(r.ID)
		if e == nil {
			return nil, nil
		}
		return entryJSON(e)
	case "header":
		return s.Header(), nil
	case "path":
		return s.Path(), nil
	case "name":
		return s.Name(), nil
	case "session_context":
		return contextOf(s, s.Leaf()), nil
	case "fork_at":
		n, err := s.ForkAt(r.ID, session.CreateOptions{Cwd: r.Cwd, Dir: r.Dir, InMemory: r.InMemory})
		if err != nil {
			return nil, err
		}
		return d.keep(n), nil
	}
	return nil, fmt.Errorf("refdriver: unknown op %q", r.Op)
}

func (d *driver) keep(s *session.Session) int {
	d.next++
	d.sessions[d.next] = s
	return d.next
}

func (d *driver) session(h int) (*session.Session, error) {
	s, ok := d.sessions[h]
	if !ok {
		return nil, fmt.Errorf("refdriver: no session %d", h)
	}
	return s, nil
}

func (d *driver) tempFile(b []byte) (string, error) {
	d.files++
	p := filepath.Join(d.tmp, fmt.Sprintf("s%d.jsonl", d.files))
	return p, os.WriteFile(p, b, 0o600)
}

// readEntries reads entries (without a header) as pi reads a session file
// holding them: a header line is put before them.
func (d *driver) readEntries(entries []json.RawMessage) (*session.Session, error) {
	buf := []byte(`{"type":"session","version":3,"id":"refdriver","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}` + "\n")
	for _, e := range entries {
		buf = append(append(buf, e...), '\n')
	}
	p, err := d.tempFile(buf)
	if err != nil {
		return nil, err
	}
	return session.Read(p, session.OpenOptions{})
}

// contextOf is what the reference's buildSessionContext returns for the
// path to leaf: the messages, the thinking level ("off" without a
// thinking_level_change, as the reference says) and the model.
func contextOf(s *session.Session, leaf string) map[string]any {
	c := s.ContextAt(leaf)
	msgs := c.Messages
	if msgs == nil {
		msgs = []session.Message{}
	}
	level := c.ThinkingLevel
	if level == "" {
		level = "off"
	}
	out := map[string]any{"messages": msgs, "thinkingLevel": level, "model": nil}
	if c.Provider != "" || c.Model != "" {
		out["model"] = map[string]string{"provider": c.Provider, "modelId": c.Model}
	}
	return out
}

func fileEntries(s *session.Session) ([]any, error) {
	es, err := entriesJSON(s.Entries())
	if err != nil {
		return nil, err
	}
	return append([]any{s.Header()}, es...), nil
}

func fileLines(p string) ([]json.RawMessage, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, json.RawMessage(l))
		}
	}
	return out, nil
}

func entriesJSON(es []*session.Entry) ([]any, error) {
	out := make([]any, 0, len(es))
	for _, e := range es {
		j, err := entryJSON(e)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// treeJSON is pi's tree in the shape of the reference's getTree: nodes
// of {entry, children, label?, labelTimestamp?}.
func treeJSON(nodes []*session.TreeNode) ([]any, error) {
	out := make([]any, 0, len(nodes))
	for _, n := range nodes {
		e, err := entryJSON(n.Entry)
		if err != nil {
			return nil, err
		}
		kids, err := treeJSON(n.Children)
		if err != nil {
			return nil, err
		}
		j := map[string]any{"entry": e, "children": kids}
		if n.Label != "" {
			j["label"], j["labelTimestamp"] = n.Label, n.LabelTimestamp
		}
		out = append(out, j)
	}
	return out, nil
}

// entryJSON is an entry in the reference's shape, from the fields pi keeps.
func entryJSON(e *session.Entry) (map[string]any, error) {
	var parent any
	if e.ParentID != "" {
		parent = e.ParentID
	}
	j := map[string]any{"type": e.Type, "id": e.ID, "parentId": parent, "timestamp": e.Timestamp}
	set := func(k string, v any, ok bool) {
		if ok {
			j[k] = v
		}
	}
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil {
			return nil, err
		}
		j["message"] = m
	case session.TypeModelChange:
		j["provider"], j["modelId"] = e.Provider, e.ModelID
	case session.TypeThinkingLevelChange:
		j["thinkingLevel"] = e.ThinkingLevel
	case session.TypeCompaction, session.TypeBranchSummary:
		j["summary"] = e.Summary
		if e.Type == session.TypeCompaction {
			j["firstKeptEntryId"], j["tokensBefore"] = e.FirstKeptEntryID, e.TokensBefore
		} else {
			j["fromId"] = e.FromID
		}
		set("details", e.Details, len(e.Details) > 0)
		set("fromHook", true, e.FromHook)
	case session.TypeCustom:
		j["customType"] = e.CustomType
		j["data"] = e.Data
		if len(e.Data) == 0 {
			j["data"] = nil
		}
	case session.TypeCustomMessage:
		j["customType"], j["content"], j["display"] = e.CustomType, e.Content, e.Display
		set("details", e.Details, len(e.Details) > 0)
	case session.TypeLabel:
		j["targetId"] = e.TargetID
		set("label", e.Label, e.Label != "")
	case session.TypeSessionInfo:
		j["name"] = e.Name
	}
	return j, nil
}

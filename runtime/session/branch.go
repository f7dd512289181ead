package session

import (
	"errors"
	"fmt"
)

// ErrNoEntry is returned (wrapped) for an entry id the session does not
// have. The error's text is the reference's, `Entry ID not found`, which
// RPC clients and the reference's own tests match.
var ErrNoEntry = errors.New("no such entry")

// noEntry is the error for the entry id the session does not have: it
// reads as the reference's and is ErrNoEntry for errors.Is.
type noEntry string

func (e noEntry) Error() string        { return "Entry " + string(e) + " not found" }
func (e noEntry) Is(target error) bool { return target == ErrNoEntry }

// SetLeaf makes the entry id the leaf: the next entry is its child, and the
// context is the path from the root to it (the entries after it stay in
// the file, on a branch of their own). "" makes the next entry a new root.
//
// # Errors
//
// ErrNoEntry for an id the session does not have.
func (s *Session) SetLeaf(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok && id != "" {
		return fmt.Errorf("session set leaf: %w", noEntry(id))
	}
	s.leaf = id
	return nil
}

// ForkAt starts a new session holding the path from the root to the entry
// id, as the reference's createBranchedSession makes it: the entries
// themselves (ids and lines kept, so the session_info that names it and
// every other entry come along), except label entries, whose resolved
// labels on the path's entries follow it as new label entries (each with
// its label's time); the header's parentSession names this session's file
// ("" for one in memory). It is kept in memory when o.InMemory is set;
// else it is written to o.Dir or o.Path at once when the path holds an
// assistant message (otherwise with the first one, as a new session is)
// and opened for appending. An empty id gives a session with no entries.
//
// # Errors
//
// ErrNoEntry for an unknown id; the new file cannot be written.
func (s *Session) ForkAt(id string, o CreateOptions) (*Session, error) {
	s.mu.Lock()
	if _, ok := s.byID[id]; !ok && id != "" {
		s.mu.Unlock()
		return nil, fmt.Errorf("session fork: %w", noEntry(id))
	}
	var path []*Entry
	if id != "" {
		path = s.branchLocked(id)
	}
	labels := resolvedLabels(s.entries)
	parent := s.path
	s.mu.Unlock()
	o.ParentSession = parent
	n, err := Create(o)
	if err != nil {
		return nil, fmt.Errorf("session fork: %w", err)
	}
	add := func(e *Entry) {
		n.entries = append(n.entries, e)
		n.byID[e.ID] = e
		n.leaf = e.ID
	}
	for _, e := range path {
		if e.Type == TypeLabel {
			continue
		}
		add(e)
		if e.Type == TypeMessage {
			if m, err := e.Message(); err == nil && m.Role == RoleAssistant {
				n.hasAssistant = true
			}
		}
	}
	for _, l := range labels {
		if n.byID[l.TargetID] == nil {
			continue
		}
		e := &Entry{Type: TypeLabel, ID: newEntryID(func(id string) bool { return n.byID[id] != nil }), ParentID: n.leaf, Timestamp: l.Timestamp, entryFields: &entryFields{TargetID: l.TargetID, Label: l.Label}}
		if e.line, err = e.encode(); err != nil {
			return nil, fmt.Errorf("session fork: %w", err)
		}
		add(e)
	}
	if n.persist && n.hasAssistant {
		if err := n.flush(nil); err != nil {
			return nil, fmt.Errorf("session fork: %w", err)
		}
	}
	return n, nil
}

// resolvedLabels is the label of each entry after every label entry of
// entries (in file order; an empty label clears one), in the order the
// reference keeps them: a target keeps the place of its first label until
// it is cleared.
func resolvedLabels(entries []*Entry) []*Entry {
	var out []*Entry
	at := map[string]int{}
	for _, e := range entries {
		if e.Type != TypeLabel {
			continue
		}
		i, seen := at[e.TargetID]
		switch {
		case e.Label == "" && seen:
			out = append(out[:i], out[i+1:]...)
			delete(at, e.TargetID)
			for j := i; j < len(out); j++ {
				at[out[j].TargetID] = j
			}
		case e.Label == "":
		case seen:
			out[i] = e
		default:
			at[e.TargetID] = len(out)
			out = append(out, e)
		}
	}
	return out
}

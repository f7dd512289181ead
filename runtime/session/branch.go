package session

import (
	"errors"
	"fmt"
)

// ErrNoEntry is returned (wrapped) for an entry id the session does not
// have.
var ErrNoEntry = errors.New("no such entry")

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
		return fmt.Errorf("session set leaf: %w: %q", ErrNoEntry, id)
	}
	s.leaf = id
	return nil
}

// ForkAt starts a new session holding the path from the root to the entry
// id (the entries themselves, ids kept), with its header's parentSession
// naming this session's file ("" for one in memory); it is kept in memory
// when o.InMemory is set, else written at once to o.Dir or o.Path and
// opened for appending. An empty id gives a session with no entries.
//
// # Errors
//
// ErrNoEntry for an unknown id; the new file cannot be written.
func (s *Session) ForkAt(id string, o CreateOptions) (*Session, error) {
	s.mu.Lock()
	if _, ok := s.byID[id]; !ok && id != "" {
		s.mu.Unlock()
		return nil, fmt.Errorf("session fork: %w: %q", ErrNoEntry, id)
	}
	var path []*Entry
	if id != "" {
		path = s.branchLocked(id)
	}
	parent := s.path
	s.mu.Unlock()
	o.ParentSession = parent
	n, err := Create(o)
	if err != nil {
		return nil, fmt.Errorf("session fork: %w", err)
	}
	for _, e := range path {
		n.entries = append(n.entries, e)
		n.byID[e.ID] = e
		n.leaf = e.ID
		if e.Type == TypeMessage {
			if m, err := e.Message(); err == nil && m.Role == RoleAssistant {
				n.hasAssistant = true
			}
		}
	}
	if n.persist && len(n.entries) > 0 {
		if err := n.flush(nil); err != nil {
			return nil, fmt.Errorf("session fork: %w", err)
		}
	}
	return n, nil
}

package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pi-go/pi/runtime/checkpoint"
	"github.com/pi-go/pi/runtime/session"
)

// This file holds the checkpoints of a session's turns: before each turn
// that can change files, the project's files are recorded (package
// runtime/checkpoint, a store beside the session file), and again after
// it; Undo, Redo and Rewind restore them and move the conversation.

// CheckpointOptions say how turns are recorded.
type CheckpointOptions struct {
	// Disabled records nothing (Undo and the others then fail); pi.toml's
	// [checkpoints] enabled = false does the same.
	Disabled bool
	// MaxFileSize, MaxFiles and MaxRead bound a snapshot
	// (checkpoint.Options); 0 means pi.toml's [checkpoints], else the
	// defaults of runtime/checkpoint.
	MaxFileSize int64
	MaxFiles    int
	MaxRead     int64
}

// UndoType is the customType of the custom entry that marks where Undo,
// Redo or Rewind moved the conversation, so that a resumed session goes
// on from there (as DroppedPromptType).
const UndoType = "pi.undo"

// ErrNothingToUndo is returned (wrapped) by Undo, Redo and Rewind when
// there is no such turn.
var ErrNothingToUndo = errors.New("no turn to undo")

// checkpoints is the conversation's checkpoint state.
type checkpoints struct {
	mu    sync.Mutex
	sess  *session.Session // the session store belongs to
	store *checkpoint.Store
	last  *checkpoint.Manifest // the latest snapshot, for the next one
}

// readOnlyTools cannot change files: a turn with only these active is
// not recorded.
var readOnlyTools = map[string]bool{"read": true, "grep": true, "find": true, "ls": true}

// checkpointOptions are Options.Checkpoints over pi.toml's [checkpoints]:
// what the embedder set wins, pi.toml fills the rest.
func (c *Conversation) checkpointOptions() CheckpointOptions {
	o := c.opts.Checkpoints
	k := c.rt.Config().Checkpoints
	if k.Enabled != nil && !*k.Enabled {
		o.Disabled = true
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = int64(k.MaxFileMB) << 20
	}
	if o.MaxFiles == 0 {
		o.MaxFiles = k.MaxFiles
	}
	if o.MaxRead == 0 {
		o.MaxRead = int64(k.MaxReadMB) << 20
	}
	return o
}

// checkpointStore is the store of the current session (nil when turns
// are not recorded: Disabled, a session in memory). ck.mu is held.
func (c *Conversation) checkpointStore() *checkpoint.Store {
	s := c.Session()
	o := c.checkpointOptions()
	if o.Disabled || c.sessionOptions().NoCheckpoints || s.InMemory() {
		return nil
	}
	if c.ck.sess != s {
		c.ck.sess, c.ck.last = s, nil
		c.ck.store = checkpoint.Open(checkpointDir(s.Path()), c.rt.Cwd(), checkpoint.Options{MaxFileSize: o.MaxFileSize, MaxFiles: o.MaxFiles, MaxRead: o.MaxRead})
		// A resumed session's last snapshot is the next one's base: only
		// the files changed since are read.
		if turns, err := c.ck.store.Turns(); err == nil && len(turns) > 0 {
			if m, err := c.ck.store.Load(turns[len(turns)-1].After); err == nil {
				c.ck.last = m
			}
		}
	}
	return c.ck.store
}

// turnStart is what beforeTurn recorded.
type turnStart struct {
	leaf   string
	before *checkpoint.Manifest
}

// beforeTurn records the project before a turn that can change files; nil
// when none is recorded. A failure is logged: the turn goes on.
func (c *Conversation) beforeTurn(ctx context.Context) *turnStart {
	writes := false
	for _, d := range c.rt.Registry().ActiveDefinitions() {
		if !readOnlyTools[d.Name] {
			writes = true
		}
	}
	if !writes {
		return nil
	}
	c.ck.mu.Lock()
	defer c.ck.mu.Unlock()
	st := c.checkpointStore()
	if st == nil {
		return nil
	}
	m, err := st.Snapshot(ctx, c.ck.last)
	if err != nil {
		c.rt.Logger().Warn("checkpoint before the turn failed: /undo cannot restore its files", "error", err.Error())
		return nil
	}
	c.ck.last = m
	return &turnStart{leaf: c.Session().Leaf(), before: m}
}

// afterTurn records the project after the turn and the turn itself; the
// turns undone before it can no longer be redone. The snapshot is taken
// in the background, so the run ends at once for the person; the next
// snapshot, Undo and the others (which take ck.mu) wait for it, and so
// does Close.
func (c *Conversation) afterTurn(ctx context.Context, start *turnStart, prompt string) {
	if start == nil {
		return
	}
	end := c.Session().Leaf()
	if end == start.leaf {
		return // nothing stayed in the conversation (a failed prompt)
	}
	c.ck.mu.Lock()
	st := c.checkpointStore()
	if st == nil {
		c.ck.mu.Unlock()
		return
	}
	// Not cancelled with the run: an aborted turn's changes are recorded.
	go func() {
		defer c.ck.mu.Unlock()
		c.recordTurn(context.WithoutCancel(ctx), st, start, end, prompt)
	}()
}

// recordTurn takes the snapshot after a turn and records the turn. ck.mu
// is held.
func (c *Conversation) recordTurn(ctx context.Context, st *checkpoint.Store, start *turnStart, end, prompt string) {
	m, err := st.Snapshot(ctx, c.ck.last)
	if err == nil {
		c.ck.last = m
		var turns []checkpoint.Turn
		if turns, err = st.Turns(); err == nil {
			kept := turns[:0]
			next := 1
			for _, t := range turns {
				if !t.Undone {
					kept = append(kept, t)
				}
				next = max(next, t.ID+1)
			}
			kept = append(kept, checkpoint.Turn{ID: next, Time: time.Now().UTC().Format(time.RFC3339), Prompt: cut(prompt, checkpoint.MaxPromptLen),
				ParentLeaf: start.leaf, EndLeaf: end, Before: start.before.ID, After: m.ID})
			err = st.SaveTurns(kept)
		}
	}
	if err != nil {
		c.rt.Logger().Warn("checkpoint after the turn failed: /undo cannot restore its files", "error", err.Error())
	}
}

// TurnInfo is a recorded turn of the current branch (Turns).
type TurnInfo struct {
	ID     int    `json:"id"`
	Time   string `json:"time"`
	Prompt string `json:"prompt"`
	// Files are the paths the turn changed, sorted, each with what
	// happened to it (created, modified, deleted, mode).
	Files []FileChange `json:"files"`
}

// FileChange is one path a turn changed.
type FileChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Turns lists the recorded turns of the current branch that are not
// undone, oldest first (for /rewind and RPC get_turns).
//
// # Errors
//
// Turns are not recorded in this run; the store cannot be read.
func (c *Conversation) Turns() ([]TurnInfo, error) {
	c.ck.mu.Lock()
	defer c.ck.mu.Unlock()
	st, turns, err := c.loadTurns()
	if err != nil {
		return nil, err
	}
	out := []TurnInfo{}
	for _, i := range c.activeTurns(turns) {
		t := turns[i]
		info := TurnInfo{ID: t.ID, Time: t.Time, Prompt: t.Prompt, Files: []FileChange{}}
		if b, a, err := loadPair(st, t.Before, t.After); err == nil {
			for _, ch := range checkpoint.Diff(b, a) {
				info.Files = append(info.Files, FileChange{Path: ch.Path, Kind: ch.Kind()})
			}
		}
		out = append(out, info)
	}
	return out, nil
}

func (c *Conversation) loadTurns() (*checkpoint.Store, []checkpoint.Turn, error) {
	st := c.checkpointStore()
	if st == nil {
		return nil, nil, errors.New("turns are not recorded in this run (no session file, or checkpoints are off)")
	}
	turns, err := st.Turns()
	return st, turns, err
}

// activeTurns are the indexes of the turns not undone whose end is on the
// current branch, oldest first.
func (c *Conversation) activeTurns(turns []checkpoint.Turn) []int {
	on := map[string]bool{}
	for _, e := range c.Session().Branch() {
		on[e.ID] = true
	}
	var out []int
	for i, t := range turns {
		if !t.Undone && on[t.EndLeaf] {
			out = append(out, i)
		}
	}
	return out
}

func loadPair(st *checkpoint.Store, a, b string) (*checkpoint.Manifest, *checkpoint.Manifest, error) {
	ma, err := st.Load(a)
	if err != nil {
		return nil, nil, err
	}
	mb, err := st.Load(b)
	return ma, mb, err
}

// RewindMode says what Rewind brings back.
type RewindMode string

const (
	// RewindBoth restores the files and moves the conversation.
	RewindBoth RewindMode = "both"
	// RewindFiles restores the files only.
	RewindFiles RewindMode = "files"
	// RewindConversation moves the conversation only.
	RewindConversation RewindMode = "conversation"
)

// UndoOptions say how Undo, Redo and Rewind treat files changed since.
type UndoOptions struct {
	// Force overwrites files the person changed since the turn; without
	// it such files make the call fail with *checkpoint.ConflictError and
	// nothing changes.
	Force bool
}

// UndoResult is what Undo, Redo and Rewind did.
type UndoResult struct {
	// Turns are the ids of the turns undone or redone.
	Turns []int `json:"turns"`
	// Restored are the paths restored; NotRestored those that could not
	// be, with why (too large to have been stored).
	Restored    []string          `json:"restored"`
	NotRestored map[string]string `json:"notRestored,omitempty"`
	// Prompt is the first undone turn's prompt (for a front end's
	// editor).
	Prompt string `json:"prompt,omitempty"`
}

// Undo undoes the last turn of the current branch: the files it changed
// (by any tool, bash included: created, modified, deleted, renamed,
// permissions) are restored as they were before it, and the
// conversation goes back to before its prompt. A file changed since the
// turn is a conflict (see UndoOptions).
//
// # Errors
//
// agent.ErrBusy while a run goes on; ErrNothingToUndo; turns are not
// recorded; *checkpoint.ConflictError; a failed write.
func (c *Conversation) Undo(ctx context.Context, o UndoOptions) (UndoResult, error) {
	return c.rewind(ctx, -1, RewindBoth, o)
}

// Rewind undoes the turns of the current branch from the turn id on:
// mode says whether the files, the conversation or both go back to before
// it.
//
// # Errors
//
// As Undo; an id that is no turn of the current branch.
func (c *Conversation) Rewind(ctx context.Context, id int, mode RewindMode, o UndoOptions) (UndoResult, error) {
	switch mode {
	case RewindBoth, RewindFiles, RewindConversation:
	default:
		return UndoResult{}, fmt.Errorf("rewind: mode %q: want both, files or conversation", mode)
	}
	return c.rewind(ctx, id, mode, o)
}

func (c *Conversation) rewind(ctx context.Context, id int, mode RewindMode, o UndoOptions) (UndoResult, error) {
	ctx, end, err := c.begin(ctx, "undo")
	if err != nil {
		return UndoResult{}, err
	}
	defer end()
	c.ck.mu.Lock()
	defer c.ck.mu.Unlock()
	st, turns, err := c.loadTurns()
	if err != nil {
		return UndoResult{}, fmt.Errorf("undo: %w", err)
	}
	active := c.activeTurns(turns)
	if len(active) == 0 {
		return UndoResult{}, fmt.Errorf("undo: %w", ErrNothingToUndo)
	}
	from := len(active) - 1
	if id >= 0 {
		from = -1
		for i, ti := range active {
			if turns[ti].ID == id {
				from = i
			}
		}
		if from < 0 {
			return UndoResult{}, fmt.Errorf("rewind: turn %d is not a turn of the current branch (see /rewind): %w", id, ErrNothingToUndo)
		}
	}
	first, last := turns[active[from]], turns[active[len(active)-1]]
	res := UndoResult{Prompt: first.Prompt}
	if mode != RewindConversation {
		target, expected, err := loadPair(st, first.Before, last.After)
		if err != nil {
			return UndoResult{}, fmt.Errorf("undo: %w", err)
		}
		r, err := st.Restore(ctx, expected, target, o.Force)
		if err != nil {
			return UndoResult{}, fmt.Errorf("undo: %w", err)
		}
		res.Restored, res.NotRestored = r.Restored, r.NotRestored
		c.ck.last = nil
	}
	if mode != RewindFiles {
		if err := c.moveLeaf(first.ParentLeaf, "undo", first.ID); err != nil {
			return res, err
		}
		for _, i := range active[from:] {
			turns[i].Undone, turns[i].FilesKept = true, mode == RewindConversation
			res.Turns = append(res.Turns, turns[i].ID)
		}
		if err := st.SaveTurns(turns); err != nil {
			return res, fmt.Errorf("undo: %w", err)
		}
	}
	return res, nil
}

// Redo redoes the turn undone last on the current branch: its files as
// it left them (unless only its conversation was undone) and its
// conversation.
//
// # Errors
//
// As Undo; ErrNothingToUndo when there is nothing to redo.
func (c *Conversation) Redo(ctx context.Context, o UndoOptions) (UndoResult, error) {
	ctx, end, err := c.begin(ctx, "redo")
	if err != nil {
		return UndoResult{}, err
	}
	defer end()
	c.ck.mu.Lock()
	defer c.ck.mu.Unlock()
	st, turns, err := c.loadTurns()
	if err != nil {
		return UndoResult{}, fmt.Errorf("redo: %w", err)
	}
	on := map[string]bool{"": true}
	for _, e := range c.Session().Branch() {
		on[e.ID] = true
	}
	k := -1
	for i, t := range turns {
		if t.Undone && on[t.ParentLeaf] && (k < 0 || t.ID < turns[k].ID) {
			k = i
		}
	}
	if k < 0 {
		return UndoResult{}, fmt.Errorf("redo: %w", ErrNothingToUndo)
	}
	t := turns[k]
	res := UndoResult{Turns: []int{t.ID}}
	if !t.FilesKept {
		before, after, err := loadPair(st, t.Before, t.After)
		if err != nil {
			return UndoResult{}, fmt.Errorf("redo: %w", err)
		}
		r, err := st.Restore(ctx, before, after, o.Force)
		if err != nil {
			return UndoResult{}, fmt.Errorf("redo: %w", err)
		}
		res.Restored, res.NotRestored = r.Restored, r.NotRestored
		c.ck.last = nil
	}
	// Go on where the next undone turn started, when it follows this one
	// (a !cmd or a label in between), else where this one ended.
	leaf := t.EndLeaf
	for _, n := range turns {
		if n.Undone && n.ID > t.ID {
			if p := c.Session().BranchOf(n.ParentLeaf); p != nil && containsEntry(p, t.EndLeaf) {
				leaf = n.ParentLeaf
			}
			break
		}
	}
	if err := c.moveLeaf(leaf, "redo", t.ID); err != nil {
		return res, err
	}
	turns[k].Undone, turns[k].FilesKept = false, false
	if err := st.SaveTurns(turns); err != nil {
		return res, fmt.Errorf("redo: %w", err)
	}
	return res, nil
}

func containsEntry(path []*session.Entry, id string) bool {
	for _, e := range path {
		if e.ID == id {
			return true
		}
	}
	return false
}

// moveLeaf makes id the leaf and appends a custom entry of type UndoType
// there, so a resumed session goes on from it; the agent is rebuilt on
// the new context.
func (c *Conversation) moveLeaf(id, op string, turn int) error {
	s := c.Session()
	if err := s.SetLeaf(id); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	data, _ := json.Marshal(map[string]any{"op": op, "turn": turn})
	if _, err := s.AppendCustom(UndoType, data); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	c.dropAgent()
	return nil
}

package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pi-go/pi/internal/atomicfile"
)

// Turn is one recorded turn: the conversation's leaf before and after it
// and the project's snapshots before and after it.
type Turn struct {
	ID   int    `json:"id"`
	Time string `json:"time"`
	// Prompt is the person's prompt (cut to MaxPromptLen bytes).
	Prompt string `json:"prompt"`
	// ParentLeaf is the session's leaf before the turn ("" for none),
	// EndLeaf after it.
	ParentLeaf string `json:"parentLeaf"`
	EndLeaf    string `json:"endLeaf"`
	// Before and After are manifest ids.
	Before string `json:"before"`
	After  string `json:"after"`
	// Undone: the turn was undone (its conversation left, and its files
	// restored unless FilesKept).
	Undone    bool `json:"undone,omitempty"`
	FilesKept bool `json:"filesKept,omitempty"`
}

// MaxPromptLen bounds the prompt a Turn keeps.
const MaxPromptLen = 16 << 10

// Turns reads the recorded turns, oldest first (none for a new store).
//
// # Errors
//
// A turns file that cannot be read or decoded.
func (s *Store) Turns() ([]Turn, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "turns.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint turns: %w", err)
	}
	var ts []Turn
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("checkpoint turns %s: %w", filepath.Join(s.dir, "turns.json"), err)
	}
	return ts, nil
}

// SaveTurns replaces the recorded turns.
//
// # Errors
//
// The file cannot be written.
func (s *Store) SaveTurns(ts []Turn) error {
	b, err := json.Marshal(ts)
	if err != nil {
		return fmt.Errorf("checkpoint turns: %w", err)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint turns: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, "turns.json"), b, 0o600); err != nil {
		return fmt.Errorf("checkpoint turns: %w", err)
	}
	return nil
}

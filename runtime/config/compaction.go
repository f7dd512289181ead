package config

import (
	"fmt"

	"github.com/pi-go/pi/runtime/compaction"
)

// maxContextWindow bounds [model] context_window and the [compaction]
// sizes when they are decoded (100 M tokens).
const maxContextWindow = 100_000_000

// Compaction is the [compaction] table as the files set it (package
// runtime/compaction owns the settings, their defaults and their rules).
type Compaction struct {
	// Enabled turns automatic compaction on; nil when not set (default
	// true). /compact works either way.
	Enabled *bool
	// ReserveTokens are kept free for the answer; 0 when not set.
	ReserveTokens int
	// KeepRecentTokens is about how much of the latest conversation stays
	// as it is; 0 when not set.
	KeepRecentTokens int
}

// CompactionSettings returns the compaction settings: what the files set
// ([model] context_window, [compaction]) over compaction.DefaultSettings.
//
// # Errors
//
// Settings that compaction.Settings.Validate refuses (reserve_tokens not
// below the context window), naming the file.
func (c *Config) CompactionSettings() (compaction.Settings, error) {
	s := compaction.DefaultSettings()
	if c.Compaction.Enabled != nil {
		s.Enabled = *c.Compaction.Enabled
	}
	if c.Model.ContextWindow > 0 {
		s.ContextWindow = c.Model.ContextWindow
	}
	if c.Compaction.ReserveTokens > 0 {
		s.ReserveTokens = c.Compaction.ReserveTokens
	}
	if c.Compaction.KeepRecentTokens > 0 {
		s.KeepRecentTokens = c.Compaction.KeepRecentTokens
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%s: %w", describe(c.Files), err)
	}
	return s, nil
}

func describe(files []string) string {
	if len(files) == 0 {
		return "pi.toml"
	}
	return files[len(files)-1]
}

var compactionKeys = []string{"enabled", "reserve_tokens", "keep_recent_tokens"}

func (d *decoder) compaction(l *layer, v any) {
	m, ok := d.table("compaction", v, compactionKeys)
	if !ok {
		return
	}
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean("compaction.enabled", v); ok {
			l.compactionEnabled = &b
		}
	}
	if v, ok := m["reserve_tokens"]; ok {
		if n, ok := d.positive("compaction.reserve_tokens", v, maxContextWindow, "tokens"); ok {
			l.compactReserve = &n
		}
	}
	if v, ok := m["keep_recent_tokens"]; ok {
		if n, ok := d.positive("compaction.keep_recent_tokens", v, maxContextWindow, "tokens"); ok {
			l.compactKeepRecent = &n
		}
	}
}

// applyCompaction lays the layer's [model] context_window and
// [compaction] over c.
func (l *layer) applyCompaction(c *Config) {
	if l.contextWindow != nil {
		c.Model.ContextWindow = *l.contextWindow
	}
	if l.compactionEnabled != nil {
		b := *l.compactionEnabled
		c.Compaction.Enabled = &b
	}
	if l.compactReserve != nil {
		c.Compaction.ReserveTokens = *l.compactReserve
	}
	if l.compactKeepRecent != nil {
		c.Compaction.KeepRecentTokens = *l.compactKeepRecent
	}
}

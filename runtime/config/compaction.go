package config

import "fmt"

// Compaction defaults, the reference agent's names and values.
const (
	DefaultContextWindow    = 128000
	DefaultReserveTokens    = 16384
	DefaultKeepRecentTokens = 20000
	// maxContextWindow bounds [model] context_window (100 M tokens).
	maxContextWindow = 100_000_000
)

// Compaction is the [compaction] table: when a long session is compacted.
type Compaction struct {
	// Enabled turns automatic compaction on; nil when not set (default
	// true). /compact works either way.
	Enabled *bool
	// ReserveTokens are kept free for the answer: compaction starts when
	// the context passes context_window - reserve_tokens; 0 when not set
	// (default DefaultReserveTokens).
	ReserveTokens int
	// KeepRecentTokens is about how much of the latest conversation stays
	// as it is; 0 when not set (default DefaultKeepRecentTokens).
	KeepRecentTokens int
}

// CompactionSettings are the effective settings, defaults filled in.
type CompactionSettings struct {
	Enabled                                        bool
	ContextWindow, ReserveTokens, KeepRecentTokens int
}

// CompactionSettings returns the compaction settings with the defaults
// for what no file sets.
//
// # Errors
//
// reserve_tokens not below the context window (compaction would start on
// every turn).
func (c *Config) CompactionSettings() (CompactionSettings, error) {
	s := CompactionSettings{Enabled: true, ContextWindow: DefaultContextWindow, ReserveTokens: DefaultReserveTokens, KeepRecentTokens: DefaultKeepRecentTokens}
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
	if s.ReserveTokens >= s.ContextWindow {
		return s, fmt.Errorf("%s: compaction.reserve_tokens (%d) must be smaller than model.context_window (%d)", describe(c.Files), s.ReserveTokens, s.ContextWindow)
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

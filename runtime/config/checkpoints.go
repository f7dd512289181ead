package config

// Checkpoints configures the snapshots of the project's files that /undo,
// /redo and /rewind restore ([checkpoints]); zero values are unset (the
// defaults of runtime/checkpoint apply).
type Checkpoints struct {
	// Enabled records snapshots; nil when not set (default true).
	Enabled *bool
	// MaxFileMB is the largest file stored; larger ones are listed only
	// (an undo cannot bring them back).
	MaxFileMB int
	// MaxFiles is the most entries one snapshot lists.
	MaxFiles int
	// MaxReadMB is the most one snapshot reads.
	MaxReadMB int
}

var checkpointKeys = []string{"enabled", "max_file_mb", "max_files", "max_read_mb"}

func (d *decoder) checkpoints(l *layer, v any) {
	m, ok := d.table("checkpoints", v, checkpointKeys)
	if !ok {
		return
	}
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean("checkpoints.enabled", v); ok {
			l.checkpoints.Enabled = &b
		}
	}
	for key, dst := range map[string]*int{"max_file_mb": &l.checkpoints.MaxFileMB, "max_read_mb": &l.checkpoints.MaxReadMB} {
		if v, ok := m[key]; ok {
			if n, ok := d.positive("checkpoints."+key, v, 1<<20, "MiB"); ok {
				*dst = n
			}
		}
	}
	if v, ok := m["max_files"]; ok {
		if n, ok := d.positive("checkpoints.max_files", v, 100_000_000, "files"); ok {
			l.checkpoints.MaxFiles = n
		}
	}
}

// applyCheckpoints lays the layer's [checkpoints] over c: each key it sets
// replaces the value before.
func (l *layer) applyCheckpoints(c *Config) {
	k := l.checkpoints
	if k.Enabled != nil {
		b := *k.Enabled
		c.Checkpoints.Enabled = &b
	}
	for _, p := range [][2]*int{{&c.Checkpoints.MaxFileMB, &k.MaxFileMB}, {&c.Checkpoints.MaxFiles, &k.MaxFiles}, {&c.Checkpoints.MaxReadMB, &k.MaxReadMB}} {
		if *p[1] != 0 {
			*p[0] = *p[1]
		}
	}
}

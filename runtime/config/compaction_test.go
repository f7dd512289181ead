package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/compaction"
)

func TestCompactionSettings(t *testing.T) {
	tests := []struct {
		name, global, project string
		want                  compaction.Settings
		wantErr               string // in the Load or CompactionSettings error
	}{
		{name: "defaults", want: compaction.Settings{Enabled: true, ContextWindow: 128000, ReserveTokens: 16384, KeepRecentTokens: 20000}},
		{
			name:   "global values",
			global: "[model]\ncontext_window = 32000\n[compaction]\nenabled = false\nreserve_tokens = 4000\nkeep_recent_tokens = 8000\n",
			want:   compaction.Settings{Enabled: false, ContextWindow: 32000, ReserveTokens: 4000, KeepRecentTokens: 8000},
		},
		{
			name:    "project overrides global key by key",
			global:  "[compaction]\nenabled = false\nreserve_tokens = 4000\n",
			project: "[compaction]\nenabled = true\n",
			want:    compaction.Settings{Enabled: true, ContextWindow: 128000, ReserveTokens: 4000, KeepRecentTokens: 20000},
		},
		{name: "unknown key", global: "[compaction]\nreserve = 1\n", wantErr: `unknown key "compaction.reserve"`},
		{name: "zero", global: "[compaction]\nreserve_tokens = 0\n", wantErr: "must be positive"},
		{name: "negative window", global: "[model]\ncontext_window = -5\n", wantErr: "must be positive"},
		{name: "string", global: "[compaction]\nkeep_recent_tokens = \"20k\"\n", wantErr: "must be an integer"},
		{name: "not a table", global: "compaction = true\n", wantErr: "must be a table"},
		{name: "enabled not bool", global: "[compaction]\nenabled = 1\n", wantErr: "must be a boolean"},
		{name: "too large", global: "[model]\ncontext_window = 100000001\n", wantErr: "at most"},
		{name: "reserve not below window", global: "[model]\ncontext_window = 1000\n[compaction]\nreserve_tokens = 1000\n", wantErr: "must be smaller than model.context_window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.global != "" {
				writeFile(t, filepath.Join(e.home, "pi.toml"), tt.global)
			}
			if tt.project != "" {
				writeFile(t, filepath.Join(e.proj, ".git", "HEAD"), "ref: x\n")
				writeFile(t, filepath.Join(e.proj, "pi.toml"), tt.project)
			}
			c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: filepath.Dir(e.home), Trust: true})
			var got compaction.Settings
			if err == nil {
				got, err = c.CompactionSettings()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("settings = %+v, want %+v", got, tt.want)
			}
			// Clone must not share the Enabled pointer.
			if c.Compaction.Enabled != nil {
				n := c.Clone()
				*n.Compaction.Enabled = !*n.Compaction.Enabled
				if *c.Compaction.Enabled == *n.Compaction.Enabled {
					t.Fatal("Clone shares compaction.enabled")
				}
			}
		})
	}
}

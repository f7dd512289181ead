package config

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// [checkpoints] is read from either file, key by key, with errors naming
// file, line and key; Clone does not share enabled.
func TestCheckpointsKeys(t *testing.T) {
	tests := []struct {
		name, global, project string
		want                  string // Enabled as t/f/-, MaxFileMB, MaxFiles, MaxReadMB
		wantErr               string
	}{
		{name: "defaults", want: "- 0 0 0"},
		{name: "global", global: "[checkpoints]\nenabled = false\nmax_file_mb = 2\nmax_files = 1000\nmax_read_mb = 64\n", want: "f 2 1000 64"},
		{name: "project over global", global: "[checkpoints]\nmax_file_mb = 2\nmax_read_mb = 64\n", project: "[checkpoints]\nmax_file_mb = 8\nenabled = true\n", want: "t 8 0 64"},
		{name: "unknown key", global: "[checkpoints]\nmax_size = 1\n", wantErr: `pi.toml:2: unknown key "checkpoints.max_size"`},
		{name: "zero", global: "[checkpoints]\n\nmax_file_mb = 0\n", wantErr: `pi.toml:3: key "checkpoints.max_file_mb"`},
		{name: "not bool", global: "[checkpoints]\nenabled = \"no\"\n", wantErr: "must be a boolean"},
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
			c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: filepath.Dir(e.home)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			k := c.Checkpoints
			en := "-"
			if k.Enabled != nil {
				en = map[bool]string{true: "t", false: "f"}[*k.Enabled]
			}
			if got := strings.Join([]string{en, strconv.Itoa(k.MaxFileMB), strconv.Itoa(k.MaxFiles), strconv.Itoa(k.MaxReadMB)}, " "); got != tt.want {
				t.Fatalf("checkpoints = %s, want %s", got, tt.want)
			}
			if k.Enabled != nil {
				n := c.Clone()
				*n.Checkpoints.Enabled = !*n.Checkpoints.Enabled
				if *c.Checkpoints.Enabled == *n.Checkpoints.Enabled {
					t.Fatal("Clone shares checkpoints.enabled")
				}
			}
		})
	}
}

package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// [fleet] comes from the global file or a trusted project only (the server
// gets the project's files); errors name file, line and key.
func TestFleetKeys(t *testing.T) {
	tests := []struct {
		name, global, project string
		want, wantErr         string
	}{
		{name: "defaults", want: "||0|0|0|0"},
		{name: "global", global: "[fleet]\nnats = \"nats://a:4222,nats://b:4222\"\ncreds = \"~/w.creds\"\nstore = \"st\"\nconcurrency = 8\nack_wait_s = 60\nmax_attempts = 5\nreplicas = 3\n",
			want: "nats://a:4222,nats://b:4222|~/w.creds|8|60|5|3"},
		{name: "untrusted project ignored", global: "[fleet]\nconcurrency = 2\n", project: "[fleet]\nnats = \"nats://evil:4222\"\n", want: "||2|0|0|0"},
		{name: "unknown key", global: "[fleet]\nurl = \"x\"\n", wantErr: `pi.toml:2: unknown key "fleet.url"`},
		{name: "zero", global: "[fleet]\n\nconcurrency = 0\n", wantErr: `pi.toml:3: key "fleet.concurrency" must be positive`},
		{name: "cert without key", global: "[fleet]\ntls_cert = \"/c.pem\"\n", wantErr: `"fleet.tls_cert" and "fleet.tls_key" go together`},
		{name: "bad tilde", global: "[fleet]\ncreds = \"~bob/x\"\n", wantErr: `only ~/ (your home) is expanded`},
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
			f := c.Fleet
			got := fmt.Sprintf("%s|%s|%d|%d|%d|%d", f.NATS, f.Creds, f.Concurrency, f.AckWaitS, f.MaxAttempts, f.Replicas)
			if got != tt.want {
				t.Fatalf("fleet = %s, want %s", got, tt.want)
			}
			if tt.name == "global" && f.Store != filepath.Join(e.home, "st") {
				t.Errorf("store = %s, want it relative to the file's folder", f.Store)
			}
			if tt.project != "" && !c.Untrusted {
				t.Error("the untrusted project's [fleet] did not count as needing trust")
			}
		})
	}
}

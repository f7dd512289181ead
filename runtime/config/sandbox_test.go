package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSandboxLayering: the global file sets [sandbox]; an untrusted
// project may make it stricter but not looser (what it tried is named in
// the warning); a trusted one may loosen; --sandbox overrides both.
func TestSandboxLayering(t *testing.T) {
	tests := []struct {
		name, global, project string
		trust                 bool
		mode, network         string
		writable              []string
		user                  bool   // user_commands
		warn                  string // in the warnings
		wantErr               string
	}{
		{name: "nothing set"},
		{name: "global", global: "[sandbox]\nmode = \"full\"\nnetwork = \"off\"\nwritable = [\"~/.cache\", \"/opt/x\"]\n",
			mode: "full", network: "off", writable: []string{"~/.cache", "/opt/x"}},
		{name: "untrusted project tightens", project: "[sandbox]\nmode = \"read-only\"\nnetwork = \"off\"\n", mode: "read-only", network: "off"},
		{name: "untrusted project may not loosen", global: "[sandbox]\nmode = \"read-only\"\n",
			project: "[sandbox]\nmode = \"workspace-write\"\nwritable = [\"/\"]\n", mode: "read-only",
			warn: "sandbox.writable; sandbox.mode"},
		{name: "untrusted project may not turn it off", project: "[sandbox]\nmode = \"off\"\n", warn: "sandbox.mode"},
		{name: "trusted project loosens", global: "[sandbox]\nmode = \"read-only\"\n", trust: true,
			project: "[sandbox]\nmode = \"off\"\nwritable = [\"cache\"]\n", mode: "off", writable: []string{"PROJ/cache"}},
		{name: "untrusted project sandboxes the person's commands", project: "[sandbox]\nuser_commands = true\n", user: true},
		{name: "untrusted project may not take the person's commands out", global: "[sandbox]\nuser_commands = true\n",
			project: "[sandbox]\nuser_commands = false\n", user: true, warn: "sandbox.user_commands"},
		{name: "user_commands not a boolean", global: "[sandbox]\nuser_commands = \"yes\"\n", wantErr: `sandbox.user_commands`},
		{name: "unknown mode", global: "[sandbox]\nmode = \"danger\"\n", wantErr: `key "sandbox.mode": unknown sandbox mode "danger" (want off, full, workspace-write, read-only)`},
		{name: "unknown network", global: "[sandbox]\nnetwork = \"maybe\"\n", wantErr: `unknown sandbox network "maybe"`},
		{name: "bad tilde", global: "[sandbox]\nwritable = [\"~bob/x\"]\n", wantErr: `only ~/ (your home) is expanded`},
		{name: "unknown key", global: "[sandbox]\nmodes = \"off\"\n", wantErr: `unknown key "sandbox.modes"`},
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
			c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Home: filepath.Dir(e.home), Trust: tt.trust})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tt.writable {
				want = append(want, strings.Replace(w, "PROJ", e.proj, 1))
			}
			s := c.Sandbox
			if s.Mode != tt.mode || s.Network != tt.network || !slices.Equal(s.Writable, want) || s.UserCommands != tt.user {
				t.Errorf("sandbox = %+v, want mode %q network %q writable %q", s, tt.mode, tt.network, want)
			}
			warnings := strings.Join(c.Warnings, "\n")
			if (tt.warn == "") != (warnings == "") || !strings.Contains(warnings, tt.warn) {
				t.Errorf("warnings = %q, want one containing %q", warnings, tt.warn)
			}
			o, err := c.With(Overrides{SandboxMode: "off"})
			if err != nil || o.Sandbox.Mode != "off" || o.Sandbox.ModeAt != "--sandbox" {
				t.Errorf("--sandbox off: %+v, %v", o.Sandbox, err)
			}
			if _, err := c.With(Overrides{SandboxMode: "loose"}); err == nil || !strings.Contains(err.Error(), "override sandbox.mode: unknown sandbox mode") {
				t.Errorf("--sandbox loose: %v", err)
			}
		})
	}
}

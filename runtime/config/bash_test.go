package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tools.bash.pass_env and tools.bash.full_output_max_mb: decoded, layered
// (a later file's list replaces the earlier one), and pass_env, which hands
// the API key to commands, needs trust in a project file while the cap does
// not.
func TestBashPassEnvAndCap(t *testing.T) {
	const global = "[tools.bash]\npass_env = [\"OPENAI_API_KEY\", \"MY_KEY\"]\nfull_output_max_mb = 7\n"
	const project = "[tools.bash]\npass_env = []\nfull_output_max_mb = 3\n"
	tests := []struct {
		name            string
		global, project string
		trust           bool
		wantPass        []string
		wantMB          int
		warning         string
	}{
		{name: "unset", wantPass: nil, wantMB: 0},
		{name: "global", global: global, wantPass: []string{"OPENAI_API_KEY", "MY_KEY"}, wantMB: 7},
		{name: "trusted project replaces", global: global, project: project, trust: true, wantPass: []string{}, wantMB: 3},
		{name: "untrusted project: pass_env ignored, cap applies", global: "", project: "[tools.bash]\npass_env = [\"OPENAI_API_KEY\"]\nfull_output_max_mb = 3\n",
			wantPass: nil, wantMB: 3, warning: "ignored: tools.bash.pass_env. "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.global != "" {
				writeFile(t, filepath.Join(e.home, "pi.toml"), tt.global)
			}
			if tt.project != "" {
				writeFile(t, filepath.Join(e.proj, "pi.toml"), tt.project)
			}
			c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: tt.trust})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Tools.Bash.PassEnv, tt.wantPass) || c.Tools.Bash.FullOutputMaxMB != tt.wantMB {
				t.Errorf("bash = %#v, want pass_env %#v and cap %d", c.Tools.Bash, tt.wantPass, tt.wantMB)
			}
			switch {
			case tt.warning == "" && len(c.Warnings) != 0:
				t.Errorf("warnings: %q", c.Warnings)
			case tt.warning != "" && (len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], tt.warning)):
				t.Errorf("warnings: %q, want one with %q", c.Warnings, tt.warning)
			}
		})
	}
}

func TestBashPassEnvAndCapErrors(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"[tools.bash]\npass_env = \"OPENAI_API_KEY\"\n", `FILE:2: key "tools.bash.pass_env" must be an array of strings, got string`},
		{"[tools.bash]\npass_env = [\"OK\", \"A-B\"]\n", `FILE:2: key "tools.bash.pass_env[1]": "A-B" is not an environment variable name`},
		{"[tools.bash]\npass_env = [\"K\", \"K\"]\n", `FILE:2: key "tools.bash.pass_env[1]": variable "K" is listed twice`},
		{"[tools.bash]\npass_env = [1]\n", `FILE:2: key "tools.bash.pass_env[0]" must be a string, got integer`},
		{"\n[tools.bash]\nfull_output_max_mb = 0\n", `FILE:3: key "tools.bash.full_output_max_mb" must be positive, got 0 (leave it out for the default)`},
		{"[tools.bash]\nfull_output_max_mb = -5\n", `FILE:2: key "tools.bash.full_output_max_mb" must be positive, got -5 (leave it out for the default)`},
		{"[tools.bash]\nfull_output_max_mb = 1.5\n", `FILE:2: key "tools.bash.full_output_max_mb" must be an integer, got float`},
		{"[tools.bash]\nfull_output_max_mb = \"100\"\n", `FILE:2: key "tools.bash.full_output_max_mb" must be an integer, got string`},
		{"[tools.bash]\nfull_output_max_mb = 102401\n", `FILE:2: key "tools.bash.full_output_max_mb" must be at most 102400 MiB, got 102401`},
	}
	for _, tt := range tests {
		t.Run(tt.toml, func(t *testing.T) {
			e := newEnv(t)
			file := writeFile(t, filepath.Join(e.proj, "pi.toml"), tt.toml)
			_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
			if err == nil {
				t.Fatal("no error")
			}
			if want := strings.ReplaceAll(tt.want, "FILE", file); err.Error() != want {
				t.Errorf("got  %s\nwant %s", err, want)
			}
		})
	}
}

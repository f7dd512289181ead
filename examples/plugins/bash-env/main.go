//go:build wasip1

// Command bash-env is a pi extension with a bash_spawn hook that adds
// per-project environment variables to every command the bash tool runs and
// puts project folders (such as .venv/bin) in front of PATH. The host shows
// a bash_spawn hook only the variables granted to it by name (grants.env):
// grant PATH for path_prepend and every variable a value refers to.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/sdk"
)

// config is the [extensions.config] table.
type config struct {
	// Env sets variables; a value may use $NAME or ${NAME} to refer to the
	// variables the command would otherwise get.
	Env map[string]string `json:"env"`
	// PathPrepend lists folders put in front of PATH, in order; relative
	// ones are resolved against the command's working directory.
	PathPrepend []string `json:"path_prepend"`
}

var cfg config

func init() {
	sdk.Extension("bash-env", "0.1.0", "Adds per-project environment variables and PATH entries to bash commands")
	sdk.OnInit(func() error {
		cfg = config{}
		if err := sdk.Config(&cfg); err != nil {
			return err
		}
		for name := range cfg.Env {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return fmt.Errorf("config env: %q is not a valid variable name", name)
			}
		}
		return nil
	})
	sdk.OnBashSpawn(rewrite)
}

func main() {}

func rewrite(s sdk.BashSpawn) sdk.BashSpawn {
	env := make(map[string]string, len(s.Env)+len(cfg.Env)+1)
	for k, v := range s.Env {
		env[k] = v
	}
	names := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		// Expand against the environment the command had before this hook.
		env[k] = os.Expand(cfg.Env[k], func(n string) string { return s.Env[n] })
	}
	if len(cfg.PathPrepend) > 0 {
		dirs := make([]string, 0, len(cfg.PathPrepend)+1)
		for _, d := range cfg.PathPrepend {
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.Cwd, d)
			}
			dirs = append(dirs, filepath.Clean(d))
		}
		if old := env["PATH"]; old != "" {
			dirs = append(dirs, old)
		}
		env["PATH"] = strings.Join(dirs, string(os.PathListSeparator))
	}
	s.Env = env
	return s
}

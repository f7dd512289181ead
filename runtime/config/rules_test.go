package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pi-go/pi/runtime/extspec"
)

// TestEntryRulesAreExtspecs: every value pi.toml takes for an extension
// entry (and for the other names that share its rules) is accepted by the
// decoder exactly when runtime/extspec accepts it. A second rule written
// here would drift; this fails when it does.
func TestEntryRulesAreExtspecs(t *testing.T) {
	values := []string{
		"", "a", "loc", "my-ext_2", "Loc", "1x", "-a", "_a", "a b", "a\n", "a\x00", "a.b", "é",
		"A", "HOME", "_X1", "X-1", "9LIVES", "A=B", "A B", strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("f", 64), strings.Repeat("F", 63) + "0", strings.Repeat("g", 64),
		"ro:.", "rw:build", "ro:", "rx:.", "./src", "ro:~/x", "RO:.", "ro:/abs",
		"git", "git status*", " git", "git log \\", "[", "git\tx",
	}
	type rule struct {
		name    string
		toml    func(v string) string // a pi.toml that holds v
		extspec func(v string) error
	}
	rules := []rule{
		{"extension name", func(v string) string {
			return "[[extensions]]\nname = " + tomlString(v) + "\npath = \"a.wasm\"\nsha256 = \"" + shaA + "\"\n"
		}, extspec.CheckName},
		{"sha256", func(v string) string {
			return "[[extensions]]\nname = \"a\"\npath = \"a.wasm\"\nsha256 = " + tomlString(v) + "\n"
		}, extspec.CheckSHA256},
		{"tools.active", func(v string) string { return "[tools]\nactive = [" + tomlString(v) + "]\n" }, extspec.CheckToolName},
		{"model.api_key_env", func(v string) string { return "[model]\napi_key_env = " + tomlString(v) + "\n" }, extspec.CheckEnvName},
		{"tools.bash.pass_env", func(v string) string { return "[tools.bash]\npass_env = [" + tomlString(v) + "]\n" }, extspec.CheckEnvName},
	}
	for _, kind := range []string{extspec.KindFS, extspec.KindExec, extspec.KindEnv} {
		rules = append(rules, rule{"grants." + kind, func(v string) string {
			return ext("a", shaA) + "[extensions.grants]\n" + kind + " = [" + tomlString(v) + "]\n"
		}, func(v string) error { return extspec.CheckGrant(kind, v) }})
	}
	for _, r := range rules {
		for _, v := range values {
			if !utf8.ValidString(v) {
				continue // TOML cannot hold it
			}
			e := newEnv(t)
			writeFile(t, filepath.Join(e.proj, "pi.toml"), r.toml(v))
			_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
			want := r.extspec(v)
			if (err == nil) != (want == nil) {
				t.Errorf("%s %q: pi.toml says %v, extspec says %v", r.name, v, err, want)
			}
			if err != nil && want != nil && !strings.Contains(err.Error(), want.Error()) {
				t.Errorf("%s %q: the message %q does not carry extspec's %q", r.name, v, err, want)
			}
		}
	}
	for _, key := range []string{"memory_mb", "timeout_ms"} {
		for _, n := range []int64{-1 << 62, -1, 0, 1, 64, extspec.MaxMemoryMB, extspec.MaxMemoryMB + 1, 30_000, extspec.MaxTimeoutMS, extspec.MaxTimeoutMS + 1, 1 << 40} {
			e := newEnv(t)
			writeFile(t, filepath.Join(e.proj, "pi.toml"), ext("a", shaA)+fmt.Sprintf("[extensions.limits]\n%s = %d\n", key, n))
			c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
			check := extspec.CheckMemoryMB
			if key == "timeout_ms" {
				check = extspec.CheckTimeoutMS
			}
			want := check(n)
			if (err == nil) != (want == nil) {
				t.Errorf("limits.%s = %d: pi.toml says %v, extspec says %v", key, n, err, want)
				continue
			}
			if err == nil {
				// What pi.toml accepts, the host's check accepts too.
				if lerr := c.Extensions[0].Limits.Check(); lerr != nil {
					t.Errorf("limits.%s = %d loads but Limits.Check refuses it: %v", key, n, lerr)
				}
			}
		}
	}
}

// TestNoSecondEntryRule fails when runtime/config (outside tests) writes a
// rule of an extension entry again instead of calling extspec: a regexp,
// or the bounds of the limits.
func TestNoSecondEntryRule(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"regexp.", "4096", "86_400_000", "86400000", `"ro:"`, `"rw:"`} {
			if strings.Contains(string(src), s) {
				t.Errorf("%s holds %s: an entry rule belongs to runtime/extspec", f, s)
			}
		}
	}
}

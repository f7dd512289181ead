// Package archtest checks the dependency rules of docs/design.md with
// `go list -deps`: nothing imports cmd/pi; tools/builtin never imports
// extensions; runtime/redact is a leaf; sdk imports no host package; only
// extensions imports wazero.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/pi-go/pi"

// deps returns the packages pattern depends on (itself included), for the
// given GOOS/GOARCH (empty: the host's).
func deps(t *testing.T, goos, goarch string, pattern ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, pattern...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	if goos != "" {
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH="+goarch)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", pattern, err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

func TestDependencyRules(t *testing.T) {
	all := deps(t, "", "", "./...")
	for pkg, imports := range all {
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		for _, imp := range imports {
			if imp == module+"/cmd/pi" {
				t.Errorf("%s imports cmd/pi; nothing may", pkg)
			}
			if strings.HasPrefix(imp, "github.com/tetratelabs/wazero") && !strings.HasPrefix(pkg, module+"/extensions") {
				t.Errorf("%s imports %s; only extensions/ may import wazero", pkg, imp)
			}
		}
	}
	for pkg := range deps(t, "", "", "./tools/builtin/...") {
		if strings.HasPrefix(pkg, module+"/extensions") || strings.HasPrefix(pkg, module+"/runtime/agent") || strings.HasPrefix(pkg, module+"/runtime/llm") {
			t.Errorf("tools/builtin depends on %s; it may import runtime/tool and runtime/redact only", pkg)
		}
	}
	for pkg := range deps(t, "", "", "./runtime/redact") {
		if strings.HasPrefix(pkg, module) && pkg != module+"/runtime/redact" {
			t.Errorf("runtime/redact depends on %s; it is a leaf (standard library only)", pkg)
		}
	}
	for pkg := range deps(t, "wasip1", "wasm", "./sdk/...") {
		if strings.HasPrefix(pkg, module) && !strings.HasPrefix(pkg, module+"/sdk") {
			t.Errorf("sdk depends on host package %s", pkg)
		}
		if !strings.HasPrefix(pkg, module) && strings.Contains(pkg, ".") {
			t.Errorf("sdk depends on %s; it may use the standard library only", pkg)
		}
	}
}

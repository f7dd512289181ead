package extensions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/extspec"
)

// TestSpecRulesAreExtspecs: the host accepts a Spec's name, env and exec
// grants and limits exactly when runtime/extspec does, the same rules
// pi.toml's decoder applies (runtime/config's TestEntryRulesAreExtspecs).
func TestSpecRulesAreExtspecs(t *testing.T) {
	good := wat(t, "good")
	root := t.TempDir()
	try := func(spec extensions.Spec) error {
		h, err := extensions.NewHost(context.Background(), extensions.Options{CacheDir: cacheDir, ProjectRoot: root})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		spec.Path = good
		_, err = h.Load(context.Background(), spec)
		return err
	}
	values := []string{"", "good", "HOME", "_X1", "A.B", "A-B", "A=B", "1A", "A\x00", "a b", "git", "git status*", " git", "git log \\", "[", "é"}
	for _, v := range values {
		err := try(extensions.Spec{Grants: extensions.Grants{Env: []string{v}}})
		if want := extspec.CheckEnvName(v); (err == nil) != (want == nil) || err != nil && !strings.Contains(err.Error(), want.Error()) {
			t.Errorf("env grant %q: host says %v, extspec says %v", v, err, want)
		}
		err = try(extensions.Spec{Grants: extensions.Grants{Exec: []string{v}}})
		if want := extspec.CheckGrant(extspec.KindExec, v); (err == nil) != (want == nil) || err != nil && !strings.Contains(err.Error(), want.Error()) {
			t.Errorf("exec grant %q: host says %v, extspec says %v", v, err, want)
		}
		// A valid name other than the guest's is refused for the mismatch,
		// never by the name rule.
		err = try(extensions.Spec{Name: v})
		if refusedByRule := err != nil && strings.Contains(err.Error(), "must match"); refusedByRule != (v != "" && !extspec.ValidName(v)) {
			t.Errorf("name %q: host says %v, extspec.ValidName says %v", v, err, extspec.ValidName(v))
		}
	}
	for _, n := range []int{-1 << 40, -1, 0, 1, 64, extspec.MaxMemoryMB, extspec.MaxMemoryMB + 1, extspec.MaxTimeoutMS, extspec.MaxTimeoutMS + 1} {
		for _, l := range []extensions.Limits{{MemoryMB: n}, {TimeoutMS: n}} {
			err := try(extensions.Spec{Limits: l})
			if want := l.Check(); (err == nil) != (want == nil) || err != nil && !strings.Contains(err.Error(), want.Error()) {
				t.Errorf("limits %s: host says %v, extspec says %v", fmt.Sprintf("%+v", l), err, want)
			}
		}
	}
}

//go:build !fleet

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoBuildID: the build ID read from an executable's first pages is
// the one the Go toolchain reports.
func TestGoBuildID(t *testing.T) {
	out, err := exec.Command("go", "tool", "buildid", os.Args[0]).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := goBuildID(os.Args[0]), strings.TrimSpace(string(out)); got != want {
		t.Fatalf("goBuildID = %q, go tool buildid = %q", got, want)
	}
}

// TestFleetBuiltFromSource: a pi with its source on the machine and no
// pi-fleet next to it builds its fleet build once into the user's cache,
// then finds it there; the build runs pi fleet.
func TestFleetBuiltFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("links pi's fleet build")
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache))) // the build's, not under the test's cache folder
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv(fleetEnv, "")
	var log strings.Builder
	prog, err := fleetProgram(&log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(prog, filepath.Join(cache, "pi-go", fleetProgramName+"-")) || !strings.Contains(log.String(), "building pi's fleet commands once") {
		t.Fatalf("fleet build %s, log %q: want a build into %s", prog, log.String(), cache)
	}
	out, err := exec.Command(prog, "fleet", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pi fleet submit --repo DIR --prompt TEXT") {
		t.Fatalf("%s fleet --help: %v\n%s", prog, err, out)
	}
	log.Reset()
	again, err := fleetProgram(&log)
	if err != nil || again != prog || log.Len() != 0 {
		t.Fatalf("second lookup: %s, %v, log %q; want %s from the cache, no build", again, err, log.String(), prog)
	}
}

//go:build !fleet

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/pi-go/pi/internal/atomicfile"
)

// pi fleet lives in pi's fleet build (this package built with -tags
// fleet, fleetcmd.go), which links NATS (nats.go and the embedded
// nats-server): linked into every pi, they made the binary 46 MB instead
// of 31 and `pi version` 3.7× a Go hello world (docs/performance.md). This
// build hands `pi fleet ...` to that program, replacing itself with it
// (the same process: terminal, signals, exit code), found by
// fleetProgram.

// FleetEnv names pi's fleet build, before the one next to pi and the one
// built from pi's source.
const fleetEnv = "PI_FLEET"

// fleetProgramName is the fleet build's name next to pi.
const fleetProgramName = "pi-fleet"

func cmdFleet(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog, err := fleetProgram(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "pi fleet: %v\n", err)
		return exitError
	}
	argv := append([]string{prog, "fleet"}, args...)
	err = syscall.Exec(prog, argv, os.Environ())
	fmt.Fprintf(stderr, "pi fleet: run %s: %v\n", prog, err)
	return exitError
}

// fleetProgram finds pi's fleet build: $PI_FLEET, else pi-fleet next to
// this pi's executable (go build -o DIR/pi-fleet -tags fleet ./cmd/pi,
// the container image), else built from the source this pi was built
// from (go run ./cmd/pi, go build in a checkout) into the user's cache,
// once for each version of that source.
//
// # Errors
//
// PI_FLEET names no file, or there is no pi-fleet next to pi and pi's
// source is not on this machine (a -trimpath build) or does not build.
func fleetProgram(log io.Writer) (string, error) {
	if p := os.Getenv(fleetEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", fleetEnv, err)
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(exe), fleetProgramName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	root, err := sourceRoot()
	if err != nil {
		return "", fmt.Errorf("pi fleet is the program %s (pi built with -tags fleet): put it next to pi (go build -tags fleet -o DIR/%s ./cmd/pi) or name it in %s: %w",
			fleetProgramName, fleetProgramName, fleetEnv, err)
	}
	return buildFleet(root, exe, log)
}

// sourceRoot is the folder of the module this program was compiled from,
// when its files are on this machine (builds without -trimpath record
// their absolute paths).
func sourceRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("this pi was built without a record of its source folder (-trimpath)")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file))) // cmd/pi/fleetexec.go
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module github.com/pi-go/pi\n")) {
		return "", fmt.Errorf("pi's source folder %s is not on this machine", root)
	}
	return root, nil
}

// fleetSources are what the fleet build has and this build does not (the
// modules come with go.mod and go.sum); the rest is this pi's, named by
// its Go build ID.
var fleetSources = []string{"go.mod", "go.sum", "cmd/pi/fleetcmd.go", "runtime/fleet/*.go", "runtime/fleet/*/*.go"}

// buildFleet builds the fleet build of pi from root into the user's
// cache, named by a digest of this pi's build ID and the fleet's own
// sources, unless that file is there already.
func buildFleet(root, exe string, log io.Writer) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s %q\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, goBuildID(exe))
	for _, pat := range fleetSources {
		files, _ := filepath.Glob(filepath.Join(root, pat))
		for _, f := range files {
			if filepath.Ext(f) == ".go" && len(f) > 8 && f[len(f)-8:] == "_test.go" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("read pi's source: %w", err)
			}
			fmt.Fprintf(h, "%s %d\n", f[len(root):], len(b))
			h.Write(b)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "pi-go", fleetProgramName+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, fleetProgramName)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%s is built from pi's source in %s with the Go toolchain, which is not on PATH (or put %s next to pi, or name it in %s)", fleetProgramName, root, fleetProgramName, fleetEnv)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "pi fleet: building pi's fleet commands once (go build -tags fleet ./cmd/pi) into %s\n", dir)
	// Built in a folder of its own, moved into place whole: a concurrent
	// pi sees the program complete or not at all.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), fleetProgramName+"-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(gobin, "build", "-tags", "fleet", "-o", filepath.Join(tmp, fleetProgramName), "./cmd/pi")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -tags fleet ./cmd/pi in %s: %v\n%s", root, err, bytes.TrimSpace(out))
	}
	if err := atomicfile.MoveDir(tmp, dir); err != nil {
		if _, serr := os.Stat(bin); serr == nil {
			return bin, nil // another pi built it meanwhile
		}
		return "", err
	}
	return bin, nil
}

// goBuildID is the Go build ID of the executable at path (its ELF note
// "Go" of type 4, in the first pages), which changes with any source or
// setting it was built from; failing that, its size and time.
func goBuildID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	if i := bytes.Index(b, []byte("\x04\x00\x00\x00Go\x00\x00")); i >= 8 {
		size := int(binary.LittleEndian.Uint32(b[i-4:]))
		if start := i + 8; start+size <= len(b) && size > 0 && size < 1024 {
			return string(b[start : start+size])
		}
	}
	if st, err := f.Stat(); err == nil {
		return fmt.Sprintf("%d %d", st.Size(), st.ModTime().UnixNano())
	}
	return ""
}

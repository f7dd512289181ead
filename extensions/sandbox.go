package extensions

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"

	"github.com/pi-go/pi/runtime/execgrant"
)

// mount is one resolved fs grant.
type mount struct {
	dir      string // absolute host path, also the guest path
	readOnly bool
}

// resolveGrants checks the grants and resolves fs entries against root. The
// returned Grants carry the fs entries as "ro:/abs" / "rw:/abs"; that is what
// init is told. Each fs entry must name an existing directory.
func resolveGrants(g Grants, root string) (Grants, []mount, error) {
	out := Grants{FS: []string{}, Exec: []string{}, Env: []string{}}
	var mounts []mount
	for _, entry := range g.FS {
		mode, p, ok := strings.Cut(entry, ":")
		if !ok || (mode != "ro" && mode != "rw") || p == "" {
			return Grants{}, nil, fmt.Errorf("grants.fs %q: want \"ro:PATH\" or \"rw:PATH\"", entry)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		p = filepath.Clean(p)
		st, err := os.Stat(p)
		if err != nil {
			return Grants{}, nil, fmt.Errorf("grants.fs %q: %w", entry, err)
		}
		if !st.IsDir() {
			return Grants{}, nil, fmt.Errorf("grants.fs %q: %s is not a directory (grants mount directories)", entry, p)
		}
		mounts = append(mounts, mount{dir: p, readOnly: mode == "ro"})
		out.FS = append(out.FS, mode+":"+p)
	}
	for _, pat := range g.Exec {
		if err := execgrant.Validate(pat); err != nil {
			return Grants{}, nil, fmt.Errorf("grants.exec: %w", err)
		}
		out.Exec = append(out.Exec, pat)
	}
	for _, name := range g.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return Grants{}, nil, fmt.Errorf("grants.env %q: not a variable name", name)
		}
		out.Env = append(out.Env, name)
	}
	return out, mounts, nil
}

// grantedEnv reads the granted variables that are set.
func grantedEnv(names []string, lookup func(string) (string, bool)) [][2]string {
	var env [][2]string
	for _, n := range names {
		if v, ok := lookup(n); ok && !strings.ContainsRune(v, 0) {
			env = append(env, [2]string{n, v})
		}
	}
	return env
}

// moduleConfig is the sandbox of one instance: no args, only granted env,
// only granted directories, stdout/stderr to the logger, real clocks, crypto
// random, and a sleep that ends when the instance's current call does (so a
// sleeping guest cannot outlive its deadline).
func (e *Extension) moduleConfig(inst *instance) wazero.ModuleConfig {
	fsc := wazero.NewFSConfig()
	for _, m := range e.mounts {
		if m.readOnly {
			fsc = fsc.WithReadOnlyDirMount(m.dir, m.dir)
		} else {
			fsc = fsc.WithDirMount(m.dir, m.dir)
		}
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(exportInit).
		WithStdout(inst.stdout).
		WithStderr(inst.stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(inst.sleep).
		WithRandSource(rand.Reader).
		WithFSConfig(fsc)
	for _, kv := range e.env {
		cfg = cfg.WithEnv(kv[0], kv[1])
	}
	return cfg
}

// sleep is the guest's nanosleep: it returns early when the current call's
// context is done.
func (inst *instance) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	ctx := inst.callCtx
	if ctx == nil {
		ctx = context.Background()
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// maxLogLine caps one logged line of guest output.
const maxLogLine = 64 << 10

// lineWriter turns a guest's stdout or stderr into logger lines.
type lineWriter struct {
	mu     sync.Mutex
	logger func() hclog.Logger
	level  hclog.Level
	stream string
	buf    []byte
}

var _ io.Writer = (*lineWriter)(nil)

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			if len(w.buf) >= maxLogLine {
				w.emit()
			}
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

// Flush logs a pending partial line.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit()
	}
}

func (w *lineWriter) emit() {
	line := w.buf
	if len(line) > maxLogLine {
		line = line[:maxLogLine]
	}
	w.logger().Log(w.level, string(bytes.TrimRight(line, "\r")), "stream", w.stream)
	w.buf = w.buf[:0]
}

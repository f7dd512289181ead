package extensions

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/pi-go/pi/extensions/internal/rootfs"
	"github.com/pi-go/pi/runtime/extspec"
)

// mount is one resolved fs grant.
type mount struct {
	dir      string // the grant's real path: the host path, also the guest path
	readOnly bool
	root     *rootfs.Root // the directory, opened at load
	grant    string       // the grant as written, for messages
}

// resolveGrants checks the grants and resolves fs entries against root with
// extspec.ResolveFSGrant: each names an existing directory, is mounted at its
// real path (every symlink resolved), and a project-relative one must stay
// in the project. The returned Grants carry the fs entries as
// "ro:/real/path" / "rw:/real/path"; that is what init is told. The
// directories are opened here, so a later swap of a folder on the way does
// not move a mount.
func resolveGrants(g Grants, root string) (_ Grants, _ []mount, err error) {
	out := Grants{FS: []string{}, Exec: []string{}, Env: []string{}}
	var mounts []mount
	defer func() {
		if err != nil {
			closeMounts(mounts) // those opened before the entry that failed
		}
	}()
	for _, entry := range g.FS {
		r, err := extspec.ResolveFSGrant(entry, root)
		if err != nil {
			return Grants{}, nil, fmt.Errorf("grants.fs: %w", err)
		}
		m := mount{dir: r.Real, readOnly: !r.Writable, grant: entry}
		if err := checkNesting(mounts, m); err != nil {
			return Grants{}, nil, err
		}
		if m.root, err = rootfs.Open(r.Real); err != nil {
			return Grants{}, nil, fmt.Errorf("grants.fs %q: %w", entry, err)
		}
		mounts = append(mounts, m)
		out.FS = append(out.FS, extspec.FSGrant{Writable: r.Writable, Path: r.Real}.String())
	}
	for _, pat := range g.Exec {
		if err := extspec.CheckGrant(extspec.KindExec, pat); err != nil {
			return Grants{}, nil, fmt.Errorf("grants.exec: %w", err)
		}
		out.Exec = append(out.Exec, pat)
	}
	for _, name := range g.Env {
		if err := extspec.CheckGrant(extspec.KindEnv, name); err != nil {
			return Grants{}, nil, fmt.Errorf("grants.env: %w", err)
		}
		out.Env = append(out.Env, name)
	}
	// ABI 1.1: http patterns are validated at load; tool names too.
	for _, pat := range g.HTTP {
		if err := extspec.CheckGrant(extspec.KindHTTP, pat); err != nil {
			return Grants{}, nil, fmt.Errorf("grants.http: %w", err)
		}
		out.HTTP = append(out.HTTP, pat)
	}
	for _, name := range g.Tools {
		if err := extspec.CheckGrant(extspec.KindTools, name); err != nil {
			return Grants{}, nil, fmt.Errorf("grants.tools: %w", err)
		}
		out.Tools = append(out.Tools, name)
	}
	out.LLM, out.Model = g.LLM, g.Model // ABI 1.2
	return out, mounts, nil
}

// closeMounts closes the directories of mounts. It is safe to call twice;
// nothing may use the mounts afterwards (the extension's instance is gone).
func closeMounts(mounts []mount) {
	for _, m := range mounts {
		if m.root != nil {
			m.root.Close()
		}
	}
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

// checkNesting refuses a grant whose directory another grant already
// mounts, and a read-only grant inside a read-write one (or the reverse
// order): the wider read-write mount would let the extension change the
// folder the read-only grant seems to protect.
func checkNesting(mounts []mount, m mount) error {
	for _, o := range mounts {
		switch {
		case o.dir == m.dir:
			return fmt.Errorf("grants.fs %q: %s is already granted by %q; grant each folder once", m.grant, m.dir, o.grant)
		case m.readOnly && !o.readOnly && extspec.Within(o.dir, m.dir):
			return fmt.Errorf("grants.fs %q: %s lies inside the read-write grant %q, which already lets the extension change it; drop one of the two", m.grant, m.dir, o.grant)
		case o.readOnly && !m.readOnly && extspec.Within(m.dir, o.dir):
			return fmt.Errorf("grants.fs %q: the read-only grant %q lies inside %s, which this grant lets the extension change; drop one of the two", m.grant, o.grant, m.dir)
		}
	}
	return nil
}

// denied logs, at debug level, a guest path the sandbox refused.
func (e *Extension) denied(guest, why string) {
	var msg string
	switch why {
	case rootfs.DenyOutside:
		msg = fmt.Sprintf("extension %s: path %s is outside its grants", e.name, guest)
	case rootfs.DenyThroughLink:
		msg = fmt.Sprintf("extension %s: path %s leads outside its grant through a symlink", e.name, guest)
	default:
		msg = fmt.Sprintf("extension %s: path %s: %s", e.name, guest, why)
	}
	granted := "none"
	if len(e.grants.FS) > 0 {
		granted = strings.Join(e.grants.FS, ", ")
	}
	// Warn, so the user sees why the guest got EBADF ("Bad file number");
	// within the call's log budget, so a guest cannot flood the log with it.
	e.guestLog(e.inst, hclog.Warn, msg+" (grants.fs: "+granted+"); to allow it, grant a folder holding it: --grant fs=ro:PATH or fs=rw:PATH")
}

// moduleConfig is the sandbox of one instance: no args, only granted env,
// only granted directories (each through a rootfs.FS that keeps every lookup
// beneath it, and a catch-all at "/" that logs and refuses the rest),
// stdout/stderr to the logger, real clocks, crypto random, and a sleep that
// ends when the instance's current call does (so a sleeping guest cannot
// outlive its deadline).
//
// The catch-all comes last so the grants keep their preopen numbers and
// the first grant stays a Go guest's working directory.
func (e *Extension) moduleConfig(inst *instance) wazero.ModuleConfig {
	var fsc wazero.FSConfig = wazero.NewFSConfig()
	rootMounted := false
	for _, m := range e.mounts {
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(rootfs.New(m.root, m.readOnly, e.denied), m.dir)
		rootMounted = rootMounted || m.dir == "/"
	}
	if !rootMounted {
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(rootfs.Outside(e.denied), "/")
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
	budget *logBudget // the instance's per-call budget; nil logs everything
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
	msg := string(bytes.TrimRight(line, "\r"))
	w.buf = w.buf[:0]
	if w.budget != nil {
		if w.stream == "stderr" {
			w.budget.noteStderr(msg)
		}
		if !w.budget.allow(len(msg)) {
			return
		}
	}
	w.logger().Log(w.level, msg, "stream", w.stream)
}

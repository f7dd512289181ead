package extensions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pi-go/pi/internal/abi"
)

// Watches of ABI 1.2: watch.add / watch.remove, changes sent with
// watch.fire as ordinary serialized calls into the instance that added
// them, batched. The kernel side (inotify on Linux) is in
// watch_linux.go; elsewhere watch.add answers that watches are not
// supported.

// Limits of watches.
const (
	// MaxWatches is how many watches one extension may have at once.
	MaxWatches = 16
	// WatchBatch is how long changes are gathered before one watch.fire
	// (the spec's bound is 1 s).
	WatchBatch = 250 * time.Millisecond
	// maxWatchDirs bounds the folders one recursive watch follows.
	maxWatchDirs = 4096
	// maxFirePaths bounds the paths of one watch.fire; more are dropped
	// with a warning.
	maxFirePaths = 1000
)

// watch is one watch.add.
type watch struct {
	id      string
	owner   *instance
	stopped atomic.Bool
	stop    chan struct{}
	closeFS func()

	mu      sync.Mutex
	pending []string
	dropped int
	kick    chan struct{}
}

func (w *watch) end() {
	if w.stopped.CompareAndSwap(false, true) {
		close(w.stop)
		if w.closeFS != nil {
			w.closeFS()
		}
	}
}

// changed records a changed path; the batcher sends it.
func (w *watch) changed(path string) {
	w.mu.Lock()
	switch {
	case slices.Contains(w.pending, path):
	case len(w.pending) >= maxFirePaths:
		w.dropped++
	default:
		w.pending = append(w.pending, path)
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// watchTarget resolves a watch.add path (absolute, or relative to the
// project root) to its real path and checks it lies in a grants.fs
// directory.
func (e *Extension) watchTarget(p string) (string, error) {
	if p == "" {
		return "", errors.New("watch.add: params need a path")
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(e.host.opts.ProjectRoot, abs)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("watch.add: %s does not exist", p)
		}
		return "", fmt.Errorf("watch.add: %w", err)
	}
	for _, m := range e.mounts {
		if real == m.dir || strings.HasPrefix(real, strings.TrimSuffix(m.dir, string(filepath.Separator))+string(filepath.Separator)) {
			return real, nil
		}
	}
	granted := "none"
	if len(e.grants.FS) > 0 {
		granted = strings.Join(e.grants.FS, ", ")
	}
	shown := p
	if real != abs {
		shown = fmt.Sprintf("%s (really %s)", p, real)
	}
	e.logger.Warn("watch.add refused: path outside the fs grants", "path", p, "real", real)
	return "", fmt.Errorf("permission denied: extension %s may not watch %s (grants.fs: %s)", e.name, shown, granted)
}

// addWatch starts a watch for the instance of the current call.
func (e *Extension) addWatch(ctx context.Context, p abi.WatchAddParams) (string, error) {
	inst := instanceOf(ctx)
	if inst == nil {
		return "", errors.New("watch.add: called outside a call from the host")
	}
	real, err := e.watchTarget(p.Path)
	if err != nil {
		return "", err
	}
	e.runMu.Lock()
	if e.watches == nil {
		e.watches = map[string]*watch{}
	}
	if len(e.watches) >= MaxWatches {
		e.runMu.Unlock()
		e.logger.Warn("watch.add refused: too many watches", "limit", MaxWatches)
		return "", fmt.Errorf("watch.add: extension %s already has %d watches, the most it may have; remove one first", e.name, MaxWatches)
	}
	e.seq++
	w := &watch{id: "w" + strconv.Itoa(e.seq), owner: inst, stop: make(chan struct{}), kick: make(chan struct{}, 1)}
	e.watches[w.id] = w
	e.runMu.Unlock()
	closeFS, err := watchFS(real, p.Recursive, w.changed, func(err error) {
		e.logger.Warn("watch stopped", "watch", w.id, "path", real, "error", err.Error())
	})
	if err != nil {
		e.forgetWatch(w)
		return "", fmt.Errorf("watch.add: %s: %w", p.Path, err)
	}
	w.closeFS = closeFS
	if w.stopped.Load() { // ended while it started
		closeFS()
	}
	go e.runWatch(w)
	return w.id, nil
}

// runWatch sends the changes of w in batches: the first change starts a
// batch, sent WatchBatch later; changes during a fire make the next batch.
func (e *Extension) runWatch(w *watch) {
	defer e.forgetWatch(w)
	ctx := e.host.runContext()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case <-w.kick:
		}
		select {
		case <-ctx.Done():
			return
		case <-w.stop:
			return
		case <-time.After(WatchBatch):
		}
		w.mu.Lock()
		paths, dropped := w.pending, w.dropped
		w.pending, w.dropped = nil, 0
		w.mu.Unlock()
		if len(paths) == 0 {
			continue
		}
		if dropped > 0 {
			e.logger.Warn("watch: too many changes in one batch; the rest are not sent", "watch", w.id, "sent", len(paths), "dropped", dropped)
		}
		slices.Sort(paths)
		if !e.guestCallAsync(ctx, abi.MethodWatchFire, abi.WatchFireParams{ID: w.id, Paths: paths}, w.owner) {
			return
		}
	}
}

func (e *Extension) forgetWatch(w *watch) {
	w.end()
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.watches[w.id] == w {
		delete(e.watches, w.id)
	}
}

// removeWatch ends a watch of the extension.
func (e *Extension) removeWatch(id string) error {
	e.runMu.Lock()
	w, ok := e.watches[id]
	if ok {
		delete(e.watches, id)
	}
	e.runMu.Unlock()
	if !ok {
		return fmt.Errorf("watch.remove: no watch %q", id)
	}
	w.end()
	return nil
}

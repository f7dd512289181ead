package extensions

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pi-go/pi/internal/abi"
)

// Timers of ABI 1.2: timer.set / timer.clear, fired with timer.fire as
// ordinary serialized calls into the instance that set them. A timer ends
// with that instance (a fault, a reload) or with the host.

// Limits of timers.
const (
	// MinTimerMS is the shortest timer.
	MinTimerMS = 10
	// MaxTimers is how many timers one extension may have at once.
	MaxTimers = 32
)

// hostRun12 is the host's ABI 1.2 running state: the context timers,
// watches and bus deliveries run in, cancelled by Close, and the values
// of the extensions' command-line flags.
type hostRun12 struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc

	flagsMu sync.Mutex
	flags   map[string]string // given flags by name

	// bgMu, bg and bgIdle count the background calls in flight (timer,
	// watch and bus deliveries), so that Close lets them end, aborted by
	// the cancelled context, before it closes the runtimes under them.
	bgMu     sync.Mutex
	bg       int
	bgClosed bool
	bgIdle   chan struct{}
}

// bgEnter counts a background call in; false once the host closes.
func (h *Host) bgEnter() bool {
	h.run12.bgMu.Lock()
	defer h.run12.bgMu.Unlock()
	if h.run12.bgClosed {
		return false
	}
	h.run12.bg++
	return true
}

// bgLeave counts a background call out.
func (h *Host) bgLeave() {
	h.run12.bgMu.Lock()
	defer h.run12.bgMu.Unlock()
	h.run12.bg--
	if h.run12.bg == 0 && h.run12.bgIdle != nil {
		close(h.run12.bgIdle)
		h.run12.bgIdle = nil
	}
}

// bgWait refuses new background calls and waits (up to limit) for those
// in flight, which the cancelled run context aborts.
func (h *Host) bgWait(limit time.Duration) {
	h.run12.bgMu.Lock()
	h.run12.bgClosed = true
	if h.run12.bg == 0 {
		h.run12.bgMu.Unlock()
		return
	}
	idle := make(chan struct{})
	h.run12.bgIdle = idle
	h.run12.bgMu.Unlock()
	select {
	case <-idle:
	case <-time.After(limit):
	}
}

// runContext is the context of the host's background calls; it ends at
// Close.
func (h *Host) runContext() context.Context {
	h.run12.once.Do(func() { h.run12.ctx, h.run12.cancel = context.WithCancel(context.Background()) })
	return h.run12.ctx
}

// closeRun12 ends every timer, watch and bus delivery of the host.
func (h *Host) closeRun12() {
	h.runContext()
	h.run12.cancel()
}

// timer is one timer.set.
type timer struct {
	id      string
	every   time.Duration
	repeat  bool
	owner   *instance
	stop    chan struct{}
	stopped atomic.Bool
	skipped atomic.Int64
}

func (t *timer) end() {
	if t.stopped.CompareAndSwap(false, true) {
		close(t.stop)
	}
}

// setTimer starts a timer for the instance of the current call.
func (e *Extension) setTimer(ctx context.Context, p abi.TimerSetParams) (string, error) {
	if p.MS < MinTimerMS {
		return "", fmt.Errorf("timer.set: ms must be at least %d, got %d", MinTimerMS, p.MS)
	}
	inst := instanceOf(ctx)
	if inst == nil {
		return "", fmt.Errorf("timer.set: called outside a call from the host")
	}
	e.runMu.Lock()
	if e.timers == nil {
		e.timers = map[string]*timer{}
	}
	if len(e.timers) >= MaxTimers {
		e.runMu.Unlock()
		e.logger.Warn("timer.set refused: too many timers", "limit", MaxTimers)
		return "", fmt.Errorf("timer.set: extension %s already has %d timers, the most it may have; clear one first", e.name, MaxTimers)
	}
	e.seq++
	t := &timer{id: "t" + strconv.Itoa(e.seq), every: time.Duration(p.MS) * time.Millisecond, repeat: p.Repeat, owner: inst, stop: make(chan struct{})}
	e.timers[t.id] = t
	e.runMu.Unlock()
	go e.runTimer(t)
	return t.id, nil
}

// runTimer waits for t's ticks and fires them. A repeating timer's tick
// that comes while the last fire still runs is skipped (time.Ticker drops
// it), which a warning says once per timer.
func (e *Extension) runTimer(t *timer) {
	defer e.forgetTimer(t)
	ctx := e.host.runContext()
	if !t.repeat {
		tm := time.NewTimer(t.every)
		defer tm.Stop()
		select {
		case <-ctx.Done():
		case <-t.stop:
		case <-tm.C:
			e.guestCallAsync(ctx, abi.MethodTimerFire, abi.IDParams{ID: t.id}, t.owner)
		}
		return
	}
	tk := time.NewTicker(t.every)
	defer tk.Stop()
	var warned bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.stop:
			return
		case <-tk.C:
		}
		start := time.Now()
		if !e.guestCallAsync(ctx, abi.MethodTimerFire, abi.IDParams{ID: t.id}, t.owner) {
			return
		}
		if took := time.Since(start); took > t.every && !warned {
			warned = true
			e.logger.Warn("timer fires are skipped while its last fire runs", "timer", t.id, "every", t.every.String(), "fire_took", took.Round(time.Millisecond).String())
		}
		if t.stopped.Load() {
			return
		}
	}
}

// forgetTimer removes t from the extension's table.
func (e *Extension) forgetTimer(t *timer) {
	t.end()
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.timers[t.id] == t {
		delete(e.timers, t.id)
	}
}

// clearTimer stops a timer of the extension.
func (e *Extension) clearTimer(id string) error {
	e.runMu.Lock()
	t, ok := e.timers[id]
	if ok {
		delete(e.timers, id)
	}
	e.runMu.Unlock()
	if !ok {
		return fmt.Errorf("timer.clear: no timer %q", id)
	}
	t.end()
	return nil
}

// endInstanceRun12 ends the timers and watches of an instance that goes
// away. e.mu is held.
func (e *Extension) endInstanceRun12(inst *instance) {
	e.runMu.Lock()
	var ts []*timer
	for id, t := range e.timers {
		if t.owner == inst {
			ts = append(ts, t)
			delete(e.timers, id)
		}
	}
	var ws []*watch
	for id, w := range e.watches {
		if w.owner == inst {
			ws = append(ws, w)
			delete(e.watches, id)
		}
	}
	e.runMu.Unlock()
	for _, t := range ts {
		t.end()
	}
	for _, w := range ws {
		w.end()
	}
}

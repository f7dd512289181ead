package extensions

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// Per-call limits on what one guest call may log (pi.log, stdout and
// stderr lines, and refused paths together). Past either limit, lines are
// counted and dropped, and one "… N lines dropped" line is logged when the
// call ends.
const (
	MaxLogLinesPerCall = 1000
	MaxLogBytesPerCall = 1 << 20
)

// quoteLimit is how much of a malformed answer a fault message quotes.
const quoteLimit = 200

// logBudget counts one call's guest log lines and bytes.
type logBudget struct {
	mu             sync.Mutex
	lines, bytes   int
	dropped        int
	panicLine      string // the call's first stderr line starting "panic: " or "fatal error: "
	lastStderrLine string // the call's last non-empty stderr line
}

// allow reports whether a line of n bytes may still be logged this call,
// and counts it either way.
func (b *logBudget) allow(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lines >= MaxLogLinesPerCall || b.bytes+n > MaxLogBytesPerCall {
		b.dropped++
		return false
	}
	b.lines++
	b.bytes += n
	return true
}

// noteStderr remembers a stderr line for the fault message.
func (b *logBudget) noteStderr(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.panicLine == "" && (strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ")) {
		b.panicLine = clip(line, quoteLimit)
	}
	b.lastStderrLine = clip(line, quoteLimit)
}

// reset starts a new call's budget and returns how many lines the last one
// dropped.
func (b *logBudget) reset() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dropped
	b.lines, b.bytes, b.dropped, b.panicLine, b.lastStderrLine = 0, 0, 0, "", ""
	return d
}

// stderrNote is what the guest said on stderr before a fault: its Go panic
// or fatal error line when there was one, else its last stderr line.
func (b *logBudget) stderrNote() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.panicLine != "" {
		return b.panicLine
	}
	return b.lastStderrLine
}

// guestLog logs one line the guest caused, within the current call's
// budget. e.mu is held (it runs inside a call).
func (e *Extension) guestLog(inst *instance, level hclog.Level, msg string, args ...any) {
	if inst != nil && !inst.budget.allow(len(msg)) {
		return
	}
	e.currentLogger().Log(level, msg, args...)
}

// beginCall resets the instance's log budget for a new call.
func (inst *instance) beginCall() {
	inst.flushLogs()
	inst.budget.reset()
}

// endCall flushes the call's partial lines and logs how many lines the
// budget dropped.
func (inst *instance) endCall() {
	inst.flushLogs()
	if d := inst.budget.reset(); d > 0 {
		inst.ext.currentLogger().Warn(fmt.Sprintf("… %d lines dropped (a call may log %d lines and %d KiB)", d, MaxLogLinesPerCall, MaxLogBytesPerCall>>10))
	}
}

func (inst *instance) flushLogs() {
	if inst.stdout != nil {
		inst.stdout.Flush()
	}
	if inst.stderr != nil {
		inst.stderr.Flush()
	}
}

// withStderr adds what the guest wrote on stderr during the call to a
// fault's cause (flushing a partial line first). e.mu is held.
func (e *Extension) withStderr(cause error) error {
	inst := e.inst
	if inst == nil {
		return cause
	}
	inst.flushLogs()
	note := inst.budget.stderrNote()
	if note == "" {
		return cause
	}
	return &noted{err: cause, note: "guest stderr: " + note}
}

// clip cuts s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// quoteStart quotes the first quoteLimit bytes of a guest's answer for a
// one-line message.
func quoteStart(b []byte) string {
	if len(b) > quoteLimit {
		return strconv.Quote(string(b[:quoteLimit])) + fmt.Sprintf(" (first %d of %d bytes)", quoteLimit, len(b))
	}
	return strconv.Quote(string(bytes.Clone(b)))
}

package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/tool"
)

// ErrFault matches (errors.Is) every error of a call that faulted: a trap, a
// timeout, a limit hit, a malformed or out-of-bounds response.
var ErrFault = errors.New("extension fault")

// ErrDisabled matches (errors.Is) the error of a call into an extension that
// was disabled after MaxFaultsInARow faults in a row.
var ErrDisabled = errors.New("extension disabled")

// FaultError is a call that faulted. The instance was discarded; the next
// call starts a fresh one, unless Disabled.
type FaultError struct {
	Extension string // the extension's name
	Method    string // "init", "tool.execute", "hook.tool_call", ...
	Err       error  // what went wrong
	InARow    int    // consecutive faults so far, this one included
	Disabled  bool   // this fault disabled the extension
}

func (e *FaultError) Error() string {
	cause := e.Err.Error()
	if first, _, ok := strings.Cut(cause, "\n"); ok {
		cause = first // wazero appends a wasm stack trace; it goes to the log
	}
	tail := "the instance was discarded; the next call starts a fresh one"
	if e.Disabled {
		tail = "the extension is now disabled for the rest of this process after " + plural.Count(e.InARow, "fault") + " in a row"
	}
	return fmt.Sprintf("extension %s: %s failed: %s (fault %d of %d in a row; %s)", e.Extension, e.Method, cause, e.InARow, MaxFaultsInARow, tail)
}

func (e *FaultError) Unwrap() error { return e.Err }

var (
	_ error = (*FaultError)(nil)
	_ error = (*GuestError)(nil)
	_ error = (*noted)(nil)
)

// Is makes errors.Is(err, ErrFault) true, and ErrDisabled when this fault
// disabled the extension.
func (e *FaultError) Is(target error) bool {
	return target == ErrFault || (e.Disabled && target == ErrDisabled)
}

// ctxKey carries the *instance a host function is called for.
type ctxKey struct{}

// Extension is one loaded module: its declaration (Info), its sandbox, and at
// most one live instance. Calls into it are serialized.
type Extension struct {
	host     *Host
	spec     Spec
	compiled wazero.CompiledModule
	rt       *hostRuntime
	execTO   time.Duration
	hookTO   time.Duration
	grants   Grants
	mounts   []mount
	env      [][2]string
	initReq  []byte
	info     Info

	hookToolCall, hookToolResult, hookBashSpawn, hookEvent bool
	ext11
	run12

	// initRaw is init's first answer (recorded for lazy loads); lazy, for
	// an extension registered from its record, is that record's answer,
	// which every live init must match (lazy.go).
	initRaw    json.RawMessage
	lazy       *initResult
	recordFile string

	mu        ctxMutex // serializes calls; guards the fields below
	name      string
	logger    hclog.Logger
	inst      *instance
	faults    int
	disabled  atomic.Bool // written with mu held; read without it by Disabled
	lastFault error
	closed    bool
}

// instance is one live wasm instance of an extension.
type instance struct {
	ext               *Extension
	mod               api.Module
	mem               api.Memory
	alloc, free, call api.Function
	stack             []uint64
	stdout, stderr    *lineWriter
	budget            logBudget // this call's guest log lines (guestlog.go)

	// Per call; set and read with ext.mu held (host functions run inside
	// the call that holds it).
	callCtx context.Context
	update  tool.UpdateFunc // non-nil only during tool.execute
	held    []byte          // a host_call answer waiting for host_take
	hasHeld bool
}

// Info describes the extension.
func (e *Extension) Info() Info {
	info := e.info
	info.Tools = append([]ToolSpec(nil), info.Tools...)
	info.Hooks = append([]string(nil), info.Hooks...)
	return info
}

// Name is the extension's name.
func (e *Extension) Name() string { return e.info.Name }

// Disabled reports whether the extension was disabled after faults. It
// does not wait for a call in flight.
func (e *Extension) Disabled() bool { return e.disabled.Load() }

func (e *Extension) currentLogger() hclog.Logger { return e.logger }

// start instantiates a fresh instance and runs init. e.mu must be held. On
// error the caller discards the instance.
func (e *Extension) start(ctx context.Context) (initResult, error) {
	inst := e.newInstance()
	e.inst = inst // before instantiation, so a fault in _initialize can quote its stderr
	return e.boot(ctx, inst)
}

// newInstance is an instance not yet instantiated, its output going to the
// extension's log.
func (e *Extension) newInstance() *instance {
	inst := &instance{ext: e, stack: make([]uint64, 2)}
	inst.stdout = &lineWriter{logger: e.currentLogger, level: hclog.Info, stream: "stdout", budget: &inst.budget}
	inst.stderr = &lineWriter{logger: e.currentLogger, level: hclog.Warn, stream: "stderr", budget: &inst.budget}
	return inst
}

// boot instantiates inst and runs init in it.
func (e *Extension) boot(ctx context.Context, inst *instance) (initResult, error) {
	cctx, cancel := context.WithTimeout(ctx, e.hookTO)
	defer cancel()
	cctx = context.WithValue(withChain(cctx, e.name), ctxKey{}, inst)
	cctx = withMethod(cctx, abi.MethodInit)
	inst.callCtx = cctx
	defer func() { inst.callCtx = nil }()

	timedOut := func() bool { return ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) }
	if err := e.ensureCompiled(ctx); err != nil {
		return initResult{}, err
	}
	mod, err := e.instantiate(cctx, inst)
	if err != nil {
		if timedOut() {
			return initResult{}, fmt.Errorf("instantiate: _initialize timed out after %s", e.hookTO)
		}
		return initResult{}, fmt.Errorf("instantiate: %w", err)
	}
	inst.mod = mod
	inst.mem = mod.ExportedMemory(exportMemory)
	inst.alloc = mod.ExportedFunction(exportAlloc)
	inst.free = mod.ExportedFunction(exportFree)
	inst.call = mod.ExportedFunction(exportCall)

	raw, err := inst.roundTrip(cctx, e.initReq, e.rt.pages)
	if err == nil {
		raw, err = decodeResponse(raw)
	}
	var ge *GuestError
	switch {
	case errors.As(err, &ge):
		return initResult{}, fmt.Errorf("init failed: %s", ge.Message)
	case err != nil && timedOut():
		return initResult{}, fmt.Errorf("init timed out after %s", e.hookTO)
	case err != nil:
		return initResult{}, fmt.Errorf("init: %w", err)
	}
	res, err := decodeInit(raw)
	if err != nil {
		return initResult{}, fmt.Errorf("malformed %w", err)
	}
	if err := e.sameAsRecord(res); err != nil {
		return initResult{}, err
	}
	if e.initRaw == nil {
		e.initRaw = append(json.RawMessage(nil), raw...)
	}
	return res, nil
}

// instantiate runs wazero's instantiation (and _initialize) behind a
// recover.
func (e *Extension) instantiate(ctx context.Context, inst *instance) (mod api.Module, err error) {
	enterGuest()
	defer leaveGuest()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("host panic during instantiation: %v", p)
		}
	}()
	return e.rt.r.InstantiateModule(withGuestMemory(ctx), e.compiled, e.moduleConfig(inst))
}

// roundTrip writes a request into the guest, calls pi_call, copies the
// response out and frees both buffers. Any error is a fault.
func (inst *instance) roundTrip(ctx context.Context, req []byte, pages uint32) (resp []byte, err error) {
	enterGuest()
	defer leaveGuest()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("host panic at the extension boundary: %v", p)
		}
		if err != nil && inst.mem != nil {
			// A guest whose memory.grow was refused usually traps soon
			// after; say so when the memory is within one growth step
			// (1 MiB, or an eighth of the limit) of the limit.
			size, limit := uint64(inst.mem.Size()), uint64(pages)*65536
			if size+max(limit/8, 1<<20) >= limit {
				err = &noted{err: err, note: fmt.Sprintf("memory is near its limit: %.1f of %d MiB in use; raise [extensions.limits] memory_mb", float64(size)/(1<<20), pages/16)}
			}
		}
	}()
	st := inst.stack
	st[0] = uint64(len(req))
	if err := inst.alloc.CallWithStack(ctx, st); err != nil {
		return nil, fmt.Errorf("pi_alloc: %w", err)
	}
	p := uint32(st[0])
	if p == 0 {
		return nil, fmt.Errorf("pi_alloc(%d) returned 0 (out of memory: the limit is %d MiB; raise [extensions.limits] memory_mb)", len(req), pages/16)
	}
	if !inst.mem.Write(p, req) {
		return nil, fmt.Errorf("pi_alloc(%d) returned %#x, out of bounds of the %d-byte memory", len(req), p, inst.mem.Size())
	}
	st[0], st[1] = uint64(p), uint64(len(req))
	if err := inst.call.CallWithStack(ctx, st); err != nil {
		return nil, fmt.Errorf("pi_call: %w", err)
	}
	rp, rn := uint32(st[0]>>32), uint32(st[0])
	if rn > MaxResponseBytes {
		return nil, fmt.Errorf("pi_call returned a %d-byte response, over the %d MiB limit", rn, MaxResponseBytes>>20)
	}
	view, ok := inst.mem.Read(rp, rn)
	if !ok {
		return nil, fmt.Errorf("pi_call returned response %#x+%d, out of bounds of the %d-byte memory", rp, rn, inst.mem.Size())
	}
	resp = append([]byte(nil), view...)
	st[0], st[1] = uint64(rp), uint64(rn)
	if err := inst.free.CallWithStack(ctx, st); err != nil {
		return nil, fmt.Errorf("pi_free (response): %w", err)
	}
	st[0], st[1] = uint64(p), uint64(len(req))
	if err := inst.free.CallWithStack(ctx, st); err != nil {
		return nil, fmt.Errorf("pi_free (request): %w", err)
	}
	return resp, nil
}

// noted adds a note to the first line of an error (wazero's errors carry a
// multi-line wasm stack trace after it).
type noted struct {
	err  error
	note string
}

func (n *noted) Error() string {
	first, rest, ok := strings.Cut(n.err.Error(), "\n")
	if !ok {
		return first + " (" + n.note + ")"
	}
	return first + " (" + n.note + ")\n" + rest
}

func (n *noted) Unwrap() error { return n.err }

// discard closes the live instance, if any. e.mu must be held.
func (e *Extension) discard(ctx context.Context) {
	inst := e.inst
	if inst == nil {
		return
	}
	e.inst = nil
	e.host.components.instanceGone(inst)
	e.endInstanceRun12(inst)
	if inst.mod != nil {
		_ = inst.mod.Close(context.WithoutCancel(ctx))
	}
	inst.stdout.Flush()
	inst.stderr.Flush()
}

// close discards the instance, closes the mounts' directories and refuses
// later calls.
func (e *Extension) close(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	e.discard(ctx)
	closeMounts(e.mounts)
}

// disabledError is what every call of a disabled extension gets.
func (e *Extension) disabledError(method string) error {
	return fmt.Errorf("extension %s: %s: %w after %s in a row (last: %s); it stays disabled until pi restarts",
		e.name, method, ErrDisabled, plural.Count(MaxFaultsInARow, "fault"), firstLine(e.lastFault))
}

func firstLine(err error) string {
	if err == nil {
		return "unknown"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// fault records a fault: the instance is discarded and, at
// MaxFaultsInARow, the extension disabled. e.mu must be held.
func (e *Extension) fault(ctx context.Context, method string, cause error) error {
	cause = e.withStderr(cause)
	e.discard(ctx)
	e.faults++
	e.lastFault = cause
	fe := &FaultError{Extension: e.name, Method: method, Err: cause, InARow: e.faults}
	if e.faults >= MaxFaultsInARow {
		e.disabled.Store(true)
		fe.Disabled = true
	}
	e.logger.Error("extension fault", "method", method, "error", cause.Error(), "in_a_row", e.faults, "disabled", fe.Disabled)
	return fe
}

// call sends one request and decodes the answer with decode (which may be
// nil). A *GuestError is returned for an ok:false answer; a *FaultError for a
// fault; a plain error when the extension is disabled or closed or ctx was
// cancelled before or during the call (which discards the instance but is
// not the guest's fault).
func (e *Extension) call(ctx context.Context, method string, req []byte, timeout time.Duration, update tool.UpdateFunc, decode func(json.RawMessage) error) error {
	if err := e.mu.LockContext(ctx); err != nil {
		return fmt.Errorf("extension %s: %s: it stayed busy with another call: %w", e.name, method, err)
	}
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return fmt.Errorf("extension %s: %s: the extension host is closed", e.name, method)
	case e.disabled.Load():
		return e.disabledError(method)
	case ctx.Err() != nil:
		return fmt.Errorf("extension %s: %s: %w", e.name, method, ctx.Err())
	case !onInstance(ctx, e.inst):
		return fmt.Errorf("extension %s: %s: %w", e.name, method, ErrComponentGone)
	}
	if err := e.checkWanted(ctx); err != nil {
		return err
	}
	if e.inst == nil {
		if _, err := e.start(ctx); err != nil {
			if ctx.Err() != nil {
				e.discard(ctx)
				return fmt.Errorf("extension %s: %s: %w", e.name, method, ctx.Err())
			}
			return e.fault(ctx, method, fmt.Errorf("starting a fresh instance: %w", err))
		}
	}
	inst := e.inst
	inst.beginCall()
	defer inst.endCall()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cctx = context.WithValue(withChain(cctx, e.name), ctxKey{}, inst)
	cctx = withMethod(cctx, method)
	inst.callCtx, inst.update = cctx, update
	defer func() { inst.callCtx, inst.update, inst.held, inst.hasHeld = nil, nil, nil, false }()

	raw, err := inst.roundTrip(cctx, req, e.rt.pages)
	if err == nil {
		raw, err = decodeResponse(raw)
		var ge *GuestError
		if errors.As(err, &ge) {
			e.faults = 0
			return ge
		}
		if err == nil && decode != nil {
			if err = decode(raw); err != nil {
				err = fmt.Errorf("%w; the result began %s", err, quoteStart(raw))
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			e.discard(ctx)
			return fmt.Errorf("extension %s: %s: %w", e.name, method, ctx.Err())
		}
		if e.host.closing.Load() {
			e.discard(ctx)
			return fmt.Errorf("extension %s: %s: the extension host was closed during the call", e.name, method)
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s (limits.timeout_ms)", timeout)
		}
		return e.fault(ctx, method, err)
	}
	e.faults = 0
	return nil
}

// sideCall sends one hook request to a fresh instance of its own, started
// (instantiated, init run) for it and closed after it, while the live
// instance waits up the chain of ctx (hookCall). It does not take e.mu (a
// call up the stack holds it) and touches no state of the live instance;
// what fails is an error of this hook alone (a tool_call hook's error
// blocks the call: fail closed), not counted as a fault of the extension.
func (e *Extension) sideCall(ctx context.Context, method string, req []byte, timeout time.Duration, decode func(json.RawMessage) error) error {
	if e.disabled.Load() {
		return fmt.Errorf("extension %s: %s: %w", e.name, method, ErrDisabled)
	}
	if e.host.closing.Load() {
		return fmt.Errorf("extension %s: %s: the extension host is closed", e.name, method)
	}
	inst := e.newInstance()
	defer func() {
		if inst.mod != nil {
			_ = inst.mod.Close(context.WithoutCancel(ctx))
		}
		inst.flushLogs()
	}()
	if _, err := e.boot(ctx, inst); err != nil {
		return fmt.Errorf("extension %s: %s: starting an instance beside the one that waits for this call: %w", e.name, method, err)
	}
	inst.beginCall()
	defer inst.endCall()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cctx = context.WithValue(cctx, ctxKey{}, inst)
	cctx = withMethod(cctx, method)
	inst.callCtx = cctx
	raw, err := inst.roundTrip(cctx, req, e.rt.pages)
	if err == nil {
		raw, err = decodeResponse(raw)
		var ge *GuestError
		if errors.As(err, &ge) {
			return ge
		}
		if err == nil && decode != nil {
			if err = decode(raw); err != nil {
				err = fmt.Errorf("%w; the result began %s", err, quoteStart(raw))
			}
		}
	}
	if err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("timed out after %s (limits.timeout_ms)", timeout)
	}
	if err != nil {
		return fmt.Errorf("extension %s: %s: %w", e.name, method, err)
	}
	return nil
}

// Definitions returns the extension's tools as ToolDefinitions whose Execute
// sends tool.execute. Source is {extension, name, version, path, sha256};
// Override comes from the Spec.
func (e *Extension) Definitions() []tool.ToolDefinition {
	src := tool.Source{Kind: tool.SourceExtension, Name: e.info.Name, Version: e.info.Version, Path: e.info.Path, SHA256: e.info.SHA256}
	defs := make([]tool.ToolDefinition, 0, len(e.info.Tools))
	for _, ts := range e.info.Tools {
		label := ts.Label
		if label == "" {
			label = ts.Name
		}
		defs = append(defs, tool.ToolDefinition{
			Name:             ts.Name,
			Label:            label,
			Description:      ts.Description,
			Parameters:       append(json.RawMessage(nil), ts.Parameters...),
			PromptSnippet:    ts.PromptSnippet,
			PromptGuidelines: append([]string(nil), ts.PromptGuidelines...),
			ExecutionMode:    tool.ExecutionMode(ts.ExecutionMode),
			Source:           src,
			Override:         e.spec.Override,
			Execute:          e.executeFunc(ts.Name),
		})
	}
	return defs
}

func (e *Extension) executeFunc(name string) tool.ExecuteFunc {
	return func(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
		cwd := tc.Cwd
		if cwd == "" {
			cwd = e.host.opts.Cwd
		}
		req, err := executeRequest(name, call, cwd)
		if err != nil {
			return tool.Result{}, fmt.Errorf("extension %s: %w", e.info.Name, err)
		}
		var res tool.Result
		err = e.call(ctx, abi.MethodExecute, req, e.execTO, call.Update, func(raw json.RawMessage) error {
			var derr error
			res, derr = decodeExecute(raw)
			return derr
		})
		var ge *GuestError
		if errors.As(err, &ge) {
			return tool.ErrorResult(ge.Message), nil
		}
		if err != nil {
			return tool.Result{}, err
		}
		return res, nil
	}
}

package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/execgrant"
)

// Return codes of the host imports for ABI misuse (all negative).
const (
	// errOutOfBounds: a pointer/length pair is outside the guest's memory.
	errOutOfBounds = -1
	// errNotInCall: the import was used where it makes no sense (emit
	// outside tool.execute, any import outside a host->guest call).
	errNotInCall = -2
	// errNothingHeld: host_take with no held response.
	errNothingHeld = -3
	// errTooSmall: host_take's buffer is smaller than the held response
	// (which stays held).
	errTooSmall = -4
	// errBadPayload: emit's payload is not a valid partial result.
	errBadPayload = -5
)

// Limits of the exec host method.
const (
	maxExecOutput   = 4 << 20 // per stream; the rest is dropped
	execWaitDelay   = time.Second
	maxLogLineBytes = maxLogLine
)

// newPiModule defines the host module `pi`. Its functions find the calling
// instance in the context of the call (ctxKey).
func newPiModule(r wazero.Runtime) wazero.HostModuleBuilder {
	b := r.NewHostModuleBuilder(piModule)
	def := func(name string, fn api.GoModuleFunc) {
		sig := piImports[name]
		b.NewFunctionBuilder().WithGoModuleFunction(fn, sig.params, sig.results).Export(name)
	}
	def("log", hostLog)
	def("emit", hostEmit)
	def("host_call", hostCall)
	def("host_take", hostTake)
	return b
}

func instanceOf(ctx context.Context) *instance {
	inst, _ := ctx.Value(ctxKey{}).(*instance)
	return inst
}

// hostLog: log(level, ptr, len). Levels 0 trace .. 4 error.
func hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	level, p, n := int32(stack[0]), uint32(stack[1]), uint32(stack[2])
	inst := instanceOf(ctx)
	if inst == nil {
		return
	}
	logger := inst.ext.currentLogger()
	if n > maxLogLineBytes {
		n = maxLogLineBytes
	}
	msg, ok := mod.Memory().Read(p, n)
	if !ok {
		logger.Warn("pi.log called with an out-of-bounds buffer", "ptr", p, "len", n)
		return
	}
	lv := hclog.Info
	switch level {
	case 0:
		lv = hclog.Trace
	case 1:
		lv = hclog.Debug
	case 3:
		lv = hclog.Warn
	case 4:
		lv = hclog.Error
	}
	inst.ext.guestLog(inst, lv, string(msg))
}

// hostEmit: emit(ptr, len) -> i32. A partial result during tool.execute.
func hostEmit(ctx context.Context, mod api.Module, stack []uint64) {
	p, n := uint32(stack[0]), uint32(stack[1])
	stack[0] = api.EncodeI32(emit(ctx, mod, p, n))
}

func emit(ctx context.Context, mod api.Module, p, n uint32) int32 {
	inst := instanceOf(ctx)
	if inst == nil || inst.update == nil {
		return errNotInCall
	}
	if ctx.Err() != nil {
		return 1
	}
	b, ok := mod.Memory().Read(p, n)
	if !ok {
		return errOutOfBounds
	}
	r, err := decodePartial(b)
	if err != nil {
		inst.ext.currentLogger().Warn("pi.emit: bad partial result", "error", err.Error())
		return errBadPayload
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				inst.ext.currentLogger().Error("update callback panicked", "panic", fmt.Sprint(p))
			}
		}()
		inst.update(r)
	}()
	if ctx.Err() != nil {
		return 1
	}
	return 0
}

// hostCall: host_call(req, req_len, out, out_cap) -> i64.
func hostCall(ctx context.Context, mod api.Module, stack []uint64) {
	req, reqLen, out, outCap := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = uint64(hostCallImpl(ctx, mod, req, reqLen, out, outCap))
}

func hostCallImpl(ctx context.Context, mod api.Module, req, reqLen, out, outCap uint32) int64 {
	inst := instanceOf(ctx)
	if inst == nil {
		return errNotInCall
	}
	mem := mod.Memory()
	if _, ok := mem.Read(out, outCap); !ok {
		return errOutOfBounds
	}
	b, ok := mem.Read(req, reqLen)
	if !ok {
		return errOutOfBounds
	}
	resp := inst.ext.handleHostCall(ctx, b)
	inst.held, inst.hasHeld = nil, false
	n := int64(len(resp))
	if n <= int64(outCap) {
		mem.Write(out, resp) // in bounds: checked above
		return n
	}
	inst.held, inst.hasHeld = resp, true
	return n
}

// hostTake: host_take(out, out_cap) -> i64.
func hostTake(ctx context.Context, mod api.Module, stack []uint64) {
	out, outCap := uint32(stack[0]), uint32(stack[1])
	stack[0] = uint64(hostTakeImpl(ctx, mod, out, outCap))
}

func hostTakeImpl(ctx context.Context, mod api.Module, out, outCap uint32) int64 {
	inst := instanceOf(ctx)
	switch {
	case inst == nil:
		return errNotInCall
	case !inst.hasHeld:
		return errNothingHeld
	case uint64(len(inst.held)) > uint64(outCap):
		return errTooSmall
	}
	if !mod.Memory().Write(out, inst.held) {
		return errOutOfBounds
	}
	n := int64(len(inst.held))
	inst.held, inst.hasHeld = nil, false
	return n
}

// handleHostCall answers one host_call envelope. It never fails: every
// problem is an error answer.
func (e *Extension) handleHostCall(ctx context.Context, b []byte) []byte {
	var req abi.Request[json.RawMessage]
	if err := decodeStrict(b, &req); err != nil {
		return encodeErr("malformed host_call request: " + err.Error())
	}
	switch req.Method {
	case abi.HostMethodExec:
		var p abi.ExecParams
		if isNull(req.Params) {
			return encodeErr("exec: params must be an object with argv")
		}
		if err := decodeStrict(req.Params, &p); err != nil {
			return encodeErr("exec: malformed params: " + err.Error())
		}
		res, err := e.exec(ctx, p)
		if err != nil {
			return encodeErr(err.Error())
		}
		return encodeOK(res)
	default:
		if out, ok := e.handleHostCallUI12(ctx, req.Method, req.Params); ok {
			return out
		}
		if out, ok := e.handleHostCall11(ctx, req.Method, req.Params); ok {
			return out
		}
		if out, ok := e.handleHostCallSession12(ctx, req.Method, req.Params); ok {
			return out
		}
		if out, ok := e.handleHostCallRun12(ctx, req.Method, req.Params); ok {
			return out
		}
		known := slices.Concat(hostMethods11, hostMethodsUI12, hostMethodsSession12, hostMethodsRun12)
		return encodeErr(fmt.Sprintf("unknown host method %q (host methods: exec, %s)", req.Method, strings.Join(known, ", ")))
	}
}

// exec runs a granted command outside the guest's sandbox (under the
// kernel sandbox of Options.Sandbox, as bash), bounded by the call's
// deadline and timeoutMs. Its environment is PATH plus the granted names
// (less Options.HideEnv).
func (e *Extension) exec(ctx context.Context, p abi.ExecParams) (abi.ExecResult, error) {
	if len(p.Argv) == 0 || p.Argv[0] == "" {
		return abi.ExecResult{}, errors.New("exec: argv must name a command")
	}
	if !execgrant.Allowed(e.grants.Exec, p.Argv) {
		granted := "none"
		if len(e.grants.Exec) > 0 {
			granted = strings.Join(e.grants.Exec, ", ")
		}
		return abi.ExecResult{}, fmt.Errorf("permission denied: extension %s may not exec %q (grants.exec: %s); to allow it, grant it at install with --grant exec=%s (or add it to grants.exec in pi.toml)", e.name, p.Argv, granted, p.Argv[0])
	}
	if p.TimeoutMS < 0 {
		return abi.ExecResult{}, errors.New("exec: timeoutMs must not be negative")
	}
	if p.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	dir, err := e.execDir(p.Cwd)
	if err != nil {
		return abi.ExecResult{}, err
	}
	env := []string{}
	if v, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+v)
	}
	for _, kv := range e.env {
		env = append(env, kv[0]+"="+kv[1])
	}
	var policy sandbox.Policy
	if e.host.opts.Sandbox != nil {
		if sp := e.host.opts.Sandbox(); sp != nil {
			policy = *sp
		}
	}
	argv := p.Argv
	if policy.Active() {
		// The helper execs the program itself: find it as exec.Command
		// would.
		if !strings.Contains(argv[0], "/") {
			path, err := exec.LookPath(argv[0])
			if err != nil {
				return abi.ExecResult{}, fmt.Errorf("exec %s: %w", p.Argv[0], err)
			}
			argv = append([]string{path}, argv[1:]...)
		}
		if argv, env, err = sandbox.Wrap(policy, e.host.opts.SandboxHelper, argv, env); err != nil {
			return abi.ExecResult{}, fmt.Errorf("exec %s: %w", p.Argv[0], err)
		}
	}
	home, _ := os.UserHomeDir()
	guard := policy.Guard(home)
	stdout := &capped{max: maxExecOutput}
	stderr := &capped{max: maxExecOutput}
	err = runContained(func() *exec.Cmd {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = env
		cmd.Stdin = strings.NewReader(p.Stdin)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.WaitDelay = execWaitDelay
		cmd.SysProcAttr = sandbox.SysProcAttr(policy)
		return cmd
	})
	res := abi.ExecResult{Stdout: stdout.String(), Stderr: stderr.String()}
	if refused := append(policy.Refusals(res.Stderr, dir, home), guard()...); len(refused) > 0 {
		res.Stderr = strings.TrimRight(res.Stderr, "\n") + "\n" + strings.Join(refused, "\n") + "\n"
	}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return abi.ExecResult{}, fmt.Errorf("exec %s: %w", p.Argv[0], ctx.Err())
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		return abi.ExecResult{}, fmt.Errorf("exec %s: %w", p.Argv[0], err)
	}
	return res, nil
}

// execDir is where an exec runs: cwd joined to the project root when
// relative ("" is the project root itself), with every symlink resolved,
// which must be one of the extension's fs grants or lie beneath one
// (read-only grants count: running there writes nothing by itself). The
// real path is returned, so the command starts where it was checked.
func (e *Extension) execDir(cwd string) (string, error) {
	root := e.host.opts.ProjectRoot
	dir := root
	if cwd != "" {
		dir = cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
	}
	dir = filepath.Clean(dir)
	granted := "none"
	if len(e.grants.FS) > 0 {
		granted = strings.Join(e.grants.FS, ", ")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("exec: cwd %s: %w", dir, err)
	}
	for _, m := range e.mounts {
		mr, err := filepath.EvalSymlinks(m.dir)
		if err != nil {
			continue
		}
		if pathWithin(mr, real) {
			return real, nil
		}
	}
	shown := dir
	if real != dir {
		shown = fmt.Sprintf("%s (really %s)", dir, real)
	}
	hint := "pass a cwd inside one of them"
	if cwd == "" {
		shown = "the project root " + shown
		hint = "pass a cwd inside one of them, or grant fs=ro:. to run in the project root"
	}
	return "", fmt.Errorf("permission denied: extension %s may not exec in %s: it is outside the extension's fs grants (grants.fs: %s); %s", e.name, shown, granted, hint)
}

// pathWithin reports whether path is dir or beneath it (both absolute and
// clean).
func pathWithin(dir, path string) bool {
	if dir == path || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// capped keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max int
}

var _ io.Writer = (*capped)(nil)

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

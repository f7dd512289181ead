package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pi-go/pi/internal/abi"
)

// Context is what a tool handler gets besides its input: which call this is,
// the working directory the call runs in, and a way to report progress.
type Context struct {
	ToolName   string
	ToolCallID string
	// Cwd is the agent's working directory for this call (an absolute host
	// path, mounted at the same path inside the sandbox when granted).
	Cwd string

	cancelled bool
}

// Emit sends a partial result (a progress update for the UI and the event
// stream; never sent to the model). It reports whether the call was
// cancelled, in which case the handler should stop and return.
func (c *Context) Emit(partial Result) (cancelled bool) {
	b, err := encodePartial(partial)
	if err != nil {
		Logf(LevelWarn, "emit from tool %s: %v", c.ToolName, err)
		return c.cancelled
	}
	if hostEmit(b) {
		c.cancelled = true
	}
	return c.cancelled
}

// encodePartial encodes the payload of emit.
func encodePartial(partial Result) ([]byte, error) {
	p, err := partialToABI(partial)
	if err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// Cancelled reports whether an earlier Emit learned that the call was
// cancelled.
func (c *Context) Cancelled() bool { return c.cancelled }

// Log sends a log line to the host, which writes it under its logger named
// for the extension.
func Log(level Level, msg string) { hostLog(level, msg) }

// Logf formats a log line and sends it to the host.
func Logf(level Level, format string, args ...any) { hostLog(level, fmt.Sprintf(format, args...)) }

// Config decodes the extension's configuration (the [extensions.config]
// table of its pi.toml entry) into v, strictly: an unknown key is an error.
// Without configuration v is left as it is, so set defaults first.
//
// # Errors
//
// Config fails before the host's init, and when the configuration does not
// fit v; the message names the key.
func Config(v any) error {
	if !std.initialized {
		return errors.New("sdk.Config: the host has not sent init yet (call it from a handler or an OnInit function)")
	}
	if len(std.config) == 0 || string(std.config) == "null" {
		return nil
	}
	if err := decodeStrict(std.config, v); err != nil {
		return fmt.Errorf("config of extension %q: %s", std.name, describeDecodeError(err))
	}
	return nil
}

// Cwd returns the working directory the host gave at init.
func Cwd() string { return std.cwd }

// Granted returns what the host granted this extension (the grants of its
// pi.toml entry, as sent at init).
func Granted() Grants { return std.grants }

// HostInfo returns the host's name and version as sent at init.
func HostInfo() (name, version string) { return std.hostName, std.hostVersion }

// HostError is a failure the host answered to a host call, such as a denied
// exec.
type HostError struct {
	Method  string
	Message string
}

var _ error = (*HostError)(nil)

func (e *HostError) Error() string { return "host call " + e.Method + ": " + e.Message }

// HostCall sends a request to the host (the host_call import) and decodes
// its result into result, which may be nil. It is the general form behind
// Exec, for methods a newer host adds within ABI 1.
//
// # Errors
//
// HostCall fails with a *HostError when the host answers {"ok": false} (an
// unknown method, a permission denied), and with other errors when the
// request cannot be encoded, the ABI is misused or the answer does not
// decode.
func HostCall(method string, params, result any) error {
	req, err := encodeHostRequest(method, params)
	if err != nil {
		return err
	}
	raw, err := hostCall(req)
	if err != nil {
		return fmt.Errorf("host call %s: %w", method, err)
	}
	return decodeHostAnswer(method, raw, result)
}

// encodeHostRequest encodes a host_call request envelope.
func encodeHostRequest(method string, params any) ([]byte, error) {
	req, err := json.Marshal(abi.Request[any]{Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("host call %s: encode: %w", method, err)
	}
	return req, nil
}

// decodeHostAnswer decodes the host's answer to a host_call into result
// (which may be nil).
func decodeHostAnswer(method string, raw []byte, result any) error {
	var resp abi.Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("host call %s: malformed answer: %w", method, err)
	}
	if resp.OK == nil || !*resp.OK {
		msg := "failed"
		if resp.Error != nil {
			msg = resp.Error.Message
		}
		return &HostError{Method: method, Message: msg}
	}
	if result != nil && len(resp.Result) > 0 {
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("host call %s: decode result: %w", method, err)
		}
	}
	return nil
}

// ExecOptions are the optional parts of Exec.
type ExecOptions struct {
	// Cwd is the directory to run in: absolute, or relative to the project
	// root; "" is the project root. Its real path (symlinks resolved) must
	// be one of the extension's fs grants or lie beneath one, or the host
	// refuses with permission denied.
	Cwd string
	// Timeout stops the command; 0 is the host's default.
	Timeout time.Duration
	// Stdin is written to the command's standard input.
	Stdin string
}

// ExecResult is what a command run by Exec produced.
type ExecResult struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
}

// Exec runs a command on the host, outside the sandbox. The host allows it
// only when argv matches one of the extension's exec grants (a bare name
// such as "git" allows any arguments; "git status*" is matched against the
// whole argv, see docs/abi.md) and its directory lies inside the
// extension's fs grants. A command that runs and exits non-zero is not an
// error: see ExitCode.
//
// # Errors
//
// Exec fails with a *HostError when the host refuses (permission denied) or
// cannot start the command.
func Exec(argv []string, opts ExecOptions) (ExecResult, error) {
	var res abi.ExecResult
	err := HostCall(abi.HostMethodExec, execParamsToABI(argv, opts), &res)
	return execResultFromABI(res), err
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/runtime/tool"

	"github.com/pi-go/pi/internal/sandbox"
)

// Defaults of Options and Server.
const (
	// DefaultTimeout bounds one tool call (timeout_ms in pi.toml).
	DefaultTimeout = 60 * time.Second
	// DefaultStartTimeout bounds starting a server and listing its tools.
	DefaultStartTimeout = 60 * time.Second
)

// Server is one MCP server to connect to: a stdio server pi starts
// (Command) or a streamable HTTP endpoint (URL).
type Server struct {
	// Name is the server's name in tool names (mcp__NAME__TOOL).
	Name string
	// Command is the program and its arguments of a stdio server.
	Command []string
	// URL is the endpoint of an HTTP server.
	URL string
	// Headers go with every HTTP request; ${VAR} in a value is replaced by
	// the environment variable VAR when the server starts.
	Headers map[string]string
	// Env is added to a stdio server's environment; ${VAR} is expanded.
	Env map[string]string
	// Tools is an allowlist of the server's tool names; nil means all.
	Tools []string
	// DisabledTools are never registered.
	DisabledTools []string
	// Timeout bounds one call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Sandbox runs a stdio server under Options.Sandbox's policy; it
	// does not start when there is none.
	Sandbox bool
}

// Target is the command line or the URL (without its query, which may hold
// a credential) of the server, for messages and tool sources.
func (s Server) Target() string {
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil {
			return "(bad URL)"
		}
		u.RawQuery, u.Fragment, u.User = "", "", nil
		return u.String()
	}
	return strings.Join(s.Command, " ")
}

// Transport is "stdio" or "http".
func (s Server) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Options configure a Manager.
type Options struct {
	// Cwd is the working directory of stdio servers (and part of the cache
	// key: a server started elsewhere may list other tools).
	Cwd string
	// CacheDir holds the tool-list cache ($PI_HOME/cache); "" keeps none.
	CacheDir string
	// Logger receives the servers' stderr lines (debug) and problems
	// (warn); nil discards them.
	Logger hclog.Logger
	// HideEnv names variables stdio servers do not inherit (the model's
	// API key); a server's Env may still set them.
	HideEnv []string
	// ClientName and ClientVersion are what servers are told in initialize.
	ClientName, ClientVersion string
	// StartTimeout bounds starting a server and listing its tools; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// OnChange is called (on its own goroutine) after the tools of a server
	// changed: listed for the first time or again (tools/list_changed), or
	// gone because the server failed or exited. See Manager.Generation.
	OnChange func()
	// Sandbox is the kernel sandbox of the stdio servers marked Sandbox
	// (internal/sandbox; nil or a policy that is not Active: none, and
	// such a server does not start); SandboxHelper the program that
	// applies it ("" is the running program).
	Sandbox       func() *sandbox.Policy
	SandboxHelper string
	// OnWarning receives one sentence per problem a user should see (a
	// server that failed to start or died, a tool that was left out).
	OnWarning func(string)
}

// Manager owns the connections to a set of MCP servers: it starts them
// lazily, caches their tool lists, turns their tools into ToolDefinitions
// and ends them. Its methods may be called from several goroutines.
type Manager struct {
	opts    Options
	logger  hclog.Logger
	conns   []*conn
	ctx     context.Context
	cancel  context.CancelFunc
	gen     atomic.Uint64
	closing sync.Once
}

// New returns a Manager for servers, with their cached tool lists loaded;
// no server is started.
//
// # Errors
//
// A server without a name, with both or neither of Command and URL, or
// with the name of another.
func New(opts Options, servers []Server) (*Manager, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.ClientName == "" {
		opts.ClientName = "pi"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	m := &Manager{opts: opts, logger: opts.Logger}
	if m.logger == nil {
		m.logger = hclog.NewNullLogger()
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	seen := map[string]bool{}
	for _, s := range servers {
		switch {
		case s.Name == "":
			return nil, errors.New("mcp server: empty name")
		case !ValidServerName(s.Name):
			return nil, fmt.Errorf("mcp server %q: not a server name (want [a-z][a-z0-9_-]* without __ and not ending in _)", s.Name)
		case seen[s.Name]:
			return nil, fmt.Errorf("mcp server %q: configured twice", s.Name)
		case (len(s.Command) == 0) == (s.URL == ""):
			return nil, fmt.Errorf("mcp server %q: want a command or a url", s.Name)
		}
		seen[s.Name] = true
		if s.Timeout <= 0 {
			s.Timeout = DefaultTimeout
		}
		m.conns = append(m.conns, newConn(m, s))
	}
	return m, nil
}

// ValidServerName reports whether name can name a server: [a-z][a-z0-9_-]*
// without "__" and not ending in "_", so that in mcp__SERVER__TOOL the
// first "__" after the prefix always ends the server's name (servers "a"
// and "a__b", or "a" and "a_", could otherwise list tools of the same pi
// name, and a rule on mcp__a__* would cover another server's tools).
func ValidServerName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' || strings.Contains(name, "__") || strings.HasSuffix(name, "_") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Generation counts the changes of the servers' tools; a caller that saw
// another value last time should ask for Definitions again. It changes
// with the tools themselves (under the server's lock), so Definitions
// never lists tools newer than the Generation read after it.
func (m *Manager) Generation() uint64 { return m.gen.Load() }

// changed tells OnChange that a server's tools changed (Generation already
// counts it).
func (m *Manager) changed() {
	if m.opts.OnChange != nil {
		go m.opts.OnChange()
	}
}

func (m *Manager) warn(msg string) {
	if m.opts.OnWarning != nil {
		m.opts.OnWarning(msg)
		return
	}
	m.logger.Warn(msg)
}

// Start starts every server that is not running yet and waits until each
// has listed its tools or failed, or ctx ends. A failure is not returned:
// the server's Status says it, and it has no tools.
func (m *Manager) Start(ctx context.Context) {
	m.each(func(c *conn) { c.wait(ctx, c.start()) })
}

// Prepare is what an agent run does: servers whose tool list is cached
// start in the background (their cached tools serve until they have
// listed them again), and those without one are started and waited for, as
// in Start.
func (m *Manager) Prepare(ctx context.Context) {
	m.each(func(c *conn) {
		done := c.start()
		if !c.hasCache() {
			c.wait(ctx, done)
		}
	})
}

// each runs f for every server at the same time and waits for all.
func (m *Manager) each(f func(*conn)) {
	var wg sync.WaitGroup
	for _, c := range m.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(c)
		}()
	}
	wg.Wait()
}

// Definitions returns the tools of every server that has not failed, in the
// order of the servers and of each server's list: the live list of a
// running server, else the cached one. Tools the allowlists leave out and
// tools whose schema pi refuses are not there.
func (m *Manager) Definitions() []tool.ToolDefinition {
	var out []tool.ToolDefinition
	for _, c := range m.conns {
		out = append(out, c.definitions()...)
	}
	return out
}

// Owns reports whether name is the name of a tool of one of the servers (a
// tool it has now, or one it may list later: mcp__SERVER__...).
func (m *Manager) Owns(name string) bool {
	for _, c := range m.conns {
		if strings.HasPrefix(name, sanitize(Prefix+c.cfg.Name+"__")) {
			return true
		}
	}
	return false
}

// State is where a server is in its life.
type State string

// The states of a server.
const (
	StateIdle     State = "not started"
	StateStarting State = "starting"
	StateRunning  State = "running"
	StateFailed   State = "failed"
	StateClosed   State = "closed"
)

// Status describes one server.
type Status struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Target    string `json:"target"`
	State     State  `json:"state"`
	// Error says why a failed server failed, with its stderr's tail.
	Error string `json:"error,omitempty"`
	// Version is the server's own name and version from initialize.
	Version string `json:"version,omitempty"`
	// Tools are pi's names of its registered tools; ServerTools the names
	// the server listed (before the allowlists).
	Tools       []string `json:"tools"`
	ServerTools []string `json:"serverTools"`
	// FromCache says the tools come from the cache, not the live server.
	FromCache bool `json:"fromCache"`
	// Problems are tools left out (a schema pi refuses, an allowlisted name
	// the server does not have).
	Problems []string `json:"problems,omitempty"`
}

// Status describes every server, in order.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c.status())
	}
	return out
}

// Close ends every server: stdio servers get their stdin closed, then
// SIGTERM, then SIGKILL, and whatever is left of their process group is
// killed. It waits for all of them (a few seconds at most) and is safe to
// call more than once.
func (m *Manager) Close() {
	m.closing.Do(func() {
		m.cancel()
		m.each(func(c *conn) { c.close() })
	})
}

// call runs one tool call on a server, starting it first if needed.
func (m *Manager) call(ctx context.Context, c *conn, name string, args json.RawMessage) (tool.Result, error) {
	session, err := c.ensure(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("mcp server %q: call %s cancelled while the server was starting", c.cfg.Name, name)
		}
		return tool.Result{}, err
	}
	return c.callTool(ctx, session, name, args)
}

// allowed applies a server's allowlists to one of its tool names.
func allowed(s Server, name string) bool {
	if s.Tools != nil && !slices.Contains(s.Tools, name) {
		return false
	}
	return !slices.Contains(s.DisabledTools, name)
}

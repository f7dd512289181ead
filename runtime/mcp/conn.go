package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-go/pi/internal/procs"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/tool"
)

// terminateGrace is how long a stdio server has after its stdin is closed
// before SIGTERM, and again before SIGKILL.
const terminateGrace = time.Second

// stderrWait bounds the wait for a dead server's stderr to be read to its
// end (children may hold it open until their group is killed).
const stderrWait = 2 * time.Second

// conn is one server: its state, its tool list, and while it runs its
// session and process.
type conn struct {
	m         *Manager
	cfg       Server
	cachePath string // "" without a cache

	mu       sync.Mutex
	state    State
	err      error
	tools    []cachedTool // the live list, else the cached one
	cached   bool         // tools came from the cache
	version  string
	session  *sdk.ClientSession
	proc     *process
	died     chan struct{} // closed when the running session died
	starting chan struct{} // closed when the start under way ends
	// defs are the definitions made from tools (nil: not made yet);
	// problems what was left out making them.
	defs     []tool.ToolDefinition
	problems []string
	// relisting serializes tools/list_changed refreshes; relistAgain
	// records a notification that came during one.
	relisting, relistAgain bool
}

func newConn(m *Manager, s Server) *conn {
	c := &conn{m: m, cfg: s, state: StateIdle}
	if m.opts.CacheDir != "" {
		c.cachePath = cachePath(m.opts.CacheDir, s.Name, cacheKey(s, m.opts.Cwd))
		e, err := readCache(c.cachePath)
		switch {
		case err != nil:
			m.logger.Warn("mcp tool-list cache not read; the server will be listed again", "server", s.Name, "error", err.Error())
		case e != nil:
			c.tools, c.cached, c.version = e.Tools, true, e.Version
		}
	}
	return c
}

func (c *conn) hasCache() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cached
}

// start begins starting the server unless it is running, starting, failed
// or closed; the channel is closed when the server is no longer starting.
func (c *conn) start() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.starting != nil {
		return c.starting
	}
	done := make(chan struct{})
	if c.state != StateIdle {
		close(done)
		return done
	}
	c.state, c.starting = StateStarting, done
	go c.run(done)
	return done
}

// wait waits for done or ctx.
func (c *conn) wait(ctx context.Context, done <-chan struct{}) {
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// ensure returns the running server's session, starting it first if
// needed.
func (c *conn) ensure(ctx context.Context) (*sdk.ClientSession, error) {
	done := c.start()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateRunning {
		return c.session, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	return nil, fmt.Errorf("mcp server %q: %s", c.cfg.Name, c.state)
}

// run starts the server, lists its tools and records the outcome.
func (c *conn) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(c.m.ctx, c.m.opts.StartTimeout)
	defer cancel()
	session, proc, tools, version, err := c.connect(ctx)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && c.m.ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s: %w", c.m.opts.StartTimeout, err)
		}
		proc.kill()
		err = c.describe("failed to start", err, proc)
	}
	c.mu.Lock()
	closed := c.state == StateClosed
	died := make(chan struct{})
	switch {
	case closed:
	case err != nil:
		c.state, c.err = StateFailed, err
		c.setToolsLocked(nil, false)
	default:
		c.state, c.session, c.proc, c.version, c.died = StateRunning, session, proc, version, died
		c.setToolsLocked(tools, false)
	}
	c.starting = nil
	c.mu.Unlock()

	switch {
	case closed:
		if session != nil {
			session.Close()
		}
		proc.kill()
	case err != nil:
		c.m.warn(err.Error() + "; pi goes on without its tools")
	default:
		c.saveCache(tools, version)
		go c.watch(session, proc, died)
	}
	close(done)
	if !closed {
		c.m.changed()
	}
}

// connect starts the process (stdio) or opens the endpoint (http), runs
// initialize and lists the tools.
func (c *conn) connect(ctx context.Context) (*sdk.ClientSession, *process, []cachedTool, string, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: c.m.opts.ClientName, Version: c.m.opts.ClientVersion}, &sdk.ClientOptions{
		// No roots: pi does not expose the file system through MCP.
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go c.relist() },
	})
	var transport sdk.Transport
	var proc *process
	if c.cfg.URL != "" {
		headers, err := expandAll(c.cfg.Headers, "header")
		if err != nil {
			return nil, nil, nil, "", err
		}
		u, err := url.Parse(c.cfg.URL)
		if err != nil {
			return nil, nil, nil, "", err
		}
		transport = &sdk.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: &http.Client{Transport: headerTransport{u.Scheme, u.Host, headers}}}
	} else {
		env, err := serverEnv(os.Environ(), c.m.opts.HideEnv, c.cfg.Env)
		if err != nil {
			return nil, nil, nil, "", err
		}
		argv, attr, err := c.sandboxed(env)
		if err != nil {
			return nil, nil, nil, "", err
		}
		proc, err = newProcess(argv, c.m.opts.Cwd, attr.env, attr.sys, c.stderrLine)
		if err != nil {
			return nil, nil, nil, "", err
		}
		transport = proc
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, proc, nil, "", err
	}
	version := ""
	if ir := session.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		version = strings.TrimSpace(ir.ServerInfo.Name + " " + ir.ServerInfo.Version)
	}
	tools, err := listTools(ctx, session)
	if err != nil {
		session.Close()
		return nil, proc, nil, "", fmt.Errorf("list tools: %w", err)
	}
	return session, proc, tools, version, nil
}

// maxTools bounds a server's tool list.
const maxTools = 1000

func listTools(ctx context.Context, s *sdk.ClientSession) ([]cachedTool, error) {
	var out []cachedTool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if len(out) == maxTools {
			return nil, fmt.Errorf("the server lists more than %d tools", maxTools)
		}
		ct := cachedTool{Name: t.Name, Title: t.Title, Description: t.Description}
		if ct.Title == "" && t.Annotations != nil {
			ct.Title = t.Annotations.Title
		}
		if t.InputSchema != nil {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
			}
			ct.InputSchema = b
		}
		out = append(out, ct)
	}
	return out, nil
}

// relist lists the tools again after tools/list_changed.
func (c *conn) relist() {
	c.mu.Lock()
	if c.relisting {
		c.relistAgain = true
		c.mu.Unlock()
		return
	}
	c.relisting = true
	c.mu.Unlock()
	for {
		c.mu.Lock()
		s, ok := c.session, c.state == StateRunning
		c.relistAgain = false
		c.mu.Unlock()
		if !ok {
			break
		}
		ctx, cancel := context.WithTimeout(c.m.ctx, c.m.opts.StartTimeout)
		tools, err := listTools(ctx, s)
		cancel()
		changed := false
		c.mu.Lock()
		if err == nil && c.session == s && c.state == StateRunning {
			changed = c.setToolsLocked(tools, false)
		}
		again := c.relistAgain
		c.mu.Unlock()
		if err != nil {
			c.m.logger.Warn("mcp tools/list_changed: listing the tools again failed", "server", c.cfg.Name, "error", err.Error())
		} else if changed {
			c.saveCache(tools, c.version)
			c.m.changed()
		}
		if !again {
			break
		}
	}
	c.mu.Lock()
	c.relisting = false
	c.mu.Unlock()
}

// setToolsLocked replaces the tool list; it reports whether it changed.
func (c *conn) setToolsLocked(tools []cachedTool, cached bool) bool {
	same := !c.cached && c.defs != nil && slices.EqualFunc(c.tools, tools, func(a, b cachedTool) bool {
		return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description && string(a.InputSchema) == string(b.InputSchema)
	})
	c.tools, c.cached, c.defs, c.problems = tools, cached, nil, nil
	if !same {
		// With the change, under c.mu: whoever sees the new tools
		// (definitions takes c.mu) sees the new Generation too.
		c.m.gen.Add(1)
	}
	return !same
}

func (c *conn) saveCache(tools []cachedTool, version string) {
	if c.cachePath == "" {
		return
	}
	if tools == nil {
		tools = []cachedTool{}
	}
	if err := writeCache(c.cachePath, &cacheEntry{Server: c.cfg.Name, Version: version, SavedAt: time.Now().UTC(), Tools: tools}); err != nil {
		c.m.logger.Warn("mcp tool-list cache not written", "server", c.cfg.Name, "error", err.Error())
	}
}

// watch waits for the session to end; a server that ends while pi still
// wants it has died: it is failed, with its stderr tail, its tools go, and
// died is closed.
func (c *conn) watch(s *sdk.ClientSession, p *process, died chan struct{}) {
	werr := s.Wait()
	c.mu.Lock()
	current := c.session == s && c.state == StateRunning
	c.mu.Unlock()
	if !current {
		return
	}
	p.kill()
	if werr == nil {
		werr = errors.New("the connection closed")
	}
	err := c.describe("exited", werr, p)
	c.mu.Lock()
	if c.session != s || c.state != StateRunning {
		c.mu.Unlock()
		return
	}
	c.state, c.err, c.session, c.proc = StateFailed, err, nil, nil
	c.setToolsLocked(nil, false)
	close(died)
	c.mu.Unlock()
	c.m.warn(err.Error() + "; pi goes on without its tools")
	c.m.changed()
}

// describe is the error of a server that failed: what happened, the
// error, and the last lines of its stderr.
func (c *conn) describe(what string, err error, p *process) error {
	msg := fmt.Sprintf("mcp server %q (%s) %s: %v", c.cfg.Name, c.cfg.Target(), what, err)
	if p != nil {
		if tail := p.stderrTail(stderrWait); tail != "" {
			msg += "; stderr: " + tail
		}
	}
	return errors.New(msg)
}

func (c *conn) stderrLine(line string) {
	c.m.logger.Debug("mcp server stderr", "server", c.cfg.Name, "line", line)
}

// callTool runs tools/call with the server's timeout.
func (c *conn) callTool(ctx context.Context, s *sdk.ClientSession, name string, args json.RawMessage) (tool.Result, error) {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	res, err := s.CallTool(cctx, &sdk.CallToolParams{Name: name, Arguments: args})
	switch {
	case err == nil:
		return convertResult(c.cfg.Name, name, res), nil
	case ctx.Err() != nil:
		return tool.Result{}, fmt.Errorf("mcp server %q: call %s cancelled (the server was sent notifications/cancelled)", c.cfg.Name, name)
	case cctx.Err() != nil:
		return tool.Result{}, fmt.Errorf("mcp server %q: call %s got no answer within %s (timeout_ms); it was cancelled", c.cfg.Name, name, c.cfg.Timeout)
	case !isAnswer(err):
		// No answer but a broken connection: the server died. Wait for
		// watch to record why.
		c.mu.Lock()
		died := c.died
		c.mu.Unlock()
		select {
		case <-died:
			c.mu.Lock()
			e := c.err
			c.mu.Unlock()
			return tool.Result{}, fmt.Errorf("call %s: %w", name, e)
		case <-time.After(stderrWait + time.Second):
		case <-ctx.Done():
		}
	}
	return tool.Result{}, fmt.Errorf("mcp server %q: call %s: %w", c.cfg.Name, name, err)
}

// isAnswer reports whether err is the server's own JSON-RPC error answer
// (it is alive), rather than a broken connection.
func isAnswer(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// close ends the server.
func (c *conn) close() {
	c.mu.Lock()
	c.state = StateClosed
	s, p, starting := c.session, c.proc, c.starting
	c.session, c.proc = nil, nil
	c.mu.Unlock()
	if starting != nil {
		<-starting // run sees StateClosed and ends what it started
	}
	if s != nil {
		s.Close()
	}
	p.kill()
}

// status describes the server.
func (c *conn) status() Status {
	defs := c.definitions()
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Name: c.cfg.Name, Transport: c.cfg.Transport(), Target: c.cfg.Target(), State: c.state,
		Version: c.version, FromCache: c.cached, Tools: []string{}, ServerTools: []string{}, Problems: c.problems}
	if c.err != nil {
		st.Error = c.err.Error()
	}
	for _, d := range defs {
		st.Tools = append(st.Tools, d.Name)
	}
	for _, t := range c.tools {
		st.ServerTools = append(st.ServerTools, t.Name)
	}
	return st
}

// definitions makes (once per tool list) the server's ToolDefinitions.
func (c *conn) definitions() []tool.ToolDefinition {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateFailed || c.state == StateClosed {
		return nil
	}
	if c.defs != nil {
		return c.defs
	}
	var problems []string
	defs := []tool.ToolDefinition{}
	used := map[string]bool{}
	listed := map[string]bool{}
	src := tool.Source{Kind: tool.SourceMCP, Name: c.cfg.Name, Version: c.version, Path: c.cfg.Target()}
	for _, t := range c.tools {
		listed[t.Name] = true
		if !allowed(c.cfg, t.Name) {
			continue
		}
		name := ToolName(c.cfg.Name, t.Name)
		if used[name] {
			full := Prefix + c.cfg.Name + "__" + t.Name
			name = hashed(full, sanitize(full))
		}
		if used[name] {
			problems = append(problems, fmt.Sprintf("tool %q left out: its name %s is taken by another tool of the server", t.Name, name))
			continue
		}
		params, err := inputSchema(rawOrNil(t.InputSchema))
		if err != nil {
			problems = append(problems, fmt.Sprintf("tool %q left out: %v", t.Name, err))
			continue
		}
		def := tool.ToolDefinition{
			Name: name, Label: firstNonEmpty(t.Title, t.Name), Description: cutBytes(t.Description, maxDescription),
			Parameters: params, PromptSnippet: firstSentence(t.Description), Source: src,
			Execute: c.execute(t.Name),
		}
		if _, err := tool.Wrap(def, nil); err != nil {
			problems = append(problems, fmt.Sprintf("tool %q left out: %v", t.Name, err))
			continue
		}
		used[name] = true
		defs = append(defs, def)
	}
	for _, n := range c.cfg.Tools {
		if !listed[n] && len(c.tools) > 0 {
			problems = append(problems, fmt.Sprintf("tools lists %q, which the server does not have", n))
		}
	}
	c.defs, c.problems = defs, problems
	for _, p := range problems {
		c.m.logger.Warn("mcp server "+c.cfg.Name+": "+p, "server", c.cfg.Name)
	}
	return defs
}

func rawOrNil(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// execute is the Execute of the server's tool name.
func (c *conn) execute(name string) tool.ExecuteFunc {
	return func(ctx context.Context, call tool.Call, _ tool.Context) (tool.Result, error) {
		return c.m.call(ctx, c, name, call.Input)
	}
}

// headerTransport adds the configured headers to every request to the
// server's own scheme and host, and to no other: a redirect elsewhere must
// not carry the token.
type headerTransport struct {
	scheme, host string
	headers      map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == h.scheme && r.URL.Host == h.host {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// process is a stdio server's process: its transport, its stderr tail, and
// the group pi kills when it is done with it.
type process struct {
	cmd   *exec.Cmd
	inner *sdk.CommandTransport
	errW  *os.File
	tail  *tailBuffer

	mu      sync.Mutex
	pid     int
	started bool
	killed  bool
	unmark  func() // procs.StartOwn's release
}

// startAttr is how a stdio server starts: its environment, and the
// sandbox's SysProcAttr (nil: none).
type startAttr struct {
	env []string
	sys *syscall.SysProcAttr
}

// sandboxed is the command line and start of a stdio server: as
// configured, or with Server.Sandbox the sandbox's helper around it.
//
// # Errors
//
// Sandbox = true with no sandbox to run it in, a program not on PATH, or a
// policy the system cannot apply.
func (c *conn) sandboxed(env []string) ([]string, startAttr, error) {
	argv := c.cfg.Command
	if !c.cfg.Sandbox {
		return argv, startAttr{env: env}, nil
	}
	var p *sandbox.Policy
	if c.m.opts.Sandbox != nil {
		p = c.m.opts.Sandbox()
	}
	if p == nil || !p.Active() {
		return nil, startAttr{}, errors.New("sandbox = true, but commands run without the sandbox here ([sandbox] mode, or the kernel: pi doctor)")
	}
	if !strings.Contains(argv[0], "/") {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, startAttr{}, err
		}
		argv = append([]string{path}, argv[1:]...)
	}
	argv, env, err := sandbox.Wrap(*p, c.m.opts.SandboxHelper, argv, env)
	if err != nil {
		return nil, startAttr{}, err
	}
	return argv, startAttr{env: env, sys: sandbox.SysProcAttr(*p)}, nil
}

// newProcess prepares (does not start) a stdio server in its own session
// and process group (with sys, the sandbox's namespaces, when not nil),
// its stderr read line by line into a tail kept for messages.
func newProcess(argv []string, dir string, env []string, sys *syscall.SysProcAttr, onLine func(string)) (*process, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, w
	cmd.SysProcAttr = procAttr()
	if sys != nil {
		a := *sys
		a.Setsid = true
		cmd.SysProcAttr = &a
	}
	p := &process{cmd: cmd, errW: w, tail: newTail(r, onLine)}
	p.inner = &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}
	return p, nil
}

// Connect starts the process (the sdk.Transport of a stdio server).
func (p *process) Connect(ctx context.Context) (sdk.Connection, error) {
	// The server is one of pi's own children (procs.StartOwn): a bash
	// call's clean-up must never take it, a child of pi in a session of its
	// own, for a process the call left.
	var conn sdk.Connection
	unmark, err := procs.StartOwn(func() (int, error) {
		c, err := p.inner.Connect(ctx)
		if err != nil {
			return 0, err
		}
		conn = c
		return p.cmd.Process.Pid, nil
	})
	p.errW.Close() // the child has its copy
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", p.cmd.Path, err)
	}
	p.mu.Lock()
	p.pid, p.started, p.unmark = p.cmd.Process.Pid, true, unmark
	p.mu.Unlock()
	return conn, nil
}

// kill kills what is left of the process group (nil-safe, idempotent).
func (p *process) kill() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started && !p.killed {
		killGroup(p.pid)
		p.killed = true
		p.unmark()
	}
}

// stderrTail waits (at most d) for stderr to end, then returns its last
// lines.
func (p *process) stderrTail(d time.Duration) string {
	select {
	case <-p.tail.done:
	case <-time.After(d):
	}
	return p.tail.String()
}

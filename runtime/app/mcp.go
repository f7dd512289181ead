package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/mcp"
	"github.com/pi-go/pi/runtime/tool"
)

// MCPStart says when Open starts the [[mcp]] servers.
type MCPStart int

const (
	// MCPPrepare (the default, for agent runs): a server whose tool list is
	// cached registers those tools at once and starts in the background
	// (the tools it lists then replace them between turns); a server
	// without one is started and waited for.
	MCPPrepare MCPStart = iota
	// MCPWait starts every server and waits until each listed its tools or
	// failed (pi tools list, pi mcp list).
	MCPWait
	// MCPLazy starts no server: the cached tools are registered and a
	// server starts when one of its tools is called. CallTool of a
	// mcp__SERVER__ name that is not registered starts the servers and
	// waits for their tools (pi tool call).
	MCPLazy
)

// MCPStatus describes one MCP server of a Runtime (see mcp.Status).
type MCPStatus = mcp.Status

// mcpServers converts the enabled [[mcp]] entries.
func mcpServers(entries []config.MCPServer) []mcp.Server {
	var out []mcp.Server
	for _, e := range entries {
		if e.Disabled {
			continue
		}
		out = append(out, mcp.Server{
			Name: e.Name, Command: e.Command, URL: e.URL, Headers: e.Headers, Env: e.Env,
			Tools: e.Tools, DisabledTools: e.DisabledTools, Timeout: time.Duration(e.TimeoutMS) * time.Millisecond,
		})
	}
	return out
}

// mcpOptions are the MCP manager's options for this runtime.
func (r *Runtime) mcpOptions() mcp.Options {
	return mcp.Options{
		Cwd: r.cwd, CacheDir: config.CacheDir(r.piHome), Logger: r.logger.Named("mcp"),
		HideEnv: r.hideEnv, ClientName: firstNonEmpty(r.opts.HostName, "pi"), ClientVersion: firstNonEmpty(r.opts.HostVersion, "dev"),
		OnWarning: r.warn,
	}
}

// startMCP makes the MCP manager and starts the servers as Options.MCPStart
// says. Nothing here fails Open: a server that cannot start is a warning.
func (r *Runtime) startMCP(ctx context.Context) error {
	servers := mcpServers(r.cfg.MCP)
	if len(servers) == 0 {
		return nil
	}
	m, err := mcp.New(r.mcpOptions(), servers)
	if err != nil {
		return err
	}
	r.mcp = m // Close ends it
	switch r.opts.MCPStart {
	case MCPWait:
		m.Start(ctx)
	case MCPPrepare:
		m.Prepare(ctx)
	}
	return nil
}

// syncMCP brings the registry up to date with the MCP servers' tools when
// they changed since the last sync; it reports whether it changed anything.
func (r *Runtime) syncMCP() bool {
	if r.mcp == nil {
		return false
	}
	r.mcpMu.Lock()
	defer r.mcpMu.Unlock()
	gen := r.mcp.Generation()
	if r.mcpSynced && gen == r.mcpGen {
		return false
	}
	r.mcpGen, r.mcpSynced = gen, true
	r.registry.Unregister(r.mcpNames...)
	r.mcpNames = nil
	for _, d := range r.mcp.Definitions() {
		if err := r.registry.Register(d); err != nil {
			r.warn(fmt.Sprintf("%v; the MCP tool is left out", err))
			continue
		}
		r.mcpNames = append(r.mcpNames, d.Name)
	}
	if err := r.applyActive(); err != nil {
		r.logger.Warn("active tools after the MCP tools changed", "error", err.Error())
	}
	r.toolsGen.Add(1)
	return true
}

// applyActive sets the registry's active set: the names asked for
// (Options.Tools, else [tools] active) or the default (the built-in default
// set, the extensions' tools, the MCP tools). An asked-for MCP tool that is
// not registered (its server failed, or has not listed it yet) is left out
// without an error; it becomes active when it appears.
func (r *Runtime) applyActive() error {
	if r.wantActive == nil {
		return r.registry.SetActive(append(slices.Clone(r.baseActive), r.mcpNames...))
	}
	names := make([]string, 0, len(r.wantActive))
	for _, n := range r.wantActive {
		if _, ok := r.registry.Lookup(n); !ok && r.mcp != nil && r.mcp.Owns(n) {
			continue
		}
		names = append(names, n)
	}
	return r.registry.SetActive(names)
}

// chooseActive records the active set asked for and applies it; an unknown
// name that no MCP server may list is an error naming where it was asked
// for.
func (r *Runtime) chooseActive() error {
	from := ""
	switch {
	case r.opts.Tools != nil:
		r.wantActive, from = slices.Clone(r.opts.Tools), "active tools"
	case r.cfg.Tools.Active != nil:
		r.wantActive, from = slices.Clone(r.cfg.Tools.Active), describeFiles(r.cfg.Files)+": tools.active"
	}
	if err := r.applyActive(); err != nil {
		switch {
		case from == "":
			return err
		case r.opts.Tools != nil:
			return r.badActiveTools(err) // a typo in --tools: suggest the name
		}
		return fmt.Errorf("%s: %w", from, err)
	}
	if r.mcp != nil && r.opts.MCPStart != MCPLazy {
		for _, n := range r.wantActive {
			if _, ok := r.registry.Lookup(n); !ok && r.mcp.Owns(n) {
				r.warn(fmt.Sprintf("active tool %q is not there: its MCP server failed or does not list it (pi mcp list shows the servers)", n))
			}
		}
	}
	return nil
}

// MCPServers describes the runtime's MCP servers (none when pi.toml has
// no enabled [[mcp]] entry or the project that names them is not trusted).
func (r *Runtime) MCPServers() []MCPStatus {
	if r.mcp == nil {
		return []MCPStatus{}
	}
	return r.mcp.Status()
}

// lookupTool finds a registered tool after bringing the MCP tools up to
// date; a name an MCP server may own that is not there yet starts the
// servers and waits for their tools first.
func (r *Runtime) lookupTool(ctx context.Context, name string) (tool.ToolDefinition, bool) {
	r.syncMCP()
	def, ok := r.registry.Lookup(name)
	if !ok && r.mcp != nil && r.mcp.Owns(name) {
		r.mcp.Start(ctx)
		r.syncMCP()
		def, ok = r.registry.Lookup(name)
	}
	return def, ok
}

// ConfiguredMCPServer is one [[mcp]] entry as `pi mcp list` shows it: what
// pi.toml says and, for a server that may start, what starting it found.
type ConfiguredMCPServer struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	File      string `json:"configFile"`
	Line      int    `json:"line"`
	Transport string `json:"transport"`
	Target    string `json:"target"`
	Enabled   bool   `json:"enabled"`
	// Trusted is false for a server of an untrusted project (it does not
	// start).
	Trusted bool `json:"trusted"`
	// State is the server's state after starting it: running or failed;
	// "disabled" or "untrusted" when it was not started.
	State       string   `json:"state"`
	Version     string   `json:"version,omitempty"`
	Tools       []string `json:"tools"`
	ServerTools []string `json:"serverTools"`
	Error       string   `json:"error,omitempty"`
	Problems    []string `json:"problems,omitempty"`
}

// MCPListOptions say what ListMCPServers starts.
type MCPListOptions struct {
	ExtensionScope
	// NoStart lists what pi.toml and the cache say without starting any
	// server.
	NoStart bool
	// HostVersion is what servers are told in initialize.
	HostVersion string
	// OnWarning receives the problems of servers that fail; nil drops them
	// (they are in the entries).
	OnWarning func(string)
}

// ListMCPServers lists the [[mcp]] entries of the global and the project
// pi.toml (global first), the project's even when it is not trusted, and
// starts each enabled server of a trusted file to report its state and
// tools (refreshing the tool-list cache), then ends them.
func ListMCPServers(ctx context.Context, o MCPListOptions) ([]ConfiguredMCPServer, error) {
	cwd, home, cfg, trusted, err := loadForListing(o.Cwd, o.PIHome)
	if err != nil {
		return nil, err
	}
	out := []ConfiguredMCPServer{}
	var start []config.MCPServer
	for _, s := range cfg.MCP {
		ms := mcpServers([]config.MCPServer{{Name: s.Name, Command: s.Command, URL: s.URL}})[0]
		e := ConfiguredMCPServer{Name: s.Name, Scope: s.Scope, File: s.File, Line: s.Line, Transport: ms.Transport(), Target: ms.Target(),
			Enabled: !s.Disabled, Trusted: s.Scope != config.ScopeProject || trusted, Tools: []string{}, ServerTools: []string{}}
		switch {
		case !e.Trusted:
			e.State = "untrusted"
		case !e.Enabled:
			e.State = "disabled"
		default:
			start = append(start, s)
		}
		out = append(out, e)
	}
	if len(start) == 0 {
		return out, nil
	}
	key, _ := modelKey(cfg, "")
	warn := o.OnWarning
	if warn == nil {
		warn = func(string) {}
	}
	m, err := mcp.New(mcp.Options{Cwd: cwd, CacheDir: config.CacheDir(home), HideEnv: hiddenEnv(cfg, key),
		ClientName: "pi", ClientVersion: firstNonEmpty(o.HostVersion, "dev"), OnWarning: warn}, mcpServers(start))
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if !o.NoStart {
		m.Start(ctx)
	}
	for _, st := range m.Status() {
		i := slices.IndexFunc(out, func(e ConfiguredMCPServer) bool { return e.Name == st.Name })
		e := &out[i]
		e.State, e.Version, e.Tools, e.ServerTools, e.Error, e.Problems = string(st.State), st.Version, st.Tools, st.ServerTools, st.Error, st.Problems
		if st.FromCache {
			e.State += " (tools from the cache)"
		}
	}
	return out, nil
}

// AddMCPServer appends an [[mcp]] block to the scope's pi.toml (the
// project's, or with Global $PI_HOME/pi.toml) and keeps the project's
// trust as it was, as InstallExtension does: a trusted or new project
// stays trusted, an untrusted one stays untrusted. It returns the edited
// file and whether the project is trusted (always true for global).
//
// # Errors
//
// A server of that name already in the file (config.ErrMCPServerExists), a
// server the file would not load, pi.toml errors.
func AddMCPServer(scope ExtensionScope, s config.MCPServer) (file string, trusted bool, err error) {
	t, err := scope.target()
	if err != nil {
		return "", false, err
	}
	trusted = true
	if t.scope == config.ScopeProject {
		if _, err := os.Stat(t.toml); err == nil {
			if trusted, err = config.IsTrusted(t.home, t.toml); err != nil {
				return "", false, err
			}
		}
	}
	if err := config.AppendMCPServer(t.toml, s); err != nil {
		return "", false, err
	}
	if t.scope == config.ScopeProject && trusted {
		if err := config.Trust(t.home, t.toml); err != nil {
			return t.toml, false, fmt.Errorf("added, but recording trust failed: %w", err)
		}
	}
	return t.toml, trusted, nil
}

// RemoveMCPServer removes the [[mcp]] block named name from the scope's
// pi.toml and keeps the project's trust as it was.
//
// # Errors
//
// No such server in that pi.toml (config.ErrMCPServerNotFound); pi.toml
// errors; recording trust again failing (the removal is done then).
func RemoveMCPServer(scope ExtensionScope, name string) (file string, err error) {
	t, err := scope.target()
	if err != nil {
		return "", err
	}
	wasTrusted := false
	if t.scope == config.ScopeProject {
		wasTrusted, _ = config.IsTrusted(t.home, t.toml)
	}
	if err := config.RemoveMCPServer(t.toml, name); err != nil {
		return "", err
	}
	if wasTrusted {
		if err := config.Trust(t.home, t.toml); err != nil {
			return t.toml, fmt.Errorf("recording trust failed: %w", err)
		}
	}
	return t.toml, nil
}

package app

import (
	"context"
	"fmt"
	"slices"

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

// mcpOptions are the MCP manager's options for this runtime.
func (r *Runtime) mcpOptions() mcp.Options {
	return mcp.Options{
		Cwd: r.cwd, CacheDir: r.caches().cache, Logger: r.logger.Named("mcp"),
		HideEnv: r.hideEnv, ClientName: firstNonEmpty(r.opts.HostName, "pi"), ClientVersion: firstNonEmpty(r.opts.HostVersion, "dev"),
		OnWarning: r.warn,
		// sandbox = true servers: the configured sandbox (not plan mode's:
		// a server outlives a mode change).
		Sandbox: r.configured, SandboxHelper: r.opts.SandboxHelper,
	}
}

// startMCP makes the MCP manager and starts the servers as Options.MCPStart
// says. Nothing here fails Open: a server that cannot start is a warning.
func (r *Runtime) startMCP(ctx context.Context) error {
	servers := mcp.FromConfig(r.cfg.MCP)
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
	if _, err := r.applyActive(); err != nil {
		r.logger.Warn("active tools after the MCP tools changed", "error", err.Error())
	}
	r.toolsGen.Add(1)
	return true
}

// applyActive sets the registry's active set: the names asked for
// (Options.Tools, else [tools] active) or the default (the built-in default
// set, the extensions' tools, the MCP tools). An asked-for name that is not
// registered is left out (an MCP tool becomes active when its server lists
// it); missing returns those names that no MCP server may list.
func (r *Runtime) applyActive() (missing []string, err error) {
	if r.wantActive == nil {
		return nil, r.registry.SetActive(append(slices.Clone(r.baseActive), r.mcpNames...))
	}
	names := make([]string, 0, len(r.wantActive))
	for _, n := range r.wantActive {
		if _, ok := r.registry.Lookup(n); !ok {
			if r.mcp == nil || !r.mcp.Owns(n) {
				missing = append(missing, n)
			}
			continue
		}
		names = append(names, n)
	}
	return missing, r.registry.SetActive(names)
}

// chooseActive records the active set asked for and applies it. A name
// that is not loaded is a warning naming it, where it was asked for and
// why it may be missing (missingActiveWarning), never an error.
func (r *Runtime) chooseActive(cfg *config.Config) error {
	from := ""
	r.mcpMu.Lock()
	r.wantActive = nil
	switch {
	case r.opts.Tools != nil:
		r.wantActive, from = slices.Clone(r.opts.Tools), "--tools"
	case cfg.Tools.Active != nil:
		r.wantActive, from = slices.Clone(cfg.Tools.Active), "tools.active in "+firstNonEmpty(cfg.Tools.ActiveAt, describeFiles(cfg.Files))
	}
	missing, err := r.applyActive()
	r.mcpMu.Unlock()
	if err != nil {
		return err
	}
	for _, n := range missing {
		r.warn(r.missingActiveWarning(n, from))
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

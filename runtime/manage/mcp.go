package manage

import (
	"context"
	"slices"

	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/mcp"
)

// MCPServer is one [[mcp]] entry to add (config.MCPServer).
type MCPServer = config.MCPServer

// Errors of AddMCPServer and RemoveMCPServer, for errors.Is.
var (
	ErrMCPServerExists   = config.ErrMCPServerExists
	ErrMCPServerNotFound = config.ErrMCPServerNotFound
)

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
	Scope
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
// tools (refreshing the tool-list cache), then ends them. The servers get
// the environment a run gives them (without the model's API key).
func ListMCPServers(ctx context.Context, o MCPListOptions) ([]ConfiguredMCPServer, error) {
	l, err := o.listing()
	if err != nil {
		return nil, err
	}
	out := []ConfiguredMCPServer{}
	var start []config.MCPServer
	for _, s := range l.cfg.MCP {
		ms := mcp.FromConfig([]config.MCPServer{{Name: s.Name, Command: s.Command, URL: s.URL}})[0]
		e := ConfiguredMCPServer{Name: s.Name, Scope: s.Scope, File: s.File, Line: s.Line, Transport: ms.Transport(), Target: ms.Target(),
			Enabled: !s.Disabled, Trusted: s.Scope != config.ScopeProject || l.trusted, Tools: []string{}, ServerTools: []string{}}
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
	statuses, err := probeMCP(ctx, l, start, o.HostVersion, o.OnWarning, !o.NoStart)
	if err != nil {
		return nil, err
	}
	for _, st := range statuses {
		i := slices.IndexFunc(out, func(e ConfiguredMCPServer) bool { return e.Name == st.Name })
		e := &out[i]
		e.State, e.Version, e.Tools, e.ServerTools, e.Error, e.Problems = string(st.State), st.Version, st.Tools, st.ServerTools, st.Error, st.Problems
		if st.FromCache {
			e.State += " (tools from the cache)"
		}
	}
	return out, nil
}

// probeMCP makes an MCP manager for servers (as a run would: the API key's
// variables hidden), starts them when start is set, and returns their
// status; it ends them before it returns.
func probeMCP(ctx context.Context, l listing, servers []config.MCPServer, hostVersion string, warn func(string), start bool) ([]mcp.Status, error) {
	key, _ := l.cfg.APIKey("")
	if warn == nil {
		warn = func(string) {}
	}
	if hostVersion == "" {
		hostVersion = "dev"
	}
	cache, err := config.TrustedCacheDir(l.home)
	if err != nil {
		warn(err.Error())
	}
	m, err := mcp.New(mcp.Options{Cwd: l.cwd, CacheDir: cache, HideEnv: l.cfg.HiddenEnv(key, nil),
		ClientName: "pi", ClientVersion: hostVersion, OnWarning: warn}, mcp.FromConfig(servers))
	if err != nil {
		return nil, err
	}
	defer m.Close()
	if start {
		m.Start(ctx)
	}
	return m.Status(), nil
}

// MCPAddRequest is one `pi mcp add`.
type MCPAddRequest struct {
	Scope
	Server MCPServer
	// Activate adds the server's tools to [tools] active when a pi.toml
	// sets that list (else they would be off): the tools Server.Tools
	// names, else those the server lists when it is started once.
	Activate bool
	// HostVersion is what the server is told in initialize when Activate
	// starts it.
	HostVersion string
}

// MCPAdded says what AddMCPServer did.
type MCPAdded struct {
	// TOML is the edited pi.toml, Scope its scope.
	TOML, Scope string
	// Trusted says the project's trust was recorded again (false for an
	// untrusted project, whose servers do not start, and for global).
	Trusted bool
	// Active says how its tools stand against [tools] active. Off is
	// unknown (empty) when Server.Tools is not given and Activate was not
	// asked for: the server's tools are only known once it runs.
	Active
	// ListErr says why the server could not be started to list its tools
	// for Activate.
	ListErr string
}

// AddMCPServer appends an [[mcp]] block to the scope's pi.toml (the
// project's, or with Global $PI_HOME/pi.toml) and keeps the project's
// trust as it was, as Install does: a trusted or new project stays
// trusted, an untrusted one stays untrusted.
//
// # Errors
//
// A server of that name already in the file (ErrMCPServerExists), a
// server the file would not load, the project's trust that cannot be
// read, pi.toml errors. When recording trust fails after the edit, the
// server is added and TOML is set.
func AddMCPServer(ctx context.Context, req MCPAddRequest) (MCPAdded, error) {
	t, err := req.target()
	if err != nil {
		return MCPAdded{}, err
	}
	trusted, written, err := editKeepingTrust(t.tomlFile, "added", func() error {
		return config.AppendMCPServer(t.path, req.Server)
	})
	if !written {
		return MCPAdded{}, err
	}
	out := MCPAdded{TOML: t.path, Scope: t.scope, Trusted: trusted}
	if err != nil {
		return out, err
	}
	scope := Scope{Cwd: t.cwd, PIHome: t.home}
	var names []string
	for _, n := range req.Server.Tools {
		names = append(names, mcp.ToolName(req.Server.Name, n))
	}
	if names == nil && req.Activate {
		names, out.ListErr = serverTools(ctx, scope, req.Server, req.HostVersion)
	}
	out.Active = activeFor(scope, names, req.Activate)
	return out, nil
}

// serverTools starts s once and returns the names of its tools as pi
// registers them, or why it could not.
func serverTools(ctx context.Context, scope Scope, s MCPServer, hostVersion string) ([]string, string) {
	l, err := scope.listing()
	if err != nil {
		return nil, err.Error()
	}
	i := slices.IndexFunc(l.cfg.MCP, func(e config.MCPServer) bool { return e.Name == s.Name })
	if i < 0 {
		return nil, "it is not in the configuration"
	}
	st, err := probeMCP(ctx, l, l.cfg.MCP[i:i+1], hostVersion, nil, true)
	if err != nil {
		return nil, err.Error()
	}
	if len(st) != 1 || st[0].Error != "" {
		if len(st) == 1 {
			return nil, st[0].Error
		}
		return nil, "it did not start"
	}
	return st[0].Tools, ""
}

// RemoveMCPServer removes the [[mcp]] block named name from the scope's
// pi.toml and keeps the project's trust as it was. A [tools] active that
// names its tools is left as it is: pi warns about those names at start.
//
// # Errors
//
// No such server in that pi.toml (ErrMCPServerNotFound); the project's
// trust cannot be read; pi.toml errors; recording trust again failing
// (the removal is done then, and file is set).
func RemoveMCPServer(scope Scope, name string) (file string, err error) {
	t, err := scope.target()
	if err != nil {
		return "", err
	}
	_, written, err := editKeepingTrust(t.tomlFile, "", func() error {
		return config.RemoveMCPServer(t.path, name)
	})
	if !written {
		return "", err
	}
	return t.path, err
}

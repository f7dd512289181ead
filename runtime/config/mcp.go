package config

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/extspec"
)

// MCPServer is one [[mcp]] entry: an MCP server whose tools pi registers.
// Exactly one of Command (a stdio server pi starts) and URL (a streamable
// HTTP server) is set.
type MCPServer struct {
	// Name matches [a-z][a-z0-9_-]* and is unique; tools are named
	// mcp__NAME__TOOL.
	Name string
	// Command is the program and its arguments. A program written as a
	// relative path with a slash (./bin/server) is made absolute against the
	// folder of the pi.toml that names it; a bare name is looked up on PATH.
	Command []string
	// URL is an http(s) endpoint of the streamable HTTP transport.
	URL string
	// Headers are sent with every HTTP request (URL servers only); values
	// may hold ${VAR}, expanded from the environment when the server starts.
	Headers map[string]string
	// Env is extra environment for a stdio server; values may hold ${VAR}.
	Env map[string]string
	// Tools is an allowlist of the server's tool names; nil means all.
	Tools []string
	// DisabledTools are left out even when Tools lists them.
	DisabledTools []string
	// TimeoutMS bounds one tool call; 0 means the default (60000).
	TimeoutMS int
	// Disabled is set by enabled = false: the server is configured but
	// not started.
	Disabled bool
	// Sandbox runs a stdio server under the [sandbox] policy of bash
	// (sandbox = true).
	Sandbox bool
	// Scope is ScopeGlobal or ScopeProject; File the pi.toml naming it and
	// Line the line of its [[mcp]] header.
	Scope string
	File  string
	Line  int
}

func (s MCPServer) clone() MCPServer {
	s.Command = slices.Clone(s.Command)
	s.Headers = maps.Clone(s.Headers)
	s.Env = maps.Clone(s.Env)
	s.Tools = slices.Clone(s.Tools)
	s.DisabledTools = slices.Clone(s.DisabledTools)
	return s
}

// MCPServer returns the [[mcp]] entry named name.
func (c *Config) MCPServer(name string) (MCPServer, bool) {
	for _, s := range c.MCP {
		if s.Name == name {
			return s.clone(), true
		}
	}
	return MCPServer{}, false
}

var mcpKeys = []string{"name", "command", "url", "headers", "env", "tools", "disabled_tools", "timeout_ms", "enabled", "sandbox"}

// mcpServers decodes the [[mcp]] array.
func (d *decoder) mcpServers(l *layer, v any) {
	servers, lines := namedTables(d, "mcp", "MCP server", v, d.mcpServer, func(s MCPServer) string { return s.Name })
	for i := range servers {
		servers[i].Scope, servers[i].File, servers[i].Line = l.scope, d.file, lines[i]
	}
	l.mcp = append(l.mcp, servers...)
}

func (d *decoder) mcpServer(key string, v any) (MCPServer, bool) {
	m, ok := d.table(key, v, mcpKeys)
	if !ok {
		return MCPServer{}, false
	}
	var s MCPServer
	good := len(d.errs)
	if v, ok := m["name"]; !ok {
		d.errorf(key, "key %q is required", joinKey(key, "name"))
	} else if name, ok := d.str(joinKey(key, "name"), v); ok {
		if !extspec.ValidName(name) || strings.Contains(name, "__") || strings.HasSuffix(name, "_") {
			d.errorf(joinKey(key, "name"), "key %q: %q is not an MCP server name (want [a-z][a-z0-9_-]*, without __ and not ending in _: tools are named mcp__NAME__TOOL)", joinKey(key, "name"), name)
		}
		s.Name = name
	}
	cmdV, hasCmd := m["command"]
	urlV, hasURL := m["url"]
	switch {
	case hasCmd && hasURL:
		d.errorf(joinKey(key, "url"), "key %q: set command (a stdio server) or url (an HTTP server), not both", key)
	case !hasCmd && !hasURL:
		d.errorf(key, "key %q: set command (a stdio server) or url (an HTTP server)", key)
	case hasCmd:
		ck := joinKey(key, "command")
		if argv, ok := d.strings(ck, cmdV, nil); ok {
			switch {
			case len(argv) == 0:
				d.errorf(ck, "key %q must name a program, got []", ck)
			case argv[0] == "":
				d.errorf(ck, "key %q: the program name is empty", ck)
			case d.noTilde(ck, argv[0]):
				p := filepath.FromSlash(argv[0])
				if strings.ContainsRune(argv[0], '/') && !filepath.IsAbs(p) {
					argv[0] = filepath.Clean(filepath.Join(filepath.Dir(d.file), p))
				}
				s.Command = argv
			}
		}
	case hasURL:
		uk := joinKey(key, "url")
		if u, ok := d.str(uk, urlV); ok {
			if err := checkMCPURL(u); err != nil {
				d.errorf(uk, "key %q: %v", uk, err)
			} else {
				s.URL = u
			}
		}
	}
	if v, ok := m["headers"]; ok {
		hk := joinKey(key, "headers")
		if hasCmd {
			d.errorf(hk, "key %q: headers are for url servers; give a stdio server env instead", hk)
		}
		s.Headers = d.stringTable(hk, v, func(k string) error {
			if !validHeaderName(k) {
				return fmt.Errorf("%q is not an HTTP header name", k)
			}
			return nil
		})
	}
	if v, ok := m["env"]; ok {
		ek := joinKey(key, "env")
		if hasURL {
			d.errorf(ek, "key %q: env is for stdio servers (command); a url server gets headers", ek)
		}
		s.Env = d.stringTable(ek, v, func(k string) error {
			if !extspec.ValidEnvName(k) {
				return fmt.Errorf("%q is not an environment variable name", k)
			}
			return nil
		})
	}
	for _, k := range []struct {
		key string
		dst *[]string
	}{{"tools", &s.Tools}, {"disabled_tools", &s.DisabledTools}} {
		v, ok := m[k.key]
		if !ok {
			continue
		}
		seen := map[string]bool{}
		names, ok := d.strings(joinKey(key, k.key), v, func(n string) error {
			if n == "" {
				return fmt.Errorf("empty tool name")
			}
			if seen[n] {
				return fmt.Errorf("tool %q is listed twice", n)
			}
			seen[n] = true
			return nil
		})
		if ok {
			*k.dst = names
		}
	}
	if v, ok := m["timeout_ms"]; ok {
		s.TimeoutMS, _ = d.positive(joinKey(key, "timeout_ms"), v, extspec.MaxTimeoutMS, "ms")
	}
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean(joinKey(key, "enabled"), v); ok {
			s.Disabled = !b
		}
	}
	if v, ok := m["sandbox"]; ok {
		sk := joinKey(key, "sandbox")
		if b, ok := d.boolean(sk, v); ok {
			if b && hasURL {
				d.errorf(sk, "key %q: the sandbox contains processes pi starts; a url server is not one (only stdio servers, with command)", sk)
			}
			s.Sandbox = b
		}
	}
	return s, len(d.errs) == good
}

// stringTable checks a table of strings whose keys pass checkKey and whose
// values' ${VAR} references name environment variables.
func (d *decoder) stringTable(key string, v any, checkKey func(string) error) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(key, "key %q must be a table of strings, got %s", key, typeName(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for k, ev := range m {
		ek := joinKey(key, k)
		if err := checkKey(k); err != nil {
			d.errorf(ek, "key %q: %v", ek, err)
			continue
		}
		s, ok := d.str(ek, ev)
		if !ok {
			continue
		}
		if err := checkVarRefs(s); err != nil {
			d.errorf(ek, "key %q: %v", ek, err)
			continue
		}
		out[k] = s
	}
	return out
}

// checkVarRefs checks that every ${...} in s names an environment variable
// (whether it is set is checked when the server starts).
func checkVarRefs(s string) error {
	_, err := ExpandVars(s, func(string) (string, bool) { return "", true })
	return err
}

func checkMCPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	if u.User != nil {
		return fmt.Errorf("%q carries a user name or password; put credentials in headers (with ${VAR})", s)
	}
	return nil
}

// untrustedMCP names a layer's MCP servers for the untrusted warning.
func untrustedMCP(l *layer) string {
	if len(l.mcp) == 0 {
		return ""
	}
	names := make([]string, len(l.mcp))
	for i, s := range l.mcp {
		names[i] = fmt.Sprintf("%q", s.Name)
	}
	word := "MCP server"
	if len(names) > 1 {
		word = "MCP servers"
	}
	return word + " " + strings.Join(names, ", ")
}

// applyMCP lays a layer's servers over c: a server named like an earlier
// one takes its place.
func applyMCP(c *Config, servers []MCPServer) {
	for _, s := range servers {
		i := slices.IndexFunc(c.MCP, func(o MCPServer) bool { return o.Name == s.Name })
		if i >= 0 {
			c.MCP[i] = s.clone()
		} else {
			c.MCP = append(c.MCP, s.clone())
		}
	}
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Errors of AppendMCPServer and RemoveMCPServer, for errors.Is.
var (
	ErrMCPServerExists   = errors.New("an MCP server of that name is already there")
	ErrMCPServerNotFound = errors.New("no MCP server of that name")
)

// AppendMCPServer adds s as an [[mcp]] block at the end of the pi.toml at
// tomlPath, creating the file and its folder when missing, and leaving the
// bytes already in the file as they were. The block has name, command or
// url, headers and env as inline tables, tools, disabled_tools, timeout_ms
// when set and enabled = false when s is Disabled. s.Scope, s.File and
// s.Line are ignored. The new file is parsed and validated before it
// atomically replaces the old one, so a refused append writes nothing.
//
// # Errors
//
// ErrMCPServerExists (wrapped) when the file already has a server of
// s.Name; an existing file that does not load; an s that would not load (a
// bad name, both or neither of command and url, a string that is not
// UTF-8); a failed write.
func AppendMCPServer(tomlPath string, s MCPServer) error {
	file, err := filepath.Abs(tomlPath)
	if err != nil {
		return fmt.Errorf("append MCP server %q to %s: %w", s.Name, tomlPath, err)
	}
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("append MCP server %q to %s: %w", s.Name, file, err)
	}
	if len(old) > 0 {
		l, err := parseLayer(file, old, ScopeProject)
		if err != nil {
			return fmt.Errorf("append MCP server %q to %s: the file does not load: %w", s.Name, file, err)
		}
		for _, x := range l.mcp {
			if x.Name == s.Name {
				return fmt.Errorf("append MCP server %q to %s (line %d): %w", s.Name, file, x.Line, ErrMCPServerExists)
			}
		}
	}
	block, err := renderMCPServer(s)
	if err != nil {
		return fmt.Errorf("append MCP server %q to %s: %w", s.Name, file, err)
	}
	return writeAppended(file, old, block, fmt.Sprintf("MCP server %q", s.Name), func(l *layer) bool {
		n := len(l.mcp)
		return n > 0 && l.mcp[n-1].Name == s.Name
	})
}

// renderMCPServer writes s as a TOML block.
func renderMCPServer(s MCPServer) ([]byte, error) {
	strs := append([]string{s.Name, s.URL}, s.Command...)
	strs = append(strs, s.Tools...)
	strs = append(strs, s.DisabledTools...)
	for _, m := range []map[string]string{s.Headers, s.Env} {
		for k, v := range m {
			strs = append(strs, k, v)
		}
	}
	for _, v := range strs {
		if !utf8.ValidString(v) {
			return nil, fmt.Errorf("%q is not valid UTF-8", v)
		}
	}
	var b bytes.Buffer
	b.WriteString("[[mcp]]\n")
	fmt.Fprintf(&b, "name = %s\n", tomlString(s.Name))
	if len(s.Command) > 0 {
		v, _ := tomlValue(s.Command)
		fmt.Fprintf(&b, "command = %s\n", v)
	}
	if s.URL != "" {
		fmt.Fprintf(&b, "url = %s\n", tomlString(s.URL))
	}
	for _, t := range []struct {
		key string
		m   map[string]string
	}{{"headers", s.Headers}, {"env", s.Env}} {
		if len(t.m) == 0 {
			continue
		}
		parts := make([]string, 0, len(t.m))
		for _, k := range slices.Sorted(maps.Keys(t.m)) {
			parts = append(parts, tomlKey(k)+" = "+tomlString(t.m[k]))
		}
		fmt.Fprintf(&b, "%s = { %s }\n", t.key, strings.Join(parts, ", "))
	}
	for _, t := range []struct {
		key  string
		list []string
	}{{"tools", s.Tools}, {"disabled_tools", s.DisabledTools}} {
		if t.list == nil {
			continue
		}
		v, _ := tomlValue(t.list)
		fmt.Fprintf(&b, "%s = %s\n", t.key, v)
	}
	if s.TimeoutMS != 0 {
		fmt.Fprintf(&b, "timeout_ms = %d\n", s.TimeoutMS)
	}
	if s.Disabled {
		b.WriteString("enabled = false\n")
	}
	return b.Bytes(), nil
}

// RemoveMCPServer removes the [[mcp]] block named name from the pi.toml at
// tomlPath the way RemoveExtension removes an extension: its header, the
// comment lines right above it, its keys and subtables; every other byte
// stays as it was, and the file is replaced atomically.
//
// # Errors
//
// ErrMCPServerNotFound (wrapped, with the configured names) when no server
// has that name; a file that cannot be read or is not valid TOML; a server
// written inline (mcp = [...]); a failed write.
func RemoveMCPServer(tomlPath, name string) error {
	return removeNamedTable(tomlPath, "mcp", "MCP server", "configured", name, ErrMCPServerNotFound)
}

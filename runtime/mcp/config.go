package mcp

import (
	"time"

	"github.com/pi-go/pi/runtime/config"
)

// FromConfig converts pi.toml's [[mcp]] entries into the servers to
// connect to, leaving out the disabled ones (enabled = false). It is the one
// conversion, for the runtime and for `pi mcp list`.
func FromConfig(entries []config.MCPServer) []Server {
	var out []Server
	for _, e := range entries {
		if e.Disabled {
			continue
		}
		out = append(out, Server{
			Name: e.Name, Command: e.Command, URL: e.URL, Headers: e.Headers, Env: e.Env,
			Tools: e.Tools, DisabledTools: e.DisabledTools, Timeout: time.Duration(e.TimeoutMS) * time.Millisecond,
			Sandbox: e.Sandbox,
		})
	}
	return out
}

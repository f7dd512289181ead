package app

import (
	"fmt"

	"github.com/pi-go/pi/internal/suggest"
)

// missingActiveWarning is the warning about name, asked for in the active
// set (from says where: "--tools" or FILE:LINE of tools.active) but not
// loaded: the name and why it may be missing, with the closest loaded
// name. A missing tool never stops a start: an untrusted clone of a
// project whose tools.active names an extension's tool, or a project
// whose extension or MCP server was removed, must still run.
func (r *Runtime) missingActiveWarning(name, from string) string {
	why := "no built-in tool, loaded extension or MCP server has it (was its extension removed?)"
	if r.cfg.Untrusted {
		why = "this project is not trusted, so its extensions and MCP servers are not loaded (review its pi.toml, then run 'pi trust'), or no tool has that name"
	}
	msg := fmt.Sprintf("active tool %q (%s) is not loaded, so it is left out: %s", name, from, why)
	if s := suggest.Closest(name, r.ToolNames()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg + " (pi tools list shows the tools)"
}

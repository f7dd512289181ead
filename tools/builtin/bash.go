package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// BashDefinition is a placeholder until the bash tool lands.
func BashDefinition(opts BashOptions) tool.ToolDefinition {
	return tool.ToolDefinition{Name: "bash", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("bash: not implemented yet")
		}}
}

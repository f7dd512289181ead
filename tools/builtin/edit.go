package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// EditDefinition is a placeholder until the edit tool lands.
func EditDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{Name: "edit", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("edit: not implemented yet")
		}}
}

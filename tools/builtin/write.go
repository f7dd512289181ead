package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// WriteDefinition is a placeholder until the write tool lands.
func WriteDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{Name: "write", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("write: not implemented yet")
		}}
}

package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// ReadDefinition is a placeholder until the read tool lands.
func ReadDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{Name: "read", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("read: not implemented yet")
		}}
}

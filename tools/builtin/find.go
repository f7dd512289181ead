package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// FindDefinition is a placeholder until the find tool lands.
func FindDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{Name: "find", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("find: not implemented yet")
		}}
}

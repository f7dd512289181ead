package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// GrepDefinition is a placeholder until the grep tool lands.
func GrepDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{Name: "grep", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("grep: not implemented yet")
		}}
}

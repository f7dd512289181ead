package builtin

import (
	"context"
	"errors"

	"github.com/pi-go/pi/runtime/tool"
)

// LsDefinition is a placeholder until the ls tool lands.
func LsDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{Name: "ls", Source: tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
			return tool.Result{}, errors.New("ls: not implemented yet")
		}}
}

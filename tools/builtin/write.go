package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/internal/fileutil"
	"github.com/pi-go/pi/runtime/tool"
)

// writeParameters is the write tool's JSON Schema (the reference agent's).
const writeParameters = `{"type":"object","required":["path","content"],"properties":{"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},"content":{"type":"string","description":"Content to write to the file"}}}`

// writeArgs are the write tool's arguments.
type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writeDefinition is the write tool: it creates or replaces a whole file,
// atomically, under the per-file mutation queue.
func writeDefinition() tool.ToolDefinition {
	return define(toolMeta{
		name:        "write",
		description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
		parameters:  writeParameters,
		snippet:     "Create or overwrite files",
		guidelines:  []string{"Use write only for new files or complete rewrites."},
	}, executeWrite, func(cwd string, a *writeArgs) string { return writeTarget(cwd, a.Path) })
}

func executeWrite(ctx context.Context, _ tool.Call, tc tool.Context, args writeArgs) (tool.Result, error) {
	abs := writeTarget(tc.Cwd, args.Path)
	err := fileutil.WithLock(abs, func() error {
		if ctx.Err() != nil {
			return errAborted
		}
		return atomicfile.WriteString(abs, args.Content, 0o644)
	})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(args.Content), args.Path)), nil
}

// errAborted is the result of a call cancelled before it changed anything.
var errAborted = errors.New("Operation aborted")

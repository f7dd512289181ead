package builtin

import (
	"bytes"
	"context"
	"encoding/json"
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

// WriteDefinition is the write tool: it creates or replaces a whole file,
// atomically, under the per-file mutation queue.
func WriteDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{
		Name:             "write",
		Label:            "write",
		Description:      "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
		Parameters:       json.RawMessage(writeParameters),
		PromptSnippet:    "Create or overwrite files",
		PromptGuidelines: []string{"Use write only for new files or complete rewrites."},
		ExecutionMode:    tool.Parallel,
		Source:           tool.Source{Kind: tool.SourceBuiltin},
		Execute:          executeWrite,
		Paths:            pathsOf(decodeLoose, func(cwd string, a *writeArgs) string { return writeTarget(cwd, a.Path) }),
	}
}

func executeWrite(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
	var args writeArgs
	if err := decodeArgs(call.Input, &args, false); err != nil {
		return tool.Result{}, fmt.Errorf("write: %w", err)
	}
	abs := writeTarget(tc.Cwd, args.Path)
	err := fileutil.WithLock(abs, func() error {
		if ctx.Err() != nil {
			return errAborted
		}
		return atomicfile.WriteFile(abs, []byte(args.Content), 0o644)
	})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.TextResult(fmt.Sprintf("Successfully wrote %d bytes to %s", len(args.Content), args.Path)), nil
}

// errAborted is the result of a call cancelled before it changed anything.
var errAborted = errors.New("Operation aborted")

// decodeArgs decodes validated arguments. strict refuses unknown fields
// (for schemas with additionalProperties false; the others, like the
// reference agent's, let extra properties through).
func decodeArgs(raw json.RawMessage, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode arguments: %w", err)
	}
	return nil
}

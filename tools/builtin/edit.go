package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/internal/fileutil"
	"github.com/pi-go/pi/runtime/tool"
)

// editParameters is the edit tool's JSON Schema (the reference agent's).
const editParameters = `{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","description":"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},"newText":{"type":"string","description":"Replacement text for this targeted edit."}},"additionalProperties":false},"description":"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."}},"additionalProperties":false}`

// editArgs are the edit tool's arguments after prepareEditArguments.
type editArgs struct {
	Path  string     `json:"path"`
	Edits []editSpec `json:"edits"`
}

// editDetails are the details of a successful edit: a unified diff with
// line numbers (the reference agent's format) and the first changed line of
// the new file.
type editDetails struct {
	Diff             string `json:"diff"`
	FirstChangedLine int    `json:"firstChangedLine"`
}

// tolerantNote is the line added to the success text when some oldText
// matched only in the tolerant form.
const tolerantNote = "Note: oldText did not match exactly; it was matched ignoring trailing whitespace and Unicode quote, dash and space differences. Only the matched region was replaced."

// editDefinition is the edit tool: exact text replacements located in the
// original file (with a tolerant fallback), applied atomically under the
// per-file mutation queue.
func editDefinition() tool.ToolDefinition {
	return define(toolMeta{
		name:        "edit",
		description: "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
		parameters:  editParameters,
		snippet:     "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
		guidelines: []string{
			"Use edit for precise changes (edits[].oldText must match exactly)",
			"When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls",
			"Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
			"Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions.",
		},
		prepare: prepareEditArguments,
		strict:  true,
	}, executeEdit, func(cwd string, a *editArgs) string { return writeTarget(cwd, a.Path) })
}

// prepareEditArguments accepts the shapes models send besides the schema's:
// edits as a JSON string holding the array (or one edit object), a single
// edit object instead of an array, and the legacy top-level oldText/newText
// (appended to edits). Anything else passes through unchanged for
// validation to report.
//
// # Errors
//
// It never fails; the error result is part of the tool.PrepareFunc shape.
func prepareEditArguments(raw json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return raw, nil
	}
	changed := false
	if e, ok := obj["edits"]; ok {
		var s string
		if json.Unmarshal(e, &s) == nil {
			if t := bytes.TrimSpace([]byte(s)); len(t) > 0 && (t[0] == '[' || t[0] == '{') && json.Valid(t) {
				e, changed = json.RawMessage(t), true
			}
		}
		if t := bytes.TrimSpace(e); len(t) > 0 && t[0] == '{' {
			e, changed = json.RawMessage(append(append([]byte{'['}, t...), ']')), true
		}
		obj["edits"] = e
	}
	var oldText, newText string
	if json.Unmarshal(obj["oldText"], &oldText) == nil && json.Unmarshal(obj["newText"], &newText) == nil &&
		isJSONString(obj["oldText"]) && isJSONString(obj["newText"]) {
		var edits []json.RawMessage
		if e, ok := obj["edits"]; ok && json.Unmarshal(e, &edits) != nil {
			edits = nil // not an array: the legacy pair replaces it, as in the reference
		}
		legacy, _ := json.Marshal(editSpec{OldText: oldText, NewText: newText})
		edits = append(edits, legacy)
		all, _ := json.Marshal(edits)
		obj["edits"] = all
		delete(obj, "oldText")
		delete(obj, "newText")
		changed = true
	}
	if !changed {
		return raw, nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return raw, nil
	}
	return out, nil
}

func isJSONString(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && t[0] == '"'
}

func executeEdit(ctx context.Context, _ tool.Call, tc tool.Context, args editArgs) (tool.Result, error) {
	if len(args.Edits) == 0 {
		return tool.Result{}, errNoEdits
	}
	abs := writeTarget(tc.Cwd, args.Path)
	var res applyEditsResult
	err := fileutil.WithLock(abs, func() error {
		if ctx.Err() != nil {
			return errAborted
		}
		if err := checkEditable(abs); err != nil {
			if errors.Is(err, errNotRegular) {
				return fmt.Errorf("Could not edit file: %s. It is not a regular file.", args.Path)
			}
			return fmt.Errorf("Could not edit file: %s. %s.", args.Path, errorCode(err))
		}
		orig, err := fileutil.ReadString(abs)
		if err != nil {
			return fmt.Errorf("Could not edit file: %s. %s.", args.Path, errorCode(err))
		}
		res, err = applyEdits(orig, args.Edits, args.Path)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return errAborted
		}
		if err := atomicfile.WriteStrings(abs, res.out, 0o644); err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				// A folder we cannot write to, a full or read-only disk.
				return fmt.Errorf("Could not edit file: %s. %s.", args.Path, errorCode(errno))
			}
			return err
		}
		return nil
	})
	if err != nil {
		return tool.Result{}, err
	}
	text := fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(args.Edits), args.Path)
	if res.tolerant {
		text += "\n" + tolerantNote
	}
	diff, first := generateDiffPieces(res.before, res.after)
	return tool.Result{
		Content: []tool.ContentBlock{tool.Text(text)},
		Details: editDetails{Diff: diff, FirstChangedLine: first},
	}, nil
}

// errNotRegular marks a path that is a FIFO, device or socket.
var errNotRegular = errors.New("not a regular file")

// checkEditable checks that path is a regular file we may read and write.
func checkEditable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return &os.PathError{Op: "open", Path: path, Err: syscall.EISDIR}
	}
	if !fi.Mode().IsRegular() {
		return errNotRegular
	}
	if err := unix.Access(path, unix.R_OK); err != nil {
		return &os.PathError{Op: "access", Path: path, Err: err}
	}
	return atomicfile.CheckWritable(path, fi)
}

// errorCode renders an error as the reference agent does: "Error code:
// ENOENT" for a system error, the error's text otherwise.
func errorCode(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return "Error code: " + name
		}
	}
	return err.Error()
}

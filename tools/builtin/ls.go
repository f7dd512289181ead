package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// LsDefaultLimit is the number of entries ls returns when the call gives no
// limit.
const LsDefaultLimit = 500

const lsSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list (default: current directory)"},
    "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
  }
}`

// LsArgs are the arguments of an ls call.
type LsArgs struct {
	Path  *string  `json:"path,omitempty"`
	Limit *float64 `json:"limit,omitempty"`
}

// LsDetails are the details of an ls result. Zero fields are left out.
type LsDetails struct {
	// EntryLimitReached is the limit when the directory has more entries.
	EntryLimitReached int `json:"entryLimitReached,omitempty"`
	// Truncation is set when the text was cut to 50KB.
	Truncation *output.Truncation `json:"truncation,omitempty"`
}

// LsDefinition returns the ls tool: the entries of one directory, dotfiles
// included, sorted case-insensitively, directories marked with a '/'.
func LsDefinition() tool.ToolDefinition {
	return tool.ToolDefinition{
		Name:  "ls",
		Label: "ls",
		Description: fmt.Sprintf("List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "+
			"Includes dotfiles. Output is truncated to %d entries or %dKB (whichever is hit first).", LsDefaultLimit, output.DefaultMaxBytes/1024),
		Parameters:    json.RawMessage(lsSchema),
		PromptSnippet: "List directory contents",
		ExecutionMode: tool.Parallel,
		Source:        tool.Source{Kind: tool.SourceBuiltin},
		Execute: func(ctx context.Context, call tool.Call, tc tool.Context) (tool.Result, error) {
			var args LsArgs
			if err := decodeStrict(call.Input, &args); err != nil {
				return tool.Result{}, fmt.Errorf("ls: %w", err)
			}
			return Ls(ctx, tc.Cwd, args)
		},
		Paths: pathsOf(decodeStrict, func(cwd string, a *LsArgs) string { return searchTarget(cwd, a.Path) }),
	}
}

// Ls runs one ls call in the working directory cwd. Entries are sorted by
// their lower-cased names in Unicode collation order (as the reference
// agent's localeCompare does; byte order breaks ties); symbolic links are
// followed to decide the '/' suffix and dangling ones are left out (other
// entries are typed from the directory listing, without a stat each). ls does
// not read .gitignore.
//
// # Errors
//
// Ls fails with `Path not found: PATH`, `Not a directory: PATH`, `Cannot read
// directory: REASON`, or `Operation aborted` when ctx is cancelled.
func Ls(ctx context.Context, cwd string, args LsArgs) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, errSearchAborted
	}
	dirPath := searchTarget(cwd, args.Path)
	info, err := os.Stat(dirPath)
	if err != nil {
		return tool.Result{}, fmt.Errorf("Path not found: %s", dirPath) //nolint:staticcheck // model-visible text
	}
	if !info.IsDir() {
		return tool.Result{}, fmt.Errorf("Not a directory: %s", dirPath) //nolint:staticcheck // model-visible text
	}
	f, err := os.Open(dirPath)
	if err != nil {
		return tool.Result{}, fmt.Errorf("Cannot read directory: %w", err) //nolint:staticcheck // model-visible text
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return tool.Result{}, fmt.Errorf("Cannot read directory: %w", err) //nolint:staticcheck // model-visible text
	}
	items := make([]lsItem, len(entries))
	for i, e := range entries {
		items[i] = lsItem{name: e.Name(), isDir: e.IsDir(), link: e.Type()&fs.ModeSymlink != 0}
	}
	sortLsItems(items)
	limit := intArg(args.Limit, LsDefaultLimit, 1)
	var out []string
	limitReached := false
	for i, it := range items {
		if i%256 == 255 && ctx.Err() != nil {
			return tool.Result{}, errSearchAborted
		}
		if len(out) >= limit {
			limitReached = true
			break
		}
		if it.link {
			st, err := os.Stat(filepath.Join(dirPath, it.name))
			if err != nil {
				continue // dangling symlink
			}
			it.isDir = st.IsDir()
		}
		if it.isDir {
			it.name += "/"
		}
		out = append(out, it.name)
	}
	if len(out) == 0 {
		return tool.TextResult("(empty directory)"), nil
	}
	var details LsDetails
	var notices []string
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2))
		details.EntryLimitReached = limit
	}
	text, trunc := truncateListing(out)
	if trunc != nil {
		notices = append(notices, output.FormatSize(output.DefaultMaxBytes)+" limit reached")
		details.Truncation = trunc
	}
	return listingResult(text, notices, details, details != LsDetails{}), nil
}

// lsItem is one directory entry to list.
type lsItem struct {
	name        string
	key         []byte // collation key of the lower-cased name
	isDir, link bool
}

// sortLsItems sorts entries by their lower-cased names in the Unicode root
// collation, byte order breaking ties. Collation keys are made once per name.
func sortLsItems(items []lsItem) {
	c := collate.New(language.Und)
	var buf collate.Buffer
	for i := range items {
		items[i].key = c.KeyFromString(&buf, strings.ToLower(items[i].name))
	}
	sort.Slice(items, func(i, j int) bool {
		if r := bytes.Compare(items[i].key, items[j].key); r != 0 {
			return r < 0
		}
		return items[i].name < items[j].name
	})
}

package builtin

import (
	"bytes"
	"context"
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

// lsDefaultLimit is the number of entries ls returns when the call gives no
// limit.
const lsDefaultLimit = 500

const lsSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list (default: current directory)"},
    "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
  }
}`

// lsArgs are the arguments of an ls call.
type lsArgs struct {
	Path  *string  `json:"path,omitempty"`
	Limit *float64 `json:"limit,omitempty"`
}

// lsDetails are the details of an ls result. Zero fields are left out.
type lsDetails struct {
	// EntryLimitReached is the limit when the directory has more entries.
	EntryLimitReached int `json:"entryLimitReached,omitempty"`
	// Truncation is set when the text was cut to 50KB.
	Truncation *output.Truncation `json:"truncation,omitempty"`
}

// lsDefinition returns the ls tool: the entries of one directory, dotfiles
// included, sorted case-insensitively, directories marked with a '/'.
func lsDefinition() tool.ToolDefinition {
	return define(toolMeta{
		name: "ls",
		description: fmt.Sprintf("List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "+
			"Includes dotfiles. Output is truncated to %d entries or %dKB (whichever is hit first).", lsDefaultLimit, output.DefaultMaxBytes/1024),
		parameters: lsSchema,
		snippet:    "List directory contents",
		strict:     true,
	}, func(ctx context.Context, _ tool.Call, tc tool.Context, args lsArgs) (tool.Result, error) {
		return runLs(ctx, tc, args)
	}, func(cwd string, a *lsArgs) string { return searchTarget(cwd, a.Path) })
}

// runLs runs one ls call in the working directory cwd. Entries are sorted by
// their lower-cased names in Unicode collation order (as the reference
// agent's localeCompare does; byte order breaks ties); symbolic links are
// followed to decide the '/' suffix and dangling ones are left out (other
// entries are typed from the directory listing, without a stat each). ls does
// not read .gitignore. Entries the permission rules keep from being read
// (tc.Hidden) are left out, and a note says how many.
//
// # Errors
//
// runLs fails with `Path not found: PATH`, `Not a directory: PATH`, `Cannot read
// directory: REASON`, or `Operation aborted` when ctx is cancelled.
func runLs(ctx context.Context, tc tool.Context, args lsArgs) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, errSearchAborted
	}
	hidden := newHiddenPaths(tc)
	dirPath := searchTarget(tc.Cwd, args.Path)
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
	items := make([]lsItem, 0, len(entries))
	if hidden.skip(dirPath) {
		entries = nil
	}
	for _, e := range entries {
		if hidden.skip(filepath.Join(dirPath, e.Name())) {
			continue
		}
		items = append(items, lsItem{name: e.Name(), isDir: e.IsDir(), link: e.Type()&fs.ModeSymlink != 0})
	}
	sortLsItems(items)
	limit := intArg(args.Limit, lsDefaultLimit, 1)
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
		return listingResult("(empty directory)", hidden.withNotice(nil), nil, false), nil
	}
	var details lsDetails
	notices := hidden.withNotice(nil)
	if limitReached {
		notices = append(notices, fmt.Sprintf("%d entries limit reached. Use limit=%d for more", limit, limit*2))
		details.EntryLimitReached = limit
	}
	text, trunc := truncateListing(out)
	if trunc != nil {
		notices = append(notices, output.FormatSize(output.DefaultMaxBytes)+" limit reached")
		details.Truncation = trunc
	}
	return listingResult(text, notices, details, details != lsDetails{}), nil
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

//go:build wasip1

// Command loc is a pi extension with one tool, loc, that counts files and
// lines per language under a folder. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o loc.wasm ./examples/plugins/loc
//
// It needs read access to the folders it counts: fs = ["ro:."].
package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/sdk"
)

type input struct {
	Path string `json:"path,omitempty" description:"Folder to count, relative to the working directory (default: the working directory)"`
}

// count is one language's total.
type count struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
	Lines    int    `json:"lines"`
}

func init() {
	sdk.Extension("loc", "0.1.0", "Counts files and lines of code per language")
	sdk.Wants(sdk.Grants{FS: []string{"ro:."}})
	sdk.Tool(sdk.ToolSpec{
		Name:          "loc",
		Label:         "Lines of code",
		Description:   "Count files and lines per programming language under a folder (skips .git). Prints one line per language, most lines first, then a total.",
		PromptSnippet: "Count lines of code per language under a folder",
	}, run)
}

func main() {}

func run(ctx *sdk.Context, in input) (sdk.Result, error) {
	if in.Path == "" {
		in.Path = "."
	}
	root := in.Path
	if !filepath.IsAbs(root) {
		root = filepath.Join(ctx.Cwd, root)
	}
	info, err := os.Stat(root)
	if err != nil {
		return sdk.Result{}, fmt.Errorf("cannot read %s: %w (the loc extension sees only folders granted with fs = [\"ro:...\"])", in.Path, unwrapPathError(err))
	}
	if !info.IsDir() {
		return sdk.Result{}, fmt.Errorf("%s is not a folder", in.Path)
	}
	counts := map[string]*count{}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			sdk.Logf(sdk.LevelWarn, "skip %s: %v", path, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		lang := language(d.Name())
		if lang == "" {
			return nil
		}
		n, err := countLines(path)
		if err != nil {
			sdk.Logf(sdk.LevelWarn, "skip %s: %v", path, err)
			return nil
		}
		c := counts[lang]
		if c == nil {
			c = &count{Language: lang}
			counts[lang] = c
		}
		c.Files++
		c.Lines += n
		files++
		if files%500 == 0 && ctx.Emit(sdk.Text(fmt.Sprintf("Counted %d files…", files))) {
			return errCancelled
		}
		return nil
	})
	if errors.Is(err, errCancelled) {
		return sdk.Result{}, errors.New("loc: cancelled")
	}
	if err != nil {
		return sdk.Result{}, err
	}
	return report(counts), nil
}

var errCancelled = errors.New("cancelled")

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func report(counts map[string]*count) sdk.Result {
	list := make([]count, 0, len(counts))
	for _, c := range counts {
		list = append(list, *c)
	}
	slices.SortFunc(list, func(a, b count) int {
		if a.Lines != b.Lines {
			return cmp.Compare(b.Lines, a.Lines)
		}
		return cmp.Compare(a.Language, b.Language)
	})
	var b strings.Builder
	var total struct {
		Files int `json:"files"`
		Lines int `json:"lines"`
	}
	for _, c := range list {
		fmt.Fprintf(&b, "%s: %s, %s\n", c.Language, plural(c.Files, "file"), plural(c.Lines, "line"))
		total.Files += c.Files
		total.Lines += c.Lines
	}
	fmt.Fprintf(&b, "Total: %s, %s", plural(total.Files, "file"), plural(total.Lines, "line"))
	return sdk.Result{Content: []sdk.Block{sdk.TextBlock(b.String())}, Details: map[string]any{"languages": list, "total": total}}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// countLines counts newline-terminated lines, plus a last line without a
// newline when the file does not end with one.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	lines, last := 0, byte('\n')
	for {
		n, err := f.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		lines++
	}
	return lines, nil
}

var byExt = map[string]string{
	".go": "Go", ".py": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
	".ts": "TypeScript", ".tsx": "TypeScript", ".jsx": "JavaScript", ".rs": "Rust", ".c": "C", ".h": "C",
	".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".java": "Java", ".kt": "Kotlin",
	".rb": "Ruby", ".php": "PHP", ".cs": "C#", ".swift": "Swift", ".sh": "Shell", ".bash": "Shell",
	".md": "Markdown", ".json": "JSON", ".toml": "TOML", ".yaml": "YAML", ".yml": "YAML",
	".html": "HTML", ".css": "CSS", ".sql": "SQL", ".wat": "WebAssembly text", ".lua": "Lua",
	".zig": "Zig", ".proto": "Protocol Buffers", ".txt": "Text",
}

var byName = map[string]string{"Makefile": "Makefile", "Dockerfile": "Dockerfile"}

// language names a file's language from its name, or "" when unknown.
func language(name string) string {
	if l, ok := byName[name]; ok {
		return l
	}
	return byExt[strings.ToLower(filepath.Ext(name))]
}

package archtest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// initWork returns what the Go source files of one package do at start-up
// that they must put off to first use, one line each ("file:line: what"):
// compiling a regexp (regexp.MustCompile and its kin) or building a
// table — a loop or a hash table maker (crc32.MakeTable, crc64.MakeTable)
// — in an init function or a package-level variable's initializer (and in
// the function literals it calls, and the functions of the package it
// calls by name, one level down). Every such initializer runs whenever pi
// starts, whatever the command. A fixed-size array worked out by a
// function literal (a 256-entry byte table) is let through: bounded work,
// no allocation; so is what an init hands to os.Exit (os.Exit(helperMain()):
// a helper mode the process was started as, which never becomes pi).
func initWork(fset *token.FileSet, files []*ast.File) []string {
	funcs := map[string]*ast.FuncDecl{}
	imports := map[*ast.File]map[string]string{} // local name → import path
	for _, f := range files {
		imports[f] = map[string]string{}
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			name := filepath.Base(path)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[f][name] = path
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name != "init" {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	// check reports the work in n, run at start-up by where (follow: also
	// in the package's functions it calls).
	var check func(f *ast.File, n ast.Node, where string, follow bool)
	check = func(f *ast.File, n ast.Node, where string, follow bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				report(n, "a loop "+where)
			case *ast.FuncLit:
				// A function literal runs only when called: a variable
				// holding one (or a sync.OnceValue of one) is put off.
				return false
			case *ast.CallExpr:
				switch fn := n.Fun.(type) {
				case *ast.FuncLit: // func() T { ... }()
					// A fixed-size array worked out in place (a byte
					// class table) is bounded work with no allocation.
					if r := fn.Type.Results; r != nil && len(r.List) == 1 {
						if at, ok := r.List[0].Type.(*ast.ArrayType); ok && at.Len != nil {
							return false
						}
					}
					check(f, fn.Body, where, follow)
				case *ast.SelectorExpr:
					if pkg, ok := fn.X.(*ast.Ident); ok {
						path := imports[f][pkg.Name]
						switch {
						case path == "os" && fn.Sel.Name == "Exit":
							// os.Exit(otherMain()): the process is started
							// as another program (a helper mode chosen by
							// its arguments or environment) and never
							// becomes pi: not pi's start-up work.
							return false
						case path == "regexp" && strings.Contains(fn.Sel.Name, "Compile"):
							report(n, "regexp."+fn.Sel.Name+" "+where)
						case (path == "hash/crc32" || path == "hash/crc64") && fn.Sel.Name == "MakeTable":
							report(n, pkg.Name+".MakeTable "+where)
						}
					}
				case *ast.Ident:
					if fd := funcs[fn.Name]; follow && fd != nil && fd.Body != nil {
						check(f, fd.Body, where+" (in "+fn.Name+")", false)
					}
				}
			}
			return true
		})
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" && d.Body != nil {
					check(f, d.Body, "in init", true)
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					for _, v := range s.(*ast.ValueSpec).Values {
						check(f, v, "in a package-level variable's initializer", true)
					}
				}
			}
		}
	}
	return found
}

// TestNoInitWork: no package of ours that pi links compiles a regexp or
// builds a table at start-up (see initWork); such work goes behind a
// sync.OnceValue or into the function that needs it.
func TestNoInitWork(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Dir,GoFiles,Standard", "./cmd/pi")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
			Standard        bool
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Standard || (p.ImportPath != module && !strings.HasPrefix(p.ImportPath, module+"/")) {
			continue
		}
		n++
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		for _, w := range initWork(fset, files) {
			t.Errorf("%s (put it off to first use: sync.OnceValue)", w)
		}
	}
	if n < 20 {
		t.Fatalf("only %d of pi's packages found", n)
	}
}

// TestInitWorkFinds: the check finds each kind of start-up work, and
// passes what is put off.
func TestInitWorkFinds(t *testing.T) {
	const src = `package p

import (
	re "regexp"
	"hash/crc32"
	"os"
	"sync"
)

var a = re.MustCompile("a")
var b, c = 1, crc32.MakeTable(crc32.Castagnoli)
var d = func() map[int]bool {
	m := map[int]bool{}
	for i := range 10 {
		m[i] = true
	}
	return m
}()
var e = build()
var f = sync.OnceValue(func() *re.Regexp { return re.MustCompile("f") })
var g = func() int { return 1 }
var h = map[string]int{"x": 1}
var k = func() (t [256]bool) {
	for i := range 10 {
		t[i] = true
	}
	return t
}()

func build() []int {
	var t []int
	for i := 0; i < 10; i++ {
		t = append(t, i)
	}
	return t
}

func init() {
	re.MustCompile("i")
	for range 3 {
	}
	if len(os.Args) > 1 {
		os.Exit(helper())
	}
}

func helper() int {
	for range 3 {
	}
	return 0
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := initWork(fset, []*ast.File{f})
	want := []string{
		"p.go:10:9: regexp.MustCompile in a package-level variable's initializer",
		"p.go:11:15: crc32.MakeTable in a package-level variable's initializer",
		"p.go:14:2: a loop in a package-level variable's initializer",
		"p.go:32:2: a loop in a package-level variable's initializer (in build)",
		"p.go:39:2: regexp.MustCompile in init",
		"p.go:40:2: a loop in init",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

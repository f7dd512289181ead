// Command testfmt turns `go test -json` into go test's usual lines, but
// prints each package's line as soon as that package finishes instead of in
// package order, so a long run shows progress from its first seconds (plain
// `go test ./...` holds every line back until the packages before it in the
// list are done). A failing package's whole output is printed before its
// FAIL line; build errors are printed as they come. scripts/test runs it:
//
//	go test -json ./... | go run ./scripts/testfmt
//
// Its own exit status is 0; the caller keeps go test's.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (test2json's TestEvent, and the
// build events of `go test -json`).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

func main() {
	if err := format(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testfmt: %v\n", err)
	}
}

// format reads events from r and writes the lines to w. As without -v, a
// failing package shows the output of its failing tests and its own, not
// that of the tests that passed.
func format(r io.Reader, w io.Writer) error {
	out := map[string]*strings.Builder{}        // output held per package
	testOut := map[[2]string]*strings.Builder{} // per package and test, until it ends
	hold := func(m map[string]*strings.Builder, k string) *strings.Builder {
		b := m[k]
		if b == nil {
			b = &strings.Builder{}
			m[k] = b
		}
		return b
	}
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for in.Scan() {
		line := in.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not an event: pass it on
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
			continue
		case "output":
			if e.Test == "" {
				hold(out, e.Package).WriteString(e.Output)
				continue
			}
			k := [2]string{e.Package, e.Test}
			b := testOut[k]
			if b == nil {
				b = &strings.Builder{}
				testOut[k] = b
			}
			if !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(strings.TrimSpace(e.Output), "--- PASS") {
				b.WriteString(e.Output)
			}
			continue
		}
		if e.Test != "" {
			k := [2]string{e.Package, e.Test}
			switch e.Action {
			case "fail":
				// A subtest's output goes into its parent's, which fails too.
				text := ""
				if b := testOut[k]; b != nil {
					text = b.String()
				}
				if i := strings.LastIndexByte(e.Test, '/'); i >= 0 {
					pk := [2]string{e.Package, e.Test[:i]}
					if testOut[pk] == nil {
						testOut[pk] = &strings.Builder{}
					}
					testOut[pk].WriteString(text)
				} else {
					hold(out, e.Package).WriteString(text)
				}
				delete(testOut, k)
			case "pass", "skip":
				delete(testOut, k)
			}
			continue
		}
		switch e.Action {
		case "pass":
			fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		case "skip":
			fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
		case "fail":
			if b := out[e.Package]; b != nil {
				// go test's own output for the package ends with its FAIL
				// line; print all of it.
				fmt.Fprint(w, b.String())
				if !strings.Contains(b.String(), "FAIL\t"+e.Package) {
					fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
				}
			} else {
				reason := ""
				if e.FailedBuild != "" {
					reason = " [build failed]"
				}
				fmt.Fprintf(w, "FAIL\t%s%s\n", e.Package, reason)
			}
		default:
			continue
		}
		delete(out, e.Package)
	}
	return in.Err()
}

package main

import (
	"os"
	"strings"
	"testing"
)

// TestFormat runs the formatter on the events of a real `go test -json ./...`
// of a small module (testdata/events.json: a passing package, one with no
// tests, one whose test and subtest fail, one that does not build): one line
// per package, passing tests' output left out, failing tests' output and the
// build error kept.
func TestFormat(t *testing.T) {
	in, err := os.Open("testdata/events.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out strings.Builder
	if err := format(in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tfmtcheck/good\t", "?   \tfmtcheck/none\t[no test files]\n", "FAIL\tfmtcheck/broken [build failed]\n",
		"undefined: undefinedThing", "a_test.go:3: boom", "b_test.go:3: sub boom", "--- FAIL: TestSub/b", "FAIL\tfmtcheck/bad\t",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"sub ok", "=== RUN", "--- PASS"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q (a passing test's output):\n%s", unwanted, got)
		}
	}
	if n := strings.Count(got, "fmtcheck/good"); n != 1 {
		t.Errorf("the passing package has %d lines, want 1", n)
	}
}

// Package abigolden reads the golden wire messages of internal/abi/testdata
// for the tests of every side of the wire: the host (extensions), the Go
// SDK (sdk) and the C and Rust SDKs (sdk/langtest). It is imported only by
// tests.
package abigolden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// dir is internal/abi/testdata, the wire package's own examples.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "abi", "testdata")
}

// Read returns a golden file; a missing one fails the test.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir(), name))
	if err != nil {
		t.Fatalf("golden file %s: %v (the wire examples live in internal/abi/testdata)", name, err)
	}
	return b
}

// Wire returns a golden file as the compact bytes that travel on the wire.
func Wire(t testing.TB, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, Read(t, name)); err != nil {
		t.Fatalf("golden file %s is not JSON: %v", name, err)
	}
	return buf.Bytes()
}

// Match compares what an encoder of side ("the host", "the SDK") wrote
// with a golden file: the same fields in the same order with the same
// values (the file is the encoder's output indented by two spaces).
func Match(t testing.TB, side, name string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("%s: %s wrote invalid JSON %q: %v", name, side, got, err)
	}
	buf.WriteByte('\n')
	if want := Read(t, name); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s: %s encodes\n%s\nthe golden file holds\n%s", name, side, buf.Bytes(), want)
	}
}

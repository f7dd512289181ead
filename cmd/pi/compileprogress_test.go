package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCompileProgressLines: the line before the wait and the one after, on
// a terminal (one line, finished in place) and elsewhere (two lines).
func TestCompileProgressLines(t *testing.T) {
	var term bytes.Buffer
	done := compileProgressTo(&term, true, time.Hour)("loc.wasm")
	if got := term.String(); got != "pi: compiling loc.wasm (first load only)…" {
		t.Fatalf("before the wait, the terminal shows %q", got)
	}
	done(4200*time.Millisecond, nil)
	if got := term.String(); got != "pi: compiling loc.wasm (first load only)…\rpi: compiling loc.wasm (first load only)… done in 4.2s\n" {
		t.Fatalf("terminal: %q", got)
	}

	var plain bytes.Buffer
	done = compileProgressTo(&plain, false, time.Hour)("loc.wasm")
	if got := plain.String(); got != "pi: compiling loc.wasm (first load only)…\n" {
		t.Fatalf("before the wait: %q", got)
	}
	done(1500*time.Millisecond, errors.New("bad module"))
	if got := plain.String(); got != "pi: compiling loc.wasm (first load only)…\npi: compiled loc.wasm: failed after 1.5s\n" {
		t.Fatalf("plain: %q", got)
	}
	if strings.Contains(plain.String(), "\r") {
		t.Errorf("carriage return in plain output: %q", plain.String())
	}
}

// chanWriter hands every write to a channel.
type chanWriter chan string

func (c chanWriter) Write(p []byte) (int, error) { c <- string(p); return len(p), nil }

// TestCompileProgressTicks: on a terminal the line counts the seconds in
// place while the compile runs, and stops counting when it ends.
func TestCompileProgressTicks(t *testing.T) {
	w := make(chanWriter, 100)
	done := compileProgressTo(w, true, time.Millisecond)("loc.wasm")
	if got := <-w; got != "pi: compiling loc.wasm (first load only)…" {
		t.Fatalf("first write %q", got)
	}
	select {
	case got := <-w:
		if got != "\rpi: compiling loc.wasm (first load only)… 0s" {
			t.Fatalf("tick %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no tick")
	}
	done(time.Second, nil)
	// Drain: the last write is the end line, and nothing follows it.
	var last string
	for len(w) > 0 {
		last = <-w
	}
	if last != "\rpi: compiling loc.wasm (first load only)… done in 1.0s\n" {
		t.Fatalf("last write %q", last)
	}
	select {
	case got := <-w:
		t.Fatalf("a write after the end: %q", got)
	default:
	}
}

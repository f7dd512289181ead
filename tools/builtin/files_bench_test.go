package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/tool"
)

// benchFileMB is the size of the file BenchmarkReadEnd reads; set
// PI_READ_BENCH_MB=1024 for the 1 GB figure in docs/performance.md.
func benchFileMB() int {
	if n, err := strconv.Atoi(os.Getenv("PI_READ_BENCH_MB")); err == nil && n > 0 {
		return n
	}
	return 256
}

// writeLinesFile writes lines of 99 characters plus '\n' until the file is
// mb megabytes (10^6 bytes), and returns the number of lines read counts
// (the trailing newline makes one more, empty line).
func writeLinesFile(b *testing.B, path string, mb int) int {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n := mb * 10_000
	for i := range n {
		fmt.Fprintf(w, "%08d %s\n", i+1, strings.Repeat("x", 90))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n + 1
}

// BenchmarkReadEnd reads the last 3 lines of a large file through the tool
// pipeline: one streaming pass, bounded memory.
func BenchmarkReadEnd(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.txt")
	mb := benchFileMB()
	total := writeLinesFile(b, path, mb)
	args := fmt.Sprintf(`{"path":"big.txt","offset":%d}`, total-2)
	want := fmt.Sprintf("%08d %s\n%08d %s\n", total-2, strings.Repeat("x", 90), total-1, strings.Repeat("x", 90))
	b.SetBytes(int64(mb) * 1_000_000)
	tools := fileTools(b, dir)
	b.ResetTimer()
	for b.Loop() {
		r := tool.Run(context.Background(), tools, nil, "read", "bench", json.RawMessage(args), nil)
		if r.IsError || r.Text() != want {
			b.Fatalf("got %q", trimForLog(r.Text()))
		}
	}
}

// BenchmarkReadHead reads the first window (2000 lines / 50KB) of a large
// file: the rest is only counted.
func BenchmarkReadHead(b *testing.B) {
	dir := b.TempDir()
	writeLinesFile(b, filepath.Join(dir, "big.txt"), 64)
	b.SetBytes(64_000_000)
	tools := fileTools(b, dir)
	b.ResetTimer()
	for b.Loop() {
		r := tool.Run(context.Background(), tools, nil, "read", "bench", json.RawMessage(`{"path":"big.txt"}`), nil)
		if r.IsError || !strings.HasSuffix(r.Text(), "Use offset=513 to continue.]") {
			b.Fatalf("got %q", trimForLog(r.Text()))
		}
	}
}

// BenchmarkEdit20MB replaces one line in the middle of a 20 MB file through
// the tool pipeline (read, match, atomic write, diff).
func BenchmarkEdit20MB(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.txt")
	total := writeLinesFile(b, path, 20)
	mid := fmt.Sprintf("%08d %s", total/2, strings.Repeat("x", 90))
	alt := fmt.Sprintf("%08d %s", total/2, strings.Repeat("y", 90))
	b.SetBytes(20_000_000)
	tools := fileTools(b, dir)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		from, to := mid, alt
		if i%2 == 1 {
			from, to = alt, mid
		}
		i++
		args, _ := json.Marshal(map[string]any{"path": "big.txt", "edits": edits(from, to)})
		r := tool.Run(context.Background(), tools, nil, "edit", "bench", args, nil)
		if r.IsError {
			b.Fatal(r.Text())
		}
	}
}

// BenchmarkEditTolerant20MB is the same edit where only the tolerant match
// finds the line (the file has trailing spaces the oldText lacks).
func BenchmarkEditTolerant20MB(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.txt")
	total := writeLinesFile(b, path, 20)
	mid := fmt.Sprintf("%08d %s", total/2, strings.Repeat("x", 90))
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), mid+"\n", mid+"  \n", 1)), 0o644); err != nil {
		b.Fatal(err)
	}
	alt := fmt.Sprintf("%08d %s", total/2, strings.Repeat("y", 90))
	b.SetBytes(20_000_000)
	tools := fileTools(b, dir)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		from, to := mid+"\n", alt+"  \n"
		if i%2 == 1 {
			from, to = alt+"\n", mid+"  \n"
		}
		i++
		args, _ := json.Marshal(map[string]any{"path": "big.txt", "edits": edits(from, to)})
		r := tool.Run(context.Background(), tools, nil, "edit", "bench", args, nil)
		if r.IsError || !strings.Contains(r.Text(), tolerantNote) {
			b.Fatal(r.Text())
		}
	}
}

// BenchmarkTolerantText20MB builds the tolerant form (with its offset map)
// of 20 MB of non-ASCII text: the worst case of the tolerant match.
func BenchmarkTolerantText20MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 20_000_000; i++ {
		fmt.Fprintf(&sb, "%08d caf\u00e9 \u201cquoted\u201d text %s  \n", i, strings.Repeat("x", 60))
	}
	s := sb.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		newTolerantText(s)
	}
}

// BenchmarkWrite20MB writes a 20 MB file (lines with the escapes JSON
// needs: newlines, tabs, quotes) through the whole pipeline (validation,
// one parse, execute, atomic write with fsync), against bare: the same
// arguments decoded by json.Unmarshal and written by a plain temporary
// file, fsync and rename — the least any atomic write tool does.
func BenchmarkWrite20MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 20_000_000; i++ {
		fmt.Fprintf(&sb, "%08d\tfunc \"quoted\" %s\n", i, strings.Repeat("x", 70))
	}
	content := sb.String()
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	b.Run("pipeline", func(b *testing.B) {
		dir := b.TempDir()
		tools := fileTools(b, dir)
		b.SetBytes(int64(len(content)))
		b.ReportAllocs()
		for b.Loop() {
			r := tool.Run(context.Background(), tools, nil, "write", "bench", args, nil)
			if r.IsError {
				b.Fatal(r.Text())
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		dir := b.TempDir()
		b.SetBytes(int64(len(content)))
		b.ReportAllocs()
		for b.Loop() {
			var a writeArgs
			if err := json.Unmarshal(args, &a); err != nil {
				b.Fatal(err)
			}
			f, err := os.CreateTemp(dir, ".tmp")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.WriteString(a.Content); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			f.Close()
			if err := os.Rename(f.Name(), filepath.Join(dir, a.Path)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package output

import (
	"bytes"
	"strings"
	"testing"
)

func BenchmarkAccumulatorWrite(b *testing.B) {
	chunk := bytes.Repeat([]byte(strings.Repeat("a", 99)+"\n"), 655)
	a := NewAccumulator(Limits{NewFile: filesIn(b.TempDir())})
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.Write(chunk)
	}
	b.StopTimer()
	a.Finish()
	_ = a.Close()
}

func BenchmarkSanitize(b *testing.B) {
	inputs := map[string][]byte{
		"ascii":   bytes.Repeat([]byte(strings.Repeat("a", 99)+"\n"), 655),
		"colored": bytes.Repeat([]byte("\x1b[32mok\x1b[0m   test/pkg/name  0.012s héllo\n"), 1500),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			var s sanitizer
			out := make([]byte, 0, len(in))
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				out = s.write(out[:0], in)
			}
		})
	}
}

// BenchmarkPlainRun is the accumulator's scan of plain output (printable
// ASCII lines): what every byte of a command's ordinary output costs.
func BenchmarkPlainRun(b *testing.B) {
	in := bytes.Repeat([]byte(strings.Repeat("a", 99)+"\n"), 655)
	var s sanitizer
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if s.plainRun(in) != len(in) {
			b.Fatal("not plain")
		}
	}
}

package tui

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used (user and system): on a
// shared machine a steadier measure than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per render and, with bytes > 0, the CPU
// throughput to b's results.
func reportCPU(b *testing.B, cpu0 time.Duration, bytes int) {
	per := float64(cpuTime()-cpu0) / float64(b.N)
	b.ReportMetric(per/1e6, "cpu-ms/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)/per*1e3, "cpu-MB/s")
	}
}

// BenchmarkMarkdownLive is the cost of one re-render of a streaming answer
// of about 20 KB (the live area re-renders at most every 50 ms).
func BenchmarkMarkdownLive(b *testing.B) {
	md := newMarkdown(100)
	para := "Some **bold** text with `code` and a [link](http://x). "
	var sb strings.Builder
	for sb.Len() < 20<<10 {
		sb.WriteString("## Section\n\n" + strings.Repeat(para, 6) + "\n\n- item one\n- item two\n\n```go\nfunc f() int { return 1 }\n```\n\n")
	}
	text := sb.String()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		md.render(text)
	}
	reportCPU(b, cpu0, 0)
}

// BenchmarkMarkdownLiveTail is the same answer as the live area renders
// it: its end only (liveTail).
func BenchmarkMarkdownLiveTail(b *testing.B) {
	md := newMarkdown(100)
	para := "Some **bold** text with `code` and a [link](http://x). "
	var sb strings.Builder
	for sb.Len() < 20<<10 {
		sb.WriteString("## Section\n\n" + strings.Repeat(para, 6) + "\n\n- item one\n- item two\n\n```go\nfunc f() int { return 1 }\n```\n\n")
	}
	text := sb.String()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		tail, _ := liveTail(text)
		md.render(tail)
	}
	reportCPU(b, cpu0, 0)
}

func TestLiveTail(t *testing.T) {
	short := "# hi\n\ntext"
	if got, skipped := liveTail(short); got != short || skipped {
		t.Fatalf("short text changed: %q", got)
	}
	// A long code block: the tail must not start inside the fence.
	code := "intro\n\n```go\n" + strings.Repeat("x := 1\n\n", 600) + "```\n\nafter the code\n"
	got, skipped := liveTail(code)
	if !skipped || len(got) > maxLiveMarkdown+16 || strings.Count(got, "```")%2 != 0 {
		t.Fatalf("tail of a long fence: %d bytes, %d fences", len(got), strings.Count(got, "```"))
	}
	// Paragraphs: the tail starts at a blank line.
	paras := strings.Repeat("a paragraph of words here.\n\n", 400) + "the end"
	got, _ = liveTail(paras)
	if !strings.HasPrefix(got, "a paragraph") || !strings.HasSuffix(got, "the end") || len(got) > maxLiveMarkdown {
		t.Fatalf("tail %q…", got[:40])
	}
}

// BenchmarkMarkdownFull is the whole render of a 100 KB answer (mdAnswer)
// when it is complete, at 100 columns with 256 colours (the TUI renders
// each finished answer once, on its own goroutine).
func BenchmarkMarkdownFull(b *testing.B) {
	md := colourMD(100)
	text := mdAnswer(100 << 10)
	b.SetBytes(int64(len(text)))
	cpu0 := cpuTime()
	for b.Loop() {
		md.render(text)
	}
	reportCPU(b, cpu0, len(text))
}

// BenchmarkMarkdownLive100K is one re-render of the live area near the end
// of the 100 KB answer (mdAnswer) as it streams: finding the tail to
// render (a scan of the whole answer for code fences) and rendering it.
func BenchmarkMarkdownLive100K(b *testing.B) {
	md := colourMD(100)
	text := mdAnswer(100 << 10)
	text = text[:len(text)-len(text)/50] // mid-stream: cut in a block
	cpu0 := cpuTime()
	for b.Loop() {
		tail, _ := liveTail(text)
		md.render(tail)
	}
	reportCPU(b, cpu0, 0)
}

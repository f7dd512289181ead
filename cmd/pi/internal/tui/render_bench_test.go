package tui

import (
	"strings"
	"testing"
)

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
	for b.Loop() {
		md.render(text)
	}
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
	for b.Loop() {
		tail, _ := liveTail(text)
		md.render(tail)
	}
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

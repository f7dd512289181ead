package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/content"
)

// longConversation returns the messages of an n-turn conversation whose
// strings are of every size the body writes differently (short, past
// cacheMin, past inlineMax, past cacheMax), with tool calls, images in
// tool results and prompts, reasoning from this model and from another.
func longConversation(n int) []Message {
	text := func(i, size int) string {
		var b strings.Builder
		for b.Len() < size {
			fmt.Fprintf(&b, "turn %d: \"quoted\"\t<tag> & ü € \u2028 \U0001F600\n", i)
		}
		return b.String()
	}
	png := func(i, size int) content.Block {
		return content.Image(strings.Repeat(fmt.Sprintf("iVBORw0K%03d", i), size/11+1), "image/png")
	}
	sizes := []int{10, 300, 5 << 10, 40 << 10}
	msgs := []Message{{Role: RoleUser, Content: []content.Block{content.Text(text(0, 500)), png(0, 400)}}}
	for i := 1; i < n; i++ {
		size := sizes[i%len(sizes)]
		if i == 2 {
			size = cacheMax + 100
		}
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("f%d.go", i), "content": text(i, size)})
		a := Message{Role: RoleAssistant, API: "openai-completions", Provider: "p", Model: "m",
			Content:   []content.Block{content.Thinking(text(i, 700), "reasoning_content"), content.Text(text(i, sizes[(i+1)%3]))},
			ToolCalls: []ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "write", Arguments: args}, {ID: fmt.Sprintf("d%d", i), Name: "read", Arguments: RawArguments(`{"path":"x"}`)}}}
		if i%4 == 0 {
			a.Model = "another" // its reasoning goes as text
		}
		results := []Message{
			{Role: RoleToolResult, ToolCallID: a.ToolCalls[0].ID, Content: []content.Block{content.Text(text(i, size))}},
			{Role: RoleToolResult, ToolCallID: a.ToolCalls[1].ID, Content: []content.Block{png(i, size), content.Text(text(i, 300))}},
		}
		msgs = append(msgs, a)
		msgs = append(msgs, results...)
		if i%5 == 0 {
			msgs = append(msgs, Message{Role: RoleUser, Content: []content.Block{content.Text(text(i, 260)), png(i, 9000)}})
		}
	}
	return append(msgs, Message{Role: RoleAssistant})
}

// TestCachedBodyIsTheSame: a conversation's requests written turn by turn
// through one escape cache are byte for byte the requests written without
// it, for a model with and without images.
func TestCachedBodyIsTheSame(t *testing.T) {
	msgs := longConversation(16)
	for _, images := range []bool{true, false} {
		cache := newEscapeCache()
		var frames frameCache
		// The tools change between turns as they may in a session (an
		// extension loaded, a schema changed in place): the frame
		// follows them.
		schema := []byte(`{"type":"object"}`)
		write := ToolSpec{Name: "write", Description: strings.Repeat("Writes a file. ", 40), Parameters: schema}
		for turn := 1; turn <= len(msgs); turn++ {
			tools := []ToolSpec{write}
			switch {
			case turn == 5:
				copy(schema, `{"type":"objekt"}`)
			case turn%3 == 0:
				tools = append(tools, ToolSpec{Name: "read", Description: "Reads."})
			}
			req := Request{SystemPrompt: strings.Repeat("You are pi. ", 50), Messages: msgs[:turn], Tools: tools, MaxTokens: turn / 4 * 100}
			o := wireOptions{model: "m", images: images, includeUsage: turn%4 != 0, effort: []string{"", "low"}[turn/6%2], api: "openai-completions", provider: "p"}
			plain, err := wireRequestFor(req, o)
			if err != nil {
				t.Fatal(err)
			}
			o.escapes, o.frames = cache, &frames
			cached, err := wireRequestFor(req, o)
			if err != nil {
				t.Fatal(err)
			}
			want, got := readWhole(t, plain), readWhole(t, cached)
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("images %v, turn %d: the cached body differs at byte %d:\n got …%.200s\nwant …%.200s", images, turn, i, got[max(0, i-40):], want[max(0, i-40):])
			}
		}
		if len(cache.m) == 0 {
			t.Fatal("the cache kept nothing")
		}
	}
}

// readWhole reads a body and checks the size it announced (readBody,
// without its byte-by-byte pass, too slow for a long conversation's
// bodies).
func readWhole(t *testing.T, b *requestBody) []byte {
	t.Helper()
	got, err := io.ReadAll(b.reader())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != b.size {
		t.Fatalf("body is %d bytes, announced %d", len(got), b.size)
	}
	return got
}

// TestEscapeCacheForgets: the strings of a conversation no longer sent
// leave the cache after escapeKeep bodies; the strings still sent stay.
func TestEscapeCacheForgets(t *testing.T) {
	cache := newEscapeCache()
	old := longConversation(6)
	kept := []Message{{Role: RoleUser, Content: []content.Block{content.Text(strings.Repeat("still here ", 100))}}}
	write := func(msgs []Message) {
		if _, err := wireRequestFor(Request{Messages: msgs}, wireOptions{model: "m", escapes: cache}); err != nil {
			t.Fatal(err)
		}
	}
	write(append(append([]Message(nil), old...), kept...))
	before := len(cache.m)
	for range escapeKeep + 1 {
		write(kept)
	}
	if before <= 1 || len(cache.m) != 1 {
		t.Fatalf("the cache holds %d entries (%d before), want the 1 still sent", len(cache.m), before)
	}
}

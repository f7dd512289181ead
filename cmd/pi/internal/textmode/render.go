package textmode

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
)

// textRenderer shows a run as text: the assistant's words stream to out, a
// line per tool call (and, with preview > 0, the first lines of its result)
// goes to tools.
type textRenderer struct {
	out, tools io.Writer
	preview    int
	redactor   *redact.Redactor
	spin       *spinner
	// custom shows the extensions' messages (display: true) as
	// "[customType] TEXT" (the line mode).
	custom bool

	mu          sync.Mutex
	midLine     bool // out has text not ended by a newline
	wroteText   bool
	toolsIsText bool // tools and out are the same stream
}

func (r *textRenderer) onEvent(ev agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Type {
	case conversation.EventCustomMessage:
		if cm := conversation.DeliveredCustom(ev.Message); cm != nil && r.custom {
			r.spin.halt()
			r.endLine()
			var text []string
			for _, b := range ev.Message.Content {
				if b.Type == "text" {
					text = append(text, b.Text)
				}
			}
			fmt.Fprintf(r.out, "[%s] %s\n", termtext.Cut(termtext.Printable(cm.CustomType), 64), termtext.Printable(r.redactor.String(strings.Join(text, "\n"))))
		}
	case agent.EventTurnStart:
		r.spin.start()
	case agent.EventMessageUpdate:
		if d := ev.AssistantMessageEvent; d != nil && d.Type == llm.EventTextDelta && d.Delta != "" {
			r.spin.halt()
			io.WriteString(r.out, d.Delta)
			r.midLine = !strings.HasSuffix(d.Delta, "\n")
			r.wroteText = true
		}
	case agent.EventMessageEnd:
		if ev.Message != nil && ev.Message.Role == llm.RoleAssistant {
			r.spin.halt()
			r.endLine()
		}
		if r.custom && conversation.FromExtension(ev.Message) != "" {
			// An extension's user message (agent.sendUserMessage): the
			// line mode shows it as a typed prompt, which it was not.
			r.spin.halt()
			r.endLine()
			var text []string
			for _, b := range ev.Message.Content {
				if b.Type == "text" {
					text = append(text, b.Text)
				}
			}
			fmt.Fprintf(r.out, "> %s\n", termtext.Printable(r.redactor.String(strings.Join(text, "\n"))))
		}
	case agent.EventToolExecutionStart:
		r.spin.halt()
		r.endLine()
		// 160 bytes are shown: the first 64 KiB of the arguments are
		// enough, and a 20 MB write is not copied to show them.
		fmt.Fprintf(r.tools, "→ %s %s\n", ev.ToolName, termtext.Cut(r.redactor.String(compactJSON(ev.Args[:min(len(ev.Args), 64<<10)])), 160))
	case agent.EventToolExecutionEnd:
		if ev.Result == nil {
			return
		}
		text := r.redactor.String(ev.Result.Text())
		mark := "✓"
		if ev.Failed() {
			mark = "✗"
		}
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		images := 0
		for _, b := range ev.Result.Content {
			if b.Type == "image" {
				images++
			}
		}
		summary := fmt.Sprintf("%d line(s)", len(lines))
		if text == "" {
			summary = "no text"
		}
		if images > 0 {
			summary += fmt.Sprintf(", %d image(s)", images)
		}
		if ev.Failed() || r.preview == 0 {
			fmt.Fprintf(r.tools, "%s %s: %s (%s)\n", mark, ev.ToolName, termtext.Cut(lines[0], 160), summary)
			if !ev.Failed() || r.preview == 0 {
				return
			}
		} else {
			fmt.Fprintf(r.tools, "%s %s (%s)\n", mark, ev.ToolName, summary)
		}
		n := r.preview
		if n > len(lines) {
			n = len(lines)
		}
		for _, l := range lines[:n] {
			fmt.Fprintf(r.tools, "    %s\n", termtext.Cut(l, 160))
		}
		if len(lines) > n {
			fmt.Fprintf(r.tools, "    … %d more line(s)\n", len(lines)-n)
		}
		if diff := detailsDiff(ev.Result.Details); diff != "" {
			dl := strings.Split(diff, "\n")
			for i, l := range dl {
				if i == 12 {
					fmt.Fprintf(r.tools, "    … %d more diff line(s)\n", len(dl)-i)
					break
				}
				fmt.Fprintf(r.tools, "    %s\n", termtext.Cut(r.redactor.String(l), 160))
			}
		}
	case agent.EventTurnEnd, agent.EventAgentEnd:
		r.spin.halt()
		r.endLine()
	case agent.EventCompactionStart:
		r.spin.halt()
		r.endLine()
		if ev.Reason != agent.CompactManual {
			fmt.Fprintf(r.tools, "… compacting the conversation (%s)\n", ev.Reason)
		}
	case agent.EventCompactionEnd:
		if ev.Reason == agent.CompactManual {
			break // /compact says how it went, once
		}
		if ev.ErrorMessage != "" {
			fmt.Fprintf(r.tools, "✗ %s\n", r.redactor.String(ev.ErrorMessage))
		} else if ev.Compaction != nil && ev.Reason != agent.CompactManual {
			fmt.Fprintf(r.tools, "✓ compacted %d tokens of conversation into a summary\n", ev.Compaction.TokensBefore)
		}
	}
}

func (r *textRenderer) endLine() {
	if r.midLine {
		io.WriteString(r.out, "\n")
		r.midLine = false
	}
}

// detailsDiff returns the unified diff an edit result carries in its
// details, if any.
func detailsDiff(details any) string {
	var m map[string]any
	switch d := details.(type) {
	case map[string]any:
		m = d
	default:
		b, err := json.Marshal(details)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return ""
		}
	}
	s, _ := m["diff"].(string)
	return s
}

func compactJSON(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return "{}"
	}
	return s
}

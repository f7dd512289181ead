package llm

import (
	"strings"

	"github.com/pi-go/pi/runtime/content"
)

// redactedThinkingText is the text of a thinking block the provider sent
// encrypted only, as the reference stores it.
const redactedThinkingText = "[Reasoning redacted]"

// sameModel reports whether m was written by the model of cfg.
func sameModel(m *Message, api, provider, model string) bool {
	return m.API != "" && m.API == api && m.Provider == provider && m.Model == model
}

// forModel returns msgs as the model (api, provider, model) is to see
// them, by the reference's rules (transform-messages): an assistant
// message of the same model keeps its thinking (and its signatures)
// unchanged; another model's redacted thinking is dropped, its thinking
// becomes text (empty thinking is dropped) and its calls lose their
// thought signatures; when normID is set, the ids of another model's calls
// (and of their results) are made valid for the API. msgs is not changed;
// messages that need no change are shared.
func forModel(msgs []Message, api, provider, model string, normID func(string) string) []Message {
	out := msgs
	copied := false
	var ids map[string]string
	set := func(i int, m Message) {
		if !copied {
			out = append([]Message(nil), msgs...)
			copied = true
		}
		out[i] = m
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleAssistant:
			if sameModel(m, api, provider, model) {
				continue
			}
			changed := false
			blocks := make([]content.Block, 0, len(m.Content))
			for _, b := range m.Content {
				if b.Type != "thinking" {
					blocks = append(blocks, b)
					continue
				}
				changed = true
				if !b.Redacted && strings.TrimSpace(b.Thinking) != "" {
					blocks = append(blocks, content.Text(b.Thinking))
				}
			}
			var calls []ToolCall
			for j, c := range m.ToolCalls {
				nc := c
				nc.ThoughtSignature = ""
				if normID != nil {
					if id := normID(c.ID); id != c.ID {
						if ids == nil {
							ids = map[string]string{}
						}
						ids[c.ID] = id
						nc.ID = id
					}
				}
				if nc.ID != c.ID || nc.ThoughtSignature != c.ThoughtSignature {
					if calls == nil {
						calls = append([]ToolCall(nil), m.ToolCalls...)
					}
					calls[j] = nc
				}
			}
			if !changed && calls == nil {
				continue
			}
			nm := *m
			nm.Content = blocks
			if calls != nil {
				nm.ToolCalls = calls
			}
			set(i, nm)
		case RoleToolResult:
			if id, ok := ids[m.ToolCallID]; ok {
				nm := *m
				nm.ToolCallID = id
				set(i, nm)
			}
		}
	}
	return out
}

// anthropicToolID makes a call id valid for Anthropic (^[a-zA-Z0-9_-]+$,
// at most 64 characters), as the reference does: every other character
// becomes "_", and the id is cut at 64.
func anthropicToolID(id string) string {
	id = idChars(id)
	if len(id) > 64 {
		id = id[:64]
	}
	return id
}

// idChars returns id with every character but [a-zA-Z0-9_-] replaced by
// "_".
func idChars(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

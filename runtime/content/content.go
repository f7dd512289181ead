// Package content holds the content blocks that tool results and chat
// messages are made of: text, or an image carried as base64 data. It is a
// leaf (standard library only) so that the provider (runtime/llm) and the
// tool pipeline (runtime/tool) share one type without depending on each
// other.
package content

import "encoding/json"

// Block is one piece of a tool result or a message: text, an image carried as
// base64 data with its MIME type, or (in an assistant message) the model's
// thinking.
type Block struct {
	Type     string `json:"type"` // "text", "image" or "thinking"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`

	// Thinking is a thinking block's reasoning text ("[Reasoning
	// redacted]" when Redacted).
	Thinking string `json:"thinking,omitempty"`
	// Signature is what the provider needs to accept the thinking back
	// unchanged (Anthropic's signature, the encrypted content of a
	// redacted block or of a Responses reasoning item, Gemini's thought
	// signature), sent back exactly as it came.
	Signature string `json:"thinkingSignature,omitempty"`
	// Redacted marks thinking the provider sent encrypted only.
	Redacted bool `json:"redacted,omitempty"`
}

// Thinking returns a thinking block.
func Thinking(text, signature string) Block {
	return Block{Type: "thinking", Thinking: text, Signature: signature}
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Image returns an image block from base64 data and a MIME type.
func Image(base64Data, mimeType string) Block {
	return Block{Type: "image", Data: base64Data, MimeType: mimeType}
}

// MarshalJSON writes a text block as {"type","text"} even when the text is
// empty, an image block as {"type","data","mimeType"}, and a thinking block
// as the reference stores it: {"type","thinking"} plus
// "thinkingSignature" and "redacted" when set.
func (b Block) MarshalJSON() ([]byte, error) {
	if b.Type == "thinking" {
		return json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"thinkingSignature,omitempty"`
			Redacted  bool   `json:"redacted,omitempty"`
		}{b.Type, b.Thinking, b.Signature, b.Redacted})
	}
	if b.Type == "image" {
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}{b.Type, b.Data, b.MimeType})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{b.Type, b.Text})
}

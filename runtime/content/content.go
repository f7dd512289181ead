// Package content holds the content blocks that tool results and chat
// messages are made of: text, or an image carried as base64 data. It is a
// leaf (standard library only) so that the provider (runtime/llm) and the
// tool pipeline (runtime/tool) share one type without depending on each
// other.
package content

import "encoding/json"

// Block is one piece of a tool result or a message: text, or an image carried as
// base64 data with its MIME type.
type Block struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// Image returns an image block from base64 data and a MIME type.
func Image(base64Data, mimeType string) Block {
	return Block{Type: "image", Data: base64Data, MimeType: mimeType}
}

// MarshalJSON writes a text block as {"type","text"} even when the text is
// empty, and an image block as {"type","data","mimeType"}.
func (b Block) MarshalJSON() ([]byte, error) {
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

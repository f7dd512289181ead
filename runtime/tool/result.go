package tool

import "encoding/json"

// ContentBlock is one piece of a tool result: text, or an image carried as
// base64 data with its MIME type.
type ContentBlock struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Text returns a text block.
func Text(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// Image returns an image block from base64 data and a MIME type.
func Image(base64Data, mimeType string) ContentBlock {
	return ContentBlock{Type: "image", Data: base64Data, MimeType: mimeType}
}

// MarshalJSON writes a text block as {"type","text"} even when the text is
// empty, and an image block as {"type","data","mimeType"}.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
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

// Result is what one tool call produces. Details is free-form JSON for the
// UI and the event stream (never sent to the model). Terminate asks the loop
// to end the run after this batch when every call of the batch says so.
type Result struct {
	Content   []ContentBlock `json:"content"`
	Details   any            `json:"details,omitempty"`
	IsError   bool           `json:"isError"`
	Terminate bool           `json:"terminate,omitempty"`
}

// TextResult returns a successful result with one text block.
func TextResult(s string) Result { return Result{Content: []ContentBlock{Text(s)}} }

// ErrorResult returns an error result with one text block.
func ErrorResult(s string) Result { return Result{Content: []ContentBlock{Text(s)}, IsError: true} }

// Text returns the concatenated text of the result's text blocks, joined by
// newlines.
func (r Result) Text() string {
	out := ""
	for i, b := range r.Content {
		if b.Type != "text" {
			continue
		}
		if i > 0 && out != "" {
			out += "\n"
		}
		out += b.Text
	}
	return out
}

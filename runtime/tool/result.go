package tool

import "github.com/pi-go/pi/runtime/content"

// ContentBlock is one piece of a tool result; the type lives in the leaf
// package content so that the provider does not depend on the tool
// pipeline.
type ContentBlock = content.Block

// Text returns a text block (content.Text).
func Text(s string) ContentBlock { return content.Text(s) }

// Image returns an image block from base64 data and a MIME type
// (content.Image).
func Image(base64Data, mimeType string) ContentBlock { return content.Image(base64Data, mimeType) }

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

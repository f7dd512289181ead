package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// imageMaxBase64 is the largest image (base64 bytes) a result passes on,
// the limit the built-in read tool fits its images into.
const imageMaxBase64 = 4.5 * 1024 * 1024

// Details are the details of an MCP tool's result (for the UI and the event
// stream; never sent to the model).
type Details struct {
	// Server and Tool name the call as the server knows it.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// StructuredContent is the result's structuredContent, as the server
	// sent it.
	StructuredContent any `json:"structuredContent,omitempty"`
	// Truncation says how the text was cut, when it was.
	Truncation *output.Truncation `json:"truncation,omitempty"`
	// Omitted counts the content blocks left out after the cut, or because
	// they cannot be shown (audio, blobs, oversized images).
	Omitted int `json:"omitted,omitempty"`
}

// convertResult maps a CallToolResult to pi's result: text, image and
// resource blocks become content blocks, structuredContent goes into the
// details (and, when there is no content at all, into the text), isError is
// kept, and the text is cut to the built-in tools' limits with their notice.
func convertResult(server, toolName string, r *sdk.CallToolResult) tool.Result {
	det := &Details{Server: server, Tool: toolName, StructuredContent: r.StructuredContent}
	var blocks []tool.ContentBlock
	for _, c := range r.Content {
		blocks = append(blocks, convertContent(c, det)...)
	}
	if len(blocks) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			blocks = append(blocks, tool.Text(string(b)))
		}
	}
	blocks = truncateBlocks(blocks, det)
	if blocks == nil {
		blocks = []tool.ContentBlock{}
	}
	return tool.Result{Content: blocks, Details: det, IsError: r.IsError}
}

func convertContent(c sdk.Content, det *Details) []tool.ContentBlock {
	switch c := c.(type) {
	case *sdk.TextContent:
		return []tool.ContentBlock{tool.Text(c.Text)}
	case *sdk.ImageContent:
		return image(c.Data, c.MIMEType, "image", det)
	case *sdk.AudioContent:
		det.Omitted++
		return []tool.ContentBlock{tool.Text(fmt.Sprintf("[audio (%s, %s) not shown]", c.MIMEType, output.FormatSize(len(c.Data))))}
	case *sdk.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" && c.Name != c.URI {
			s += " (" + c.Name + ")"
		}
		if c.Description != "" {
			s += ": " + firstSentence(c.Description)
		}
		return []tool.ContentBlock{tool.Text(s + "]")}
	case *sdk.EmbeddedResource:
		res := c.Resource
		if res == nil {
			return nil
		}
		if res.Blob == nil {
			return []tool.ContentBlock{tool.Text(fmt.Sprintf("[resource %s]\n%s", res.URI, res.Text))}
		}
		if strings.HasPrefix(res.MIMEType, "image/") {
			return image(res.Blob, res.MIMEType, "resource "+res.URI, det)
		}
		det.Omitted++
		return []tool.ContentBlock{tool.Text(fmt.Sprintf("[resource %s (%s, %s) not shown]", res.URI, firstNonEmpty(res.MIMEType, "binary"), output.FormatSize(len(res.Blob))))}
	}
	det.Omitted++
	return []tool.ContentBlock{tool.Text(fmt.Sprintf("[%T content not shown]", c))}
}

// image is an image block, or a notice when it is too large to send.
func image(data []byte, mime, what string, det *Details) []tool.ContentBlock {
	if n := base64.StdEncoding.EncodedLen(len(data)); n > imageMaxBase64 {
		det.Omitted++
		return []tool.ContentBlock{tool.Text(fmt.Sprintf("[%s (%s, %s) not shown: over the %s image limit]", what, mime, output.FormatSize(len(data)), output.FormatSize(imageMaxBase64)))}
	}
	return []tool.ContentBlock{tool.Image(base64.StdEncoding.EncodeToString(data), mime)}
}

// truncateBlocks cuts the text of the blocks, taken together, to the
// built-in tools' limits (output.DefaultMaxLines lines and
// output.DefaultMaxBytes bytes), keeping the head: the block where the
// limit is reached is cut and ends with the built-in notice, and every
// block after it is left out.
func truncateBlocks(blocks []tool.ContentBlock, det *Details) []tool.ContentBlock {
	lines, bytes := output.DefaultMaxLines, output.DefaultMaxBytes
	for i, b := range blocks {
		if b.Type != "text" || b.Text == "" {
			continue
		}
		if lines <= 0 || bytes <= 0 {
			// The limit was reached exactly by the blocks before.
			rest := len(blocks) - i
			det.Omitted += rest
			det.Truncation = &output.Truncation{Truncated: true, TruncatedBy: "lines"}
			limit := fmt.Sprintf("%d-line", output.DefaultMaxLines)
			if bytes <= 0 {
				det.Truncation.TruncatedBy = "bytes"
				limit = output.FormatSize(output.DefaultMaxBytes)
			}
			notice := fmt.Sprintf("[%d more content blocks left out: the output reached the %s limit.]", rest, limit)
			if j := lastText(blocks[:i]); j >= 0 {
				out := slices.Clone(blocks[:i])
				out[j].Text += "\n\n" + notice
				return out
			}
			return append(blocks[:i:i], tool.Text(notice))
		}
		t := output.TruncateHead(b.Text, lines, bytes)
		if !t.Truncated {
			lines -= t.TotalLines
			bytes -= t.TotalBytes
			continue
		}
		var text string
		switch {
		case t.FirstLineExceedsLimit:
			first, _, _ := strings.Cut(b.Text, "\n")
			text = cutToBytes(first, bytes)
			text += fmt.Sprintf("\n\n[Showing first %s of line 1 (line is %s).]", output.FormatSize(len(text)), output.FormatSize(len(first)))
		case t.TruncatedBy == "lines":
			text = t.Content + fmt.Sprintf("\n\n[Showing lines 1-%d of %d.]", t.OutputLines, t.TotalLines)
		default:
			text = t.Content + fmt.Sprintf("\n\n[Showing lines 1-%d of %d (%s limit).]", t.OutputLines, t.TotalLines, output.FormatSize(output.DefaultMaxBytes))
		}
		det.Truncation = &t
		det.Omitted += len(blocks) - i - 1
		if rest := len(blocks) - i - 1; rest > 0 {
			text += fmt.Sprintf(" [%d more content blocks left out.]", rest)
		}
		out := append(blocks[:i:i], tool.Text(text))
		return out
	}
	return blocks
}

// lastText is the index of the last text block, or -1.
func lastText(blocks []tool.ContentBlock) int {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Type == "text" {
			return i
		}
	}
	return -1
}

// cutToBytes cuts s to at most n bytes on a character boundary.
func cutToBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

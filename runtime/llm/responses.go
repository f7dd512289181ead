package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pi-go/pi/runtime/content"
)

// Responses is a Provider for the OpenAI Responses API
// (POST <baseUrl>/responses, SSE). The stream's events are decoded into
// respEvent, the official SDK's event members (the SDK is the tests'
// oracle); the HTTP exchange, the retry rule and the request body are
// pi's, as for the other providers. Nothing is stored on the server (store: false): a
// reasoning item comes back with its encrypted content, is kept whole
// (its JSON, as the reference keeps it) in the thinking block's
// signature, and is sent back as it came on the next turns. It is safe
// for concurrent use.
type Responses struct {
	endpointBase
	endpoint string
}

var _ Provider = (*Responses)(nil)

// Stream sends req to the Responses API and assembles the answer:
// reasoning summaries as thinking_delta events (the block's signature is
// the reasoning item), text as text_delta, function calls as
// toolcall_start and toolcall_delta (a call's id is "call_id|item_id", as
// the reference writes it). Retries, cancellation and errors are as for
// OpenAI.Stream.
func (p *Responses) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	body, err := p.requestBody(req, p.level(req.Thinking))
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	auth := ""
	if p.cfg.APIKey != "" {
		auth = "Bearer " + p.cfg.APIKey
	}
	header := p.header(map[string]string{"Authorization": auth})
	return p.stream(ctx, p.endpoint, body, header, onEvent, p.read)
}

// read decodes the SSE stream into t until the response is completed,
// incomplete or failed.
func (p *Responses) read(r io.Reader, t *turn) error {
	br, done := streamReader(r)
	defer done()
	dec := newSSEDecoder(br)
	items := map[int64]any{} // *partState or *callState by output index
	for {
		data, err := p.nextEvent(dec, t.emitted)
		if errors.Is(err, io.EOF) {
			return p.endedBefore("response.completed")
		}
		if err != nil {
			return err
		}
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			continue
		}
		var ev respEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return p.badAnswer(&malformedError{what: "event is not a Responses API stream event (" + err.Error() + ")", received: string(data)})
		}
		var item respItem
		if len(ev.Item) > 0 {
			if err := json.Unmarshal(ev.Item, &item); err != nil {
				return p.badAnswer(&malformedError{what: "event's item is not an output item (" + err.Error() + ")", received: string(data)})
			}
		}
		switch ev.Type {
		case "response.reasoning_summary_text.delta":
			if ps, ok := items[ev.OutputIndex].(*partState); ok && ps.thinking {
				t.add(ps, ev.Delta)
			}
		case "response.output_text.delta", "response.refusal.delta":
			if ps, ok := items[ev.OutputIndex].(*partState); ok && !ps.thinking {
				t.add(ps, ev.Delta)
			}
		case "response.function_call_arguments.delta":
			if c, ok := items[ev.OutputIndex].(*callState); ok {
				t.args(c, ev.Delta)
			}
		case "response.output_item.added":
			switch item.Type {
			case "reasoning":
				items[ev.OutputIndex] = t.startThinking()
			case "message":
				items[ev.OutputIndex] = t.startText()
			case "function_call":
				items[ev.OutputIndex] = t.startCall(item.CallID+"|"+item.ID, item.Name)
			}
		case "response.reasoning_summary_part.added":
			if ps, ok := items[ev.OutputIndex].(*partState); ok && ps.text.Len() > 0 {
				t.add(ps, "\n\n")
			}
		case "response.output_item.done":
			switch it := items[ev.OutputIndex].(type) {
			case *partState:
				if it.thinking {
					// The whole item, encrypted content and all, is what
					// goes back.
					it.sig.Reset()
					it.sig.Write(ev.Item)
				}
			case *callState:
				var args string
				if it.size == 0 && json.Unmarshal(item.Arguments, &args) == nil {
					t.args(it, args)
				}
			}
		case "response.completed", "response.incomplete", "response.failed":
			resp := ev.Response
			u := resp.Usage
			cached := u.InputTokensDetails.CachedTokens
			t.usage.InputTokens = u.InputTokens - cached
			t.usage.OutputTokens = u.OutputTokens
			t.usage.CacheReadTokens = cached
			switch resp.Status {
			case "incomplete":
				t.stop = StopLength
			case "failed", "cancelled":
				msg := resp.Error.Message
				if msg == "" {
					msg = "the response failed"
				}
				return p.badAnswer(&serverStreamError{msg: msg})
			}
			return nil
		case "error":
			return p.badAnswer(&serverStreamError{msg: ev.Message})
		}
	}
}

// respEvent is a Responses API stream event: the members of the SDK's
// ResponseStreamEventUnion pi reads (TestRespEventMatchesSDK holds them
// to the SDK's decoding). The SDK itself is the tests' oracle only: its
// packages register every type of the API at init, 10 MB of the binary,
// for these few members. Item is kept as it came: a reasoning item goes
// back whole.
type respEvent struct {
	Type        string          `json:"type"`
	OutputIndex int64           `json:"output_index"`
	Delta       string          `json:"delta"`
	Message     string          `json:"message"`
	Item        json.RawMessage `json:"item"`
	Response    struct {
		Status string `json:"status"`
		Usage  struct {
			InputTokens        int `json:"input_tokens"`
			OutputTokens       int `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"response"`
}

// respItem is an output item's members pi reads; Arguments is a
// function call's JSON string (another item's may be an object).
type respItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// responsesCallID splits a call id into the Responses call_id and item id
// ("call_id|item_id", as the reference writes it).
func responsesCallID(id string) (callID, itemID string) {
	callID, itemID, _ = strings.Cut(id, "|")
	return callID, itemID
}

// responsesToolID makes another model's "call_id|item_id" valid for the
// Responses API, as the reference does: each half keeps [a-zA-Z0-9_-]
// (others become "_"), the item id starts with "fc", each is cut at 64
// characters and loses trailing underscores. Ids without "|" are kept.
func responsesToolID(id string) string {
	callID, itemID, ok := strings.Cut(id, "|")
	if !ok {
		return id
	}
	// anthropicToolID is the same character rule and cut.
	callID = anthropicToolID(callID)
	itemID = idChars(itemID)
	if !strings.HasPrefix(itemID, "fc") {
		itemID = "fc_" + itemID
	}
	itemID = anthropicToolID(itemID)
	return strings.TrimRight(callID, "_") + "|" + strings.TrimRight(itemID, "_")
}

// requestBody writes the Responses API request for req.
func (p *Responses) requestBody(req Request, level ThinkingLevel) (*requestBody, error) {
	var w bodyWriter
	w.raw(`{"model":`)
	w.str(p.cfg.Model)
	w.raw(`,"stream":true,"store":false`)
	if n := req.askedLimit(p.cfg.Caps.MaxTokens); n > 0 {
		w.raw(`,"max_output_tokens":` + strconv.Itoa(n))
	}
	w.raw(`,"input":[`)
	p.writeInput(&w, req)
	w.raw(`]`)
	if len(req.Tools) > 0 {
		w.raw(`,"tools":[`)
		for i, t := range req.Tools {
			if i > 0 {
				w.raw(`,`)
			}
			params, err := t.checkedSchema()
			if err != nil {
				return nil, err
			}
			w.raw(`{"type":"function","name":`)
			w.str(t.Name)
			w.raw(`,"description":`)
			w.str(t.Description)
			w.raw(`,"parameters":`)
			w.rawBytes(params)
			w.raw(`,"strict":false}`)
		}
		w.raw(`]`)
	}
	if level != ThinkingOff {
		w.raw(`,"reasoning":{"effort":"` + string(level) + `","summary":"auto"},"include":["reasoning.encrypted_content"]`)
	}
	w.raw(`}`)
	return w.body(), nil
}

// writeInput writes the input items: the system prompt (a developer
// message for a reasoning model), then the conversation.
func (p *Responses) writeInput(w *bodyWriter, req Request) {
	n := 0
	next := func() {
		if n > 0 {
			w.raw(`,`)
		}
		n++
	}
	if req.SystemPrompt != "" {
		next()
		role := "system"
		if p.cfg.Caps.Reasoning {
			role = "developer"
		}
		w.raw(`{"role":"` + role + `","content":`)
		w.str(req.SystemPrompt)
		w.raw(`}`)
	}
	msgs := forModel(req.Messages, p.cfg.API, p.cfg.Provider, p.cfg.Model, responsesToolID)
	images := p.cfg.Caps.Images
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleUser:
			k := 0
			for _, b := range m.Content {
				if b.Type == "text" || b.Type == "image" {
					k++
				}
			}
			if k == 0 {
				continue
			}
			next()
			w.raw(`{"role":"user","content":[`)
			for j, b := range m.Content {
				if j > 0 {
					w.raw(`,`)
				}
				switch {
				case b.Type == "image" && images:
					writeInputImage(w, b)
				case b.Type == "image":
					w.raw(`{"type":"input_text","text":`)
					w.str(userImageOmittedText)
					w.raw(`}`)
				default:
					w.raw(`{"type":"input_text","text":`)
					w.str(b.Text)
					w.raw(`}`)
				}
			}
			w.raw(`]}`)
		case RoleAssistant:
			// Another model of the same provider and API: its item ids
			// were paired with its reasoning, so they are left out.
			otherModel := m.API == p.cfg.API && m.Provider == p.cfg.Provider && m.Model != p.cfg.Model
			for j, b := range m.Content {
				switch {
				case b.Type == "thinking" && b.Signature != "" && json.Valid([]byte(b.Signature)):
					next()
					w.raw(b.Signature)
				case b.Type == "text" && b.Text != "":
					next()
					w.raw(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":`)
					w.str(b.Text)
					w.raw(`,"annotations":[]}],"status":"completed","id":"msg_` + strconv.Itoa(i) + "_" + strconv.Itoa(j) + `"}`)
				}
			}
			for _, c := range m.ToolCalls {
				callID, itemID := responsesCallID(c.ID)
				if otherModel && strings.HasPrefix(itemID, "fc_") {
					itemID = ""
				}
				next()
				w.raw(`{"type":"function_call"`)
				if itemID != "" {
					w.raw(`,"id":`)
					w.str(itemID)
				}
				w.raw(`,"call_id":`)
				w.str(callID)
				w.raw(`,"name":`)
				w.str(c.Name)
				w.raw(`,"arguments":"`)
				if len(c.Arguments) == 0 {
					w.raw(`{}`)
				} else {
					w.bytesPiece(c.Arguments)
				}
				w.raw(`"}`)
			}
		case RoleToolResult:
			next()
			callID, _ := responsesCallID(m.ToolCallID)
			w.raw(`{"type":"function_call_output","call_id":`)
			w.str(callID)
			w.raw(`,"output":`)
			text := strings.Join(textOnly(m.Content), "\n")
			hasImage := false
			for _, b := range m.Content {
				hasImage = hasImage || b.Type == "image"
			}
			switch {
			case hasImage && images:
				w.raw(`[`)
				k := 0
				if text != "" {
					w.raw(`{"type":"input_text","text":`)
					w.str(text)
					w.raw(`}`)
					k++
				}
				for _, b := range m.Content {
					if b.Type == "image" {
						if k > 0 {
							w.raw(`,`)
						}
						writeInputImage(w, b)
						k++
					}
				}
				w.raw(`]`)
			case hasImage && text == "":
				w.str(toolImageOmittedText)
			case text == "":
				w.str(emptyToolResultText)
			default:
				w.str(text)
			}
			w.raw(`}`)
		}
	}
}

// writeInputImage writes an input_image holding a data URL.
func writeInputImage(w *bodyWriter, b content.Block) {
	w.raw(`{"type":"input_image","detail":"auto","image_url":"`)
	w.strPiece("data:" + b.MimeType + ";base64,")
	w.strPiece(b.Data)
	w.raw(`"}`)
}

// textOnly returns the texts of the text blocks.
func textOnly(blocks []content.Block) []string {
	var out []string
	for _, b := range blocks {
		if b.Type == "text" {
			out = append(out, b.Text)
		}
	}
	return out
}

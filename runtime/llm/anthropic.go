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

// Anthropic is a Provider for the Anthropic Messages API
// (POST <baseUrl>/v1/messages, SSE). The stream's events are decoded into
// antEvent, the official SDK's event members (the SDK is the tests'
// oracle); the HTTP exchange, the retry rule and the request body are
// pi's (transport, bodyWriter), as for the OpenAI provider: one retry
// rule that honours Retry-After and says what to do, one redaction, and a
// call's arguments sent back from the conversation's own bytes. It is
// safe for concurrent use.
type Anthropic struct {
	endpointBase
	endpoint string
}

var _ Provider = (*Anthropic)(nil)

// anthropicVersion is the API version header the Messages API requires.
const anthropicVersion = "2023-06-01"

// anthropicInterleavedBeta lets a budget-thinking model think between tool
// calls (the reference sends it for every model without adaptive
// thinking).
const anthropicInterleavedBeta = "interleaved-thinking-2025-05-14"

// anthropicDefaultMaxTokens is max_tokens when the model's is unknown, and
// the cap of the base output budget (the reference's min(maxTokens, 32000)).
const anthropicDefaultMaxTokens = 32000

// anthropicBudgets are the thinking budgets per level, growing strictly
// from minimal to xhigh (the reference's for minimal to high; xhigh,
// which the reference sends as high, gets twice high's).
var anthropicBudgets = map[ThinkingLevel]int{
	ThinkingMinimal: 1024,
	ThinkingLow:     2048,
	ThinkingMedium:  8192,
	ThinkingHigh:    16384,
	ThinkingXHigh:   32768,
}

// anthropicAdaptive reports a model that thinks adaptively (the reference's
// list: Opus 4.6 and Sonnet 4.6): it takes an effort, not a budget.
func anthropicAdaptive(model string) bool {
	for _, s := range []string{"opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"} {
		if strings.Contains(model, s) {
			return true
		}
	}
	return false
}

// anthropicEffort is the adaptive effort of a level (the reference's
// mapping; max only for xhigh, which level() allows only where the model
// has it).
func anthropicEffort(l ThinkingLevel) string {
	switch l {
	case ThinkingMinimal, ThinkingLow:
		return "low"
	case ThinkingMedium:
		return "medium"
	case ThinkingXHigh:
		return "max"
	}
	return "high"
}

// anthropicThinking returns max_tokens, the thinking budget (0 for none)
// and the effort (adaptive models) for a level.
// The request's MaxTokens caps the base output budget.
func (p *Anthropic) thinking(req Request, l ThinkingLevel) (maxTokens, budget int, effort string) {
	modelMax := p.cfg.Caps.MaxTokens
	base := anthropicDefaultMaxTokens
	if modelMax > 0 {
		base = min(modelMax, base)
	}
	base = req.outputLimit(base)
	if l == ThinkingOff {
		return base, 0, ""
	}
	if anthropicAdaptive(p.cfg.Model) {
		return base, 0, anthropicEffort(l)
	}
	budget = anthropicBudgets[l]
	maxTokens = base + budget
	if modelMax > 0 {
		maxTokens = min(maxTokens, modelMax)
	}
	if maxTokens <= budget {
		budget = max(0, maxTokens-1024)
	}
	return maxTokens, budget, ""
}

// Stream sends req to the Messages API and assembles the answer: text as
// text_delta events, thinking as thinking_delta (the block keeps its
// signature; redacted thinking is kept as the reference stores it), tool
// calls as toolcall_start and toolcall_delta. Retries, cancellation and
// errors are as for OpenAI.Stream.
func (p *Anthropic) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	level := p.level(req.Thinking)
	body, beta, err := p.requestBody(req, level)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	header := p.header(map[string]string{
		"x-api-key":         p.cfg.APIKey,
		"anthropic-version": anthropicVersion,
		"anthropic-beta":    beta,
	})
	return p.stream(ctx, p.endpoint, body, header, onEvent, p.read)
}

// read decodes the SSE stream into t until message_stop.
func (p *Anthropic) read(r io.Reader, t *turn) error {
	br, done := streamReader(r)
	defer done()
	dec := newSSEDecoder(br)
	blocks := map[int64]any{} // *partState or *callState by the block's index
	for {
		data, err := p.nextEvent(dec, t.emitted)
		if errors.Is(err, io.EOF) {
			return p.endedBefore("message_stop")
		}
		if err != nil {
			return err
		}
		var ev antEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return p.badAnswer(&malformedError{what: "event is not a Messages API stream event (" + err.Error() + ")", received: string(data)})
		}
		switch ev.Type {
		case "content_block_delta":
			d := ev.Delta
			switch b := blocks[ev.Index].(type) {
			case *partState:
				switch d.Type {
				case "text_delta":
					t.add(b, d.Text)
				case "thinking_delta":
					t.add(b, d.Thinking)
				case "signature_delta":
					b.sig.WriteString(d.Signature)
				}
			case *callState:
				if d.Type == "input_json_delta" {
					t.args(b, d.PartialJSON)
				}
			}
		case "message_start":
			ev.Message.Usage.addTo(&t.usage)
		case "content_block_start":
			cb := ev.ContentBlock
			switch cb.Type {
			case "text":
				ps := t.startText()
				blocks[ev.Index] = ps
				t.add(ps, cb.Text)
			case "thinking":
				ps := t.startThinking()
				blocks[ev.Index] = ps
				ps.sig.WriteString(cb.Signature)
				t.add(ps, cb.Thinking)
			case "redacted_thinking":
				ps := t.startThinking()
				ps.redacted = true
				ps.text.WriteString(redactedThinkingText)
				ps.sig.WriteString(cb.Data)
				blocks[ev.Index] = ps
			case "tool_use":
				blocks[ev.Index] = t.startCall(cb.ID, cb.Name)
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				t.stop = anthropicStop(ev.Delta.StopReason)
			}
			ev.Usage.addTo(&t.usage)
		case "message_stop":
			return nil
		case "error":
			msg := serverErrorMessage(json.RawMessage(errorField(string(data))))
			if !t.emitted && strings.Contains(string(data), `"overloaded_error"`) {
				// Overloaded before any output: retried as a 529 is.
				return &retryableError{reason: "overloaded: " + abbreviate(p.redactor.String(msg), 200), status: 529, serverMsg: msg}
			}
			return p.badAnswer(&serverStreamError{msg: msg})
		}
	}
}

// antEvent is a Messages API stream event: the members of the SDK's
// MessageStreamEventUnion pi reads (TestAntEventMatchesSDK holds them to
// the SDK's decoding). The SDK itself is the tests' oracle only: its
// package registers every type of every Anthropic API at init, 12 MB of
// the binary, for these few members.
type antEvent struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		Usage antUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
		ID        string `json:"id"`
		Name      string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage antUsage `json:"usage"`
}

// antUsage is a usage object; a member left out (message_delta's usage
// has only some) changes nothing.
type antUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

// addTo sets the members u has.
func (u antUsage) addTo(to *Usage) {
	for _, m := range []struct {
		v  *int64
		to *int
	}{{u.InputTokens, &to.InputTokens}, {u.OutputTokens, &to.OutputTokens},
		{u.CacheReadInputTokens, &to.CacheReadTokens}, {u.CacheCreationInputTokens, &to.CacheWriteTokens}} {
		if m.v != nil {
			*m.to = int(*m.v)
		}
	}
}

// anthropicStop maps a stop_reason (the reference's mapping).
func anthropicStop(r string) StopReason {
	switch r {
	case "max_tokens":
		return StopLength
	case "tool_use":
		return StopToolUse
	case "refusal", "sensitive":
		return StopError
	}
	return StopEnd
}

// antBlock is one content block of a request message, its text and data
// held by reference until written.
type antBlock struct {
	kind     string // text, image, thinking, redacted_thinking, tool_use, tool_result
	text     string
	data     string // image data; a signature; redacted data
	mime     string
	call     *ToolCall
	result   *Message
	images   bool
	isError  bool
	cacheEnd bool
}

type antMessage struct {
	role   string
	blocks []antBlock
}

// requestBody writes the Messages API request for req and returns the
// anthropic-beta header it needs.
func (p *Anthropic) requestBody(req Request, level ThinkingLevel) (*requestBody, string, error) {
	msgs := p.messages(req)
	images := p.cfg.Caps.Images
	maxTokens, budget, effort := p.thinking(req, level)
	var w bodyWriter
	w.raw(`{"model":`)
	w.str(p.cfg.Model)
	w.raw(`,"max_tokens":` + strconv.Itoa(maxTokens) + `,"stream":true`)
	if req.SystemPrompt != "" {
		w.raw(`,"system":[{"type":"text","text":`)
		w.str(req.SystemPrompt)
		w.raw(`,"cache_control":{"type":"ephemeral"}}]`)
	}
	w.raw(`,"messages":[`)
	for i, m := range msgs {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"role":"` + m.role + `","content":[`)
		for j, b := range m.blocks {
			if j > 0 {
				w.raw(`,`)
			}
			writeAntBlock(&w, b, images)
		}
		w.raw(`]}`)
	}
	w.raw(`]`)
	if len(req.Tools) > 0 {
		w.raw(`,"tools":[`)
		for i, t := range req.Tools {
			if i > 0 {
				w.raw(`,`)
			}
			params, err := t.checkedSchema()
			if err != nil {
				return nil, "", err
			}
			w.raw(`{"name":`)
			w.str(t.Name)
			w.raw(`,"description":`)
			w.str(t.Description)
			w.raw(`,"input_schema":`)
			w.rawBytes(params)
			if i == len(req.Tools)-1 {
				// The tools are part of the cached prefix: the last one
				// marks its end, as the reference marks it.
				w.raw(`,"cache_control":{"type":"ephemeral"}`)
			}
			w.raw(`}`)
		}
		w.raw(`]`)
	}
	beta := ""
	switch {
	case effort != "":
		w.raw(`,"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"` + effort + `"}`)
	case budget > 0:
		w.raw(`,"thinking":{"type":"enabled","budget_tokens":` + strconv.Itoa(budget) + `,"display":"summarized"}`)
		beta = anthropicInterleavedBeta
	case p.cfg.Caps.Reasoning:
		w.raw(`,"thinking":{"type":"disabled"}`)
	}
	w.raw(`}`)
	return w.body(), beta, nil
}

// messages turns the conversation into Messages API turns: another
// model's history made valid first (forModel), a run of tool results as
// one user turn, and the last block of the last turn marked for the
// prompt cache when that turn is the user's (a tool_result in a tool
// loop).
func (p *Anthropic) messages(req Request) []antMessage {
	msgs := forModel(req.Messages, p.cfg.API, p.cfg.Provider, p.cfg.Model, anthropicToolID)
	var out []antMessage
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case RoleUser:
			var bs []antBlock
			for _, b := range m.Content {
				switch {
				case b.Type == "image" && p.cfg.Caps.Images:
					bs = append(bs, antBlock{kind: "image", data: b.Data, mime: b.MimeType})
				case b.Type == "image":
					bs = append(bs, antBlock{kind: "text", text: userImageOmittedText})
				case b.Type == "text" && strings.TrimSpace(b.Text) != "":
					bs = append(bs, antBlock{kind: "text", text: b.Text})
				}
			}
			if len(bs) > 0 {
				out = append(out, antMessage{role: "user", blocks: bs})
			}
		case RoleAssistant:
			var bs []antBlock
			for _, b := range m.Content {
				switch {
				case b.Type == "text" && strings.TrimSpace(b.Text) != "":
					bs = append(bs, antBlock{kind: "text", text: b.Text})
				case b.Type == "thinking" && b.Redacted:
					bs = append(bs, antBlock{kind: "redacted_thinking", data: b.Signature})
				case b.Type == "thinking" && strings.TrimSpace(b.Thinking) == "":
				case b.Type == "thinking" && strings.TrimSpace(b.Signature) == "":
					// A thinking block without its signature (an aborted
					// stream) goes as text, as the reference does.
					bs = append(bs, antBlock{kind: "text", text: b.Thinking})
				case b.Type == "thinking":
					bs = append(bs, antBlock{kind: "thinking", text: b.Thinking, data: b.Signature})
				}
			}
			for j := range m.ToolCalls {
				bs = append(bs, antBlock{kind: "tool_use", call: &m.ToolCalls[j]})
			}
			if len(bs) > 0 {
				out = append(out, antMessage{role: "assistant", blocks: bs})
			}
		case RoleToolResult:
			var bs []antBlock
			for ; i < len(msgs) && msgs[i].Role == RoleToolResult; i++ {
				bs = append(bs, antBlock{kind: "tool_result", result: &msgs[i], isError: msgs[i].IsError})
			}
			i--
			out = append(out, antMessage{role: "user", blocks: bs})
		}
	}
	if n := len(out); n > 0 && out[n-1].role == "user" {
		bs := out[n-1].blocks
		bs[len(bs)-1].cacheEnd = true
	}
	return out
}

func writeAntBlock(w *bodyWriter, b antBlock, images bool) {
	switch b.kind {
	case "text":
		w.raw(`{"type":"text","text":`)
		w.str(b.text)
	case "image":
		writeAntImage(w, b.data, b.mime)
	case "thinking":
		w.raw(`{"type":"thinking","thinking":`)
		w.str(b.text)
		w.raw(`,"signature":`)
		w.str(b.data)
	case "redacted_thinking":
		w.raw(`{"type":"redacted_thinking","data":`)
		w.str(b.data)
	case "tool_use":
		w.raw(`{"type":"tool_use","id":`)
		w.str(b.call.ID)
		w.raw(`,"name":`)
		w.str(b.call.Name)
		w.raw(`,"input":`)
		w.rawBytes(objectOrEmpty(b.call.Arguments))
	case "tool_result":
		w.raw(`{"type":"tool_result","tool_use_id":`)
		w.str(b.result.ToolCallID)
		if text, ok := toolResultText(b.result.Content, images); ok {
			// Text only: one string, the texts joined by a line break,
			// as the reference sends it.
			w.raw(`,"content":`)
			w.str(text)
			w.raw(`,"is_error":` + strconv.FormatBool(b.isError))
			break
		}
		w.raw(`,"content":[`)
		n := 0
		for _, c := range b.result.Content {
			if n > 0 {
				w.raw(`,`)
			}
			switch {
			case c.Type == "image" && images:
				writeAntImage(w, c.Data, c.MimeType)
				w.raw(`}`)
			case c.Type == "image":
				w.raw(`{"type":"text","text":`)
				w.str(toolImageOmittedText)
				w.raw(`}`)
			case c.Type == "text":
				w.raw(`{"type":"text","text":`)
				w.str(c.Text)
				w.raw(`}`)
			default:
				continue
			}
			n++
		}
		if n == 0 {
			w.raw(`{"type":"text","text":`)
			w.str(emptyToolResultText)
			w.raw(`}`)
		}
		w.raw(`]`)
		w.raw(`,"is_error":` + strconv.FormatBool(b.isError))
	}
	if b.cacheEnd {
		w.raw(`,"cache_control":{"type":"ephemeral"}`)
	}
	w.raw(`}`)
}

// toolResultText is a tool result's content as one text, when it has
// text and no image to send (an image the model cannot take counts as its
// placeholder text); ok is false otherwise.
func toolResultText(blocks []content.Block, images bool) (text string, ok bool) {
	var parts []string
	for _, c := range blocks {
		switch {
		case c.Type == "image" && images:
			return "", false
		case c.Type == "image":
			parts = append(parts, toolImageOmittedText)
		case c.Type == "text":
			parts = append(parts, c.Text)
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}

// writeAntImage opens an image block (the caller closes it).
func writeAntImage(w *bodyWriter, data, mime string) {
	w.raw(`{"type":"image","source":{"type":"base64","media_type":`)
	w.str(mime)
	w.raw(`,"data":"`)
	w.strPiece(data)
	w.raw(`"}`)
}

// objectOrEmpty returns args when they are a JSON object, else {} (a call
// whose arguments were invalid: the API takes only an object).
func objectOrEmpty(args RawArguments) []byte {
	t := bytes.TrimSpace(args)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return args
	}
	return []byte(`{}`)
}

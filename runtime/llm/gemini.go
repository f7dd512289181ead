package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Gemini is a Provider for the Gemini API's streamGenerateContent
// (POST <baseUrl>/models/{model}:streamGenerateContent?alt=sse, where the
// base URL ends in the API version, as the reference's does). It is
// written over net/http with pi's transport: the wire is a few small JSON
// shapes, and Google's Go SDK (google.golang.org/genai) would bring its
// own HTTP stack, retries and error types and the cloud auth modules,
// where pi needs its one retry rule and redaction. It is safe for
// concurrent use.
type Gemini struct {
	endpointBase
	endpoint string
}

var _ Provider = (*Gemini)(nil)

// geminiSkipSignature is what Gemini 3 takes in place of a thought
// signature on a call that has none (one another model made), as the
// reference sends it.
const geminiSkipSignature = "skip_thought_signature_validator"

// geminiCallSeq numbers the call ids made for calls that came without one.
var geminiCallSeq atomic.Int64

var (
	gemini3Pro   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`gemini-3(?:\.\d+)?-pro`) })
	gemini3Flash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`gemini-3(?:\.\d+)?-flash`) })
)

// geminiThinking returns the thinkingConfig for a level (the reference's
// mapping: Gemini 3 takes a thinking level, 2.5 Pro and Flash a budget,
// others -1, the model's own choice); "" for none.
func geminiThinking(model string, l ThinkingLevel) string {
	if l == ThinkingOff {
		return ""
	}
	if l == ThinkingXHigh {
		l = ThinkingHigh // Gemini has nothing above high
	}
	id := strings.ToLower(model)
	level := ""
	switch {
	case gemini3Pro().MatchString(id):
		level = map[ThinkingLevel]string{ThinkingMinimal: "LOW", ThinkingLow: "LOW", ThinkingMedium: "HIGH", ThinkingHigh: "HIGH"}[l]
	case gemini3Flash().MatchString(id):
		level = strings.ToUpper(string(l))
	}
	if level != "" {
		return `{"includeThoughts":true,"thinkingLevel":"` + level + `"}`
	}
	budget := -1
	switch {
	case strings.Contains(id, "2.5-pro"):
		budget = map[ThinkingLevel]int{ThinkingMinimal: 128, ThinkingLow: 2048, ThinkingMedium: 8192, ThinkingHigh: 32768}[l]
	case strings.Contains(id, "2.5-flash"):
		budget = map[ThinkingLevel]int{ThinkingMinimal: 128, ThinkingLow: 2048, ThinkingMedium: 8192, ThinkingHigh: 24576}[l]
	}
	return `{"includeThoughts":true,"thinkingBudget":` + strconv.Itoa(budget) + `}`
}

// Stream sends req to streamGenerateContent and assembles the answer:
// thought parts as thinking_delta events (the block keeps the thought
// signature), text as text_delta, each function call as toolcall_start
// and one toolcall_delta (Gemini sends a call whole; its thought
// signature is kept on the call). Retries, cancellation and errors are as
// for OpenAI.Stream.
func (p *Gemini) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	body, err := p.requestBody(req, p.level(req.Thinking))
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	header := p.header(map[string]string{"x-goog-api-key": p.cfg.APIKey})
	return p.stream(ctx, p.endpoint, body, header, onEvent, p.read)
}

// geminiChunk is one GenerateContentResponse of the stream.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []geminiPart `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
	Error json.RawMessage `json:"error"`
}

type geminiPart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// read decodes the SSE stream into t until it ends.
func (p *Gemini) read(r io.Reader, t *turn) error {
	br, done := streamReader(r)
	defer done()
	dec := newSSEDecoder(br)
	finished := false
	ids := map[string]bool{}
	for {
		data, err := p.nextEvent(dec, t.emitted)
		if errors.Is(err, io.EOF) {
			if !finished {
				return p.endedBefore("a finishReason")
			}
			return nil
		}
		if err != nil {
			return err
		}
		var c geminiChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return p.badAnswer(&malformedError{what: "event is not a GenerateContentResponse (" + err.Error() + ")", received: string(data)})
		}
		if msg := serverErrorMessage(c.Error); msg != "" {
			return p.badAnswer(&serverStreamError{msg: msg})
		}
		if u := c.UsageMetadata; u != nil {
			// promptTokenCount counts the cached tokens too; input does not.
			t.usage.InputTokens = u.PromptTokenCount - u.CachedContentTokenCount
			t.usage.OutputTokens = u.CandidatesTokenCount + u.ThoughtsTokenCount
			t.usage.CacheReadTokens = u.CachedContentTokenCount
		}
		if len(c.Candidates) == 0 {
			continue
		}
		cand := c.Candidates[0]
		for _, part := range cand.Content.Parts {
			switch {
			case part.FunctionCall != nil:
				fc := part.FunctionCall
				id := fc.ID
				if id == "" || ids[id] {
					id = fc.Name + "_" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "_" + strconv.FormatInt(geminiCallSeq.Add(1), 10)
				}
				ids[id] = true
				call := t.startCall(id, fc.Name)
				call.sig = part.ThoughtSignature
				args := fc.Args
				if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
					args = []byte(`{}`)
				}
				t.wholeArgs(call, args)
			case part.Text != nil:
				ps := t.lastPart(part.Thought)
				if part.ThoughtSignature != "" {
					ps.sig.Reset()
					ps.sig.WriteString(part.ThoughtSignature)
				}
				t.add(ps, *part.Text)
			}
		}
		if cand.FinishReason != "" {
			finished = true
			switch cand.FinishReason {
			case "STOP":
				t.stop = StopEnd
			case "MAX_TOKENS":
				t.stop = StopLength
			default:
				t.stop = StopError
			}
		}
	}
}

// requestBody writes the streamGenerateContent request for req.
func (p *Gemini) requestBody(req Request, level ThinkingLevel) (*requestBody, error) {
	var w bodyWriter
	w.raw(`{"contents":[`)
	p.writeContents(&w, req)
	w.raw(`]`)
	if req.SystemPrompt != "" {
		w.raw(`,"systemInstruction":{"parts":[{"text":`)
		w.str(req.SystemPrompt)
		w.raw(`}]}`)
	}
	if len(req.Tools) > 0 {
		w.raw(`,"tools":[{"functionDeclarations":[`)
		for i, t := range req.Tools {
			if i > 0 {
				w.raw(`,`)
			}
			params, err := t.checkedSchema()
			if err != nil {
				return nil, err
			}
			w.raw(`{"name":`)
			w.str(t.Name)
			w.raw(`,"description":`)
			w.str(t.Description)
			w.raw(`,"parametersJsonSchema":`)
			w.rawBytes(params)
			w.raw(`}`)
		}
		w.raw(`]}]`)
	}
	w.raw(`,"generationConfig":{`)
	sep := ""
	limit := 0
	if p.cfg.Caps.MaxTokens > 0 {
		limit = min(p.cfg.Caps.MaxTokens, anthropicDefaultMaxTokens)
	}
	if limit = req.outputLimit(limit); limit > 0 {
		w.raw(`"maxOutputTokens":` + strconv.Itoa(limit))
		sep = ","
	}
	if tc := geminiThinking(p.cfg.Model, level); tc != "" {
		w.raw(sep + `"thinkingConfig":` + tc)
	}
	w.raw(`}}`)
	return w.body(), nil
}

// writeContents writes the conversation as Gemini contents: a run of tool
// results as one user turn of functionResponse parts (their images, for a
// model that takes them, in a user turn after it).
func (p *Gemini) writeContents(w *bodyWriter, req Request) {
	msgs := forModel(req.Messages, p.cfg.API, p.cfg.Provider, p.cfg.Model, nil)
	images := p.cfg.Caps.Images
	gemini3 := strings.Contains(strings.ToLower(p.cfg.Model), "gemini-3")
	n := 0
	next := func(role string) {
		if n > 0 {
			w.raw(`,`)
		}
		n++
		w.raw(`{"role":"` + role + `","parts":[`)
	}
	for i := 0; i < len(msgs); i++ {
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
			next("user")
			k = 0
			for _, b := range m.Content {
				if b.Type != "text" && b.Type != "image" {
					continue
				}
				if k > 0 {
					w.raw(`,`)
				}
				k++
				switch {
				case b.Type == "image" && images:
					writeInlineData(w, b.Data, b.MimeType)
				case b.Type == "image":
					w.raw(`{"text":`)
					w.str(userImageOmittedText)
					w.raw(`}`)
				default:
					w.raw(`{"text":`)
					w.str(b.Text)
					w.raw(`}`)
				}
			}
			w.raw(`]}`)
		case RoleAssistant:
			k := 0
			part := func() {
				if k == 0 {
					next("model")
				} else {
					w.raw(`,`)
				}
				k++
			}
			for _, b := range m.Content {
				switch {
				case b.Type == "text" && strings.TrimSpace(b.Text) != "":
					part()
					w.raw(`{"text":`)
					w.str(b.Text)
					w.raw(`}`)
				case b.Type == "thinking" && strings.TrimSpace(b.Thinking) != "" && !b.Redacted:
					part()
					w.raw(`{"thought":true,"text":`)
					w.str(b.Thinking)
					if b.Signature != "" {
						w.raw(`,"thoughtSignature":`)
						w.str(b.Signature)
					}
					w.raw(`}`)
				}
			}
			for _, c := range m.ToolCalls {
				part()
				w.raw(`{"functionCall":{"name":`)
				w.str(c.Name)
				w.raw(`,"args":`)
				w.rawBytes(objectOrEmpty(c.Arguments))
				w.raw(`}`)
				sig := c.ThoughtSignature
				if sig == "" && gemini3 {
					sig = geminiSkipSignature
				}
				if sig != "" {
					w.raw(`,"thoughtSignature":`)
					w.str(sig)
				}
				w.raw(`}`)
			}
			if k > 0 {
				w.raw(`]}`)
			}
		case RoleToolResult:
			next("user")
			var imgs []int
			start := i
			for ; i < len(msgs) && msgs[i].Role == RoleToolResult; i++ {
				r := &msgs[i]
				if i > start {
					w.raw(`,`)
				}
				text := strings.Join(textOnly(r.Content), "\n")
				hasImage := false
				for _, b := range r.Content {
					hasImage = hasImage || b.Type == "image"
				}
				switch {
				case hasImage && images:
					imgs = append(imgs, i)
					if text == "" {
						text = toolImageOnlyText
					}
				case hasImage && text == "":
					text = toolImageOmittedText
				}
				key := "output"
				if r.IsError {
					key = "error"
				}
				w.raw(`{"functionResponse":{"name":`)
				w.str(r.ToolName)
				w.raw(`,"response":{"` + key + `":`)
				w.str(text)
				w.raw(`}}}`)
			}
			i--
			w.raw(`]}`)
			if len(imgs) > 0 {
				next("user")
				w.raw(`{"text":`)
				w.str(attachedImagesText)
				w.raw(`}`)
				for _, j := range imgs {
					for _, b := range msgs[j].Content {
						if b.Type == "image" {
							w.raw(`,`)
							writeInlineData(w, b.Data, b.MimeType)
						}
					}
				}
				w.raw(`]}`)
			}
		}
	}
}

// writeInlineData writes an image part.
func writeInlineData(w *bodyWriter, data, mime string) {
	w.raw(`{"inlineData":{"mimeType":`)
	w.str(mime)
	w.raw(`,"data":"`)
	w.strPiece(data)
	w.raw(`"}}`)
}

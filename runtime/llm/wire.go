package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/redact"
)

// Texts put on the wire in place of content the model cannot take.
const (
	// toolImageOnlyText is a tool message's text when the result has only
	// images (sent in the following user message).
	toolImageOnlyText = "(see attached image)"
	// attachedImagesText heads the user message carrying tool result images.
	attachedImagesText = "Attached image(s) from tool result:"
	// toolImageOmittedText replaces a tool result image for a model without
	// image input.
	toolImageOmittedText = "(tool image omitted: model does not support images)"
	// userImageOmittedText replaces a user image for a model without image
	// input.
	userImageOmittedText = "(image omitted: model does not support images)"
	// emptyToolResultText is sent for a tool result with no content at all
	// (servers reject a tool message without content).
	emptyToolResultText = "(no output)"
)

// emptyParameters is sent for a tool without a parameters schema.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// wireRequest writes the chat completions request body for req. images
// says whether the model accepts image input; includeUsage asks for the
// usage chunk (stream_options.include_usage).
//
// The body is the bytes encoding/json writes for go-openai's
// ChatCompletionRequest holding the same messages (TestRequestBodyIsGoOpenAIs):
// the request's other members are go-openai's own encoding, the messages
// are written here in its field order, so that their text and the tool
// calls' arguments go to the server from the conversation's own bytes
// (requestBody) instead of being copied into go-openai's structs, each
// encoded message and the whole body.
//
// # Errors
//
// A tool's parameters that are not JSON (encoding/json's error).
func wireRequest(req Request, model string, images, includeUsage bool) (*requestBody, error) {
	return wireRequestFor(req, wireOptions{model: model, images: images, includeUsage: includeUsage})
}

// wireOptions are what a chat completions request is written for: the
// model, whether it takes images, whether to ask for the usage chunk, the
// reasoning_effort to send ("" for none) and the identity that tells the
// model's own messages from another's (api, provider).
type wireOptions struct {
	model                string
	images, includeUsage bool
	effort               string
	api, provider        string
	// escapes, when set, is the provider's cache of escaped strings.
	escapes *escapeCache
	// modelMax is the model's output limit (0: unknown), which caps
	// the request's MaxTokens.
	modelMax int
	// frames, when set, is the provider's last encoded frame.
	frames *frameCache
}

// frameKey is what a request's frame (every member but the messages) is
// encoded from.
type frameKey struct {
	model, effort string
	maxTokens     int
	includeUsage  bool
	tools         []ToolSpec
}

// same reports whether k and o give the same frame: the tools are
// compared by their bytes (a tool's schema is rarely changed, but nothing
// says it is not).
func (k *frameKey) same(o *frameKey) bool {
	return k.model == o.model && k.effort == o.effort && k.maxTokens == o.maxTokens &&
		k.includeUsage == o.includeUsage &&
		slices.EqualFunc(k.tools, o.tools, func(a, b ToolSpec) bool {
			return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters)
		})
}

// frameCache holds a provider's last encoded frame: a conversation sends
// the same tools with every turn, and go-openai's encoding of them (each
// schema compacted again by its MarshalJSON) cost as much as the rest of
// the body's writing.
type frameCache struct {
	mu  sync.Mutex
	key frameKey
	enc []byte
}

// frame returns go-openai's encoding of the ChatCompletionRequest that
// holds no messages and k's other members, from c when c's last frame
// had the same key (c may be nil).
func (c *frameCache) frame(k frameKey) ([]byte, error) {
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.enc != nil && c.key.same(&k) {
			return c.enc, nil
		}
	}
	frame := openai.ChatCompletionRequest{Model: k.model, Messages: []openai.ChatCompletionMessage{}, Stream: true, ReasoningEffort: k.effort, MaxCompletionTokens: k.maxTokens}
	if k.includeUsage {
		frame.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	for _, t := range k.tools {
		params := t.schema()
		frame.Tools = append(frame.Tools, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	enc, err := json.Marshal(frame)
	if err != nil {
		return nil, err
	}
	if c != nil {
		// The key keeps copies of the schemas: the caller's may change.
		k.tools = slices.Clone(k.tools)
		for i := range k.tools {
			k.tools[i].Parameters = bytes.Clone(k.tools[i].Parameters)
		}
		c.key, c.enc = k, enc
	}
	return enc, nil
}

func wireRequestFor(req Request, o wireOptions) (*requestBody, error) {
	model, images := o.model, o.images
	enc, err := o.frames.frame(frameKey{model: model, effort: o.effort, maxTokens: req.askedLimit(o.modelMax), includeUsage: o.includeUsage, tools: req.Tools})
	if err != nil {
		return nil, err
	}
	var w bodyWriter
	if o.escapes != nil {
		w.withCache(o.escapes)
	}
	w.raw(`{"model":`)
	w.str(model)
	w.raw(`,"messages":[`)
	head := len(w.lit)
	if !bytes.HasPrefix(enc, append(w.lit, ']')) {
		// go-openai changed the order of its members.
		return nil, fmt.Errorf("go-openai's request body does not start with the model and the messages: %.40s", enc)
	}
	if o.api != "" {
		req.Messages = forModel(req.Messages, o.api, o.provider, model, nil)
	}
	writeMessages(&w, req, images)
	w.lit = append(w.lit, enc[head:]...)
	return w.body(), nil
}

// writeMessages writes the messages of req, as go-openai's
// ChatCompletionMessage encodes them, separated by commas.
func writeMessages(w *bodyWriter, req Request, images bool) {
	n := 0
	next := func() {
		if n > 0 {
			w.raw(",")
		}
		n++
	}
	if req.SystemPrompt != "" {
		next()
		w.raw(`{"role":"system","content":`)
		w.str(req.SystemPrompt)
		w.raw(`}`)
	}
	msgs := req.Messages
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case RoleUser:
			next()
			writeUser(w, m.Content, images)
		case RoleAssistant:
			text := textParts(m.Content, "")
			field, reasoning := reasoningOf(m.Content)
			if isEmpty(text) && len(m.ToolCalls) == 0 && len(reasoning) == 0 {
				// Servers reject an assistant message with neither content
				// nor calls (an aborted turn that produced nothing).
				continue
			}
			next()
			writeAssistant(w, text, field, reasoning, m.ToolCalls)
		case RoleToolResult:
			// A run of tool results, then their images in one user message.
			var imgs []content.Block
			for ; i < len(msgs) && msgs[i].Role == RoleToolResult; i++ {
				next()
				imgs = writeToolResult(w, msgs[i], images, imgs)
			}
			i--
			if len(imgs) > 0 {
				next()
				w.raw(`{"role":"user","content":[{"type":"text","text":`)
				w.str(attachedImagesText)
				w.raw(`}`)
				for _, b := range imgs {
					w.raw(`,`)
					writeImagePart(w, b)
				}
				w.raw(`]}`)
			}
		}
	}
}

func writeUser(w *bodyWriter, blocks []content.Block, images bool) {
	hasImage := false
	for _, b := range blocks {
		if b.Type == "image" {
			hasImage = true
		}
	}
	w.raw(`{"role":"user"`)
	if !hasImage || !images {
		writeContent(w, textParts(blocks, userImageOmittedText))
		w.raw(`}`)
		return
	}
	w.raw(`,"content":[`)
	for i, b := range blocks {
		if i > 0 {
			w.raw(`,`)
		}
		switch b.Type {
		case "image":
			writeImagePart(w, b)
		default:
			w.raw(`{"type":"text"`)
			if b.Text != "" {
				w.raw(`,"text":`)
				w.str(b.Text)
			}
			w.raw(`}`)
		}
	}
	w.raw(`]}`)
}

// reasoningFields are the members OpenAI-compatible servers stream
// reasoning in (llama.cpp and DeepSeek reasoning_content, others
// reasoning or reasoning_text), in the order the reference reads them; a
// thinking block's signature names the one it came in.
var reasoningFields = []string{"reasoning_content", "reasoning", "reasoning_text"}

// reasoningOf returns the reasoning of an assistant message's thinking
// blocks and the member it goes back in (the first block's signature, as
// the reference sends it), or nothing when there is none or the
// signature names no reasoning member.
func reasoningOf(blocks []content.Block) (field string, parts []string) {
	for _, b := range blocks {
		if b.Type != "thinking" || strings.TrimSpace(b.Thinking) == "" {
			continue
		}
		if field == "" {
			field = b.Signature
		}
		parts = append(parts, b.Thinking)
	}
	for _, f := range reasoningFields {
		if f == field {
			return field, parts
		}
	}
	return "", nil
}

func writeAssistant(w *bodyWriter, text []string, field string, reasoning []string, calls []ToolCall) {
	w.raw(`{"role":"assistant"`)
	writeContent(w, text)
	if len(reasoning) > 0 {
		w.raw(`,"` + field + `":"`)
		for i, p := range reasoning {
			if i > 0 {
				w.raw(`\n`)
			}
			w.strPiece(p)
		}
		w.raw(`"`)
	}
	if len(calls) > 0 {
		w.raw(`,"tool_calls":[`)
		for i, c := range calls {
			if i > 0 {
				w.raw(`,`)
			}
			w.raw(`{`)
			if c.ID != "" {
				w.raw(`"id":`)
				w.str(c.ID)
				w.raw(`,`)
			}
			w.raw(`"type":"function","function":{`)
			if c.Name != "" {
				w.raw(`"name":`)
				w.str(c.Name)
				w.raw(`,`)
			}
			w.raw(`"arguments":"`)
			if len(c.Arguments) == 0 {
				w.raw(`{}`)
			} else {
				w.bytesPiece(c.Arguments)
			}
			w.raw(`"}}`)
		}
		w.raw(`]`)
	}
	w.raw(`}`)
}

// writeToolResult writes one tool result as a `tool` message and returns
// imgs with its images added when the model takes images (they are sent
// in a user message after the run of results).
func writeToolResult(w *bodyWriter, m Message, images bool, imgs []content.Block) []content.Block {
	var text []string
	if images {
		text = textParts(m.Content, "")
		n := len(imgs)
		for _, b := range m.Content {
			if b.Type == "image" {
				imgs = append(imgs, b)
			}
		}
		if isEmpty(text) && len(imgs) > n {
			text = []string{toolImageOnlyText}
		}
	} else {
		text = textParts(m.Content, toolImageOmittedText)
	}
	if isEmpty(text) {
		text = []string{emptyToolResultText}
	}
	w.raw(`{"role":"tool"`)
	writeContent(w, text)
	if m.ToolCallID != "" {
		w.raw(`,"tool_call_id":`)
		w.str(m.ToolCallID)
	}
	w.raw(`}`)
	return imgs
}

// writeImagePart writes an image as an image_url part holding a data URL.
func writeImagePart(w *bodyWriter, b content.Block) {
	w.raw(`{"type":"image_url","image_url":{"url":"`)
	w.strPiece("data:" + b.MimeType + ";base64,")
	w.strPiece(b.Data)
	w.raw(`"}}`)
}

// writeContent writes `,"content":` and the text parts joined with
// newlines, nothing when that text is empty (go-openai's omitempty).
func writeContent(w *bodyWriter, parts []string) {
	if isEmpty(parts) {
		return
	}
	w.raw(`,"content":"`)
	for i, p := range parts {
		if i > 0 {
			w.raw(`\n`)
		}
		w.strPiece(p)
	}
	w.raw(`"`)
}

// textParts returns the texts of the blocks, joined with newlines on the
// wire. Image blocks become imageText (one for a run of images) when
// imageText is set, else are skipped.
func textParts(blocks []content.Block, imageText string) []string {
	var parts []string
	prevImage := false
	for _, b := range blocks {
		if b.Type == "image" {
			if imageText != "" && !prevImage {
				parts = append(parts, imageText)
			}
			prevImage = true
			continue
		}
		prevImage = false
		if b.Type == "thinking" {
			continue
		}
		parts = append(parts, b.Text)
	}
	return parts
}

// isEmpty reports whether parts join to "".
func isEmpty(parts []string) bool {
	return len(parts) == 0 || len(parts) == 1 && parts[0] == ""
}

// maxEventBytes bounds one SSE event, so a server that never ends a line
// cannot take all memory.
const maxEventBytes = 16 << 20

// sseDecoder reads the data payloads of a server-sent events stream. It
// hands out its own buffers: an event's data is valid until the next call
// of Next, so a chunk is never copied into a string on its way.
type sseDecoder struct {
	r    *bufio.Reader
	line int
	long []byte // a line longer than r's buffer
	data []byte // the event being read
}

func newSSEDecoder(r io.Reader) *sseDecoder {
	return &sseDecoder{r: bufio.NewReaderSize(r, streamBufSize)}
}

// streamBufSize is the size of the buffer an answer is read through.
const streamBufSize = 64 << 10

// streamReaders are the buffers answers are read through, kept for the
// next answer: a conversation's turns each allocated one (64 KB a turn,
// the most a turn allocated besides the body).
var streamReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamBufSize) }}

// streamReader returns a buffered reader of r, and done, which gives its
// buffer back once nothing read from it is used any more (every event's
// data is decoded into values of their own before the next is read).
func streamReader(r io.Reader) (br *bufio.Reader, done func()) {
	br = streamReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br, func() {
		br.Reset(nil)
		streamReaders.Put(br)
	}
}

// errNotSSE is returned (wrapped in a malformedError) for a line that is not
// an SSE field.
var errNotSSE = errors.New("not a server-sent event line")

// malformedError says what in the stream was wrong and what was received.
type malformedError struct {
	what     string
	received string
}

func (e *malformedError) Error() string {
	return fmt.Sprintf("%s: received %q", e.what, e.received)
}

// Next returns the data of the next event (lines joined by "\n"), valid
// until the next call. At the end of the stream it returns io.EOF; a final
// event without its blank line is still returned first.
//
// # Errors
//
// A line that is not an SSE field ("data:", "event:", "id:", "retry:" or a
// ":" comment) is a *malformedError naming the line; an event over
// maxEventBytes is an error; read errors are returned as they are.
func (d *sseDecoder) Next() ([]byte, error) {
	d.data = d.data[:0]
	size := 0
	has := false
	for {
		line, err := d.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && has {
				return d.data, nil
			}
			return nil, err
		}
		d.line++
		if len(line) == 0 {
			if has {
				return d.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			size += len(value)
			if size > maxEventBytes {
				return nil, fmt.Errorf("event at line %d is larger than %d bytes", d.line, maxEventBytes)
			}
			if has {
				d.data = append(d.data, '\n')
			}
			d.data = append(d.data, value...)
			has = true
		case "event", "id", "retry":
		default:
			return nil, &malformedError{what: fmt.Sprintf("line %d is not a server-sent event (want \"data: {...}\")", d.line), received: string(line)}
		}
	}
}

// readLine reads one line without its line ending (LF, CRLF or CR-less
// final line), valid until the next read. io.EOF only when nothing was
// read.
func (d *sseDecoder) readLine() ([]byte, error) {
	line, err := d.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// Longer than the reader's buffer: gathered in d.long.
		d.long = append(d.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(d.long) > maxEventBytes {
				return nil, fmt.Errorf("line %d is longer than %d bytes", d.line+1, maxEventBytes)
			}
			line, err = d.r.ReadSlice('\n')
			d.long = append(d.long, line...)
		}
		line = d.long
	}
	if len(line) > maxEventBytes {
		return nil, fmt.Errorf("line %d is longer than %d bytes", d.line+1, maxEventBytes)
	}
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// wireChunk is one chat.completion.chunk, plus the error object some servers
// send inside the stream.
type wireChunk struct {
	openai.ChatCompletionStreamResponse
	Error json.RawMessage `json:"error,omitempty"`
}

// streamChunk is wireChunk with one difference: a tool call's argument
// text is kept as the JSON string it is in the chunk (argsText), for the
// assembler to decode straight into the call's arguments; no string is
// made of it. Every other member has go-openai's name, tag and type
// (TestStreamChunkMirrorsGoOpenAI), so a chunk decodes into both alike or
// into neither; one that does not decode into streamChunk is decoded as a
// wireChunk, for encoding/json's error text about go-openai's types.
type streamChunk struct {
	ID                  string                      `json:"id"`
	Object              string                      `json:"object"`
	Created             int64                       `json:"created"`
	Model               string                      `json:"model"`
	Choices             []streamChoice              `json:"choices"`
	SystemFingerprint   string                      `json:"system_fingerprint"`
	PromptAnnotations   []openai.PromptAnnotation   `json:"prompt_annotations,omitempty"`
	PromptFilterResults []openai.PromptFilterResult `json:"prompt_filter_results,omitempty"`
	Usage               *openai.Usage               `json:"usage,omitempty"`
	Error               json.RawMessage             `json:"error,omitempty"`
}

// streamChoice is openai.ChatCompletionStreamChoice with streamDelta.
type streamChoice struct {
	Index                int                                        `json:"index"`
	Delta                streamDelta                                `json:"delta"`
	Logprobs             *openai.ChatCompletionStreamChoiceLogprobs `json:"logprobs,omitempty"`
	FinishReason         openai.FinishReason                        `json:"finish_reason"`
	ContentFilterResults openai.ContentFilterResults                `json:"content_filter_results,omitempty"`
}

// streamDelta is openai.ChatCompletionStreamChoiceDelta with
// streamToolCall.
type streamDelta struct {
	Content          string               `json:"content,omitempty"`
	Role             string               `json:"role,omitempty"`
	FunctionCall     *openai.FunctionCall `json:"function_call,omitempty"`
	ToolCalls        []streamToolCall     `json:"tool_calls,omitempty"`
	Refusal          string               `json:"refusal,omitempty"`
	ReasoningContent string               `json:"reasoning_content,omitempty"`
	// Reasoning and ReasoningText are not go-openai's: the members other
	// OpenAI-compatible servers (vLLM, OpenRouter, Ollama) stream
	// reasoning in.
	Reasoning     string `json:"reasoning,omitempty"`
	ReasoningText string `json:"reasoning_text,omitempty"`
}

// streamToolCall is openai.ToolCall with streamFunction.
type streamToolCall struct {
	Index    *int            `json:"index,omitempty"`
	ID       string          `json:"id,omitempty"`
	Type     openai.ToolType `json:"type"`
	Function streamFunction  `json:"function"`
}

// streamFunction is openai.FunctionCall with argsText.
type streamFunction struct {
	Name      string   `json:"name,omitempty"`
	Arguments argsText `json:"arguments,omitempty"`
}

// argsText is a JSON string as it is in the chunk, quotes and escapes
// (a slice of the chunk's bytes); nil for null or no member. It takes
// what a string takes: a string or null.
type argsText []byte

var errNotString = errors.New("arguments: not a string")

// UnmarshalJSON keeps a string as it is; null leaves a as it was (as for a
// string: the last non-null member wins).
func (a *argsText) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		*a = b
	case string(b) != "null":
		return errNotString
	}
	return nil
}

// wireCompletion is a plain chat.completion, plus an error object.
type wireCompletion struct {
	openai.ChatCompletionResponse
	Error json.RawMessage `json:"error,omitempty"`
}

// serverErrorMessage returns the message of an OpenAI error object (or a
// bare string), or "" when raw is empty or null.
func serverErrorMessage(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var obj struct {
		Message any `json:"message"`
		Type    string
		Code    any
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != nil {
		switch m := obj.Message.(type) {
		case string:
			return m
		default:
			b, _ := json.Marshal(m)
			return string(b)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// assembler builds the assistant message from stream chunks: text in order,
// tool calls by their index (id and name usually only in a call's first
// chunk, arguments split across chunks and interleaved between calls).
type assembler struct {
	text     strings.Builder
	thinking strings.Builder
	// thinkingField is the member the reasoning came in (the thinking
	// block's signature, as the reference keeps it).
	thinkingField string
	calls         map[int]*callState
	order         []int // indexes in first-seen order
	last          int   // index of the last call seen, for chunks without index
	finish        string
	usage         *Usage
	done          bool // [DONE] seen
	emitted       bool // any event emitted
	emit          func(StreamEvent)
	redactor      *streamRedactor
	scratch       []byte // a chunk's argument text, decoded
	dec           chunkDecoder
}

// newAssembler returns an assembler whose events have r's secrets redacted;
// the assembled message keeps the model's own text and arguments.
func newAssembler(emit func(StreamEvent), r *redact.Redactor) *assembler {
	return &assembler{calls: map[int]*callState{}, last: -1, emit: emit, redactor: newStreamRedactor(r)}
}

// addData takes one SSE data payload; nothing is kept of data itself.
//
// # Errors
//
// Invalid JSON is a *malformedError with what was received; an error object
// in the stream is returned as a serverStreamError.
func (a *assembler) addData(data []byte) error {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		a.done = true
		return nil
	}
	var c streamChunk
	if !a.dec.decode(data, &c) {
		// A shape the hand decoder leaves to encoding/json.
		c = streamChunk{}
		if json.Unmarshal(data, &c) != nil {
			return a.addWireChunk(data)
		}
	}
	if msg := serverErrorMessage(c.Error); msg != "" {
		return &serverStreamError{msg: msg}
	}
	if c.Usage != nil {
		a.usage = chatUsage(c.Usage)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		a.addReasoning(ch.Delta.ReasoningContent, ch.Delta.Reasoning, ch.Delta.ReasoningText)
		a.addText(ch.Delta.Content)
		for _, tc := range ch.Delta.ToolCalls {
			c, idx, pos := a.toolCall(tc.Index, tc.ID, tc.Function.Name)
			if len(tc.Function.Arguments) == 0 {
				continue
			}
			var ok bool
			if a.scratch, ok = appendUnquoted(a.scratch[:0], tc.Function.Arguments); !ok {
				// Not a JSON string: encoding/json's scanner would not
				// have let it through.
				return &malformedError{what: "chunk is not a chat completion chunk (arguments are not a JSON string)", received: string(data)}
			}
			if len(a.scratch) > 0 {
				c.write(a.scratch)
				a.argsDelta(c, idx, pos, string(a.scratch))
			}
		}
		if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
			a.finish = string(ch.FinishReason)
		}
	}
	return nil
}

// addWireChunk decodes a chunk that streamChunk did not take into
// go-openai's types, for encoding/json's error about them.
func (a *assembler) addWireChunk(data []byte) error {
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &malformedError{what: "chunk is not a chat completion chunk (" + err.Error() + ")", received: string(data)}
	}
	if msg := serverErrorMessage(c.Error); msg != "" {
		return &serverStreamError{msg: msg}
	}
	if c.Usage != nil {
		a.usage = chatUsage(c.Usage)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		a.addReasoning(ch.Delta.ReasoningContent, "", "")
		a.addText(ch.Delta.Content)
		for _, tc := range ch.Delta.ToolCalls {
			a.addToolCall(tc)
		}
		if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
			a.finish = string(ch.FinishReason)
		}
	}
	return nil
}

// chatUsage is a chat completion's usage in the reference's shape: the
// cached prompt tokens (prompt_tokens_details.cached_tokens) are cache
// reads, not input.
func chatUsage(u *openai.Usage) *Usage {
	cached := 0
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return &Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached, TotalTokens: total}
}

// serverStreamError is an error object the server sent instead of a chunk.
type serverStreamError struct{ msg string }

func (e *serverStreamError) Error() string { return "the server sent an error: " + e.msg }

// addReasoning takes the reasoning members of a delta: the first that is
// not empty (a server may send the same text in two).
func (a *assembler) addReasoning(values ...string) {
	for i, s := range values {
		if s == "" {
			continue
		}
		if a.thinkingField == "" {
			a.thinkingField = reasoningFields[i]
		}
		a.thinking.WriteString(s)
		if out := a.redactor.write(thinkingStream, s); out != "" {
			a.send(StreamEvent{Type: EventThinkingDelta, Delta: out})
		}
		return
	}
}

func (a *assembler) addText(s string) {
	if s == "" {
		return
	}
	// The thinking ends where the text begins: what the redactor held
	// back of it goes out first.
	if out := a.redactor.flush(thinkingStream); out != "" {
		a.send(StreamEvent{Type: EventThinkingDelta, Delta: out})
	}
	a.text.WriteString(s)
	if out := a.redactor.write(-1, s); out != "" {
		a.send(StreamEvent{Type: EventTextDelta, Delta: out})
	}
}

// addToolCall takes a tool call of go-openai's types (a plain completion's).
func (a *assembler) addToolCall(tc openai.ToolCall) {
	c, idx, pos := a.toolCall(tc.Index, tc.ID, tc.Function.Name)
	if tc.Function.Arguments != "" {
		writeArgs(c, tc.Function.Arguments)
		a.argsDelta(c, idx, pos, tc.Function.Arguments)
	}
}

// toolCall returns the call a chunk's tool call continues or starts (by
// its index, else its id, else the last one), with its index and
// position, and emits toolcall_start for a new one.
func (a *assembler) toolCall(index *int, id, name string) (c *callState, idx, pos int) {
	switch {
	case index != nil:
		idx = *index
	case a.last < 0:
		idx = 0
	case id != "" && a.calls[a.last].ID != "" && id != a.calls[a.last].ID:
		// No index: a new id starts a new call.
		idx = a.order[len(a.order)-1] + 1
		for a.calls[idx] != nil {
			idx++
		}
	default:
		idx = a.last
	}
	c = a.calls[idx]
	startNow := c == nil
	if c == nil {
		c = &callState{}
		a.calls[idx] = c
		a.order = append(a.order, idx)
	}
	a.last = idx
	if id != "" && c.ID == "" {
		c.ID = id
	}
	if name != "" && c.Name == "" {
		c.Name = name
	}
	pos = a.position(idx)
	if startNow {
		a.send(StreamEvent{Type: EventToolCallStart, ToolCallIndex: pos, ToolCallID: c.ID, ToolName: c.Name})
	}
	return c, idx, pos
}

// argsDelta emits toolcall_delta for argument text added to call c.
func (a *assembler) argsDelta(c *callState, idx, pos int, delta string) {
	if out := a.redactor.write(idx, delta); out != "" {
		a.send(StreamEvent{Type: EventToolCallDelta, Delta: out, ToolCallIndex: pos, ToolCallID: c.ID, ToolName: c.Name})
	}
}

// callState is one tool call being assembled. Its argument text is kept
// in blocks that are never copied while the stream goes on (no doubling
// of one buffer: a 20 MB text would be copied again at each step, and the
// last step holds the old buffer and one twice its size) and joined once,
// at the size it has, when the message is made.
type callState struct {
	ID, Name string
	blocks   [][]byte
	size     int
	// pos and sig are the native providers' (turn): the call's place and
	// its thought signature.
	pos int
	sig string
}

// Bounds of a block of argument text; collectAfterArgs is the size of a
// text whose blocks are collected once it is joined.
const (
	minArgsBlock     = 4 << 10
	maxArgsBlock     = 1 << 20
	collectAfterArgs = 4 << 20
)

func (c *callState) write(p []byte) { writeArgs(c, p) }

// writeArgs appends argument text (bytes, or a string as a decoded event
// holds it, not copied first) to c's blocks.
func writeArgs[T string | []byte](c *callState, p T) {
	c.size += len(p)
	for len(p) > 0 {
		n := len(c.blocks)
		if n == 0 || len(c.blocks[n-1]) == cap(c.blocks[n-1]) {
			size := minArgsBlock
			if n > 0 {
				size = min(2*cap(c.blocks[n-1]), maxArgsBlock)
			}
			c.blocks = append(c.blocks, make([]byte, 0, max(size, min(len(p), maxArgsBlock))))
			n++
		}
		b := &c.blocks[n-1]
		k := min(cap(*b)-len(*b), len(p))
		*b = append(*b, p[:k]...)
		p = p[k:]
	}
}

// arguments returns the argument text, the message's own: never copied
// again.
func (c *callState) arguments() RawArguments {
	switch len(c.blocks) {
	case 0:
		return nil
	case 1:
		return c.blocks[0]
	}
	args := make(RawArguments, 0, c.size)
	for i, b := range c.blocks {
		args = append(args, b...)
		c.blocks[i] = nil // let go of each block once copied
	}
	c.blocks = [][]byte{args}
	if c.size >= collectAfterArgs {
		// The blocks are garbage now, as large as the text; collect them
		// before the tool adds its decoded copy. Otherwise the heap's next
		// goal is twice the text and its blocks, and a 20 MB call peaks
		// some 20 MB higher (BenchmarkLoopWrite20MBProcess).
		runtime.GC()
	}
	return args
}

// position is a call's place among the calls: the order in which their
// indexes first appeared (the index order, from any real server).
func (a *assembler) position(idx int) int {
	for pos, i := range a.order {
		if i == idx {
			return pos
		}
	}
	return len(a.order)
}

func (a *assembler) send(ev StreamEvent) {
	a.emitted = true
	if a.emit != nil {
		a.emit(ev)
	}
}

// flush emits what the redactor held back.
func (a *assembler) flush() {
	if out := a.redactor.flush(thinkingStream); out != "" {
		a.send(StreamEvent{Type: EventThinkingDelta, Delta: out})
	}
	if out := a.redactor.flush(-1); out != "" {
		a.send(StreamEvent{Type: EventTextDelta, Delta: out})
	}
	for _, idx := range a.order {
		c := a.calls[idx]
		if out := a.redactor.flush(idx); out != "" {
			a.send(StreamEvent{Type: EventToolCallDelta, Delta: out, ToolCallIndex: a.position(idx), ToolCallID: c.ID, ToolName: c.Name})
		}
	}
}

// message returns the assembled assistant message, calls in the order their
// indexes first appeared; a call without an id gets "call_<n>". Text and
// arguments are exactly what the model sent: redaction is for outputs (the
// events), never for what the model said or what a tool receives.
func (a *assembler) message() Message {
	m := Message{Role: RoleAssistant}
	if a.thinking.Len() > 0 {
		m.Content = append(m.Content, content.Thinking(a.thinking.String(), a.thinkingField))
	}
	if a.text.Len() > 0 {
		m.Content = append(m.Content, content.Text(a.text.String()))
	}
	for n, idx := range a.order {
		st := a.calls[idx]
		c := ToolCall{ID: st.ID, Name: st.Name, Arguments: st.arguments()}
		if c.ID == "" {
			c.ID = "call_" + strconv.Itoa(n+1)
		}
		m.ToolCalls = append(m.ToolCalls, c)
	}
	return m
}

// stopReason maps the finish reason (and the calls made) to a StopReason.
func (a *assembler) stopReason() StopReason {
	return mapFinishReason(a.finish, len(a.calls) > 0)
}

func mapFinishReason(finish string, hasCalls bool) StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopLength
	case "stop", "":
		if hasCalls {
			// Some servers say "stop" after tool calls.
			return StopToolUse
		}
		return StopEnd
	case "content_filter":
		return StopError
	default:
		if hasCalls {
			return StopToolUse
		}
		return StopEnd
	}
}

// addCompletion takes a plain (not streamed) chat.completion body and emits
// the same events a stream would.
//
// # Errors
//
// A body that is not a chat completion is a *malformedError; an error object
// is a serverStreamError.
func (a *assembler) addCompletion(body []byte) error {
	var c wireCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		return &malformedError{what: "body is not a chat completion (" + err.Error() + ")", received: string(body)}
	}
	if msg := serverErrorMessage(c.Error); msg != "" {
		return &serverStreamError{msg: msg}
	}
	if len(c.Choices) == 0 {
		return &malformedError{what: "chat completion has no choices", received: string(body)}
	}
	ch := c.Choices[0]
	a.addReasoning(ch.Message.ReasoningContent)
	a.addText(ch.Message.Content)
	for _, part := range ch.Message.MultiContent {
		// Some servers answer with content as an array of parts.
		if part.Type == openai.ChatMessagePartTypeText {
			a.addText(part.Text)
		}
	}
	for i, tc := range ch.Message.ToolCalls {
		i := i
		tc.Index = &i
		a.addToolCall(tc)
	}
	a.finish = string(ch.FinishReason)
	if c.Usage != (openai.Usage{}) {
		a.usage = chatUsage(&c.Usage)
	}
	a.done = true
	return nil
}

// streamRedactor redacts each stream of events (the text, or one tool
// call's arguments) with its own redact.Stream, so a secret split across
// deltas never goes out.
type streamRedactor struct {
	r       *redact.Redactor
	streams map[int]*redact.Stream
}

func newStreamRedactor(r *redact.Redactor) *streamRedactor {
	return &streamRedactor{r: r, streams: map[int]*redact.Stream{}}
}

// write adds s to stream key and returns what can be emitted now.
func (r *streamRedactor) write(key int, s string) string {
	if !r.r.Active() {
		return s
	}
	st := r.streams[key]
	if st == nil {
		st = r.r.Stream()
		r.streams[key] = st
	}
	return st.Write(s)
}

// flush returns what stream key still holds.
func (r *streamRedactor) flush(key int) string {
	st := r.streams[key]
	if st == nil {
		return ""
	}
	delete(r.streams, key)
	return st.Flush()
}

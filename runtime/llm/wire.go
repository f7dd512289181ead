package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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
	frame := openai.ChatCompletionRequest{Model: model, Messages: []openai.ChatCompletionMessage{}, Stream: true}
	if includeUsage {
		frame.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = emptyParameters
		}
		frame.Tools = append(frame.Tools, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	enc, err := json.Marshal(frame)
	if err != nil {
		return nil, err
	}
	var w bodyWriter
	w.raw(`{"model":`)
	w.str(model)
	w.raw(`,"messages":[`)
	head := len(w.lit)
	if !bytes.HasPrefix(enc, append(w.lit, ']')) {
		// go-openai changed the order of its members.
		return nil, fmt.Errorf("go-openai's request body does not start with the model and the messages: %.40s", enc)
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
			if isEmpty(text) && len(m.ToolCalls) == 0 {
				// Servers reject an assistant message with neither content
				// nor calls (an aborted turn that produced nothing).
				continue
			}
			next()
			writeAssistant(w, text, m.ToolCalls)
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

func writeAssistant(w *bodyWriter, text []string, calls []ToolCall) {
	w.raw(`{"role":"assistant"`)
	writeContent(w, text)
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

// sseDecoder reads the data payloads of a server-sent events stream.
type sseDecoder struct {
	r    *bufio.Reader
	line int
}

func newSSEDecoder(r io.Reader) *sseDecoder {
	return &sseDecoder{r: bufio.NewReaderSize(r, 64<<10)}
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

// Next returns the data of the next event (lines joined by "\n"). At the end
// of the stream it returns io.EOF; a final event without its blank line is
// still returned first.
//
// # Errors
//
// A line that is not an SSE field ("data:", "event:", "id:", "retry:" or a
// ":" comment) is a *malformedError naming the line; an event over
// maxEventBytes is an error; read errors are returned as they are.
func (d *sseDecoder) Next() (string, error) {
	var data []string
	size := 0
	has := false
	for {
		line, err := d.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && has {
				return strings.Join(data, "\n"), nil
			}
			return "", err
		}
		d.line++
		if line == "" {
			if has {
				return strings.Join(data, "\n"), nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			size += len(value)
			if size > maxEventBytes {
				return "", fmt.Errorf("event at line %d is larger than %d bytes", d.line, maxEventBytes)
			}
			data = append(data, value)
			has = true
		case "event", "id", "retry":
		default:
			_ = found
			return "", &malformedError{what: fmt.Sprintf("line %d is not a server-sent event (want \"data: {...}\")", d.line), received: line}
		}
	}
}

// readLine reads one line without its line ending (LF, CRLF or CR-less
// final line). io.EOF only when nothing was read.
func (d *sseDecoder) readLine() (string, error) {
	var buf []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxEventBytes {
			return "", fmt.Errorf("line %d is longer than %d bytes", d.line+1, maxEventBytes)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				break
			}
			return "", err
		}
		break
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	buf = bytes.TrimSuffix(buf, []byte("\r"))
	return string(buf), nil
}

// wireChunk is one chat.completion.chunk, plus the error object some servers
// send inside the stream.
type wireChunk struct {
	openai.ChatCompletionStreamResponse
	Error json.RawMessage `json:"error,omitempty"`
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
	calls    map[int]*callState
	order    []int // indexes in first-seen order
	last     int   // index of the last call seen, for chunks without index
	finish   string
	usage    *Usage
	done     bool // [DONE] seen
	emitted  bool // any event emitted
	emit     func(StreamEvent)
	redactor *streamRedactor
}

// newAssembler returns an assembler whose events have r's secrets redacted;
// the assembled message keeps the model's own text and arguments.
func newAssembler(emit func(StreamEvent), r *redact.Redactor) *assembler {
	return &assembler{calls: map[int]*callState{}, last: -1, emit: emit, redactor: newStreamRedactor(r)}
}

// addData takes one SSE data payload.
//
// # Errors
//
// Invalid JSON is a *malformedError with what was received; an error object
// in the stream is returned as a serverStreamError.
func (a *assembler) addData(data string) error {
	if strings.TrimSpace(data) == "[DONE]" {
		a.done = true
		return nil
	}
	var c wireChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return &malformedError{what: "chunk is not a chat completion chunk (" + err.Error() + ")", received: data}
	}
	if msg := serverErrorMessage(c.Error); msg != "" {
		return &serverStreamError{msg: msg}
	}
	if c.Usage != nil {
		a.usage = &Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens, TotalTokens: c.Usage.TotalTokens}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
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

// serverStreamError is an error object the server sent instead of a chunk.
type serverStreamError struct{ msg string }

func (e *serverStreamError) Error() string { return "the server sent an error: " + e.msg }

func (a *assembler) addText(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	if out := a.redactor.write(-1, s); out != "" {
		a.send(StreamEvent{Type: EventTextDelta, Delta: out})
	}
}

func (a *assembler) addToolCall(tc openai.ToolCall) {
	idx := 0
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case a.last < 0:
		idx = 0
	case tc.ID != "" && a.calls[a.last].ID != "" && tc.ID != a.calls[a.last].ID:
		// No index: a new id starts a new call.
		idx = a.order[len(a.order)-1] + 1
		for a.calls[idx] != nil {
			idx++
		}
	default:
		idx = a.last
	}
	c := a.calls[idx]
	startNow := c == nil
	if c == nil {
		c = &callState{}
		a.calls[idx] = c
		a.order = append(a.order, idx)
	}
	a.last = idx
	if tc.ID != "" && c.ID == "" {
		c.ID = tc.ID
	}
	if tc.Function.Name != "" && c.Name == "" {
		c.Name = tc.Function.Name
	}
	pos := a.position(idx)
	if startNow {
		a.send(StreamEvent{Type: EventToolCallStart, ToolCallIndex: pos, ToolCallID: c.ID, ToolName: c.Name})
	}
	if tc.Function.Arguments != "" {
		if need := len(c.args) + len(tc.Function.Arguments); need > cap(c.args) {
			// Double: append grows a large slice by a quarter, which
			// allocates five times a 20 MB argument text on its way.
			c.args = append(make(RawArguments, 0, max(need, 2*cap(c.args))), c.args...)
		}
		c.args = append(c.args, tc.Function.Arguments...)
		if out := a.redactor.write(idx, tc.Function.Arguments); out != "" {
			a.send(StreamEvent{Type: EventToolCallDelta, Delta: out, ToolCallIndex: pos, ToolCallID: c.ID, ToolName: c.Name})
		}
	}
}

// callState is one tool call being assembled.
type callState struct {
	ID, Name string
	args     RawArguments // the message's, as they are: never copied again
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
	if a.text.Len() > 0 {
		m.Content = []content.Block{content.Text(a.text.String())}
	}
	for n, idx := range a.order {
		st := a.calls[idx]
		c := ToolCall{ID: st.ID, Name: st.Name, Arguments: st.args}
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
		a.usage = &Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens, TotalTokens: c.Usage.TotalTokens}
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

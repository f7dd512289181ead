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

// wireRequest maps a Request to the chat completions request body. images
// says whether the model accepts image input; includeUsage asks for the usage
// chunk (stream_options.include_usage).
func wireRequest(req Request, model string, images, includeUsage bool) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{Model: model, Stream: true}
	if includeUsage {
		out.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	if req.SystemPrompt != "" {
		out.Messages = append(out.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.SystemPrompt})
	}
	msgs := req.Messages
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case RoleUser:
			out.Messages = append(out.Messages, wireUser(m.Content, images))
		case RoleAssistant:
			if wm, ok := wireAssistant(m); ok {
				out.Messages = append(out.Messages, wm)
			}
		case RoleToolResult:
			// A run of tool results, then their images in one user message.
			var parts []openai.ChatMessagePart
			for ; i < len(msgs) && msgs[i].Role == RoleToolResult; i++ {
				wm, imgs := wireToolResult(msgs[i], images)
				out.Messages = append(out.Messages, wm)
				parts = append(parts, imgs...)
			}
			i--
			if len(parts) > 0 {
				out.Messages = append(out.Messages, openai.ChatCompletionMessage{
					Role:         openai.ChatMessageRoleUser,
					MultiContent: append([]openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: attachedImagesText}}, parts...),
				})
			}
		}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = emptyParameters
		}
		out.Tools = append(out.Tools, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return out
}

func wireUser(content []content.Block, images bool) openai.ChatCompletionMessage {
	hasImage := false
	for _, b := range content {
		if b.Type == "image" {
			hasImage = true
		}
	}
	if !hasImage || !images {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: joinText(content, userImageOmittedText)}
	}
	var parts []openai.ChatMessagePart
	for _, b := range content {
		switch b.Type {
		case "image":
			parts = append(parts, imagePart(b))
		default:
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: b.Text})
		}
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, MultiContent: parts}
}

func wireAssistant(m Message) (openai.ChatCompletionMessage, bool) {
	wm := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: joinText(m.Content, "")}
	for _, c := range m.ToolCalls {
		args := string(c.Arguments)
		if args == "" {
			args = "{}"
		}
		wm.ToolCalls = append(wm.ToolCalls, openai.ToolCall{
			ID: c.ID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: args},
		})
	}
	// Servers reject an assistant message with neither content nor calls
	// (an aborted turn that produced nothing).
	return wm, wm.Content != "" || len(wm.ToolCalls) > 0
}

// wireToolResult maps one tool result to a `tool` message and, when the
// model takes images, the image parts to send after the run of results.
func wireToolResult(m Message, images bool) (openai.ChatCompletionMessage, []openai.ChatMessagePart) {
	var imgs []openai.ChatMessagePart
	text := ""
	if images {
		text = joinText(m.Content, "")
		for _, b := range m.Content {
			if b.Type == "image" {
				imgs = append(imgs, imagePart(b))
			}
		}
		if text == "" && len(imgs) > 0 {
			text = toolImageOnlyText
		}
	} else {
		text = joinText(m.Content, toolImageOmittedText)
	}
	if text == "" {
		text = emptyToolResultText
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: text, ToolCallID: m.ToolCallID}, imgs
}

func imagePart(b content.Block) openai.ChatMessagePart {
	return openai.ChatMessagePart{
		Type:     openai.ChatMessagePartTypeImageURL,
		ImageURL: &openai.ChatMessageImageURL{URL: "data:" + b.MimeType + ";base64," + b.Data},
	}
}

// joinText joins the text blocks with newlines. Image blocks become
// imageText (one for a run of images) when imageText is set, else are
// skipped.
func joinText(content []content.Block, imageText string) string {
	var parts []string
	prevImage := false
	for _, b := range content {
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
	return strings.Join(parts, "\n")
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

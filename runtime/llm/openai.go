package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/redact"
)

// Defaults of the model settings, the one place they are written: the
// endpoint when neither flags, pi.toml nor OPENAI_BASE_URL name one, and the
// environment variable the API key is read from when [model] api_key_env
// does not name another.
const (
	DefaultBaseURL   = "https://api.openai.com/v1"
	DefaultAPIKeyEnv = "OPENAI_API_KEY"
)

// CheckBaseURL is the rule for a base URL, shared by pi.toml's
// model.base_url, --base-url and NewOpenAI: an http or https URL with a
// host.
func CheckBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	return nil
}

// DefaultMaxRetries is the number of retries when OpenAIConfig.MaxRetries
// is 0.
const DefaultMaxRetries = 3

// maxRetryAfter is the longest Retry-After the provider waits; a server that
// asks for longer gets an error that says how long it asked for.
const maxRetryAfter = 2 * time.Minute

// OpenAIConfig configures the OpenAI-compatible provider. It is copied by
// NewOpenAI; changing it afterwards has no effect.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1"; requests go
	// to its path + "/chat/completions", keeping any query (such as Azure's
	// api-version).
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// APIKeyEnv is the name of the environment variable the key came from,
	// used in messages ("set a valid key in OPENAI_API_KEY"); a flag name
	// such as "--api-key" says the key came from that flag.
	APIKeyEnv string
	// Images says the model accepts image input. When false, images are
	// replaced by a text note.
	Images bool
	// HTTPClient is the client to use; nil means a client without an overall
	// timeout (streams can be long; cancel with the context).
	HTTPClient *http.Client
	// MaxRetries is how many times a request is retried on 429, 5xx or a
	// connection reset before any output; 0 means DefaultMaxRetries, a
	// negative value means no retries.
	MaxRetries int
	// Logger receives debug and warning lines (never the key); nil means
	// none.
	Logger hclog.Logger
}

// OpenAI is a Provider for any OpenAI-compatible chat completions endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	cfg OpenAIConfig
	// redactor hides the API key in errors, logs and stream events (never
	// in the assistant message).
	redactor *redact.Redactor
	endpoint string
	client   *http.Client
	logger   hclog.Logger
	retries  int
	// noStreamOptions is set once the server rejected stream_options.
	noStreamOptions atomic.Bool
	// baseDelay is the first backoff delay; tests shorten it.
	baseDelay time.Duration
	// maxDelay caps one backoff delay.
	maxDelay time.Duration
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns a provider for the endpoint cfg describes.
//
// # Errors
//
// It fails when BaseURL is not an http(s) URL or Model is empty.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	cfg.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if CheckBaseURL(cfg.BaseURL) != nil {
		// The message is built here, not taken from CheckBaseURL: the URL
		// may hold the key and must pass through the redactor.
		return nil, fmt.Errorf("new openai provider: base URL %q: want an http(s) URL like %s", redact.New(cfg.APIKey).String(cfg.BaseURL), DefaultBaseURL)
	}
	u, _ := url.Parse(cfg.BaseURL) // CheckBaseURL parsed it
	if cfg.Model == "" {
		return nil, errors.New("new openai provider: model: missing (set [model] name in pi.toml or pass --model)")
	}
	p := &OpenAI{
		cfg:       cfg,
		redactor:  redact.New(cfg.APIKey),
		endpoint:  u.JoinPath("chat/completions").String(),
		client:    cfg.HTTPClient,
		logger:    cfg.Logger,
		retries:   cfg.MaxRetries,
		baseDelay: 500 * time.Millisecond,
		maxDelay:  30 * time.Second,
	}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if p.logger == nil {
		p.logger = hclog.NewNullLogger()
	}
	switch {
	case p.retries == 0:
		p.retries = DefaultMaxRetries
	case p.retries < 0:
		p.retries = 0
	}
	return p, nil
}

// Model returns the configured model name.
func (p *OpenAI) Model() string { return p.cfg.Model }

// Stream sends req as one streaming chat completion and assembles the
// answer. Text arrives as text_delta events, tool calls as toolcall_start
// then toolcall_delta events. A server that answers with a plain JSON
// completion is handled the same way. On 429, 5xx or a connection reset
// before any output it retries with exponential backoff and jitter, honouring
// Retry-After. A cancelled ctx returns what was streamed so far with
// StopAborted and no error.
//
// # Errors
//
// Errors wrap one of ErrAuth, ErrNotFound, ErrRateLimited, ErrServer,
// ErrBadRequest, ErrConnection or ErrMalformedStream, and say what to do; the
// API key never appears in them.
func (p *OpenAI) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	resp, err := p.stream(ctx, req, onEvent)
	if err != nil {
		// The error names the URL (and the model where it matters) and
		// says what to do; the caller says that a model request failed.
		return nil, redactErr(err, p.redactor)
	}
	return resp, nil
}

func (p *OpenAI) stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	aborted := &Response{Message: Message{Role: RoleAssistant}, StopReason: StopAborted}
	strippedOptions := false
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return aborted, nil
		}
		body, err := wireRequest(req, p.cfg.Model, p.cfg.Images, !p.noStreamOptions.Load())
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		res, asm, err := p.attempt(ctx, body, onEvent)
		if res != nil {
			p.logger.Debug("model response", "stop", string(res.StopReason), "tool_calls", len(res.Message.ToolCalls),
				"input_tokens", res.Usage.InputTokens, "output_tokens", res.Usage.OutputTokens, "attempts", attempt)
			return res, nil
		}
		if ctx.Err() != nil {
			if asm != nil {
				return p.finish(asm, StopAborted), nil
			}
			return aborted, nil
		}
		var retryable *retryableError
		switch {
		case errors.As(err, &retryable) && retryable.streamOptions && !strippedOptions:
			// The server does not know stream_options: resend without it,
			// once, and remember.
			p.logger.Debug("server rejected stream_options; retrying without it", "url", p.redactor.String(p.cfg.BaseURL))
			p.noStreamOptions.Store(true)
			strippedOptions = true
			attempt--
			continue
		case errors.As(err, &retryable) && retryable.final == nil:
			// fallthrough to the retry below
		case errors.As(err, &retryable):
			return nil, retryable.final
		default:
			return nil, err
		}
		if attempt > p.retries {
			return nil, retryable.exhausted(p, attempt)
		}
		delay := p.backoff(attempt)
		if retryable.hasRetryAfter {
			if retryable.retryAfter > maxRetryAfter {
				return nil, retryable.exhausted(p, attempt)
			}
			delay = retryable.retryAfter
		}
		p.logger.Warn("retrying model request", "attempt", attempt, "of", p.retries+1, "delay", delay.String(),
			"reason", p.redactor.String(retryable.reason))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return aborted, nil
		case <-t.C:
		}
	}
}

// retryableError is a failed attempt that may be retried. final, when set,
// is the error to return without retrying.
type retryableError struct {
	reason        string
	status        int
	serverMsg     string
	retryAfter    time.Duration
	hasRetryAfter bool
	streamOptions bool  // a 400 about stream_options
	connErr       error // a connection reset
	final         error
}

func (e *retryableError) Error() string { return e.reason }

// exhausted returns the error after the last attempt.
func (e *retryableError) exhausted(p *OpenAI, attempts int) error {
	if e.connErr != nil {
		return &StreamError{
			text: fmt.Sprintf("connection to %s failed after %s", p.cfg.BaseURL, plural.Count(attempts, "attempt")),
			kind: ErrConnection, err: e.connErr,
		}
	}
	return p.statusError(e.status, e.serverMsg, e.retryAfter, attempts)
}

// attempt makes one request. It returns a response, or the assembler (when
// the stream started) and an error; a *retryableError may be retried.
func (p *OpenAI) attempt(ctx context.Context, body *requestBody, onEvent func(StreamEvent)) (*Response, *assembler, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, io.NopCloser(body.reader()))
	if err != nil {
		return nil, nil, fmt.Errorf("build request: %w", err)
	}
	hreq.ContentLength = body.size
	hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.reader()), nil }
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	p.logger.Debug("model request", "url", p.redactor.String(p.endpoint), "model", p.cfg.Model, "bytes", body.size)
	hres, err := p.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, p.connectError(err)
	}
	defer hres.Body.Close()

	if hres.StatusCode < 200 || hres.StatusCode > 299 {
		return nil, nil, p.errorStatus(hres)
	}
	asm := newAssembler(onEvent, p.redactor)
	br := bufio.NewReaderSize(hres.Body, 64<<10)
	mediaType, _, _ := mime.ParseMediaType(hres.Header.Get("Content-Type"))
	if mediaType == "application/json" || startsWithObject(br) {
		// A plain completion (or an error object) instead of a stream. An
		// SSE stream never starts with "{", whatever its Content-Type says.
		data, err := io.ReadAll(io.LimitReader(br, maxEventBytes))
		if err != nil {
			return nil, asm, p.readError(err, asm)
		}
		if err := asm.addCompletion(data); err != nil {
			return nil, asm, p.badAnswer(err)
		}
		return p.finish(asm, ""), nil, nil
	}
	dec := newSSEDecoder(br)
	for {
		data, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var mf *malformedError
			if errors.As(err, &mf) {
				return nil, asm, p.badAnswer(err)
			}
			return nil, asm, p.readError(err, asm)
		}
		if err := asm.addData(data); err != nil {
			return nil, asm, p.badAnswer(err)
		}
		if asm.done {
			break
		}
	}
	if !asm.done && asm.finish == "" {
		if ctx.Err() != nil {
			return nil, asm, ctx.Err()
		}
		return nil, asm, &StreamError{
			text: fmt.Sprintf("malformed stream from %s: the stream ended before a finish_reason or [DONE]", p.cfg.BaseURL),
			kind: ErrMalformedStream,
		}
	}
	return p.finish(asm, ""), nil, nil
}

// startsWithObject reports whether the body's first non-space byte is "{",
// skipping leading whitespace.
func startsWithObject(r *bufio.Reader) bool {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return false
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = r.ReadByte()
		default:
			return b[0] == '{'
		}
	}
}

// errorField returns the "error" member of a JSON object text, or "".
func errorField(s string) string {
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(s), &obj) != nil {
		return ""
	}
	return string(obj.Error)
}

// finish builds the response from what was assembled; stop overrides the
// stop reason when set.
func (p *OpenAI) finish(asm *assembler, stop StopReason) *Response {
	asm.flush()
	r := &Response{Message: asm.message(), StopReason: asm.stopReason()}
	if stop != "" {
		r.StopReason = stop
	}
	if r.StopReason == StopAborted {
		// Calls of an aborted turn may be cut short.
		r.Message.ToolCalls = nil
	}
	if asm.usage != nil {
		r.Usage = *asm.usage
	}
	return r
}

// badAnswer wraps what was wrong with a 200 answer.
func (p *OpenAI) badAnswer(err error) error {
	var mf *malformedError
	if errors.As(err, &mf) {
		return &StreamError{
			text: fmt.Sprintf("malformed stream from %s: %s: received %s", p.cfg.BaseURL, mf.what, quote(mf.received, 200, p.redactor)),
			kind: ErrMalformedStream,
		}
	}
	var se *serverStreamError
	if errors.As(err, &se) {
		return &StreamError{
			text: fmt.Sprintf("%s sent an error in the stream: %s", p.cfg.BaseURL, abbreviate(p.redactor.String(se.msg), 300)),
			kind: ErrServer,
		}
	}
	return &StreamError{text: fmt.Sprintf("malformed stream from %s", p.cfg.BaseURL), kind: ErrMalformedStream, err: err}
}

// readError handles a failure to read the answer body: a reset before any
// output may be retried.
func (p *OpenAI) readError(err error, asm *assembler) error {
	if !asm.emitted && isReset(err) {
		return &retryableError{reason: "connection reset: " + err.Error(), connErr: err}
	}
	return &StreamError{text: fmt.Sprintf("reading the answer from %s failed", p.cfg.BaseURL), kind: ErrConnection, err: err}
}

// connectError classifies an error of client.Do.
func (p *OpenAI) connectError(err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &StreamError{
			text: fmt.Sprintf("cannot connect to %s: connection refused: check --base-url and that the server is running", p.cfg.BaseURL),
			kind: ErrConnection,
		}
	case isReset(err):
		return &retryableError{reason: "connection reset: " + err.Error(), connErr: err}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &StreamError{
			text: fmt.Sprintf("cannot resolve the host of %s: check --base-url", p.cfg.BaseURL),
			kind: ErrConnection, err: err,
		}
	}
	return &StreamError{
		text: fmt.Sprintf("cannot reach %s: check --base-url and your network", p.cfg.BaseURL),
		kind: ErrConnection, err: err,
	}
}

// isReset reports a connection dropped by the server (reset, closed before
// an answer, or cut short).
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// errorStatus reads an error answer into a retryable or final error.
func (p *OpenAI) errorStatus(hres *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(hres.Body, 64<<10))
	msg := serverErrorMessage(json.RawMessage(errorField(string(data))))
	if msg == "" {
		msg = strings.TrimSpace(string(data))
	}
	re := &retryableError{
		reason:    fmt.Sprintf("status %d: %s", hres.StatusCode, abbreviate(p.redactor.String(msg), 200)),
		status:    hres.StatusCode,
		serverMsg: msg,
	}
	re.retryAfter, re.hasRetryAfter = parseRetryAfter(hres.Header, time.Now())
	switch {
	case hres.StatusCode == http.StatusTooManyRequests, hres.StatusCode >= 500, hres.StatusCode == http.StatusRequestTimeout:
		return re
	case hres.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "stream_options"):
		re.streamOptions = true
		re.final = p.statusError(re.status, msg, 0, 1)
		return re
	}
	return p.statusError(hres.StatusCode, msg, re.retryAfter, 1)
}

// backoff returns the delay before retry number attempt (1-based):
// baseDelay doubled each time, capped at maxDelay, plus up to 50% jitter.
func (p *OpenAI) backoff(attempt int) time.Duration {
	d := p.baseDelay
	for i := 1; i < attempt && d < p.maxDelay; i++ {
		d *= 2
	}
	d = min(d, p.maxDelay)
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

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
	// Headers are extra request headers (a models.json provider's
	// "headers").
	Headers map[string]string
}

// OpenAI is a Provider for any OpenAI-compatible chat completions endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	*transport
	cfg      OpenAIConfig
	endpoint string
	// noStreamOptions is set once the server rejected stream_options.
	noStreamOptions atomic.Bool
	// escapes holds the escaped text of the history's strings, written
	// into each request from there (escapeCache).
	escapes *escapeCache
	// frames holds the last request's encoded frame (its tools).
	frames frameCache
	// api, provider and caps come from NewProvider (zero for NewOpenAI).
	api, provider string
	caps          Capabilities
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
		transport: newTransport(cfg.BaseURL, cfg.Model, cfg.APIKey, cfg.APIKeyEnv, cfg.HTTPClient, cfg.MaxRetries, cfg.Logger),
		cfg:       cfg,
		endpoint:  u.JoinPath("chat/completions").String(),
		escapes:   newEscapeCache(),
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
	res, err := p.run(ctx, func() (*Response, func() *Response, error) {
		body, err := wireRequestFor(req, wireOptions{
			model: p.cfg.Model, images: p.cfg.Images, includeUsage: !p.noStreamOptions.Load(),
			effort: p.effort(req.Thinking), api: p.api, provider: p.provider,
			escapes: p.escapes, modelMax: p.caps.MaxTokens, frames: &p.frames,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("encode request: %w", err)
		}
		res, asm, err := p.attempt(ctx, body, onEvent)
		var partial func() *Response
		if asm != nil {
			partial = func() *Response { return p.finish(asm, StopAborted) }
		}
		var retryable *retryableError
		if errors.As(err, &retryable) && retryable.streamOptions && !p.noStreamOptions.Load() {
			// The server does not know stream_options: resend without it,
			// once, and remember.
			p.logger.Debug("server rejected stream_options; retrying without it", "url", p.redactor.String(p.cfg.BaseURL))
			p.noStreamOptions.Store(true)
			retryable.again = true
		}
		return res, partial, err
	})
	if res != nil && p.api != "" {
		res.Message.API, res.Message.Provider, res.Message.Model = p.api, p.provider, p.cfg.Model
	}
	return res, err
}

// effort is the reasoning_effort to send for a level: none for a model
// without reasoning (or a provider from NewOpenAI, which knows no
// capabilities) and for off; xhigh only where the model has it, else
// high.
func (p *OpenAI) effort(l ThinkingLevel) string {
	switch {
	case !p.caps.Reasoning || l == "" || l == ThinkingOff:
		return ""
	case l == ThinkingXHigh && !p.caps.XHigh:
		return string(ThinkingHigh)
	}
	return string(l)
}

// attempt makes one request. It returns a response, or the assembler (when
// the stream started) and an error; a *retryableError may be retried.
func (p *OpenAI) attempt(ctx context.Context, body *requestBody, onEvent func(StreamEvent)) (*Response, *assembler, error) {
	header := http.Header{}
	if p.cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	for k, v := range p.cfg.Headers {
		header.Set(k, v)
	}
	hres, err := p.post(ctx, p.endpoint, body, header)
	if err != nil {
		return nil, nil, err
	}
	defer hres.Body.Close()
	asm := newAssembler(onEvent, p.redactor)
	br, done := streamReader(hres.Body)
	defer done()
	mediaType, _, _ := mime.ParseMediaType(hres.Header.Get("Content-Type"))
	if mediaType == "application/json" || startsWithObject(br) {
		// A plain completion (or an error object) instead of a stream. An
		// SSE stream never starts with "{", whatever its Content-Type says.
		data, err := io.ReadAll(io.LimitReader(br, maxEventBytes))
		if err != nil {
			return nil, asm, p.readError(err, asm.emitted)
		}
		if err := asm.addCompletion(data); err != nil {
			return nil, asm, p.badAnswer(err)
		}
		return p.finish(asm, ""), nil, nil
	}
	dec := newSSEDecoder(br)
	for {
		data, err := p.nextEvent(dec, asm.emitted)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, asm, err
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

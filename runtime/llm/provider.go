package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/runtime/redact"
)

// The wire APIs pi speaks, by the names a models.json provider's "api"
// gives them (the reference's names).
const (
	APIOpenAICompletions = "openai-completions"
	APIAnthropicMessages = "anthropic-messages"
	APIOpenAIResponses   = "openai-responses"
	APIGoogleGenerative  = "google-generative-ai"
)

// APIs are the wire APIs NewProvider builds, in the order above.
var APIs = []string{APIOpenAICompletions, APIAnthropicMessages, APIOpenAIResponses, APIGoogleGenerative}

// DefaultAPIBaseURL returns the base URL of api's vendor, as the
// reference's catalogue writes it: requests go to <base>/chat/completions,
// <base>/v1/messages (Anthropic's root has no /v1), <base>/responses and
// <base>/models/{model}:streamGenerateContent (Google's root ends in
// /v1beta). "" for an unknown api.
func DefaultAPIBaseURL(api string) string {
	switch api {
	case APIOpenAICompletions, APIOpenAIResponses:
		return DefaultBaseURL
	case APIAnthropicMessages:
		return "https://api.anthropic.com"
	case APIGoogleGenerative:
		return "https://generativelanguage.googleapis.com/v1beta"
	}
	return ""
}

// Capabilities are what a model can do, from its models.json entry.
type Capabilities struct {
	// Reasoning says the model thinks; without it no thinking setting is
	// sent, whatever Request.Thinking says.
	Reasoning bool
	// XHigh says the model takes ThinkingXHigh; without it xhigh is sent as
	// high (the caller tells the user).
	XHigh bool
	// MaxTokens is the most output tokens the model may produce; 0 means
	// the provider's default (Anthropic requires max_tokens: 32000 then,
	// as the reference caps it).
	MaxTokens int
	// Images says the model accepts image input (models.json "input"
	// holds "image"); without it images are replaced by a text note.
	Images bool
}

// ProviderConfig is everything NewProvider needs to build a provider for
// one model of a models.json provider. It is copied; changing it
// afterwards has no effect.
type ProviderConfig struct {
	// API is the wire API: one of APIs.
	API string
	// Provider is the provider's name in models.json ("anthropic",
	// "openai", "my-vllm"). With API and Model it tells whether an
	// assistant message of the history came from this very model (its
	// thinking and signatures are then sent back as they came; another
	// model's thinking becomes text).
	Provider string
	// BaseURL is the API root as models.json's baseUrl means it; ""
	// means DefaultAPIBaseURL(API).
	BaseURL string
	// APIKey is the key; empty sends none (local servers).
	APIKey string
	// APIKeyEnv names where the key came from, for messages (an
	// environment variable, or a flag such as "--api-key").
	APIKeyEnv string
	// Headers are extra request headers (models.json "headers"); they are
	// sent after pi's own, so they may replace them.
	Headers map[string]string
	// Model is the model id sent with every request.
	Model string
	// Caps are the model's capabilities.
	Caps Capabilities
	// HTTPClient is the client to use; nil means a client without an
	// overall timeout (cancel with the context).
	HTTPClient *http.Client
	// MaxRetries is as OpenAIConfig.MaxRetries.
	MaxRetries int
	// Logger receives debug and warning lines (never the key); nil means
	// none.
	Logger hclog.Logger
}

// NewProvider returns the provider cfg describes, for any of APIs.
//
// # Errors
//
// An unknown API, a base URL that is not http(s), or an empty model.
func NewProvider(cfg ProviderConfig) (Provider, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultAPIBaseURL(cfg.API)
	}
	cfg.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	switch cfg.API {
	case APIOpenAICompletions:
		p, err := NewOpenAI(OpenAIConfig{
			BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: cfg.APIKey, APIKeyEnv: cfg.APIKeyEnv,
			Images: cfg.Caps.Images, HTTPClient: cfg.HTTPClient, MaxRetries: cfg.MaxRetries, Logger: cfg.Logger,
			Headers: cfg.Headers,
		})
		if err != nil {
			return nil, err
		}
		p.api, p.provider, p.caps = cfg.API, cfg.Provider, cfg.Caps
		return p, nil
	case APIAnthropicMessages, APIOpenAIResponses, APIGoogleGenerative:
	default:
		return nil, fmt.Errorf("new provider: api %q: want one of %s", cfg.API, strings.Join(APIs, ", "))
	}
	if CheckBaseURL(cfg.BaseURL) != nil {
		return nil, fmt.Errorf("new %s provider: base URL %q: want an http(s) URL like %s", cfg.API, redact.New(cfg.APIKey).String(cfg.BaseURL), DefaultAPIBaseURL(cfg.API))
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("new %s provider: model: missing", cfg.API)
	}
	base := endpointBase{
		transport: newTransport(cfg.BaseURL, cfg.Model, cfg.APIKey, cfg.APIKeyEnv, cfg.HTTPClient, cfg.MaxRetries, cfg.Logger),
		cfg:       cfg,
	}
	u, _ := url.Parse(cfg.BaseURL) // CheckBaseURL parsed it
	switch cfg.API {
	case APIAnthropicMessages:
		return &Anthropic{endpointBase: base, endpoint: u.JoinPath("v1/messages").String()}, nil
	case APIOpenAIResponses:
		return &Responses{endpointBase: base, endpoint: u.JoinPath("responses").String()}, nil
	default:
		e := u.JoinPath("models", cfg.Model+":streamGenerateContent")
		q := e.Query()
		q.Set("alt", "sse")
		e.RawQuery = q.Encode()
		return &Gemini{endpointBase: base, endpoint: e.String()}, nil
	}
}

// endpointBase is what the native providers share: the transport and the
// configuration.
type endpointBase struct {
	*transport
	cfg ProviderConfig
}

// header returns pi's headers for a request plus the configured ones.
func (b *endpointBase) header(own map[string]string) http.Header {
	h := http.Header{}
	for k, v := range own {
		if v != "" {
			h.Set(k, v)
		}
	}
	for k, v := range b.cfg.Headers {
		h.Set(k, v)
	}
	return h
}

// level is the thinking level to send: off for a model without
// reasoning, high for xhigh on a model without it.
func (b *endpointBase) level(l ThinkingLevel) ThinkingLevel {
	switch {
	case l == "" || !b.cfg.Caps.Reasoning:
		return ThinkingOff
	case l == ThinkingXHigh && !b.cfg.Caps.XHigh:
		return ThinkingHigh
	}
	return l
}

// stream posts body to endpoint, with retries, and assembles the answer
// read decodes; the message is marked as this model's. A cancelled ctx
// returns what was streamed with StopAborted and no error.
func (b *endpointBase) stream(ctx context.Context, endpoint string, body *requestBody, header http.Header,
	onEvent func(StreamEvent), read func(io.Reader, *turn) error) (*Response, error) {
	res, err := b.run(ctx, func() (*Response, func() *Response, error) {
		hres, err := b.post(ctx, endpoint, body, header)
		if err != nil {
			return nil, nil, err
		}
		defer hres.Body.Close()
		t := newTurn(onEvent, b.transport)
		partial := func() *Response { return t.response(StopAborted) }
		if err := read(hres.Body, t); err != nil {
			if ctx.Err() != nil {
				return nil, partial, ctx.Err()
			}
			return nil, partial, err
		}
		return t.response(""), nil, nil
	})
	if err != nil {
		return nil, redactErr(err, b.redactor)
	}
	b.stamp(&res.Message)
	return res, nil
}

// stamp marks a response's message as this model's.
func (b *endpointBase) stamp(m *Message) {
	m.API, m.Provider, m.Model = b.cfg.API, b.cfg.Provider, b.cfg.Model
}

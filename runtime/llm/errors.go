package llm

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/redact"
)

// Kinds of provider failure, for errors.Is. The errors the OpenAI provider
// returns wrap one of these and say in words what to do.
var (
	// ErrAuth: the server rejected the API key (401 or 403).
	ErrAuth = errors.New("authentication failed")
	// ErrNotFound: the server does not know the model or the endpoint (404).
	ErrNotFound = errors.New("model or endpoint not found")
	// ErrRateLimited: the server kept answering 429 until retries ran out.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the server kept failing (5xx) until retries ran out.
	ErrServer = errors.New("server error")
	// ErrBadRequest: the server rejected the request (another 4xx).
	ErrBadRequest = errors.New("request rejected")
	// ErrConnection: the server could not be reached or dropped the
	// connection.
	ErrConnection = errors.New("connection failed")
	// ErrMalformedStream: the answer was not a chat completion stream.
	ErrMalformedStream = errors.New("malformed stream")
)

// RedactSecret returns s with every occurrence of secret replaced by
// "[REDACTED]", by the rule of package redact: a secret shorter than
// redact.MinLen bytes (an empty one too) is not a secret and leaves s
// unchanged. Every error, log line and stream event of the OpenAI provider
// goes through that rule with the API key; the assistant message itself is
// never rewritten.
func RedactSecret(s, secret string) string {
	return redact.New(secret).String(s)
}

// HTTPError is an error status from the server. Its message says what to do;
// Is matches the kind (ErrAuth, ErrNotFound, ErrRateLimited, ErrServer,
// ErrBadRequest).
type HTTPError struct {
	// StatusCode is the HTTP status of the last answer.
	StatusCode int
	// ServerMessage is the server's own error message (redacted), if any.
	ServerMessage string
	// RetryAfter is what the server's Retry-After header asked for, if any.
	RetryAfter time.Duration
	// Attempts is how many requests were made.
	Attempts int

	text string
	kind error
}

func (e *HTTPError) Error() string {
	msg := e.text
	if e.ServerMessage != "" {
		msg += " (server said: " + e.ServerMessage + ")"
	}
	return msg
}

// Is reports whether target is the kind of this error.
func (e *HTTPError) Is(target error) bool { return target == e.kind }

// StreamError is a failure to reach the server or to read its answer. Is
// matches its kind (ErrConnection or ErrMalformedStream); Unwrap gives the
// underlying error.
type StreamError struct {
	text string
	kind error
	err  error
}

func (e *StreamError) Error() string {
	if e.err != nil {
		return e.text + ": " + e.err.Error()
	}
	return e.text
}

// Is reports whether target is the kind of this error.
func (e *StreamError) Is(target error) bool { return target == e.kind }

// Unwrap returns the underlying error.
func (e *StreamError) Unwrap() error { return e.err }

// redactedError carries an underlying error whose text had a secret removed.
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with secret removed from its text (nil for nil).
func redactErr(err error, r *redact.Redactor) error {
	if err == nil || !r.Contains(err.Error()) {
		return err
	}
	return &redactedError{text: r.String(err.Error()), err: err}
}

// statusError builds the error for an error status, in words that say what
// to do.
func (t *transport) statusError(status int, serverMsg string, retryAfter time.Duration, attempts int) *HTTPError {
	e := &HTTPError{
		StatusCode:    status,
		ServerMessage: abbreviate(t.redactor.String(strings.TrimSpace(serverMsg)), 300),
		RetryAfter:    retryAfter,
		Attempts:      attempts,
	}
	env := t.apiKeyEnv
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusBadRequest && keyRejected(serverMsg):
		e.kind = ErrAuth
		switch {
		case t.apiKey == "" && env != "":
			e.text = fmt.Sprintf("no API key was sent and %s answered %d: set %s or pass --api-key", t.baseURL, status, env)
		case t.apiKey == "":
			e.text = fmt.Sprintf("no API key was sent and %s answered %d: pass --api-key or set the variable named by api_key_env", t.baseURL, status)
		case strings.HasPrefix(env, "-"):
			// The key came from a flag, not the environment.
			e.text = fmt.Sprintf("the API key from %s was rejected by %s (%d): pass a valid key with %s", env, t.baseURL, status, env)
		case env != "":
			e.text = fmt.Sprintf("the API key from %s was rejected by %s (%d): set a valid key in %s or pass --api-key", env, t.baseURL, status, env)
		default:
			e.text = fmt.Sprintf("the API key was rejected by %s (%d): pass a valid key with --api-key", t.baseURL, status)
		}
	case status == http.StatusNotFound:
		e.kind = ErrNotFound
		e.text = fmt.Sprintf("model %q not found at %s (404): check the model name and --base-url", t.model, t.baseURL)
	case status == http.StatusTooManyRequests:
		e.kind = ErrRateLimited
		e.text = fmt.Sprintf("rate limited by %s (429) after %s", t.baseURL, plural.Count(attempts, "attempt"))
		if retryAfter > maxRetryAfter {
			e.text += fmt.Sprintf("; the server asks to wait %s", retryAfter.Round(time.Second))
		}
		e.text += ": wait and try again, or check your plan's limits"
	case status >= 500:
		e.kind = ErrServer
		e.text = fmt.Sprintf("server error from %s (%d) after %s: try again later", t.baseURL, status, plural.Count(attempts, "attempt"))
	default:
		e.kind = ErrBadRequest
		e.text = fmt.Sprintf("request rejected by %s (%d)", t.baseURL, status)
	}
	return e
}

// keyRejected reports a 400 that is a rejected key (Google answers a bad
// key with 400 INVALID_ARGUMENT "API key not valid").
func keyRejected(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "api key not valid")
}

// parseRetryAfter reads the Retry-After header (seconds or an HTTP date) and
// the retry-after-ms header some servers send; ok is false when neither is
// usable.
func parseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// quote returns s abbreviated to n bytes, quoted, with the secret removed.
func quote(s string, n int, r *redact.Redactor) string {
	s = r.String(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strconv.Quote(abbreviate(s, n))
}

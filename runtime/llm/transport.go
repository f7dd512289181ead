package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/redact"
)

// transport is what every provider shares of the HTTP exchange, one owner
// for each rule: the retry rule (429, 5xx, 408 and a connection reset
// before any output, exponential backoff with jitter, Retry-After
// honoured), the error texts that say what to do, and the redaction of the
// API key from every error and log line.
type transport struct {
	baseURL, model, apiKey, apiKeyEnv string
	// redactor hides the API key in errors, logs and stream events (never
	// in the assistant message).
	redactor *redact.Redactor
	client   *http.Client
	logger   hclog.Logger
	retries  int
	// baseDelay is the first backoff delay; tests shorten it.
	baseDelay time.Duration
	// maxDelay caps one backoff delay.
	maxDelay time.Duration
}

func newTransport(baseURL, model, apiKey, apiKeyEnv string, client *http.Client, retries int, logger hclog.Logger) *transport {
	t := &transport{
		baseURL: baseURL, model: model, apiKey: apiKey, apiKeyEnv: apiKeyEnv,
		redactor:  redact.New(apiKey),
		client:    client,
		logger:    logger,
		retries:   retries,
		baseDelay: 500 * time.Millisecond,
		maxDelay:  30 * time.Second,
	}
	if t.client == nil {
		t.client = &http.Client{Transport: sharedTransport()}
	}
	if t.logger == nil {
		t.logger = hclog.NewNullLogger()
	}
	switch {
	case t.retries == 0:
		t.retries = DefaultMaxRetries
	case t.retries < 0:
		t.retries = 0
	}
	return t
}

// attemptFunc makes one request. It returns the response, or an error and
// (when the stream had started) partial, which builds what was streamed
// so far as an aborted response. A *retryableError may be retried.
type attemptFunc func() (res *Response, partial func() *Response, err error)

// run makes attempts until one answers, an error is final, retries run
// out or ctx is cancelled (then what was streamed is returned with
// StopAborted and no error).
func (t *transport) run(ctx context.Context, attempt attemptFunc) (*Response, error) {
	aborted := &Response{Message: Message{Role: RoleAssistant}, StopReason: StopAborted}
	again := false
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return aborted, nil
		}
		res, partial, err := attempt()
		if res != nil {
			t.logger.Debug("model response", "stop", string(res.StopReason), "tool_calls", len(res.Message.ToolCalls),
				"input_tokens", res.Usage.InputTokens, "output_tokens", res.Usage.OutputTokens, "attempts", n)
			return res, nil
		}
		if ctx.Err() != nil {
			if partial != nil {
				return partial(), nil
			}
			return aborted, nil
		}
		var retryable *retryableError
		switch {
		case errors.As(err, &retryable) && retryable.again && !again:
			// Sent again at once, not counted (once per request).
			again = true
			n--
			continue
		case errors.As(err, &retryable) && retryable.final == nil:
			// fallthrough to the retry below
		case errors.As(err, &retryable):
			return nil, retryable.final
		default:
			return nil, err
		}
		if n > t.retries {
			return nil, retryable.exhausted(t, n)
		}
		delay := t.backoff(n)
		if retryable.hasRetryAfter {
			if retryable.retryAfter > maxRetryAfter {
				return nil, retryable.exhausted(t, n)
			}
			delay = retryable.retryAfter
		}
		t.logger.Warn("retrying model request", "attempt", n, "of", t.retries+1, "delay", delay.String(),
			"reason", t.redactor.String(retryable.reason))
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return aborted, nil
		case <-timer.C:
		}
	}
}

// retryableError is a failed attempt that may be retried. final, when set,
// is the error to return without retrying; again asks for one immediate
// resend that does not count as a retry (a request the attempt changed).
type retryableError struct {
	reason        string
	status        int
	serverMsg     string
	retryAfter    time.Duration
	hasRetryAfter bool
	streamOptions bool  // a 400 about stream_options
	again         bool  // resend now, once
	connErr       error // a connection reset
	final         error
}

func (e *retryableError) Error() string { return e.reason }

// exhausted returns the error after the last attempt.
func (e *retryableError) exhausted(t *transport, attempts int) error {
	if e.connErr != nil {
		return &StreamError{
			text: fmt.Sprintf("connection to %s failed after %s", t.baseURL, plural.Count(attempts, "attempt")),
			kind: ErrConnection, err: e.connErr,
		}
	}
	return t.statusError(e.status, e.serverMsg, e.retryAfter, attempts)
}

// post sends body to endpoint with the headers given and returns the
// answer of a 2xx status; another status is read into a retryable or
// final error.
func (t *transport) post(ctx context.Context, endpoint string, body *requestBody, header http.Header) (*http.Response, error) {
	body = hookBody(ctx, body) // extensions' before_provider_request (bodyhook.go)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, body.reader())
	if err != nil {
		return nil, fmt.Errorf("build request: %s", t.redactor.String(err.Error()))
	}
	hreq.ContentLength = body.size
	hreq.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	for k, v := range header {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	t.logger.Debug("model request", "url", t.redactor.String(endpoint), "model", t.model, "bytes", body.size)
	hres, err := t.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, t.connectError(err)
	}
	if hres.StatusCode < 200 || hres.StatusCode > 299 {
		defer hres.Body.Close()
		return nil, t.errorStatus(hres)
	}
	return hres, nil
}

// badAnswer wraps what was wrong with a 200 answer.
// nextEvent reads the next event's data from dec: io.EOF (as is) at the
// end of the stream, else a read error as every provider reports it (a
// malformed event as a bad answer; emitted says whether any output went
// out, which decides whether the turn may be retried).
func (t *transport) nextEvent(dec *sseDecoder, emitted bool) ([]byte, error) {
	data, err := dec.Next()
	if err == nil || errors.Is(err, io.EOF) {
		return data, err
	}
	var mf *malformedError
	if errors.As(err, &mf) {
		return nil, t.badAnswer(err)
	}
	return nil, t.readError(err, emitted)
}

// endedBefore is the error of a stream that ended before what ends an
// answer (what: "message_stop", "a finishReason").
func (t *transport) endedBefore(what string) error {
	return &StreamError{
		text: fmt.Sprintf("malformed stream from %s: the stream ended before %s", t.baseURL, what),
		kind: ErrMalformedStream,
	}
}

func (t *transport) badAnswer(err error) error {
	var mf *malformedError
	if errors.As(err, &mf) {
		return &StreamError{
			text: fmt.Sprintf("malformed stream from %s: %s: received %s", t.baseURL, mf.what, quote(mf.received, 200, t.redactor)),
			kind: ErrMalformedStream,
		}
	}
	var se *serverStreamError
	if errors.As(err, &se) {
		return &StreamError{
			text: fmt.Sprintf("%s sent an error in the stream: %s", t.baseURL, abbreviate(t.redactor.String(se.msg), 300)),
			kind: ErrServer,
		}
	}
	return &StreamError{text: fmt.Sprintf("malformed stream from %s", t.baseURL), kind: ErrMalformedStream, err: err}
}

// readError handles a failure to read the answer body: a reset before any
// output (emitted false) may be retried.
func (t *transport) readError(err error, emitted bool) error {
	if !emitted && isReset(err) {
		return &retryableError{reason: "connection reset: " + err.Error(), connErr: err}
	}
	return &StreamError{text: fmt.Sprintf("reading the answer from %s failed", t.baseURL), kind: ErrConnection, err: err}
}

// connectError classifies an error of client.Do.
func (t *transport) connectError(err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &StreamError{
			text: fmt.Sprintf("cannot connect to %s: connection refused: check --base-url and that the server is running", t.baseURL),
			kind: ErrConnection,
		}
	case isReset(err):
		return &retryableError{reason: "connection reset: " + err.Error(), connErr: err}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &StreamError{
			text: fmt.Sprintf("cannot resolve the host of %s: check --base-url", t.baseURL),
			kind: ErrConnection, err: err,
		}
	}
	return &StreamError{
		text: fmt.Sprintf("cannot reach %s: check --base-url and your network", t.baseURL),
		kind: ErrConnection, err: err,
	}
}

// isReset reports a connection dropped by the server (reset, closed before
// an answer, or cut short).
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// errorStatus reads an error answer into a retryable or final error. The
// vendors' error bodies all hold an "error" member with a "message"
// (OpenAI's, Anthropic's {"type":"error","error":{...}}, Google's
// {"error":{"code","message","status"}}).
func (t *transport) errorStatus(hres *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(hres.Body, 64<<10))
	msg := serverErrorMessage(json.RawMessage(errorField(string(data))))
	if msg == "" {
		msg = strings.TrimSpace(string(data))
	}
	re := &retryableError{
		reason:    fmt.Sprintf("status %d: %s", hres.StatusCode, abbreviate(t.redactor.String(msg), 200)),
		status:    hres.StatusCode,
		serverMsg: msg,
	}
	re.retryAfter, re.hasRetryAfter = parseRetryAfter(hres.Header, time.Now())
	switch {
	case hres.StatusCode == http.StatusTooManyRequests, hres.StatusCode >= 500, hres.StatusCode == http.StatusRequestTimeout:
		return re
	case hres.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "stream_options"):
		re.streamOptions = true
		re.final = t.statusError(re.status, msg, 0, 1)
		return re
	}
	return t.statusError(hres.StatusCode, msg, re.retryAfter, 1)
}

// backoff returns the delay before retry number attempt (1-based):
// baseDelay doubled each time, capped at maxDelay, plus up to 50% jitter.
func (t *transport) backoff(attempt int) time.Duration {
	d := t.baseDelay
	for i := 1; i < attempt && d < t.maxDelay; i++ {
		d *= 2
	}
	d = min(d, t.maxDelay)
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

// sharedTransport is the HTTP transport of the providers that were given
// no client, shared as http.DefaultTransport is (its settings, proxy from
// the environment and HTTP/2 included), whose plain TCP connections
// write a request body from the body's own parts (bodyConn).
var sharedTransport = sync.OnceValue(func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return bodyConn{c}, nil
	}
	return t
})

// bodyConn is a connection that sends a request body (requestBody) with
// writev from the parts it is made of — the history's escaped text where
// the escape cache holds it — instead of through a copy buffer: a long
// conversation sends tens of megabytes a run over a local server's plain
// HTTP. Any other body is sent as the connection sends it (sendfile or
// splice for a file). Over TLS the TLS connection encrypts from its own
// buffer; this one is under it and is not asked.
type bodyConn struct{ net.Conn }

// bodyWrites counts the bodies bodyConn wrote itself, for the tests.
var bodyWrites atomic.Int64

// ReadFrom is called by net/http's body copy with the body behind an
// io.LimitedReader of the announced length.
func (c bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if br, ok := lr.R.(*bodyReader); ok && br.left == lr.N {
			bodyWrites.Add(1)
			n, err := br.writeTo(c.Conn)
			lr.N -= n
			return n, err
		}
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

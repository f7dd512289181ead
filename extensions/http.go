package extensions

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/extspec"
)

// Limits of the http.request host method (ABI 1.1).
const (
	// MaxHTTPBody is the largest response body handed to a guest.
	MaxHTTPBody = 4 << 20
	// MaxHTTPRedirects is how many redirects one request may follow, each
	// checked against the grants like the first URL.
	MaxHTTPRedirects = 5
)

// httpDenied is the denial of a URL the grants do not match.
func (e *Extension) httpDenied(u string) error {
	granted := "none"
	if len(e.grants.HTTP) > 0 {
		granted = strings.Join(e.grants.HTTP, ", ")
	}
	return fmt.Errorf("permission denied: extension %s may not fetch %s (grants.http: %s)", e.name, u, granted)
}

// errTooManyRedirects is what a chain of more than MaxHTTPRedirects
// redirects answers.
var errTooManyRedirects = errors.New("too many redirects")

// httpRequest fetches a granted URL with Go's net/http on behalf of the
// guest (which has no sockets). Every redirect's target must match the
// grants too; the body is read up to MaxHTTPBody; the call's deadline (and
// timeoutMs) bound it.
func (e *Extension) httpRequest(ctx context.Context, p abi.HTTPParams) (abi.HTTPResult, error) {
	if pu, err := url.Parse(p.URL); len(e.grants.HTTP) == 0 || err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		return abi.HTTPResult{}, e.httpDenied(p.URL) // no grant matches
	}
	u, err := extspec.CanonicalURL(p.URL)
	if err != nil {
		return abi.HTTPResult{}, fmt.Errorf("http.request: %w", err)
	}
	if !extspec.HTTPAllowed(e.grants.HTTP, u) {
		return abi.HTTPResult{}, e.httpDenied(p.URL)
	}
	method := p.Method
	if method == "" {
		method = http.MethodGet
	}
	if p.Body != nil && p.BodyBase64 != nil {
		return abi.HTTPResult{}, errors.New("http.request: give body or bodyBase64, not both")
	}
	var body io.Reader
	switch {
	case p.Body != nil:
		body = strings.NewReader(*p.Body)
	case p.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*p.BodyBase64)
		if err != nil {
			return abi.HTTPResult{}, fmt.Errorf("http.request: bodyBase64: %w", err)
		}
		body = strings.NewReader(string(b))
	}
	if p.TimeoutMS < 0 {
		return abi.HTTPResult{}, errors.New("http.request: timeoutMs must not be negative")
	}
	if p.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return abi.HTTPResult{}, fmt.Errorf("http.request: %w", err)
	}
	for k, v := range p.Headers {
		req.Header.Set(k, v)
	}
	var denied error
	client := &http.Client{
		Transport: e.host.http,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			if len(via) > MaxHTTPRedirects {
				return errTooManyRedirects
			}
			cu, err := extspec.CanonicalURL(next.URL.String())
			if err != nil || !extspec.HTTPAllowed(e.grants.HTTP, cu) {
				denied = e.httpDenied(next.URL.String())
				return denied
			}
			next.URL = cu
			return nil
		},
	}
	resp, err := client.Do(req)
	switch {
	case denied != nil:
		return abi.HTTPResult{}, denied
	case errors.Is(err, errTooManyRedirects):
		return abi.HTTPResult{}, errTooManyRedirects
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return abi.HTTPResult{}, fmt.Errorf("http.request %s %s: %w", method, p.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPBody+1))
	if err != nil {
		return abi.HTTPResult{}, fmt.Errorf("http.request %s %s: reading the body: %w", method, p.URL, err)
	}
	if len(data) > MaxHTTPBody {
		return abi.HTTPResult{}, errors.New("response body over 4 MiB")
	}
	out := abi.HTTPResult{Status: resp.StatusCode, Headers: map[string]string{}}
	for k, vs := range resp.Header {
		out.Headers[k] = strings.Join(vs, ", ")
	}
	if utf8.Valid(data) {
		s := string(data)
		out.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(data)
		out.BodyBase64 = &s
	}
	return out, nil
}

package extspec

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

// HTTP grants (ABI 1.1): patterns "http(s)://host[:port]/path" where the
// path may end in a single "*" that matches any rest. The scheme, the host
// (compared without regard to case) and the port (an omitted port is the
// scheme's default) must be equal; the query string is not matched. A URL's
// path is put in canonical form before it is matched (CanonicalURL): the
// percent-encoding of unreserved characters is decoded and "." and ".."
// segments are resolved, so "/v1/../admin" and "/v1/%2e%2e/admin" are
// "/admin". A URL whose path holds an encoded slash or backslash ("%2F",
// "%5C") or a backslash, or that carries user:password@, matches no
// pattern: a server may read those differently than the check did.

// HTTPGrant is one parsed http grant.
type HTTPGrant struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is lowercase, without brackets for IPv6.
	Host string
	// Port is explicit: the scheme's default when the pattern omits it.
	Port string
	// Path is the canonical path before the "*" (or the whole path).
	Path string
	// Prefix is true when the pattern ends in "*".
	Prefix bool
}

// CheckHTTPGrant checks the syntax of an http grant.
func CheckHTTPGrant(pattern string) error {
	_, err := ParseHTTPGrant(pattern)
	return err
}

// ParseHTTPGrant parses an http grant pattern.
//
// # Errors
//
// A pattern that is not an absolute http or https URL with a host; one
// with user:password@, a query or a fragment; a path that does not start
// with "/" or that has a "*" anywhere but at its end; a path that is not
// in canonical form ("..", ".", an encoded slash).
func ParseHTTPGrant(pattern string) (HTTPGrant, error) {
	bad := func(why string) (HTTPGrant, error) {
		return HTTPGrant{}, fmt.Errorf("bad http grant %q: %s (want http(s)://HOST[:PORT]/PATH, with an optional * at the end)", pattern, why)
	}
	body, star := strings.CutSuffix(pattern, "*")
	if strings.Contains(body, "*") {
		return bad("a * may only stand at the end")
	}
	u, err := url.Parse(body)
	if err != nil {
		return bad(err.Error())
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("the scheme must be http or https")
	case u.Opaque != "" || u.Host == "":
		return bad("no host")
	case u.User != nil:
		return bad("user:password@ is not allowed")
	case u.RawQuery != "" || u.ForceQuery:
		return bad("a query is not matched; leave it out")
	case u.Fragment != "":
		return bad("a fragment is not allowed")
	}
	p := u.EscapedPath()
	if p == "" && !star {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return bad("the path must start with /")
	}
	canon, err := canonicalPath(p)
	if err != nil {
		return bad(err.Error())
	}
	// A trailing slash survives cleaning ("/v1/" stays "/v1/").
	if canon != p {
		return bad(fmt.Sprintf("the path is not in canonical form (write %q)", canon))
	}
	host, port, err := hostPort(u)
	if err != nil {
		return bad(err.Error())
	}
	return HTTPGrant{Scheme: u.Scheme, Host: host, Port: port, Path: p, Prefix: star}, nil
}

// String writes the grant back as a pattern (with the port when it is not
// the scheme's default).
func (g HTTPGrant) String() string {
	h := g.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if g.Port != defaultPort(g.Scheme) {
		h += ":" + g.Port
	}
	s := g.Scheme + "://" + h + g.Path
	if g.Prefix {
		s += "*"
	}
	return s
}

// Matches reports whether the URL u, in canonical form (CanonicalURL),
// matches the grant.
func (g HTTPGrant) Matches(u *url.URL) bool {
	if u.Scheme != g.Scheme || u.User != nil {
		return false
	}
	host, port, err := hostPort(u)
	if err != nil || host != g.Host || port != g.Port {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if g.Prefix {
		return strings.HasPrefix(p, g.Path)
	}
	return p == g.Path
}

// CanonicalURL parses raw and puts its path in canonical form: the
// percent-encoding of unreserved characters decoded, "." and ".."
// resolved, the fragment dropped. The result is the URL to match and to
// fetch, so that what was checked is what is requested.
//
// # Errors
//
// A URL that does not parse, is not absolute http or https with a host,
// carries user:password@, or whose path holds an encoded slash or
// backslash or a backslash.
func CanonicalURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid url %q: %w", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("invalid url %q: the scheme must be http or https", raw)
	case u.Opaque != "" || u.Host == "":
		return nil, fmt.Errorf("invalid url %q: no host", raw)
	case u.User != nil:
		return nil, fmt.Errorf("invalid url %q: user:password@ is not allowed (send an Authorization header)", raw)
	}
	if _, _, err := hostPort(u); err != nil {
		return nil, fmt.Errorf("invalid url %q: %w", raw, err)
	}
	p, err := canonicalPath(u.EscapedPath())
	if err != nil {
		return nil, fmt.Errorf("invalid url %q: %w", raw, err)
	}
	if p == "" {
		p = "/"
	}
	dec, err := url.PathUnescape(p)
	if err != nil {
		return nil, fmt.Errorf("invalid url %q: %w", raw, err)
	}
	out := *u
	out.Path, out.RawPath, out.Fragment, out.RawFragment = dec, p, "", ""
	if out.EscapedPath() != p {
		return nil, fmt.Errorf("invalid url %q: its path cannot be kept as written", raw)
	}
	return &out, nil
}

// canonicalPath decodes unreserved percent-escapes and resolves dot
// segments of an escaped path; it refuses encoded slashes and backslashes
// and bad escapes.
func canonicalPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			return "", errors.New("a backslash in the path")
		case c == '%':
			if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
				return "", errors.New("a bad %-escape in the path")
			}
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			switch {
			case v == '/' || v == '\\':
				return "", errors.New("an encoded slash or backslash in the path")
			case isUnreserved(v):
				b.WriteByte(v)
			default:
				b.WriteByte('%')
				b.WriteByte(upper(p[i+1]))
				b.WriteByte(upper(p[i+2]))
			}
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	s := b.String()
	if !strings.HasPrefix(s, "/") {
		return "", errors.New("the path must start with /")
	}
	clean := path.Clean(s)
	if clean != "/" && (strings.HasSuffix(s, "/") || strings.HasSuffix(s, "/.") || strings.HasSuffix(s, "/..")) {
		clean += "/"
	}
	return clean, nil
}

func hostPort(u *url.URL) (host, port string, err error) {
	host = strings.ToLower(u.Hostname())
	if host == "" {
		return "", "", errors.New("no host")
	}
	port = u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return "", "", errors.New("an empty port")
		}
		port = defaultPort(u.Scheme)
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return "", "", fmt.Errorf("bad port %q", port)
		}
	}
	if ip := net.ParseIP(host); ip == nil && strings.ContainsAny(host, "%[]") {
		return "", "", fmt.Errorf("bad host %q", host)
	}
	return host, port, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// isUnreserved reports RFC 3986's unreserved characters.
func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// HTTPAllowed reports whether the canonical URL u matches one of patterns
// (patterns that do not parse match nothing).
func HTTPAllowed(patterns []string, u *url.URL) bool {
	for _, p := range patterns {
		g, err := ParseHTTPGrant(p)
		if err == nil && g.Matches(u) {
			return true
		}
	}
	return false
}

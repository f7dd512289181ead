package config

import (
	"fmt"
	"strings"

	"github.com/pi-go/pi/runtime/extspec"
)

// ExpandVars replaces each ${NAME} in s (pi.toml's [[mcp]] headers and env
// values) with lookup(NAME). It is the one rule for these references:
// the load checks them with it, and the MCP client expands them with it
// when a server starts.
//
// # Errors
//
// A ${...} whose content is not an environment variable name, an
// unterminated ${, or a name lookup does not find.
func ExpandVars(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q has an unterminated ${", s)
		}
		name := s[i+2 : i+end]
		if !extspec.ValidEnvName(name) {
			return "", fmt.Errorf("${%s} is not an environment variable reference (want ${NAME})", name)
		}
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("${%s} is not set in the environment", name)
		}
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

// validHeaderName reports whether s is an HTTP header name (an RFC 9110
// token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Limits on what a server's tool list puts in front of the model.
const (
	// MaxNameLen is the longest tool name providers accept.
	MaxNameLen = 64
	// maxDescription caps a tool's description (bytes): a server cannot
	// fill the system prompt.
	maxDescription = 8 << 10
	// maxSnippet caps the prompt snippet (characters).
	maxSnippet = 200
)

// Prefix starts the name of every MCP tool: mcp__SERVER__TOOL.
const Prefix = "mcp__"

// ToolName is pi's name for the tool named tool on the server named server:
// mcp__SERVER__TOOL, with every character outside A-Z a-z 0-9 _ - replaced
// by _. A name longer than 64 characters keeps its first 55 and ends in _
// and 8 hex digits of the sha256 of the whole uncut name, so the same tool
// always gets the same name and two long names stay apart.
func ToolName(server, tool string) string {
	full := Prefix + server + "__" + tool
	name := sanitize(full)
	if len(name) <= MaxNameLen {
		return name
	}
	return hashed(full, name)
}

// hashed is the long form of a name: its first 55 characters, _ and the
// first 8 hex digits of the sha256 of full.
func hashed(full, name string) string {
	sum := sha256.Sum256([]byte(full))
	return name[:min(len(name), MaxNameLen-9)] + "_" + hex.EncodeToString(sum[:4])
}

func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// firstSentence is a description's first sentence (up to the first ". ",
// line break or end), at most maxSnippet characters.
func firstSentence(desc string) string {
	desc = strings.TrimSpace(desc)
	end := len(desc)
	if i := strings.IndexByte(desc, '\n'); i >= 0 {
		end = i
	}
	for i := 0; i+1 < end; i++ {
		if desc[i] == '.' && (desc[i+1] == ' ' || desc[i+1] == '\t') {
			end = i + 1
			break
		}
	}
	return cutRunes(strings.TrimSpace(desc[:end]), maxSnippet)
}

// cutRunes cuts s to at most n characters, ending in "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// cutBytes cuts s to at most n bytes on a character boundary, ending in
// "…" when cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

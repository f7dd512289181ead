package llm

import (
	"errors"
	"regexp"
	"sync"
)

// overflowRe matches the words servers use to say the request does not fit
// the model's context window (OpenAI's "context_length_exceeded" and
// "maximum context length is N tokens", Anthropic's "prompt is too long",
// llama.cpp's "exceeds the available context size", and the like).
// Compiled on first use: package init runs on every start of pi.
var overflowRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(context[_ ]length[_ ]exceeded|maximum context length is \d+|exceeds the context window|prompt is too long|request_too_large|input is too long|input token count.*exceeds the maximum|maximum prompt length is \d+|reduce the length of the messages|exceeds the limit of \d+|exceeds the available context size|greater than the context length|context window exceeds limit|exceeded model token limit|too large for model with \d+ maximum context length|model_context_window_exceeded|prompt too long; exceeded (max )?context length|too many tokens|token limit exceeded)`)
})

// notOverflowRe matches rate-limit wording that can contain the words
// above ("too many tokens per minute").
var notOverflowRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(rate limit|too many requests|per minute|throttl)`)
})

// IsContextOverflow reports whether err is the server saying the request
// is larger than the model's context window: an *HTTPError with status 400
// or 413 whose message says so (a 413 without a message counts too). A
// rate limit never counts.
func IsContextOverflow(err error) bool {
	var he *HTTPError
	if !errors.As(err, &he) {
		return false
	}
	if he.StatusCode != 400 && he.StatusCode != 413 {
		return false
	}
	if he.StatusCode == 413 && he.ServerMessage == "" {
		return true
	}
	return overflowRe().MatchString(he.ServerMessage) && !notOverflowRe().MatchString(he.ServerMessage)
}

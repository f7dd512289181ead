package app

import (
	"errors"
	"fmt"

	"github.com/pi-go/pi/internal/suggest"
)

// ErrBadActiveTools is returned (wrapped) by Open when Options.Tools (the
// --tools flag) names a tool that is not registered; the message names the
// closest registered tool when one is close.
var ErrBadActiveTools = errors.New("unknown tool in the active set")

type activeToolsError struct {
	err        error
	suggestion string
}

func (e *activeToolsError) Error() string {
	msg := "active tools: " + e.err.Error()
	if e.suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.suggestion)
	}
	return msg
}

func (e *activeToolsError) Is(target error) bool { return target == ErrBadActiveTools }
func (e *activeToolsError) Unwrap() error        { return e.err }

// badActiveTools wraps the registry's error about Options.Tools.
func (r *Runtime) badActiveTools(err error) error {
	names := r.ToolNames()
	for _, n := range r.opts.Tools {
		if _, ok := r.registry.Lookup(n); !ok {
			return &activeToolsError{err: err, suggestion: suggest.Closest(n, names)}
		}
	}
	return &activeToolsError{err: err}
}

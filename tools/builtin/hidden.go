package builtin

import (
	"sync/atomic"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/tool"
)

// hiddenPaths is what one grep, find or ls call leaves out because the
// permission rules keep it from being read (tool.Context.Hidden), and how
// many it left out. A nil *hiddenPaths hides nothing. Safe for concurrent
// use (grep's parallel search asks from every worker).
type hiddenPaths struct {
	hidden func(string) bool
	n      atomic.Int64
}

// newHiddenPaths is the call's hiddenPaths; nil when nothing is hidden.
func newHiddenPaths(tc tool.Context) *hiddenPaths {
	if tc.Hidden == nil {
		return nil
	}
	return &hiddenPaths{hidden: tc.Hidden}
}

// hides reports whether the absolute path is left out, without counting it.
func (h *hiddenPaths) hides(path string) bool {
	return h != nil && h.hidden(path)
}

// skip reports whether the absolute path is left out, and counts it.
func (h *hiddenPaths) skip(path string) bool {
	if !h.hides(path) {
		return false
	}
	h.n.Add(1)
	return true
}

// add counts a path left out that hides already decided.
func (h *hiddenPaths) add() {
	if h != nil {
		h.n.Add(1)
	}
}

// notice is the result's note on what was left out ("" for nothing): the
// model learns the result is not the whole folder, and why.
func (h *hiddenPaths) notice() string {
	if h == nil || h.n.Load() == 0 {
		return ""
	}
	return plural.Count(int(h.n.Load()), "path") + " left out by permission path rules"
}

// withNotice adds the notice to notices when there is one.
func (h *hiddenPaths) withNotice(notices []string) []string {
	if s := h.notice(); s != "" {
		notices = append(notices, s)
	}
	return notices
}

package tool

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Registry holds tool definitions with their sources and the active set.
// It is safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	order  []string
	defs   map[string]ToolDefinition
	active []string // nil: every registered tool is active
}

// NewRegistry returns an empty registry in which every tool is active until
// SetActive is called.
func NewRegistry() *Registry { return &Registry{defs: map[string]ToolDefinition{}} }

// Register adds a definition.
//
// # Errors
//
// A definition with an empty name or no Execute is refused. A second
// definition of a name already registered is an error naming both sources,
// unless the new one has Override set, in which case it replaces the first
// (keeping its place in the order).
func (r *Registry) Register(def ToolDefinition) error {
	if def.Name == "" {
		return fmt.Errorf("register tool from %s: empty name", def.Source)
	}
	if def.Execute == nil {
		return fmt.Errorf("register tool %q from %s: no execute function", def.Name, def.Source)
	}
	if def.Source.Kind == "" {
		def.Source.Kind = SourceBuiltin
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.defs[def.Name]; ok {
		if !def.Override {
			return fmt.Errorf("register tool %q from %s: a tool of that name is already registered by %s (set override = true on the extension to replace it)", def.Name, def.Source, old.Source)
		}
		r.defs[def.Name] = def
		return nil
	}
	r.defs[def.Name] = def
	r.order = append(r.order, def.Name)
	return nil
}

// SetActive decides which tools the loop gets, in the given order.
//
// # Errors
//
// An unknown name is an error that lists the known ones; the active set is
// then unchanged.
func (r *Registry) SetActive(names []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if _, ok := r.defs[n]; !ok {
			known := append([]string(nil), r.order...)
			sort.Strings(known)
			return fmt.Errorf("unknown tool %q (known tools: %s)", n, strings.Join(known, ", "))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	r.active = out
	return nil
}

// ActiveNames returns the names of the active tools, in order.
func (r *Registry) ActiveNames() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.active == nil {
		return append([]string(nil), r.order...)
	}
	return append([]string(nil), r.active...)
}

// IsActive reports whether the named tool is in the active set.
func (r *Registry) IsActive(name string) bool {
	for _, n := range r.ActiveNames() {
		if n == name {
			return true
		}
	}
	return false
}

// Lookup returns the definition of a registered tool.
func (r *Registry) Lookup(name string) (ToolDefinition, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.defs[name]
	return d, ok
}

// Definitions returns every registered definition in registration order.
func (r *Registry) Definitions() []ToolDefinition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ToolDefinition, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.defs[n])
	}
	return out
}

// ActiveDefinitions returns the active definitions in active order.
func (r *Registry) ActiveDefinitions() []ToolDefinition {
	names := r.ActiveNames()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ToolDefinition, 0, len(names))
	for _, n := range names {
		out = append(out, r.defs[n])
	}
	return out
}

// ActiveTools wraps the active definitions into AgentTools.
func (r *Registry) ActiveTools(ctxFactory ContextFactory) ([]AgentTool, error) {
	return WrapAll(r.ActiveDefinitions(), ctxFactory)
}

// Unregister removes the named definitions and drops them from the active
// set; names that are not registered are ignored. Tools whose source comes
// and goes (an MCP server's) are replaced this way.
func (r *Registry) Unregister(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gone := map[string]bool{}
	for _, n := range names {
		if _, ok := r.defs[n]; ok {
			delete(r.defs, n)
			gone[n] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	keep := func(list []string) []string {
		out := list[:0:0]
		for _, n := range list {
			if !gone[n] {
				out = append(out, n)
			}
		}
		return out
	}
	r.order = keep(r.order)
	if r.active != nil {
		r.active = keep(r.active)
	}
}

// ReplaceWith makes r hold what o holds (its definitions, order and
// active set) in one step, so that a reader sees the old set or the new
// one, never a mix; o is left as it is. pi.reload swaps a whole set of
// tools this way.
func (r *Registry) ReplaceWith(o *Registry) {
	o.mu.RLock()
	defs := make(map[string]ToolDefinition, len(o.defs))
	for n, d := range o.defs {
		defs[n] = d
	}
	order := append([]string(nil), o.order...)
	var active []string
	if o.active != nil {
		active = append([]string{}, o.active...)
	}
	o.mu.RUnlock()
	r.mu.Lock()
	r.defs, r.order, r.active = defs, order, active
	r.mu.Unlock()
}

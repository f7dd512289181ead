package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// toolLimitKey carries the names of the tools a sub-agent may run (its
// tool set) down to what runs on its behalf: an extension's tool.call
// made inside one of its calls runs only a tool of that set.
type toolLimitKey struct{}

// WithToolLimit returns ctx limited to the tools names (within any limit
// ctx already carries: a child's child has at most its parent's tools).
func WithToolLimit(ctx context.Context, names []string) context.Context {
	if outer, ok := ToolLimit(ctx); ok {
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(outer, n) })
	}
	return context.WithValue(ctx, toolLimitKey{}, slices.Clip(slices.Clone(names)))
}

// ToolLimit is the limit of ctx (WithToolLimit); ok is false without one.
func ToolLimit(ctx context.Context) (names []string, ok bool) {
	names, ok = ctx.Value(toolLimitKey{}).([]string)
	return names, ok
}

// limitRefusal is the error text of a call outside ctx's limit, "" when
// the tool is within it.
func limitRefusal(ctx context.Context, name string) string {
	names, ok := ToolLimit(ctx)
	if !ok || slices.Contains(names, name) {
		return ""
	}
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return fmt.Sprintf("tool %q is not available to this agent (its tools: %s)", name, have)
}

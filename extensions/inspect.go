package extensions

import (
	"context"
	"fmt"
	"path/filepath"
)

// Inspect loads a module in an empty sandbox (no grants, default limits, no
// config), runs its init, and closes it again: what `pi ext install` shows
// before anything is granted. The Info has the module's sha256 and its
// wants.
//
// # Errors
//
// Inspect fails for the same reasons as Host.Load (missing marker, unknown
// import, failing init, ...).
func Inspect(ctx context.Context, path string, opts Options) (Info, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Info{}, fmt.Errorf("inspect %s: %w", path, err)
	}
	h, err := NewHost(ctx, opts)
	if err != nil {
		return Info{}, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer h.Close(ctx)
	e, err := h.Load(ctx, Spec{Path: abs})
	if err != nil {
		return Info{}, fmt.Errorf("inspect: %w", err)
	}
	return e.Info(), nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// app is the runtime the commands share: configuration, the tool registry
// with its active set, and the hooks.
type app struct {
	cwd      string
	logger   hclog.Logger
	registry *tool.Registry
	hooks    *tool.Hooks
	closers  []func()
}

// buildApp loads configuration and registers every tool.
func buildApp(ctx context.Context, f *commonFlags, stderr io.Writer) (*app, error) {
	cwd := f.cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("working directory %s: %w", cwd, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--cwd %s: not a directory", cwd)
	}
	a := &app{cwd: abs, logger: newLogger(f.logLevel, stderr), registry: tool.NewRegistry(), hooks: &tool.Hooks{}}
	for _, d := range builtin.Definitions(builtin.Options{}) {
		if err := a.registry.Register(d); err != nil {
			return nil, err
		}
	}
	active := builtin.DefaultActive
	if f.tools != "" {
		active = splitList(f.tools)
	}
	if err := a.registry.SetActive(active); err != nil {
		return nil, fmt.Errorf("--tools: %w", err)
	}
	return a, nil
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// contextFactory gives each tool call the working directory and a logger
// named for the tool.
func (a *app) contextFactory() tool.ContextFactory {
	return func(name string) tool.Context {
		return tool.Context{Cwd: a.cwd, Logger: a.logger.Named(name)}
	}
}

func newLogger(level string, w io.Writer) hclog.Logger {
	lvl := hclog.LevelFromString(level)
	if strings.EqualFold(level, "off") {
		lvl = hclog.Off
	} else if lvl == hclog.NoLevel {
		lvl = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "pi", Level: lvl, Output: w})
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

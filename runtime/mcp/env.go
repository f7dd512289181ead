package mcp

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/config"
)

// expand replaces each ${VAR} in s with the environment variable VAR
// (config.ExpandVars, the one rule for these references).
//
// # Errors
//
// A variable that is not set.
func expand(s string) (string, error) { return config.ExpandVars(s, os.LookupEnv) }

// expandAll expands every value of m; what names the map in errors.
func expandAll(m map[string]string, what string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := expand(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, k, err)
		}
		out[k] = v
	}
	return out, nil
}

// serverEnv is a stdio server's environment: base without the hidden
// variables, then extra (expanded) over it.
func serverEnv(base, hide []string, extra map[string]string) ([]string, error) {
	vals, err := expandAll(extra, "env")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(base)+len(vals))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(hide, k) {
			continue
		}
		if _, ok := vals[k]; ok {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/suggest"
	"github.com/pi-go/pi/runtime/app"
)

// Extensions' command-line flags (ABI 1.2: init's "flags"). pi learns
// them only once the extensions are loaded, after its own flags are
// parsed; so a command that loads extensions parses with
// parseArgsDeferring, which keeps each `--NAME`, `--NAME=VALUE` or
// `--NAME VALUE` that is none of pi's aside (extPending), and, once the
// runtime is open, resolveExtFlags gives the declared ones to the
// extensions and refuses the rest as before: a usage error (exit 2)
// naming the flag, with the closest one.

// pendingFlag is one flag that is none of pi's, kept for the extensions.
type pendingFlag struct {
	name     string
	value    string
	hasValue bool // --NAME=VALUE
	// next is the position in the positional arguments of the word that
	// followed a --NAME without "=" (-1: none): the flag's value if it
	// is a string flag, else a positional argument.
	next int
}

// extPending is what parseArgsDeferring kept aside.
type extPending struct {
	flags []pendingFlag
	// piFlags are pi's own flag names (no extension may take one).
	piFlags []string
}

// parseArgsDeferring is parseArgs, keeping aside every unknown flag
// written `--NAME...` with NAME an extension flag name ([a-z][a-z0-9-]*).
func parseArgsDeferring(fs *flag.FlagSet, args []string, x *extPending) (pos []string, code int, done bool) {
	fs.VisitAll(func(f *flag.Flag) { x.piFlags = append(x.piFlags, f.Name) })
	return parseArgsWith(fs, args, func(fs *flag.FlagSet, args []string) ([]string, error) {
		var pos []string
		for {
			p, err := parseInterleaved(fs, args)
			pos = append(pos, p...)
			name, ok := unknownFlag(err)
			if !ok {
				return pos, err
			}
			rest := fs.Args()
			tok := args[len(args)-len(rest)-1]
			if !strings.HasPrefix(tok, "--") || !validExtFlagName(name) {
				return pos, err
			}
			pf := pendingFlag{name: name, next: -1}
			if _, v, ok := strings.Cut(tok, "="); ok {
				pf.value, pf.hasValue = v, true
			} else if len(rest) > 0 && rest[0] != "--" && !strings.HasPrefix(rest[0], "-") {
				pf.next = len(pos)
				pos = append(pos, rest[0])
				rest = rest[1:]
			}
			x.flags = append(x.flags, pf)
			args = rest
		}
	})
}

// unknownFlag is the name in the flag package's "not defined" error.
func unknownFlag(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return "", false
	}
	name, _, _ = strings.Cut(name, "=")
	return name, true
}

func validExtFlagName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// resolveExtFlags gives the extensions of rt their flags from x and
// returns the positional arguments without the values those flags took.
//
// # Errors
//
// A flag no loaded extension declares (unknown flag --NAME, with the
// closest of pi's and the extensions' flags), a boolean flag whose value
// is not true or false, a string flag without a value.
func resolveExtFlags(rt *app.Runtime, x *extPending, pos []string) ([]string, error) {
	vals := map[string]string{}
	declared := map[string]bool{} // name → boolean
	var names []string
	for _, f := range rt.ExtensionFlags() {
		declared[f.Name] = f.Type == "boolean"
		names = append(names, f.Name)
	}
	var drop []int
	for _, p := range x.flags {
		boolean, ok := declared[p.name]
		switch {
		case !ok:
			msg := "unknown flag --" + p.name
			if s := suggest.Closest(p.name, append(slices.Clone(x.piFlags), names...)); s != "" {
				msg += "; did you mean --" + s + "?"
			}
			return nil, errors.New(msg)
		case boolean && p.hasValue:
			if p.value != "true" && p.value != "false" {
				return nil, fmt.Errorf("flag --%s takes true or false, got %q", p.name, p.value)
			}
			vals[p.name] = p.value
		case boolean:
			vals[p.name] = "true"
		case p.hasValue:
			vals[p.name] = p.value
		case p.next >= 0:
			vals[p.name] = pos[p.next]
			drop = append(drop, p.next)
		default:
			return nil, fmt.Errorf("flag needs an argument: --%s", p.name)
		}
	}
	if err := rt.SetExtensionFlags(vals); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(pos))
	for i, p := range pos {
		if !slices.Contains(drop, i) {
			out = append(out, p)
		}
	}
	return out, nil
}

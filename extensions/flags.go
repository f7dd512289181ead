package extensions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/runtime/extspec"
)

// Command-line flags of ABI 1.2: an extension's init declares flags; the
// front end, after loading the extensions, gives the host the values of
// the ones on the command line (SetFlagValues); flags.get answers them.

// checkFlags checks init's flags: names, types, defaults, none twice.
func checkFlags(fs []abi.FlagSpec) error {
	seen := map[string]bool{}
	for i, f := range fs {
		switch {
		case !extspec.ValidCommandName(f.Name):
			return fmt.Errorf("flags[%d]: name %q must match [a-z][a-z0-9-]* (without the dashes)", i, f.Name)
		case seen[f.Name]:
			return fmt.Errorf("flags[%d]: flag --%s declared twice", i, f.Name)
		case f.Type != abi.FlagBoolean && f.Type != abi.FlagString:
			return fmt.Errorf("flags[%d]: flag --%s: type %q must be boolean or string", i, f.Name, f.Type)
		}
		seen[f.Name] = true
		if !isNull(f.Default) {
			var b bool
			var s string
			if f.Type == abi.FlagBoolean && json.Unmarshal(f.Default, &b) != nil || f.Type == abi.FlagString && json.Unmarshal(f.Default, &s) != nil {
				return fmt.Errorf("flags[%d]: flag --%s: default %s is not a %s", i, f.Name, f.Default, f.Type)
			}
		}
	}
	return nil
}

// flagClash refuses a flag of e that pi or a loaded extension has.
func flagClash(e *Extension, loaded []*Extension, reserved []string) error {
	for _, f := range e.flags {
		if slices.Contains(reserved, f.Name) {
			return fmt.Errorf("flag --%s of extension %s clashes with pi's flag --%s", f.Name, e.name, f.Name)
		}
		for _, o := range loaded {
			for _, of := range o.flags {
				if of.Name == f.Name {
					return fmt.Errorf("flag --%s of extension %s clashes with flag --%s of extension %s (%s)", f.Name, e.name, of.Name, o.name, o.spec.Path)
				}
			}
		}
	}
	return nil
}

// ExtensionFlag is a flag some loaded extension declares.
type ExtensionFlag struct {
	Extension string
	FlagSpec
}

// Flags lists the flags the loaded extensions declare, by name.
func (h *Host) Flags() []ExtensionFlag {
	var out []ExtensionFlag
	for _, e := range h.Extensions() {
		for _, f := range e.flags {
			out = append(out, ExtensionFlag{Extension: e.name, FlagSpec: f})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrUnknownFlag matches the error of SetFlagValues for a flag no
// extension declares.
var ErrUnknownFlag = errors.New("unknown flag")

// SetFlagValues gives the host the extension flags of the command line,
// by name without dashes; a boolean flag's value is "true" or "false".
//
// # Errors
//
// A flag no loaded extension declares (ErrUnknownFlag), a boolean flag
// whose value is not true or false.
func (h *Host) SetFlagValues(vals map[string]string) error {
	decl := map[string]FlagSpec{}
	for _, f := range h.Flags() {
		decl[f.Name] = f.FlagSpec
	}
	for name, v := range vals {
		f, ok := decl[name]
		switch {
		case !ok:
			return fmt.Errorf("%w --%s", ErrUnknownFlag, name)
		case f.Type == abi.FlagBoolean && v != "true" && v != "false":
			return fmt.Errorf("flag --%s takes true or false, got %q", name, v)
		}
	}
	h.run12.flagsMu.Lock()
	defer h.run12.flagsMu.Unlock()
	h.run12.flags = vals
	return nil
}

// FlagIsBoolean reports whether name is a boolean flag of a loaded
// extension (so that "--name" alone is true and takes no value).
func (h *Host) FlagIsBoolean(name string) (declared, boolean bool) {
	for _, f := range h.Flags() {
		if f.Name == name {
			return true, f.Type == abi.FlagBoolean
		}
	}
	return false, false
}

// flagValues answers flags.get: each own flag as given, else its default,
// else false or null.
func (e *Extension) flagValues() map[string]json.RawMessage {
	h := e.host
	h.run12.flagsMu.Lock()
	given := h.run12.flags
	h.run12.flagsMu.Unlock()
	out := map[string]json.RawMessage{}
	for _, f := range e.flags {
		v, ok := given[f.Name]
		switch {
		case ok && f.Type == abi.FlagBoolean:
			out[f.Name] = json.RawMessage(v)
		case ok:
			out[f.Name] = mustJSON(v)
		case !isNull(f.Default):
			out[f.Name] = f.Default
		case f.Type == abi.FlagBoolean:
			out[f.Name] = json.RawMessage("false")
		default:
			out[f.Name] = json.RawMessage("null")
		}
	}
	return out
}

// checkInitRun12 checks init's 1.2 fields of the running extension:
// flags and channels.
func checkInitRun12(r abi.InitResult) error {
	if err := checkFlags(r.Flags); err != nil {
		return err
	}
	for i, c := range r.Channels {
		if !ValidChannel(c) {
			return fmt.Errorf("channels[%d]: %q must match [a-z0-9:._-]{1,64}", i, c)
		}
	}
	return nil
}

// initializeRun12 takes init's 1.2 answer: flags, channels and the
// before_provider_request hook.
func (e *Extension) initializeRun12(res initResult) {
	e.flags = res.Flags
	e.channels = res.Channels
	e.hookProviderRequest = slices.Contains(res.Hooks, abi.HookBeforeProviderRequest)
	e.info.Flags = res.Flags
	e.info.Channels = res.Channels
}

func flagsFromABI(fs []abi.FlagSpec) []FlagSpec {
	var out []FlagSpec
	for _, f := range fs {
		out = append(out, FlagSpec{Name: f.Name, Description: f.Description, Type: f.Type, Default: f.Default})
	}
	return out
}

package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/tool"
)

// A pi.toml extension whose module file no longer has the sha256 pi.toml
// pins is not loaded, and not run at all: the file changed since it was
// installed, by a rebuild or by someone else. Instead of stopping every pi
// command (the fix, `pi ext update NAME`, is itself a pi command), that one
// extension is disabled, loudly and fail closed:
//
//   - a warning at every start names the file, both digests and the fix;
//   - each tool it declared answers with that message (so the model and
//     the user see why, and a built-in it overrode does not silently take
//     its place);
//   - a tool_call hook it declared blocks every tool call; a bash_spawn
//     hook stops every command; a tool_result hook withholds every result
//     (a redaction hook that did not run must not let a secret through).
//
// What the module declared is read from the record pi keeps per sha256
// ($PI_HOME/cache/declared/SHA256.json), written when pi installed,
// updated or loaded that exact module; the changed file itself is never
// asked, since it could declare nothing to escape the blocking. Without a
// record, pi assumes every hook: every tool call is blocked until the
// extension is updated or removed. Every other load failure still stops
// the run.

// disabledExtension is an extension disabled for a sha256 mismatch.
type disabledExtension struct {
	spec extensions.Spec
	// message is the one-paragraph warning; short the reason given to
	// calls it blocks.
	message, short string
	// declared is what the pinned module declared; known says the record
	// was found.
	declared ExtensionInfo
	known    bool
}

// disableOnMismatch turns a load failure of a pinned entry whose file
// changed into a disabled extension; ok is false for every other failure,
// which stops the run as before.
func (r *Runtime) disableOnMismatch(cfg *config.Config, spec extensions.Spec, err error) (disabledExtension, bool) {
	if spec.SHA256 == "" || !errors.Is(err, extensions.ErrSHA256Mismatch) {
		return disabledExtension{}, false
	}
	d := disabledExtension{spec: spec}
	d.declared, d.known = extensions.LoadDeclared(r.caches().declared, spec.SHA256)
	got, _ := extensions.FileSHA256(spec.Path)
	update, remove := "pi ext update "+spec.Name, "pi ext remove "+spec.Name
	if spec.Scope == config.ScopeGlobal {
		update, remove = update+" --global", remove+" --global"
	}
	where := "pi.toml"
	if e, ok := cfg.Extension(spec.Name); ok && e.File != "" {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	d.short = fmt.Sprintf("extension %s is disabled: its module %s changed since it was installed (sha256 mismatch); if you rebuilt it, pin the new build with `%s`", spec.Name, spec.Path, update)
	d.message = fmt.Sprintf("extension %s disabled: %s has sha256 %s, but %s pins %s: the file changed since it was installed. "+
		"If you rebuilt it, pin the new build with `%s`; if you did not, restore the file or remove the extension (`%s`). Until then %s.",
		spec.Name, spec.Path, firstNonEmpty(got, "(unreadable)"), where, spec.SHA256, update, remove, d.effect())
	return d, true
}

// hooks lists the hooks d stands for: what its pinned module declared, or
// every hook that can guard something when that is not known.
func (d disabledExtension) hooks() []string {
	if d.known {
		return d.declared.Hooks
	}
	return []string{extensions.HookToolCall, extensions.HookToolResult, extensions.HookBashSpawn}
}

// effect says, for the warning, what being disabled does.
func (d disabledExtension) effect() string {
	var parts []string
	if d.known && len(d.declared.Tools) > 0 {
		var names []string
		for _, t := range d.declared.Tools {
			names = append(names, t.Name)
		}
		parts = append(parts, "its tools ("+strings.Join(names, ", ")+") answer with this error")
	}
	for _, h := range d.hooks() {
		switch h {
		case extensions.HookToolCall:
			parts = append(parts, "its tool_call hook blocks every tool call")
		case extensions.HookToolResult:
			parts = append(parts, "its tool_result hook withholds every tool result")
		case extensions.HookBashSpawn:
			parts = append(parts, "its bash_spawn hook stops every bash command")
		}
	}
	if !d.known {
		parts = append(parts, "(pi has no record of what the pinned module declared, so it assumes every hook)")
	}
	if len(parts) == 0 {
		return "it does nothing"
	}
	return strings.Join(parts, "; ")
}

// addDisabledHooks adds the blocking hooks of the disabled extensions to
// hooks and returns the bash_spawn hooks to add to spawn.
func addDisabledHooks(disabled []disabledExtension, hooks *tool.Hooks) []tool.SpawnHook {
	var spawn []tool.SpawnHook
	for _, d := range disabled {
		name, reason := "extension "+d.spec.Name+" (disabled)", d.short
		for _, h := range d.hooks() {
			switch h {
			case extensions.HookToolCall:
				hooks.ToolCall = append(hooks.ToolCall, tool.ToolCallHook{Name: name, Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
					return tool.ToolCallDecision{Block: true, Reason: "Blocked: " + reason + "; its tool_call hook cannot run, so no tool call may run until then"}, nil
				}})
			case extensions.HookToolResult:
				hooks.ToolResult = append(hooks.ToolResult, tool.ToolResultHook{Name: name, Func: func(context.Context, tool.CallInfo, tool.Result) (tool.ResultPatch, error) {
					isErr := true
					return tool.ResultPatch{
						Content: []tool.ContentBlock{tool.Text("Result withheld: " + reason + "; its tool_result hook cannot run, so no result is shown until then")},
						Details: json.RawMessage("null"), IsError: &isErr,
					}, nil
				}})
			case extensions.HookBashSpawn:
				spawn = append(spawn, tool.SpawnHook{Name: name, Func: func(context.Context, tool.BashSpawn) (tool.BashSpawn, error) {
					return tool.BashSpawn{}, errors.New(reason + "; its bash_spawn hook cannot run, so no command may run until then")
				}})
			}
		}
	}
	return spawn
}

// disabledDefinitions are stand-ins for the tools the disabled extensions
// declared: same names and schemas, each answering with the reason.
func disabledDefinitions(disabled []disabledExtension) []tool.ToolDefinition {
	var defs []tool.ToolDefinition
	for _, d := range disabled {
		if !d.known {
			continue
		}
		src := tool.Source{Kind: tool.SourceExtension, Name: d.spec.Name, Version: d.declared.Version, Path: d.spec.Path, SHA256: d.spec.SHA256}
		for _, ts := range d.declared.Tools {
			reason := d.short
			defs = append(defs, tool.ToolDefinition{
				Name: ts.Name, Label: firstNonEmpty(ts.Label, ts.Name), Description: ts.Description,
				Parameters: append(json.RawMessage(nil), ts.Parameters...),
				Source:     src, Override: d.spec.Override,
				Execute: func(context.Context, tool.Call, tool.Context) (tool.Result, error) {
					return tool.ErrorResult(reason), nil
				},
			})
		}
	}
	return defs
}

// recordLoaded records a pinned extension that loaded in dir (the
// declared records; "" for none), unless a record of its sha256 is there
// already (a stat per start).
func recordLoaded(dir string, e *extensions.Extension, pinned string) {
	if dir == "" || pinned == "" || extensions.HasDeclared(dir, pinned) {
		return
	}
	extensions.RecordDeclared(dir, e.Info())
}

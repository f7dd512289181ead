package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/go-hclog"
)

// ExecutionMode says whether a tool may run concurrently with the other calls
// of the same assistant message.
type ExecutionMode string

const (
	Parallel   ExecutionMode = "parallel"
	Sequential ExecutionMode = "sequential"
)

// SourceKind says where a tool definition came from.
type SourceKind string

const (
	SourceBuiltin   SourceKind = "builtin"
	SourceExtension SourceKind = "extension"
	// SourceMCP is a tool of an MCP server: Name is the server's name,
	// Path its command line or URL, Version what it said it is.
	SourceMCP SourceKind = "mcp"
)

// Source describes where a ToolDefinition came from. For extensions it names
// the extension, its version, the .wasm path and its sha256.
type Source struct {
	Kind    SourceKind `json:"kind"`
	Name    string     `json:"name,omitempty"`
	Version string     `json:"version,omitempty"`
	Path    string     `json:"path,omitempty"`
	SHA256  string     `json:"sha256,omitempty"`
}

// String names the source for messages: "builtin", "extension NAME (PATH)"
// or "mcp server NAME (COMMAND or URL)".
func (s Source) String() string {
	if s.Kind == SourceMCP {
		if s.Path != "" {
			return fmt.Sprintf("mcp server %s (%s)", s.Name, s.Path)
		}
		return "mcp server " + s.Name
	}
	if s.Kind == SourceExtension {
		if s.Path != "" {
			return fmt.Sprintf("extension %s (%s)", s.Name, s.Path)
		}
		return "extension " + s.Name
	}
	return string(s.Kind)
}

// Context is what a ToolDefinition's Execute gets besides its arguments: the
// working directory the call runs in, a logger named for the tool, and
// which files the call must leave out.
type Context struct {
	Cwd    string
	Logger hclog.Logger
	// Hidden, when set, reports whether the permission rules keep the
	// file or folder at an absolute path (as walked, links not followed)
	// from being read: a tool that lists or searches many files (grep,
	// find, ls) leaves it out and says how many it left out. The runtime
	// sets it from its policy (one per call); nil hides nothing.
	Hidden func(path string) bool
}

// UpdateFunc receives partial results while a tool runs (progress for the UI
// and the event stream; never sent to the model). It may be nil-safe called
// through Call.Update.
type UpdateFunc func(partial Result)

// Call is one invocation of a tool: the call id the model gave, the
// arguments after preparation and validation (Input, and through Parsed
// the value validation parsed from it), and the update callback.
type Call struct {
	ID     string
	Input  json.RawMessage
	args   Args
	update UpdateFunc
}

// NewCall returns a Call of arguments no validation parsed; update may be
// nil.
func NewCall(id string, input json.RawMessage, update UpdateFunc) Call {
	return Call{ID: id, Input: input, args: RawArgs(input), update: update}
}

// newCall returns the Call of validated arguments.
func newCall(id string, args Args, update UpdateFunc) Call {
	return Call{ID: id, Input: args.JSON, args: args, update: update}
}

// Parsed returns the JSON value validation parsed from Input (see
// Args.Parsed), or false when there is none.
func (c Call) Parsed() (any, bool) { return c.args.Parsed() }

// Update sends a partial result when the caller asked for them.
func (c Call) Update(partial Result) {
	if c.update != nil {
		c.update(partial)
	}
}

// ExecuteFunc runs a tool. A Go error becomes a tool result with isError and
// the error's text; a mistake the model can fix should be returned that way.
type ExecuteFunc func(ctx context.Context, call Call, tc Context) (Result, error)

// PrepareFunc rewrites raw arguments before validation (to accept legacy or
// sloppy shapes the model sends). It returns the arguments to validate.
type PrepareFunc func(raw json.RawMessage) (json.RawMessage, error)

// PathsFunc lists the paths a call will open: absolute, with every symlink
// resolved (for a file that does not exist yet, the real path of its deepest
// existing parent joined with the rest), computed from the validated call
// (Call.Input and Call.Parsed, as Execute gets them; no update callback)
// and the working directory the call runs in exactly as Execute will
// resolve them. An error blocks the call (a hook cannot check what nobody
// can name).
type PathsFunc func(call Call, cwd string) ([]string, error)

// ToolDefinition is the product-layer tool: what built-ins and extensions
// register. Parameters is a JSON Schema object.
type ToolDefinition struct {
	Name             string
	Label            string
	Description      string
	Parameters       json.RawMessage
	PromptSnippet    string
	PromptGuidelines []string
	ExecutionMode    ExecutionMode
	PrepareArguments PrepareFunc
	Source           Source
	// Override lets this definition replace an earlier one of the same name
	// (an extension replacing a built-in) instead of being a clash.
	Override bool
	Execute  ExecuteFunc
	// Paths, when set, tells tool_call hooks which paths a call will open
	// (CallInfo.Paths). Tools that open no files leave it nil.
	Paths PathsFunc
}

// ContextFactory makes the tool Context for one call of the named tool.
type ContextFactory func(toolName string) Context

// AgentTool is what the loop runs: the core layer.
type AgentTool interface {
	Name() string
	Description() string
	// Parameters is the JSON Schema sent to the model.
	Parameters() json.RawMessage
	ExecutionMode() ExecutionMode
	// PrepareArguments rewrites raw arguments before validation.
	PrepareArguments(raw json.RawMessage) (json.RawMessage, error)
	// Validate checks arguments against Parameters. The error's text is the
	// model-visible `Validation failed for tool "NAME":` message.
	Validate(args json.RawMessage) error
	// ValidateArgs is Validate that also returns the arguments with the
	// value validation parsed from them, for the call's Execute.
	ValidateArgs(args json.RawMessage) (Args, error)
	// Execute runs the tool with arguments ValidateArgs returned (or
	// RawArgs).
	Execute(ctx context.Context, callID string, args Args, update UpdateFunc) (Result, error)
}

// Wrap adapts a definition into an AgentTool. The schema is compiled once,
// here; an invalid schema is an error naming the tool and its source.
//
// # Errors
//
// Wrap fails when the definition has no name or Execute, or when its
// Parameters are not a valid JSON Schema.
func Wrap(def ToolDefinition, ctxFactory ContextFactory) (AgentTool, error) {
	if def.Name == "" {
		return nil, fmt.Errorf("wrap tool from %s: empty name", def.Source)
	}
	if def.Execute == nil {
		return nil, fmt.Errorf("wrap tool %q from %s: no execute function", def.Name, def.Source)
	}
	v, err := compileSchema(def.Name, def.Parameters)
	if err != nil {
		return nil, fmt.Errorf("wrap tool %q from %s: %w", def.Name, def.Source, err)
	}
	if ctxFactory == nil {
		ctxFactory = func(string) Context { return Context{Logger: hclog.NewNullLogger()} }
	}
	return &wrapped{def: def, validator: v, ctx: ctxFactory}, nil
}

// WrapAll wraps every definition, in order.
func WrapAll(defs []ToolDefinition, ctxFactory ContextFactory) ([]AgentTool, error) {
	out := make([]AgentTool, 0, len(defs))
	for _, d := range defs {
		t, err := Wrap(d, ctxFactory)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

type wrapped struct {
	def       ToolDefinition
	validator *validator
	ctx       ContextFactory
}

var _ AgentTool = (*wrapped)(nil)

func (w *wrapped) Name() string                { return w.def.Name }
func (w *wrapped) Description() string         { return w.def.Description }
func (w *wrapped) Parameters() json.RawMessage { return w.validator.schemaJSON }
func (w *wrapped) ExecutionMode() ExecutionMode {
	if w.def.ExecutionMode == Sequential {
		return Sequential
	}
	return Parallel
}

func (w *wrapped) PrepareArguments(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if w.def.PrepareArguments == nil {
		return raw, nil
	}
	return w.def.PrepareArguments(raw)
}

func (w *wrapped) Validate(args json.RawMessage) error {
	_, err := w.validator.validate(args)
	return err
}

func (w *wrapped) ValidateArgs(args json.RawMessage) (Args, error) { return w.validator.validate(args) }

func (w *wrapped) Execute(ctx context.Context, callID string, args Args, update UpdateFunc) (Result, error) {
	return w.def.Execute(ctx, newCall(callID, args, update), w.ctx(w.def.Name))
}

// CallPaths lists the paths a call with these validated arguments will
// open, from the definition's Paths and the cwd its Context would get; a
// definition without Paths opens none.
func (w *wrapped) CallPaths(args json.RawMessage) ([]string, error) {
	return w.callPaths(RawArgs(args))
}

// callPaths is CallPaths of arguments ValidateArgs returned, whose parse
// the definition's Paths gets.
func (w *wrapped) callPaths(args Args) ([]string, error) {
	if w.def.Paths == nil {
		return []string{}, nil
	}
	paths, err := w.def.Paths(newCall("", args, nil), w.ctx(w.def.Name).Cwd)
	if err != nil {
		return nil, err
	}
	if paths == nil {
		paths = []string{}
	}
	return paths, nil
}

// Definition returns the ToolDefinition behind an AgentTool made by Wrap.
func Definition(t AgentTool) (ToolDefinition, bool) {
	w, ok := t.(*wrapped)
	if !ok {
		return ToolDefinition{}, false
	}
	return w.def, true
}

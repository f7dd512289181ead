package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"

	"github.com/pi-go/pi/internal/abi"
)

// registry holds what an extension registered and what the host told it at
// init. The package functions work on one default registry; tests make their
// own.
type registry struct {
	name, version, description string
	wants                      *Grants
	tools                      []*toolEntry
	onInit                     []func() error
	toolCall                   []func(ToolCall) ToolCallDecision
	toolResult                 []func(ToolResult) ResultPatch
	bashSpawn                  []func(BashSpawn) BashSpawn
	events                     []func(Event)
	errs                       []error

	// ABI 1.1 (initfacts.go, commands.go, prompthooks.go, configschema.go).
	commands     []*commandEntry
	input        []func(Input) InputAction
	beforeStart  []func(BeforeAgentStart) AgentStartChange
	stop         []func(Stop) StopDecision
	configSchema json.RawMessage
	events11     []string
	// ABI 1.2's conversation hooks (session12.go).
	s12   session12
	run12 sdkRun12 // ABI 1.2 (run12.go)

	// Set by the host's init request.
	initialized bool
	hostName    string
	hostVersion string
	cwd         string
	config      json.RawMessage
	grants      Grants
	// ABI 1.1 facts (zero from a 1.0 host).
	abiMinor    int
	projectRoot string
	trusted     bool
	mode        string
	hasUI       bool
	// ABI 1.2's UI (ui12.go).
	ui12 registryUI12
}

type toolEntry struct {
	spec   ToolSpec
	params json.RawMessage
	run    func(ctx *Context, input json.RawMessage) (Result, error)
	late   bool // registered with LateTool: not declared at init (run12.go)
}

var std = &registry{}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Extension names the extension. Call it once, from init. The name must match
// [a-z][a-z0-9_-]* and is unique among the extensions a host loads.
func Extension(name, version, description string) { std.extension(name, version, description) }

// Wants declares the grants the extension needs to work, shown by
// `pi ext install` so the user knows what to put in pi.toml. It grants
// nothing by itself.
func Wants(g Grants) { std.wants = &g }

// OnInit registers a function run when the host sends init, after the
// configuration, working directory and grants are known and before the
// answer. An error fails the load with its message: the place to check the
// extension's configuration.
func OnInit(fn func() error) { std.onInit = append(std.onInit, fn) }

// Tool registers a tool. The host's input, validated against the tool's
// schema, is decoded strictly into In (an unknown field or a wrong type is an
// error result that names the field) and handed to fn. A returned error
// becomes a tool result with isError and the error's text.
//
// When spec.Parameters is nil, the JSON Schema is derived from In, which must
// then be a struct (see ToolSpec).
func Tool[In any](spec ToolSpec, fn func(ctx *Context, in In) (Result, error)) {
	std.addTool(spec, reflect.TypeFor[In](), func(ctx *Context, raw json.RawMessage) (Result, error) {
		var in In
		if err := decodeStrict(raw, &in); err != nil {
			return Result{}, fmt.Errorf("invalid input for tool %q: %s", spec.Name, describeDecodeError(err))
		}
		return fn(ctx, in)
	})
}

// OnToolCall registers a tool_call hook: it sees every tool call (of any
// tool) before it runs and may let it through (zero decision), block it, or
// replace its input. Several hooks run in registration order; the first
// block wins.
func OnToolCall(fn func(ToolCall) ToolCallDecision) { std.toolCall = append(std.toolCall, fn) }

// Ask returns a tool_call decision that asks the person question before
// the call runs (interactive), or blocks it with "needs approval" unless
// pi runs with --yes (other modes).
func Ask(question string) ToolCallDecision { return ToolCallDecision{Ask: question} }

// OnToolResult registers a tool_result hook: it sees every finished call and
// may patch the result before the model sees it. Several hooks chain.
func OnToolResult(fn func(ToolResult) ResultPatch) { std.toolResult = append(std.toolResult, fn) }

// OnBashSpawn registers a bash_spawn hook: it sees the command, directory and
// environment the bash tool is about to spawn and returns them, changed or
// not. An empty Command or Cwd, or a nil Env, keeps the value. Several hooks
// chain.
func OnBashSpawn(fn func(BashSpawn) BashSpawn) { std.bashSpawn = append(std.bashSpawn, fn) }

// OnEvent registers a function told of agent events.
func OnEvent(fn func(Event)) { std.events = append(std.events, fn) }

// Events chooses the event types OnEvent functions get, replacing the
// default (agent_start, agent_end, turn_start, turn_end,
// tool_execution_start, tool_execution_end); ABI 1.1 adds message_end
// (assistant messages), session_start, session_shutdown, compaction_start
// and compaction_end.
func Events(types ...string) { std.events11 = append([]string(nil), types...) }

func (r *registry) fail(format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
}

func (r *registry) extension(name, version, description string) {
	if r.name != "" {
		r.fail("sdk.Extension called twice (%q, then %q)", r.name, name)
		return
	}
	if !namePattern.MatchString(name) {
		r.fail("extension name %q must match [a-z][a-z0-9_-]*", name)
	}
	r.name, r.version, r.description = name, version, description
}

func (r *registry) addTool(spec ToolSpec, in reflect.Type, run func(*Context, json.RawMessage) (Result, error)) {
	if spec.Name == "" {
		r.fail("sdk.Tool: empty tool name")
		return
	}
	for _, t := range r.tools {
		if t.spec.Name == spec.Name {
			r.fail("sdk.Tool: tool %q registered twice", spec.Name)
			return
		}
	}
	switch spec.ExecutionMode {
	case "", Parallel, Sequential:
	default:
		r.fail("sdk.Tool %q: execution mode %q is not parallel or sequential", spec.Name, spec.ExecutionMode)
		return
	}
	params, err := schemaJSON(spec.Parameters, in)
	if err != nil {
		r.fail("sdk.Tool %q: parameters: %v", spec.Name, err)
		return
	}
	r.tools = append(r.tools, &toolEntry{spec: spec, params: params, run: run})
}

// schemaJSON turns ToolSpec.Parameters into compact JSON, deriving it from
// the input type when nil.
func schemaJSON(p any, in reflect.Type) (json.RawMessage, error) {
	var raw []byte
	switch v := p.(type) {
	case nil:
		s, err := schemaOf(in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(s)
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok || (m["type"] != nil && m["type"] != "object") {
		return nil, fmt.Errorf("must be a JSON Schema of type object")
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data (abi.DecodeStrict); no data at all is {}.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	return abi.DecodeStrict(data, v)
}

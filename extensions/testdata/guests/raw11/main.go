//go:build wasip1

// Command raw11 is a test guest written against docs/abi.md alone: plain Go
// with //go:wasmexport and the standard library, no SDK and no package of
// pi. It exercises every addition of ABI 1.1 and is driven by its config
// ([extensions.config]):
//
//	name          its name (default "raw11"); tools are named PREFIX+"probe"
//	prefix        the tool-name prefix (default "")
//	ask, block    a tool name its tool_call hook asks about / blocks
//	stopContinues how many times its stop hook continues the run
//	inputSecret   a text its input hook refuses prompts with
//	inputSuffix   appended to every prompt by its input hook
//	inputCrash    its input hook traps
//	noToolCall    it declares no tool_call hook
//	system        appended to the system prompt by before_agent_start
//	context       a context message before_agent_start adds
//	events        its event subscription
//	schema        its configSchema
//
// The tool PREFIXprobe takes {"method", "params"}, sends them to host_call
// and answers the raw answer as its text: tests reach every host method
// through it. The tool PREFIXfacts answers what init said, the events it
// got and how many times stop was called; PREFIXcrash traps; PREFIXseq
// takes {"calls": [envelope, ...]} and answers each answer on a line. The command /PREFIXraw ARGS
// answers "raw: ARGS" and, for "ask X", the prompt X; /PREFIXprobe METHOD
// PARAMS makes a host call from a command.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"
)

var pinned = map[uint32][]byte{}

func pin(b []byte) uint32 {
	if len(b) == 0 {
		b = make([]byte, 1)
	}
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	pinned[p] = b
	return p
}

//go:wasmexport pi_abi_v1
func piABIv1() {}

//go:wasmexport pi_alloc
func piAlloc(size uint32) uint32 { return pin(make([]byte, size)) }

//go:wasmexport pi_free
func piFree(ptr, size uint32) { delete(pinned, ptr) }

//go:wasmexport pi_call
func piCall(ptr, n uint32) uint64 {
	resp := handle(pinned[ptr][:n])
	return uint64(pin(resp))<<32 | uint64(len(resp))
}

//go:wasmimport pi host_call
func hostCallRaw(req unsafe.Pointer, reqLen uint32, out unsafe.Pointer, outCap uint32) int64

//go:wasmimport pi host_take
func hostTakeRaw(out unsafe.Pointer, outCap uint32) int64

// hostCall sends one envelope; a small buffer makes big answers go through
// host_take.
func hostCall(req []byte) string {
	buf := make([]byte, 256)
	n := hostCallRaw(unsafe.Pointer(unsafe.SliceData(req)), uint32(len(req)), unsafe.Pointer(unsafe.SliceData(buf)), uint32(len(buf)))
	if n < 0 {
		return fmt.Sprintf(`{"abiMisuse":%d}`, n)
	}
	if n <= int64(len(buf)) {
		return string(buf[:n])
	}
	big := make([]byte, n)
	if m := hostTakeRaw(unsafe.Pointer(unsafe.SliceData(big)), uint32(n)); m != n {
		return fmt.Sprintf(`{"takeFailed":%d}`, m)
	}
	return string(big)
}

type config struct {
	Name          string          `json:"name"`
	Prefix        string          `json:"prefix"`
	Ask           string          `json:"ask"`
	Block         string          `json:"block"`
	StopContinues int             `json:"stopContinues"`
	InputSecret   string          `json:"inputSecret"`
	InputSuffix   string          `json:"inputSuffix"`
	InputCrash    bool            `json:"inputCrash"`
	NoToolCall    bool            `json:"noToolCall"`
	System        string          `json:"system"`
	Context       string          `json:"context"`
	Events        []string        `json:"events"`
	Schema        json.RawMessage `json:"schema"`
}

var (
	cfg      config
	facts    json.RawMessage
	abiMinor int
	events   []string
	stops    int
)

func ok(result any) []byte {
	b, err := json.Marshal(map[string]any{"ok": true, "result": result})
	if err != nil {
		return fail(err.Error())
	}
	return b
}

func fail(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"ok": false, "error": map[string]string{"message": msg}})
	return b
}

func text(s string) map[string]any {
	return map[string]any{"content": []map[string]string{{"type": "text", "text": s}}}
}

func handle(req []byte) []byte {
	var r struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return fail("bad request: " + err.Error())
	}
	switch r.Method {
	case "init":
		return initialize(r.Params)
	case "tool.execute":
		var p struct {
			ToolName string          `json:"toolName"`
			Input    json.RawMessage `json:"input"`
		}
		json.Unmarshal(r.Params, &p)
		switch strings.TrimPrefix(p.ToolName, cfg.Prefix) {
		case "probe":
			return ok(text(hostCall(p.Input)))
		case "seq":
			var in struct {
				Calls []json.RawMessage `json:"calls"`
			}
			json.Unmarshal(p.Input, &in)
			var out []string
			for _, c := range in.Calls {
				out = append(out, hostCall(c))
			}
			return ok(text(strings.Join(out, "\n")))
		case "crash":
			panic("crash requested")
		case "facts":
			b, _ := json.Marshal(map[string]any{"init": facts, "events": events, "stops": stops})
			return ok(text(string(b)))
		}
		return fail("no tool " + p.ToolName)
	case "hook.tool_call":
		var p struct {
			ToolName string `json:"toolName"`
		}
		json.Unmarshal(r.Params, &p)
		switch p.ToolName {
		case "":
		case cfg.Block:
			return ok(map[string]any{"block": true, "reason": "raw11 blocks " + p.ToolName})
		case cfg.Ask:
			return ok(map[string]any{"ask": "may " + p.ToolName + " run?"})
		}
		return ok(map[string]any{})
	case "hook.input":
		var p struct {
			Text string `json:"text"`
		}
		json.Unmarshal(r.Params, &p)
		if cfg.InputCrash {
			panic("input hook crashed")
		}
		if cfg.InputSecret != "" && strings.Contains(p.Text, cfg.InputSecret) {
			return ok(map[string]any{"handled": true, "message": "refused: the prompt holds a secret"})
		}
		if cfg.InputSuffix != "" {
			return ok(map[string]any{"text": p.Text + cfg.InputSuffix})
		}
		return ok(map[string]any{})
	case "hook.before_agent_start":
		res := map[string]any{}
		if cfg.System != "" {
			res["appendSystemPrompt"] = cfg.System
		}
		if cfg.Context != "" {
			res["messages"] = []any{text(cfg.Context)}
		}
		return ok(res)
	case "hook.stop":
		stops++
		if stops <= cfg.StopContinues {
			return ok(map[string]any{"continue": true, "message": fmt.Sprintf("keep going (%d)", stops)})
		}
		return ok(map[string]any{})
	case "command.execute":
		var p struct {
			Name string `json:"name"`
			Args string `json:"args"`
		}
		json.Unmarshal(r.Params, &p)
		if p.Name == cfg.Prefix+"probe" {
			method, params, _ := strings.Cut(p.Args, " ")
			return ok(map[string]any{"text": hostCall([]byte(`{"method":"` + method + `","params":` + params + `}`))})
		}
		res := map[string]any{"text": "raw: " + p.Args}
		if rest, isAsk := strings.CutPrefix(p.Args, "ask "); isAsk {
			res["prompt"] = rest
		}
		return ok(res)
	case "event":
		var p struct {
			Type    string `json:"type"`
			Message *struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		json.Unmarshal(r.Params, &p)
		ev := p.Type
		if p.Type == "message_end" && p.Message != nil {
			ev += ":" + p.Message.Role
		}
		events = append(events, ev)
		return ok(map[string]any{})
	}
	return fail("unknown method " + r.Method)
}

func initialize(params json.RawMessage) []byte {
	var p struct {
		ABIMinor int             `json:"abiMinor"`
		Config   json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return fail(err.Error())
	}
	cfg = config{Name: "raw11"}
	json.Unmarshal(p.Config, &cfg)
	facts, abiMinor = append(json.RawMessage(nil), params...), p.ABIMinor
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	res := map[string]any{
		"name": cfg.Name, "version": "1.1.0",
		"tools": []map[string]any{
			{"name": cfg.Prefix + "probe", "description": "send a host call", "parameters": map[string]any{"type": "object"}},
			{"name": cfg.Prefix + "facts", "description": "what init said", "parameters": schema},
			{"name": cfg.Prefix + "crash", "description": "traps", "parameters": map[string]any{"type": "object"}},
			{"name": cfg.Prefix + "seq", "description": "send host calls in order", "parameters": map[string]any{"type": "object"}},
		},
		"hooks": []string{"tool_call"},
	}
	if abiMinor >= 1 {
		// ABI 1.1 fields only for a host that speaks 1.1.
		res["hooks"] = []string{"tool_call", "input", "before_agent_start", "stop", "event"}
		if cfg.NoToolCall {
			res["hooks"] = []string{"input", "before_agent_start", "stop", "event"}
		}
		res["commands"] = []map[string]string{
			{"name": cfg.Prefix + "raw", "description": "echo the arguments", "argumentHint": "ARGS"},
			{"name": cfg.Prefix + "probe", "description": "send a host call"},
		}
		if cfg.Events != nil {
			res["events"] = cfg.Events
		}
		if len(cfg.Schema) > 0 {
			res["configSchema"] = cfg.Schema
		}
	}
	return ok(res)
}

func main() {}

package extensions

import (
	"encoding/json"
	"fmt"

	"github.com/pi-go/pi/runtime/tool"
)

// initRequest encodes the init request of an extension.
func initRequest(opts Options, config map[string]any, grants Grants) ([]byte, error) {
	if config == nil {
		config = map[string]any{}
	}
	return encodeRequest("init", initParams{
		ABI:    1,
		Host:   hostInfo{Name: opts.HostName, Version: opts.HostVersion},
		Cwd:    opts.Cwd,
		Config: config,
		Grants: grants,
	})
}

// executeRequest encodes a tool.execute request.
func executeRequest(name string, call tool.Call, cwd string) ([]byte, error) {
	input := call.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	return encodeRequest("tool.execute", executeParams{ToolName: name, ToolCallID: call.ID, Input: input, Cwd: cwd})
}

// toolCallRequest encodes a hook.tool_call request.
func toolCallRequest(c tool.CallInfo) ([]byte, error) {
	if len(c.Input) == 0 {
		c.Input = json.RawMessage("{}")
	}
	if c.Paths == nil {
		c.Paths = []string{} // always present: [] is "opens no paths it names"
	}
	return encodeRequest("hook.tool_call", c)
}

// toolResultRequest encodes a hook.tool_result request.
func toolResultRequest(c tool.CallInfo, r tool.Result) ([]byte, error) {
	if len(c.Input) == 0 {
		c.Input = json.RawMessage("{}")
	}
	content := r.Content
	if content == nil {
		content = []tool.ContentBlock{}
	}
	return encodeRequest("hook.tool_result", toolResultParams{
		ToolName: c.Name, ToolCallID: c.ID, Input: c.Input,
		Content: content, Details: r.Details, IsError: r.IsError,
	})
}

// spawnRequest encodes a hook.bash_spawn request.
func spawnRequest(s tool.BashSpawn) ([]byte, error) {
	return encodeRequest("hook.bash_spawn", s)
}

// eventRequest encodes an event request from ev, which must marshal to an
// object with a "type". It returns a nil request for a type that is not sent
// to extensions.
func eventRequest(ev any) (req []byte, typ string, err error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, "", fmt.Errorf("cannot marshal event: %w", err)
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Type == "" {
		return nil, "", fmt.Errorf("not an object with a type: %s", raw)
	}
	if !eventTypes[head.Type] {
		return nil, head.Type, nil
	}
	req, err = encodeRequest("event", json.RawMessage(raw))
	return req, head.Type, err
}

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// call is one tool call of a batch on its way to a result.
type call struct {
	tc   llm.ToolCall
	args json.RawMessage // event form of the model's arguments
	// valid: the model's arguments are empty or valid JSON.
	valid bool
	tool  tool.AgentTool
	// input is the prepared, validated (and maybe hook-replaced) input,
	// with the value its validation parsed.
	input  tool.Args
	result tool.Result
	// done: result is final (immediate failure or execution finished).
	done bool
}

// executeBatch runs the tool calls of one assistant message and returns
// their result messages in the assistant's order, and whether every result
// asked to terminate the run.
//
// Parallel (the default): every call is announced (tool_execution_start) and
// preflighted in order, the calls that passed then execute concurrently, and
// each emits tool_execution_end as it finishes. Sequential (Config.Sequential
// or any called tool with ExecutionMode sequential): each call is announced,
// preflighted, executed and ended before the next one starts.
func (a *Agent) executeBatch(ctx context.Context, tcs []llm.ToolCall) ([]llm.Message, bool) {
	calls := make([]*call, len(tcs))
	sequential := a.cfg.Sequential
	for i, tc := range tcs {
		c := &call{tc: tc, tool: tool.Find(a.cfg.Tools, tc.Name)}
		c.args, c.valid = argsJSON(tc.Arguments)
		if c.tool != nil && c.tool.ExecutionMode() == tool.Sequential {
			sequential = true
		}
		calls[i] = c
	}

	if sequential {
		for _, c := range calls {
			a.startCall(c)
			a.preflight(ctx, c)
			if !c.done {
				a.execute(ctx, c)
			}
			a.endCall(c)
		}
	} else {
		var wg sync.WaitGroup
		for _, c := range calls {
			a.startCall(c)
			a.preflight(ctx, c)
			if c.done {
				a.endCall(c)
				continue
			}
			wg.Go(func() {
				a.execute(ctx, c)
				a.endCall(c)
			})
		}
		wg.Wait()
	}

	out := make([]llm.Message, len(calls))
	terminate := len(calls) > 0
	for i, c := range calls {
		r := c.result
		if r.Content == nil {
			r.Content = []tool.ContentBlock{}
		}
		out[i] = llm.Message{
			Role:       llm.RoleToolResult,
			Content:    r.Content,
			ToolCallID: c.tc.ID,
			ToolName:   c.tc.Name,
			IsError:    r.IsError,
			Details:    r.Details,
		}
		terminate = terminate && r.Terminate
	}
	return out, terminate
}

func (a *Agent) startCall(c *call) {
	a.logger.Debug("tool call", "tool", c.tc.Name, "id", c.tc.ID)
	a.emit(Event{Type: EventToolExecutionStart, ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.args})
}

func (a *Agent) endCall(c *call) {
	r := c.result
	isErr := r.IsError
	a.logger.Debug("tool call done", "tool", c.tc.Name, "id", c.tc.ID, "error", isErr)
	a.emit(Event{Type: EventToolExecutionEnd, ToolCallID: c.tc.ID, ToolName: c.tc.Name, Result: &r, IsError: &isErr})
}

// preflight finds the tool, checks the argument text is JSON and runs
// tool.Preflight (prepareArguments, validation, tool_call hooks). A call
// that fails any of these, or comes after the run was cancelled, is done
// with an error result.
func (a *Agent) preflight(ctx context.Context, c *call) {
	fail := func(text string) {
		c.result = tool.ErrorResult(text)
		c.done = true
	}
	if ctx.Err() != nil {
		fail(fmt.Sprintf("Tool %s was not run: the run was aborted", c.tc.Name))
		return
	}
	if c.tool == nil {
		c.result = tool.NotFound(c.tc.Name)
		c.done = true
		return
	}
	// The model's bytes go to the tool as they are: checked here, parsed
	// once, by the tool's validation.
	raw, valid := json.RawMessage(c.tc.Arguments), c.valid
	if len(bytes.TrimSpace(raw)) == 0 {
		raw, valid = json.RawMessage("{}"), true
	}
	if !valid {
		var probe any
		err := json.Unmarshal(raw, &probe) // encoding/json's words for what is wrong
		fail(fmt.Sprintf("Invalid JSON in arguments for tool %q: %v\n\nReceived arguments:\n%s", c.tc.Name, err, c.tc.Arguments))
		return
	}
	input, blocked := tool.Preflight(ctx, c.tool, a.hooks, c.tc.ID, raw)
	if blocked != nil {
		c.result = *blocked
		c.done = true
		return
	}
	c.input = input
}

// execute runs a preflighted call; partial results become
// tool_execution_update events until the call returns.
func (a *Agent) execute(ctx context.Context, c *call) {
	if ctx.Err() != nil {
		c.result = tool.ErrorResult(fmt.Sprintf("Tool %s was not run: the run was aborted", c.tc.Name))
		c.done = true
		return
	}
	var (
		mu       sync.Mutex
		finished bool
	)
	update := func(partial tool.Result) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return // a late update from a goroutine the tool left behind
		}
		a.emit(Event{Type: EventToolExecutionUpdate, ToolCallID: c.tc.ID, ToolName: c.tc.Name, Args: c.args, PartialResult: &partial})
	}
	r := tool.Execute(ctx, c.tool, a.hooks, c.tc.ID, c.input, update)
	mu.Lock()
	finished = true
	mu.Unlock()
	c.result = r
	c.done = true
}

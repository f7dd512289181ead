package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

func TestParallelBatch(t *testing.T) {
	tl := &timeline{}
	ev := &events{}
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{
			call("sleep", `{"ms":5000,"until":2,"tag":"slow"}`),
			call("sleep", `{"ms":1,"tag":"fast"}`),
			call("sleep", `{"ms":5000,"until":1,"tag":"mid"}`),
		}},
		llm.ScriptTurn{Text: "all slept"},
	)
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, tl)), OnEvent: tl.watch(ev.on)})
	res, err := a.Run(context.Background(), "sleep three times")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all slept" || res.StopReason != llm.StopEnd || res.Turns != 2 {
		t.Fatalf("result = %q %q turns %d", res.Text, res.StopReason, res.Turns)
	}

	// Results in the assistant's order, whatever order they finished in.
	var got []string
	for _, m := range toolResults(res.Messages) {
		got = append(got, m.ToolCallID+"="+text(m))
	}
	want := []string{"call_1=slow slept 5000ms", "call_2=fast slept 1ms", "call_3=mid slept 5000ms"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool results = %q, want %q", got, want)
	}
	// The model's second request carries them in that order too.
	reqs := p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var sent []string
	for _, m := range toolResults(reqs[1].Messages) {
		sent = append(sent, m.ToolCallID+"="+text(m))
	}
	if !reflect.DeepEqual(sent, want) {
		t.Fatalf("results sent to the model = %q, want %q", sent, want)
	}

	// The executions overlapped: each ran while the slow one ran.
	spans := tl.byTag(t)
	if len(spans) != 3 {
		t.Fatalf("%d executions, want 3", len(spans))
	}
	for _, tag := range []string{"fast", "mid"} {
		if !overlaps(spans["slow"], spans[tag]) {
			t.Errorf("%s [%v, %v] did not overlap slow [%v, %v]", tag, spans[tag].start, spans[tag].end, spans["slow"].start, spans["slow"].end)
		}
	}
	// tool_execution_end events come as calls finish: fast, mid, slow.
	ends := ev.ofType(agent.EventToolExecutionEnd)
	if len(ends) != 3 || ends[0].ToolCallID != "call_2" || ends[1].ToolCallID != "call_3" || ends[2].ToolCallID != "call_1" {
		t.Fatalf("tool_execution_end order: %+v", ends)
	}
	// Starts come in the assistant's order, all before any end.
	var order []string
	for _, e := range ev.all() {
		switch e.Type {
		case agent.EventToolExecutionStart:
			order = append(order, "start:"+e.ToolCallID)
		case agent.EventToolExecutionEnd:
			order = append(order, "end")
		}
	}
	if strings.Join(order[:3], ",") != "start:call_1,start:call_2,start:call_3" {
		t.Fatalf("event order %v", order)
	}
}

func TestSequentialBatch(t *testing.T) {
	tests := []struct {
		name       string
		sequential bool
		modeB      tool.ExecutionMode
	}{
		{"config sequential", true, tool.Parallel},
		{"one sequential tool in the batch", false, tool.Sequential},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := &timeline{}
			p := script(
				llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{
					call("a", `{"ms":150,"tag":"1"}`),
					call("b", `{"ms":1,"tag":"2"}`),
					call("a", `{"ms":50,"tag":"3"}`),
				}},
				llm.ScriptTurn{Text: "ok"},
			)
			ev := &events{}
			a := agent.New(agent.Config{
				Provider:   p,
				Tools:      wrap(t, sleepTool("a", tool.Parallel, tl), sleepTool("b", tc.modeB, tl)),
				Sequential: tc.sequential,
				OnEvent:    ev.on,
			})
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			spans := tl.byTag(t)
			if len(spans) != 3 {
				t.Fatalf("%d executions", len(spans))
			}
			for _, pair := range [][2]string{{"1", "2"}, {"2", "3"}} {
				x, y := spans[pair[0]], spans[pair[1]]
				if overlaps(x, y) || !x.end.Before(y.start) && !x.end.Equal(y.start) {
					t.Errorf("call %s [%v, %v] and call %s [%v, %v] overlap or ran out of order", pair[0], x.start, x.end, pair[1], y.start, y.end)
				}
			}
			// Each call's start and end events come before the next start.
			var order []string
			for _, e := range ev.all() {
				switch e.Type {
				case agent.EventToolExecutionStart, agent.EventToolExecutionEnd:
					order = append(order, string(e.Type)+":"+e.ToolCallID)
				}
			}
			want := []string{
				"tool_execution_start:call_1", "tool_execution_end:call_1",
				"tool_execution_start:call_2", "tool_execution_end:call_2",
				"tool_execution_start:call_3", "tool_execution_end:call_3",
			}
			if !reflect.DeepEqual(order, want) {
				t.Fatalf("events %v, want %v", order, want)
			}
			if n := len(toolResults(res.Messages)); n != 3 {
				t.Fatalf("%d results", n)
			}
		})
	}
}

func TestPreflightFailures(t *testing.T) {
	tests := []struct {
		name string
		call llm.ScriptToolCall
		want []string // substrings of the error result
	}{
		{"unknown tool", call("nope", `{}`), []string{"Tool nope not found"}},
		{"invalid JSON", rawCall("sleep", `{"ms": 5,`), []string{`Invalid JSON in arguments for tool "sleep"`, "unexpected end of JSON input", `{"ms": 5,`}},
		{"not an object", rawCall("sleep", `[1,2]`), []string{`Validation failed for tool "sleep":`}},
		{"missing field", call("sleep", `{"tag":"x"}`), []string{`Validation failed for tool "sleep":`, "  - ms: must have required property 'ms'"}},
		{"wrong type", call("sleep", `{"ms":"soon"}`), []string{`Validation failed for tool "sleep":`, "  - ms: must be integer (got string)", "Received arguments:"}},
		{"unknown property", call("sleep", `{"ms":1,"extra":true}`), []string{"  - extra: is not an allowed property"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := &timeline{}
			ev := &events{}
			p := script(
				llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{tc.call, call("sleep", `{"ms":1,"tag":"good"}`)}},
				llm.ScriptTurn{Text: "ok"},
			)
			a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, tl)), OnEvent: ev.on})
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			rs := toolResults(res.Messages)
			if len(rs) != 2 {
				t.Fatalf("%d results, want 2", len(rs))
			}
			if !rs[0].IsError {
				t.Fatalf("first result is not an error: %q", text(rs[0]))
			}
			for _, w := range tc.want {
				if !strings.Contains(text(rs[0]), w) {
					t.Errorf("result %q lacks %q", text(rs[0]), w)
				}
			}
			// The good call of the same batch still ran; the bad one did not.
			if rs[1].IsError || text(rs[1]) != "good slept 1ms" {
				t.Fatalf("second result = %q (error %v)", text(rs[1]), rs[1].IsError)
			}
			if n := tl.len(); n != 1 {
				t.Fatalf("%d executions, want 1", n)
			}
			ends := ev.ofType(agent.EventToolExecutionEnd)
			if len(ends) != 2 || !ends[0].Failed() || ends[0].ToolCallID != "call_1" {
				t.Fatalf("tool_execution_end events: %+v", ends)
			}
		})
	}
}

func TestHooks(t *testing.T) {
	hookErr := errors.New("wasm trap")
	tests := []struct {
		name      string
		hooks     tool.Hooks
		wantText  string
		wantError bool
		wantRuns  int
		wantInput string // the input the tool saw, when it ran
	}{
		{
			name: "block with reason",
			hooks: tool.Hooks{ToolCall: []tool.ToolCallHook{{Name: "guard", Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
				return tool.ToolCallDecision{Block: true, Reason: "sleeping is not allowed here"}, nil
			}}}},
			wantText: "sleeping is not allowed here", wantError: true,
		},
		{
			name: "block without reason",
			hooks: tool.Hooks{ToolCall: []tool.ToolCallHook{{Name: "guard", Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
				return tool.ToolCallDecision{Block: true}, nil
			}}}},
			wantText: "Tool execution was blocked", wantError: true,
		},
		{
			name: "first block wins",
			hooks: tool.Hooks{ToolCall: []tool.ToolCallHook{
				{Name: "first", Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
					return tool.ToolCallDecision{Block: true, Reason: "first says no"}, nil
				}},
				{Name: "second", Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
					return tool.ToolCallDecision{Block: true, Reason: "second says no"}, nil
				}},
			}},
			wantText: "first says no", wantError: true,
		},
		{
			name: "failing hook fails closed",
			hooks: tool.Hooks{ToolCall: []tool.ToolCallHook{{Name: "extension guard", Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
				return tool.ToolCallDecision{}, hookErr
			}}}},
			wantText: "Tool execution was blocked: extension guard failed: wasm trap", wantError: true,
		},
		{
			name: "replaced input",
			hooks: tool.Hooks{ToolCall: []tool.ToolCallHook{{Name: "shorten", Func: func(_ context.Context, c tool.CallInfo) (tool.ToolCallDecision, error) {
				return tool.ToolCallDecision{Input: json.RawMessage(`{"ms":2,"tag":"hooked"}`)}, nil
			}}}},
			wantText: "hooked slept 2ms", wantRuns: 1, wantInput: `{"ms":2,"tag":"hooked"}`,
		},
		{
			name: "replaced input is validated again",
			hooks: tool.Hooks{ToolCall: []tool.ToolCallHook{{Name: "extension broken", Func: func(context.Context, tool.CallInfo) (tool.ToolCallDecision, error) {
				return tool.ToolCallDecision{Input: json.RawMessage(`{"ms":"later"}`)}, nil
			}}}},
			wantText: `Validation failed for tool "sleep":`, wantError: true,
		},
		{
			name: "result patches chain",
			hooks: tool.Hooks{ToolResult: []tool.ToolResultHook{
				{Name: "upper", Func: func(_ context.Context, _ tool.CallInfo, r tool.Result) (tool.ResultPatch, error) {
					return tool.ResultPatch{Content: []tool.ContentBlock{tool.Text(strings.ToUpper(r.Text()))}}, nil
				}},
				{Name: "broken", Func: func(context.Context, tool.CallInfo, tool.Result) (tool.ResultPatch, error) {
					return tool.ResultPatch{}, hookErr
				}},
				{Name: "suffix", Func: func(_ context.Context, _ tool.CallInfo, r tool.Result) (tool.ResultPatch, error) {
					yes := true
					return tool.ResultPatch{Content: []tool.ContentBlock{tool.Text(r.Text() + " (flagged)")}, IsError: &yes}, nil
				}},
			}},
			wantText: "ORIG SLEPT 1MS (flagged)", wantError: true, wantRuns: 1, wantInput: `{"ms":1,"tag":"orig"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := &timeline{}
			p := script(
				llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1,"tag":"orig"}`)}},
				llm.ScriptTurn{Text: "ok"},
			)
			hooks := tc.hooks
			a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, tl)), Hooks: &hooks})
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			rs := toolResults(res.Messages)
			if len(rs) != 1 {
				t.Fatalf("%d results", len(rs))
			}
			if !strings.Contains(text(rs[0]), tc.wantText) || rs[0].IsError != tc.wantError {
				t.Fatalf("result %q (error %v), want %q (error %v)", text(rs[0]), rs[0].IsError, tc.wantText, tc.wantError)
			}
			if n := tl.len(); n != tc.wantRuns {
				t.Fatalf("tool ran %d times, want %d", n, tc.wantRuns)
			}
			if tc.wantRuns > 0 {
				if got := string(tl.byTag(t)[tagOf(t, tc.wantInput)].input); got != tc.wantInput {
					t.Fatalf("tool saw input %s, want %s", got, tc.wantInput)
				}
			}
		})
	}
}

func tagOf(t *testing.T, input string) string {
	t.Helper()
	var in struct{ Tag string }
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		t.Fatal(err)
	}
	return in.Tag
}

func TestTerminate(t *testing.T) {
	tests := []struct {
		name     string
		calls    []llm.ScriptToolCall
		wantStop llm.StopReason
		wantLeft int // script turns not played
	}{
		{"every result terminates", []llm.ScriptToolCall{
			call("sleep", `{"ms":1,"tag":"a","terminate":true}`),
			call("sleep", `{"ms":1,"tag":"b","terminate":true}`),
		}, llm.StopToolUse, 1},
		{"one result does not", []llm.ScriptToolCall{
			call("sleep", `{"ms":1,"tag":"a","terminate":true}`),
			call("sleep", `{"ms":1,"tag":"b"}`),
		}, llm.StopEnd, 0},
		{"a failed call does not", []llm.ScriptToolCall{
			call("sleep", `{"ms":1,"tag":"a","terminate":true}`),
			call("nope", `{}`),
		}, llm.StopEnd, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := script(llm.ScriptTurn{ToolCalls: tc.calls}, llm.ScriptTurn{Text: "after"})
			a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{}))})
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != tc.wantStop || p.Remaining() != tc.wantLeft {
				t.Fatalf("stop %q with %d turns left, want %q with %d", res.StopReason, p.Remaining(), tc.wantStop, tc.wantLeft)
			}
			if n := len(toolResults(res.Messages)); n != len(tc.calls) {
				t.Fatalf("%d results, want %d", n, len(tc.calls))
			}
		})
	}
}

func TestMaxTurns(t *testing.T) {
	loop := llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1}`)}}
	p := script(loop, loop, loop, llm.ScriptTurn{Text: "never"})
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{})), MaxTurns: 2})
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopMaxTurns || res.Turns != 2 || p.Remaining() != 2 {
		t.Fatalf("stop %q after %d turns, %d left", res.StopReason, res.Turns, p.Remaining())
	}
}

func TestProviderError(t *testing.T) {
	ev := &events{}
	p := script(
		llm.ScriptTurn{Text: "let me look", ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1,"tag":"x"}`)}, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}},
		llm.ScriptTurn{Error: "upstream 502 bad gateway"},
		llm.ScriptTurn{Text: "recovered"},
	)
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{})), OnEvent: ev.on})
	res, err := a.Run(context.Background(), "go")
	if err == nil || !strings.Contains(err.Error(), "upstream 502 bad gateway") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.StopReason != llm.StopError || res.Usage.TotalTokens != 15 {
		t.Fatalf("result = %+v", res)
	}
	// The messages so far are kept: user, assistant with the call, its result.
	msgs := a.Messages()
	var roles []llm.Role
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if want := []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	if !reflect.DeepEqual(res.Messages, msgs) {
		t.Fatal("result messages differ from the agent's")
	}
	all := ev.all()
	last := all[len(all)-1]
	if last.Type != agent.EventAgentEnd || !strings.Contains(last.Error, "upstream 502") || last.StopReason != llm.StopError {
		t.Fatalf("last event %+v", last)
	}

	// The conversation can go on after the failure, from what was kept.
	res, err = a.Prompt(context.Background(), "try again")
	if err != nil || res.Text != "recovered" {
		t.Fatalf("after the failure: %v, %+v", err, res)
	}
	if reqs := p.Requests(); len(reqs[2].Messages) != 4 {
		t.Fatalf("continued request has %d messages, want 4", len(reqs[2].Messages))
	}
}

func TestEventOrderTwoTurns(t *testing.T) {
	ev := &events{}
	p := script(
		llm.ScriptTurn{Text: "reading", ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1,"tag":"x"}`)}},
		llm.ScriptTurn{Text: "done"},
	)
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{})), OnEvent: ev.on})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	// Collapse runs of message_update into one entry; their count depends
	// on how the provider chunks the stream.
	var got []string
	for _, e := range ev.all() {
		s := string(e.Type)
		if e.Message != nil {
			s += "(" + string(e.Message.Role) + ")"
		}
		if len(got) > 0 && s == "message_update" && got[len(got)-1] == "message_update*" {
			continue
		}
		if s == "message_update" {
			s = "message_update*"
		}
		got = append(got, s)
	}
	want := []string{
		"agent_start",
		"turn_start",
		"message_start(user)", "message_end(user)",
		"message_start(assistant)", "message_update*", "message_end(assistant)",
		"tool_execution_start", "tool_execution_update", "tool_execution_end",
		"message_start(toolResult)", "message_end(toolResult)",
		"turn_end(assistant)",
		"turn_start",
		"message_start(assistant)", "message_update*", "message_end(assistant)",
		"turn_end(assistant)",
		"agent_end",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	// The deltas add up to the assistant's text.
	var streamed string
	for _, e := range ev.ofType(agent.EventMessageUpdate) {
		if e.AssistantMessageEvent.Type == llm.EventTextDelta {
			streamed += e.AssistantMessageEvent.Delta
		}
	}
	if streamed != "readingdone" {
		t.Fatalf("streamed text %q", streamed)
	}
	turnEnds := ev.ofType(agent.EventTurnEnd)
	if len(turnEnds[0].ToolResults) != 1 || turnEnds[0].Turn != 1 || turnEnds[1].Turn != 2 {
		t.Fatalf("turn_end events %+v", turnEnds)
	}
	if end := ev.ofType(agent.EventAgentEnd)[0]; len(end.Messages) != 4 || end.StopReason != llm.StopEnd {
		t.Fatalf("agent_end %+v", end)
	}
}

func TestEventJSON(t *testing.T) {
	ev := &events{}
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1,"tag":"x"}`), rawCall("sleep", `{bad`)}},
		llm.ScriptTurn{Text: "done"},
	)
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{})), OnEvent: ev.on})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	// Which keys each type carries on the wire (besides "type").
	for _, e := range ev.all() {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		need := map[agent.EventType][]string{
			agent.EventTurnStart:           {"turn"},
			agent.EventMessageStart:        {"message"},
			agent.EventMessageUpdate:       {"assistantMessageEvent"},
			agent.EventMessageEnd:          {"message"},
			agent.EventToolExecutionStart:  {"toolCallId", "toolName", "args"},
			agent.EventToolExecutionUpdate: {"toolCallId", "toolName", "partialResult"},
			agent.EventToolExecutionEnd:    {"toolCallId", "toolName", "result", "isError"},
			agent.EventTurnEnd:             {"turn", "message"},
			agent.EventAgentEnd:            {"messages", "usage", "stopReason"},
		}[e.Type]
		for _, k := range need {
			if _, ok := m[k]; !ok {
				t.Errorf("%s line lacks %q: %s", e.Type, k, line)
			}
		}
		if e.Type != agent.EventToolExecutionEnd {
			if _, ok := m["isError"]; ok {
				t.Errorf("%s line has isError: %s", e.Type, line)
			}
		}
	}
	starts := ev.ofType(agent.EventToolExecutionStart)
	if string(starts[0].Args) != `{"ms":1,"tag":"x"}` {
		t.Errorf("args of a valid call: %s", starts[0].Args)
	}
	// Invalid argument text is carried as a JSON string, so the line stays JSON.
	if string(starts[1].Args) != `"{bad"` {
		t.Errorf("args of an invalid call: %s", starts[1].Args)
	}
	var okEnd agent.Event
	for _, e := range ev.ofType(agent.EventToolExecutionEnd) {
		if e.ToolCallID == "call_1" {
			okEnd = e
		}
	}
	line, _ := json.Marshal(okEnd)
	if !strings.Contains(string(line), `"isError":false`) {
		t.Errorf("successful tool_execution_end lacks isError:false: %s", line)
	}
}

func TestPromptContinuesRunResets(t *testing.T) {
	p := script(
		llm.ScriptTurn{Text: "first answer"},
		llm.ScriptTurn{Text: "second answer"},
		llm.ScriptTurn{Text: "fresh answer"},
	)
	a := agent.New(agent.Config{Provider: p, SystemPrompt: "be brief"})
	ctx := context.Background()
	if _, err := a.Run(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	res, err := a.Prompt(ctx, "two")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "second answer" || len(res.Messages) != 4 || len(a.Messages()) != 4 {
		t.Fatalf("after Prompt: %q, %d messages", res.Text, len(res.Messages))
	}
	if _, err := a.Run(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	var lens []int
	for _, r := range reqs {
		lens = append(lens, len(r.Messages))
		if r.SystemPrompt != "be brief" {
			t.Fatalf("system prompt %q", r.SystemPrompt)
		}
	}
	if !reflect.DeepEqual(lens, []int{1, 3, 1}) {
		t.Fatalf("request message counts %v, want [1 3 1]", lens)
	}
	if got := text(reqs[1].Messages[2]); got != "two" {
		t.Fatalf("continued request ends with %q", got)
	}
}

func TestToolSpecsSent(t *testing.T) {
	p := script(llm.ScriptTurn{Text: "hi"})
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{}), sleepTool("nap", tool.Sequential, &timeline{}))})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	specs := p.Requests()[0].Tools
	if len(specs) != 2 || specs[0].Name != "sleep" || specs[1].Name != "nap" || specs[0].Description != "Sleeps for ms milliseconds." {
		t.Fatalf("specs %+v", specs)
	}
	var schema map[string]any
	if err := json.Unmarshal(specs[0].Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("parameters %s: %v", specs[0].Parameters, err)
	}
}

func TestNoProvider(t *testing.T) {
	_, err := agent.New(agent.Config{}).Run(context.Background(), "go")
	if err == nil || !strings.Contains(err.Error(), "no provider") {
		t.Fatalf("err = %v", err)
	}
}

// TestLateUpdateDropped: a tool that sends a progress update after it
// returned (from a goroutine it left running) does not produce an event
// after its tool_execution_end.
func TestLateUpdateDropped(t *testing.T) {
	sent := make(chan struct{})
	ended := make(chan struct{})
	late := tool.ToolDefinition{
		Name:       "late",
		Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(_ context.Context, c tool.Call, _ tool.Context) (tool.Result, error) {
			c.Update(tool.TextResult("early"))
			go func() {
				defer close(sent)
				<-ended
				c.Update(tool.TextResult("late"))
			}()
			return tool.TextResult("returned"), nil
		},
	}
	ev := &events{}
	p := script(llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("late", `{}`)}}, llm.ScriptTurn{Text: "ok"})
	a := agent.New(agent.Config{Provider: p, Tools: wrap(t, late), OnEvent: func(e agent.Event) {
		ev.on(e)
		if e.Type == agent.EventToolExecutionEnd {
			close(ended)
		}
	}})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	<-sent
	var updates []string
	for _, e := range ev.ofType(agent.EventToolExecutionUpdate) {
		updates = append(updates, e.PartialResult.Text())
	}
	if !reflect.DeepEqual(updates, []string{"early"}) {
		t.Fatalf("updates %q, want only the early one", updates)
	}
}

// TestFailedResultHookLogged: a failing tool_result hook leaves the result
// as it was and is logged with its name, unless the caller handles such
// failures itself.
func TestFailedResultHookLogged(t *testing.T) {
	var logBuf strings.Builder
	var told []string
	broken := tool.ToolResultHook{Name: "extension redact", Func: func(context.Context, tool.CallInfo, tool.Result) (tool.ResultPatch, error) {
		return tool.ResultPatch{}, errors.New("guest trapped")
	}}
	for _, own := range []bool{false, true} {
		hooks := &tool.Hooks{ToolResult: []tool.ToolResultHook{broken}}
		if own {
			hooks.OnHookError = func(hook string, err error) { told = append(told, hook+": "+err.Error()) }
		}
		p := script(llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{call("sleep", `{"ms":1,"tag":"x"}`)}}, llm.ScriptTurn{Text: "ok"})
		logger := hclog.New(&hclog.LoggerOptions{Output: &logBuf, Level: hclog.Warn})
		a := agent.New(agent.Config{Provider: p, Tools: wrap(t, sleepTool("sleep", tool.Parallel, &timeline{})), Hooks: hooks, Logger: logger})
		res, err := a.Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if rs := toolResults(res.Messages); rs[0].IsError || text(rs[0]) != "x slept 1ms" {
			t.Fatalf("result changed by a failed hook: %q", text(rs[0]))
		}
	}
	if n := strings.Count(logBuf.String(), "extension redact"); n != 1 || !strings.Contains(logBuf.String(), "guest trapped") {
		t.Fatalf("log (want the failure once, from the run without OnHookError):\n%s", logBuf.String())
	}
	if !reflect.DeepEqual(told, []string{"extension redact: guest trapped"}) {
		t.Fatalf("OnHookError told %q", told)
	}
}

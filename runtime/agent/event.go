package agent

import (
	"encoding/json"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// EventType names an Event.
type EventType string

// The event types, in the order a run emits them.
const (
	EventAgentStart          EventType = "agent_start"
	EventTurnStart           EventType = "turn_start"
	EventMessageStart        EventType = "message_start"
	EventMessageUpdate       EventType = "message_update"
	EventMessageEnd          EventType = "message_end"
	EventToolExecutionStart  EventType = "tool_execution_start"
	EventToolExecutionUpdate EventType = "tool_execution_update"
	EventToolExecutionEnd    EventType = "tool_execution_end"
	EventTurnEnd             EventType = "turn_end"
	EventAgentEnd            EventType = "agent_end"

	// Emitted around a compaction (after agent_end; see Compaction).
	EventCompactionStart EventType = "compaction_start"
	EventCompactionEnd   EventType = "compaction_end"
	// Emitted by the runtime (runtime/app) when a session is attached and
	// when it is closed.
	EventSessionStart    EventType = "session_start"
	EventSessionShutdown EventType = "session_shutdown"
	// Emitted when the steering or follow-up queue changes (Agent.Steer,
	// Agent.FollowUp, a delivery, Agent.ClearQueues).
	EventQueueUpdate EventType = "queue_update"
	// Emitted by runtime/conversation for each event of a sub-agent (a
	// child conversation the task tool runs; docs/agents.md).
	EventSubagent EventType = "subagent_event"
)

// SubagentInfo names the child conversation a subagent_event comes from.
type SubagentInfo struct {
	// ID is the child's session id; Agent the definition's name.
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// ToolCallID is the parent's task call that runs the child.
	ToolCallID string `json:"toolCallId"`
	// Depth is 1 for a child of the top conversation, 2 for its child...
	Depth int `json:"depth"`
}

// Event is one step of a run, as the loop reports it to Config.OnEvent.
// json.Marshal(Event) is one line of the `--mode json` stream; fields that do
// not belong to an event's type are left out.
//
// Which fields each type carries:
//
//   - agent_start: none.
//   - turn_start: Turn.
//   - message_start, message_end: Message (the user prompt, the assistant
//     message, or a tool result message); message_end of an assistant
//     message also carries Usage and StopReason.
//   - message_update: AssistantMessageEvent (the streaming delta).
//   - tool_execution_start: ToolCallID, ToolName, Args.
//   - tool_execution_update: ToolCallID, ToolName, Args, PartialResult.
//   - tool_execution_end: ToolCallID, ToolName, Result, IsError.
//   - turn_end: Turn, Message (the assistant message, absent when the model
//     failed before answering), ToolResults.
//   - agent_end: Messages (those this run added), Usage, StopReason, and
//     Error when the run failed.
//   - compaction_start: Reason ("threshold", "overflow" or "manual").
//   - compaction_end: Reason, Compaction (written as "result"; absent when
//     the compaction failed or was not done), Aborted, WillRetry (the run
//     is retried after an overflow), ErrorMessage when it failed.
//   - session_start: SessionID, SessionFile ("" for --no-session),
//     Resumed. session_shutdown: SessionID, SessionFile.
//   - queue_update: Steering and FollowUp, the texts of the queued
//     messages (both always written, [] when empty).
//   - subagent_event: Subagent (which child) and Event (the child's own
//     event, itself a subagent_event for a grandchild's).
type Event struct {
	Type EventType `json:"type"`
	// Turn counts the model calls of the run from 1.
	Turn int `json:"turn,omitempty"`

	Message               *llm.Message     `json:"message,omitempty"`
	AssistantMessageEvent *llm.StreamEvent `json:"assistantMessageEvent,omitempty"`
	ToolResults           []llm.Message    `json:"toolResults,omitempty"`
	Messages              []llm.Message    `json:"messages,omitempty"`

	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// Args are the arguments as the model sent them: their JSON when they
	// are valid JSON, else a JSON string holding the raw text.
	Args          json.RawMessage `json:"args,omitempty"`
	PartialResult *tool.Result    `json:"partialResult,omitempty"`
	Result        *tool.Result    `json:"result,omitempty"`
	// IsError is set on tool_execution_end only (a pointer so that a false
	// value is still written there).
	IsError *bool `json:"isError,omitempty"`

	Usage      *llm.Usage     `json:"usage,omitempty"`
	StopReason llm.StopReason `json:"stopReason,omitempty"`
	Error      string         `json:"error,omitempty"`

	// Reason says why a compaction ran.
	Reason CompactReason `json:"reason,omitempty"`
	// Compaction is a finished compaction (compaction_end); it is written
	// as "result", as the reference names it.
	Compaction *CompactionResult `json:"-"`
	// Aborted and WillRetry are set on compaction_end only.
	Aborted   *bool `json:"aborted,omitempty"`
	WillRetry *bool `json:"willRetry,omitempty"`
	// ErrorMessage says why a compaction failed.
	ErrorMessage string `json:"errorMessage,omitempty"`

	SessionID   string `json:"sessionId,omitempty"`
	SessionFile string `json:"sessionFile,omitempty"`
	Resumed     *bool  `json:"resumed,omitempty"`

	// Steering and FollowUp are the queued messages' texts (queue_update).
	Steering []string `json:"steering,omitempty"`
	FollowUp []string `json:"followUp,omitempty"`

	// Subagent and Event are set on subagent_event only.
	Subagent *SubagentInfo `json:"subagent,omitempty"`
	Event    *Event        `json:"event,omitempty"`
}

// MarshalJSON writes the event; compaction_end carries its Compaction as
// "result" (the field tool_execution_end uses for the tool's result).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	if e.Type == EventQueueUpdate {
		return json.Marshal(struct {
			Type     EventType `json:"type"`
			Steering []string  `json:"steering"`
			FollowUp []string  `json:"followUp"`
		}{e.Type, nonNilStrings(e.Steering), nonNilStrings(e.FollowUp)})
	}
	if e.Type != EventCompactionEnd {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		Result *CompactionResult `json:"result,omitempty"`
	}{plain(e), e.Compaction})
}

// Failed reports whether a tool_execution_end event's result is an error.
func (e Event) Failed() bool { return e.IsError != nil && *e.IsError }

// argsJSON returns the model's argument text as JSON for events: itself
// (the same bytes, not a copy) when it is valid JSON, {} when empty, else a
// JSON string of the raw text; valid says which.
func argsJSON(raw llm.RawArguments) (_ json.RawMessage, valid bool) {
	if len(raw) == 0 {
		return json.RawMessage("{}"), true
	}
	if json.Valid(raw) {
		return json.RawMessage(raw), true
	}
	b, _ := json.Marshal(raw.String())
	return b, false
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

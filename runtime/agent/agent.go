package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
)

// StopMaxTurns is the RunResult.StopReason of a run that reached
// Config.MaxTurns while the model was still calling tools.
const StopMaxTurns llm.StopReason = "maxTurns"

// ErrBusy is returned by Run and Prompt while another run of the same Agent
// is in progress.
var ErrBusy = errors.New("agent is already running")

// Config configures an Agent. It is read once, by New.
type Config struct {
	// Provider streams the model's turns. Required.
	Provider llm.Provider
	// Thinking, when set, is read before each model call: the request's
	// thinking level (it may change between turns).
	Thinking func() llm.ThinkingLevel
	// Price, when set, prices each response's usage (Usage.Cost) that the
	// provider left unpriced.
	Price func(llm.Usage) llm.Cost
	// Tools are the active tools, in the order the model is told of them.
	Tools []tool.AgentTool
	// Hooks run around every tool call (tool_call before, tool_result
	// after); nil means none.
	Hooks *tool.Hooks
	// SystemPrompt is sent with every model turn (see BuildSystemPrompt).
	SystemPrompt string
	// Sequential runs the tool calls of one assistant message one after the
	// other (pi.toml tool_execution = "sequential"). Without it they run
	// concurrently unless one of the called tools is sequential.
	Sequential bool
	// Logger receives debug lines about turns and tool calls, and warnings
	// about failed tool_result hooks; nil means no logging.
	Logger hclog.Logger
	// OnEvent receives every Event of a run, one at a time (calls never
	// overlap, even while tools run concurrently). It may be nil. It runs on
	// the loop's goroutines, so it should not block for long.
	OnEvent func(Event)
	// MaxTurns bounds the model calls of one run; 0 means unlimited.
	MaxTurns int
	// Messages is the conversation to continue (a resumed session); Prompt
	// goes on from it.
	Messages []llm.Message
	// Compaction, when its Compactor is set, compacts the conversation on
	// Agent.Compact and, with Auto, after a run whose context passed the
	// threshold and after a context-overflow error (then the run is
	// retried once).
	Compaction Compaction
	// OnReset is called when Run drops an earlier conversation, before
	// the new one starts (a session starts a new branch).
	OnReset func()
	// Refresh, when set, is asked before every model turn whether the
	// tools changed (an MCP server's tools/list_changed, a server that
	// died); a non-nil answer replaces the tools and the system prompt from
	// that turn on.
	Refresh func() *ToolSet

	// BeforeStart and Stop are the prompt hooks (hooks.go); nil means
	// none. OnStopCapped is told when Stop kept a run going
	// MaxStopContinues times and the run ends anyway.
	BeforeStart  BeforeStartFunc
	Stop         StopFunc
	OnStopCapped func()

	// Context, when set, may replace the messages of each model request
	// (the extensions' context hooks, ABI 1.2); the conversation keeps its
	// own. It runs before every provider call.
	Context func(ctx context.Context, msgs []llm.Message) []llm.Message

	// OnDropPrompts is called after a run that failed at the provider
	// removed the last n user messages from the conversation because the
	// model never answered them (so the next request does not carry two
	// user messages in a row); a session moves back to before them.
	OnDropPrompts func(n int)
}

// ToolSet is what Config.Refresh answers: the active tools and the system
// prompt that lists them.
type ToolSet struct {
	Tools        []tool.AgentTool
	SystemPrompt string
}

// RunResult is what a run produced.
type RunResult struct {
	// Text is the text of the last assistant message.
	Text string
	// Messages is the whole conversation after the run (the earlier turns
	// of a continued conversation included).
	Messages []llm.Message
	// Usage sums the token usage of the run's model calls.
	Usage llm.Usage
	// StopReason says why the run ended: the model's own reason of its last
	// message (llm.StopEnd, llm.StopLength, or llm.StopToolUse when every
	// tool of the last batch asked to terminate), llm.StopAborted when ctx
	// was cancelled, llm.StopError when the provider failed, or StopMaxTurns.
	StopReason llm.StopReason
	// Turns counts the model calls of the run.
	Turns int
}

// Agent runs a conversation with a model and its tools. Runs of one Agent
// are serialized; Messages may be called at any time.
type Agent struct {
	cfg    Config
	hooks  *tool.Hooks
	specs  []llm.ToolSpec
	logger hclog.Logger

	mu        sync.Mutex // guards messages, running and runSystem
	messages  []llm.Message
	running   bool
	runSystem string // the system prompt of the current run (BeforeStart's)
	// lastUsage is the usage of the latest model response (for the
	// compaction threshold); zero after a compaction.
	lastUsage llm.Usage
	// steering and followUp are the queued user messages (queue.go).
	steering, followUp         []llm.Message
	steeringMode, followUpMode QueueMode

	emitMu sync.Mutex // serializes OnEvent calls
}

// New returns an Agent whose conversation is Config.Messages (empty when
// not set).
func New(cfg Config) *Agent {
	a := &Agent{cfg: cfg, logger: cfg.Logger}
	if a.logger == nil {
		a.logger = hclog.NewNullLogger()
	}
	a.setTools(cfg.Tools)
	a.messages = append([]llm.Message(nil), cfg.Messages...)
	if cfg.Hooks != nil {
		h := *cfg.Hooks
		if h.OnHookError == nil {
			logger := a.logger
			h.OnHookError = func(hook string, err error) {
				logger.Warn("tool_result hook failed; result unchanged", "hook", hook, "error", err)
			}
		}
		a.hooks = &h
	}
	return a
}

// setTools sets the tools and the specs the model is told of.
func (a *Agent) setTools(tools []tool.AgentTool) {
	a.cfg.Tools = append([]tool.AgentTool(nil), tools...)
	a.specs = nil
	for _, t := range a.cfg.Tools {
		a.specs = append(a.specs, llm.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()})
	}
}

// refresh asks Config.Refresh for new tools before a turn. It runs on the
// loop's goroutine between turns, when no tool runs.
func (a *Agent) refresh() {
	if a.cfg.Refresh == nil {
		return
	}
	ts := a.cfg.Refresh()
	if ts == nil {
		return
	}
	a.mu.Lock()
	base := a.cfg.SystemPrompt
	a.setTools(ts.Tools)
	a.cfg.SystemPrompt = ts.SystemPrompt
	// The run's system prompt is the base one as a before_agent_start hook
	// left it: a hook that extended the base keeps its addition on the new
	// base; one that replaced it keeps its own.
	if rest, ok := strings.CutPrefix(a.runSystem, base); ok {
		a.runSystem = ts.SystemPrompt + rest
	}
	a.mu.Unlock()
	a.logger.Debug("tools changed", "tools", len(ts.Tools))
}

// Run starts a new conversation with prompt (dropping any earlier one) and
// runs it until the model stops calling tools.
//
// A cancelled ctx is not an error: the model stream and the running tools are
// cancelled, every tool call that was asked for still gets a result message,
// and the result has StopReason llm.StopAborted.
//
// # Errors
//
// Run fails with ErrBusy while another run is in progress, when the Agent has
// no provider, and when the provider fails (after agent_end is emitted; the
// result, returned too, then holds the messages so far, which the Agent
// keeps).
func (a *Agent) Run(ctx context.Context, prompt string) (*RunResult, error) {
	u := UserMessage(prompt)
	return a.run(ctx, &u, true)
}

// Prompt continues the conversation with a new user message, as Run does
// for a new one.
//
// # Errors
//
// As Run.
func (a *Agent) Prompt(ctx context.Context, prompt string) (*RunResult, error) {
	u := UserMessage(prompt)
	return a.run(ctx, &u, false)
}

// SetMessages replaces the conversation (a resumed or compacted one).
//
// # Errors
//
// ErrBusy while a run is in progress.
func (a *Agent) SetMessages(msgs []llm.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running {
		return fmt.Errorf("agent set messages: %w", ErrBusy)
	}
	a.messages = append([]llm.Message(nil), msgs...)
	a.lastUsage = llm.Usage{}
	return nil
}

// Messages returns a copy of the conversation so far.
func (a *Agent) Messages() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]llm.Message(nil), a.messages...)
}

func (a *Agent) run(ctx context.Context, user *llm.Message, reset bool) (*RunResult, error) {
	if a.cfg.Provider == nil {
		return nil, errors.New("agent run: no provider configured")
	}
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return nil, fmt.Errorf("agent run: %w", ErrBusy)
	}
	a.running = true
	dropped := reset && len(a.messages) > 0
	if reset {
		a.messages = nil
	}
	start := len(a.messages)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.running = false
		a.mu.Unlock()
	}()
	if dropped && a.cfg.OnReset != nil {
		a.cfg.OnReset()
	}

	res := &RunResult{}
	err := a.runOnce(ctx, user, res)
	switch {
	case err != nil && a.cfg.Compaction.Compactor != nil && a.cfg.Compaction.Settings.Enabled && ctx.Err() == nil && llm.IsContextOverflow(err):
		err = a.recoverOverflow(ctx, err, res)
	case err == nil:
		a.autoCompact(ctx, res)
	default:
		a.dropUnanswered(start)
	}
	a.mu.Lock()
	res.Messages = append([]llm.Message(nil), a.messages...)
	a.mu.Unlock()
	return res, err
}

// runOnce runs the loop once (agent_start to agent_end), from user, or
// from the conversation as it is when user is nil (a retry), adding to res.
func (a *Agent) runOnce(ctx context.Context, user *llm.Message, res *RunResult) error {
	a.mu.Lock()
	start := len(a.messages)
	a.mu.Unlock()
	err := a.loop(ctx, user, res)
	a.mu.Lock()
	added := append([]llm.Message(nil), a.messages[min(start, len(a.messages)):]...)
	a.mu.Unlock()
	usage := res.Usage
	end := Event{Type: EventAgentEnd, Messages: added, Usage: &usage, StopReason: res.StopReason}
	if err != nil {
		end.Error = err.Error()
	}
	a.emit(end)
	return err
}

// loop runs the turns of one run, filling res. user, when not nil, is the
// new prompt; without it the model answers the conversation as it is.
func (a *Agent) loop(ctx context.Context, user *llm.Message, res *RunResult) error {
	a.emit(Event{Type: EventAgentStart})
	if user != nil {
		a.beforeStart(ctx, messageText(*user))
		a.appendMessages(*user)
	}
	continues := 0
	first := res.Turns
	var queued []llm.Message // steering or follow-up messages to deliver
	for turn := first + 1; ; turn++ {
		res.Turns = turn
		a.emit(Event{Type: EventTurnStart, Turn: turn})
		if turn == first+1 && user != nil {
			a.emit(Event{Type: EventMessageStart, Message: user})
			a.emit(Event{Type: EventMessageEnd, Message: user})
		}
		for i := range queued {
			a.appendMessages(queued[i])
			a.emit(Event{Type: EventMessageStart, Message: &queued[i]})
			a.emit(Event{Type: EventMessageEnd, Message: &queued[i]})
		}
		queued = nil
		a.logger.Debug("model turn", "turn", turn)
		a.refresh()
		msg, resp, err := a.stream(ctx)
		if resp != nil {
			res.Usage = addUsage(res.Usage, resp.Usage)
			a.lastUsage = resp.Usage
			if resp.StopReason == llm.StopError {
				err = errors.New("the model stopped with an error")
			}
		}
		if err != nil && ctx.Err() == nil {
			res.StopReason = llm.StopError
			a.endPartial(msg, llm.StopError, err, res)
			a.emit(Event{Type: EventTurnEnd, Turn: turn, Message: partialOrNil(msg)})
			// What a person reads: the provider's error says what failed
			// and what to do; the turn number is for the log.
			a.logger.Debug("model request failed", "turn", turn, "error", err)
			return fmt.Errorf("model request failed: %w", err)
		}
		if err != nil || resp.StopReason == llm.StopAborted {
			// Cancelled: the provider either gave up with an error or
			// reported the abort itself.
			res.StopReason = llm.StopAborted
			a.endPartial(msg, llm.StopAborted, nil, res)
			a.emit(Event{Type: EventTurnEnd, Turn: turn, Message: partialOrNil(msg)})
			return nil
		}
		msg.ToolCalls = uniqueCallIDs(msg.ToolCalls, turn)
		a.appendMessages(msg)
		res.Text = messageText(msg)
		res.StopReason = resp.StopReason
		usage := resp.Usage
		a.emit(Event{Type: EventMessageEnd, Message: &msg, Usage: &usage, StopReason: resp.StopReason})
		if len(msg.ToolCalls) == 0 {
			a.emit(Event{Type: EventTurnEnd, Turn: turn, Message: &msg})
			if a.cfg.MaxTurns > 0 && turn >= a.cfg.MaxTurns {
				return nil // what is queued waits for the next run
			}
			if queued = a.nextDelivery(); len(queued) > 0 {
				continue
			}
			if resp.StopReason == llm.StopEnd && a.stopContinue(ctx, msg, turn, &continues) {
				continue
			}
			return nil
		}
		results, terminate := a.executeBatch(ctx, msg.ToolCalls)
		a.appendMessages(results...)
		for i := range results {
			a.emit(Event{Type: EventMessageStart, Message: &results[i]})
			a.emit(Event{Type: EventMessageEnd, Message: &results[i]})
		}
		a.emit(Event{Type: EventTurnEnd, Turn: turn, Message: &msg, ToolResults: results})
		switch {
		case ctx.Err() != nil:
			res.StopReason = llm.StopAborted
			return nil
		case terminate:
			res.StopReason = llm.StopToolUse
			return nil
		case a.cfg.MaxTurns > 0 && turn >= a.cfg.MaxTurns:
			res.StopReason = StopMaxTurns
			return nil
		}
		queued = a.takeQueued(true)
	}
}

// stream runs one model turn. It emits message_start (at the first stream
// event, or when the turn ends without any) and message_update per stream
// event, and returns the assistant message; the caller emits message_end.
// When the provider failed, msg holds the text streamed so far.
func (a *Agent) stream(ctx context.Context) (msg llm.Message, resp *llm.Response, err error) {
	a.mu.Lock()
	req := llm.Request{
		SystemPrompt: a.runSystem,
		Messages:     append([]llm.Message(nil), a.messages...),
		Tools:        a.specs,
	}
	a.mu.Unlock()
	if a.cfg.Thinking != nil {
		req.Thinking = a.cfg.Thinking()
	}
	if a.cfg.Context != nil {
		req.Messages = a.cfg.Context(ctx, req.Messages)
	}

	var (
		smu     sync.Mutex // the provider may call onEvent from its own goroutine
		started bool
		text    strings.Builder
	)
	startOnce := func() {
		if !started {
			started = true
			a.emit(Event{Type: EventMessageStart, Message: &llm.Message{Role: llm.RoleAssistant, Content: []tool.ContentBlock{}}})
		}
	}
	var blocks streamBlocks
	onEvent := func(ev llm.StreamEvent) {
		smu.Lock()
		defer smu.Unlock()
		startOnce()
		if ev.Type == llm.EventTextDelta {
			text.WriteString(ev.Delta)
		}
		blocks.event(ev, a.emitUpdate)
	}
	resp, err = a.cfg.Provider.Stream(ctx, req, onEvent)
	smu.Lock()
	defer smu.Unlock()
	blocks.close(a.emitUpdate)
	if err != nil || resp == nil {
		if err == nil {
			err = errors.New("provider returned no response")
		}
		msg = llm.Message{Role: llm.RoleAssistant, Content: []tool.ContentBlock{}}
		if text.Len() > 0 {
			msg.Content = []tool.ContentBlock{tool.Text(text.String())}
		}
		startOnce()
		return msg, nil, err
	}
	startOnce()
	if a.cfg.Price != nil && resp.Usage.Cost == (llm.Cost{}) {
		resp.Usage.Cost = a.cfg.Price(resp.Usage)
	}
	msg = resp.Message
	msg.Role = llm.RoleAssistant
	if msg.Content == nil {
		msg.Content = []tool.ContentBlock{}
	}
	if resp.StopReason == llm.StopAborted && len(msg.Content) == 0 && text.Len() > 0 {
		msg.Content = []tool.ContentBlock{tool.Text(text.String())}
	}
	return msg, resp, nil
}

// endPartial ends a model turn that failed or was cancelled: message_end
// with what was streamed, which the conversation keeps when it has text. Its
// tool calls are dropped, as they will never get results.
func (a *Agent) endPartial(msg llm.Message, stop llm.StopReason, err error, res *RunResult) {
	msg.ToolCalls = nil
	if msg.Content == nil {
		msg.Content = []tool.ContentBlock{} // "content": [] in --mode json, never null
	}
	ev := Event{Type: EventMessageEnd, Message: &msg, StopReason: stop}
	if err != nil {
		ev.Error = err.Error()
	}
	a.emit(ev)
	if messageText(msg) == "" {
		return
	}
	a.appendMessages(msg)
	res.Text = messageText(msg)
}

// partialOrNil returns the kept part of a failed turn's message for
// turn_end, or nil when nothing was kept.
func partialOrNil(m llm.Message) *llm.Message {
	if messageText(m) == "" {
		return nil
	}
	m.ToolCalls = nil
	return &m
}

// uniqueCallIDs returns calls with every id present and distinct: some
// OpenAI-compatible servers send no ids, or repeat one, and each result must
// answer exactly one call. A missing or repeated id becomes call_TURN_N.
func uniqueCallIDs(calls []llm.ToolCall, turn int) []llm.ToolCall {
	if len(calls) == 0 {
		return calls
	}
	out := append([]llm.ToolCall(nil), calls...)
	seen := map[string]bool{}
	for i := range out {
		id := out[i].ID
		for n := 0; id == "" || seen[id]; n++ {
			id = fmt.Sprintf("call_%d_%d", turn, i+1)
			if n > 0 {
				id += fmt.Sprintf("_%d", n)
			}
		}
		out[i].ID = id
		seen[id] = true
	}
	return out
}

func (a *Agent) appendMessages(msgs ...llm.Message) {
	a.mu.Lock()
	a.messages = append(a.messages, msgs...)
	a.mu.Unlock()
}

// emitUpdate emits message_update with one stream event.
func (a *Agent) emitUpdate(ev llm.StreamEvent) {
	a.emit(Event{Type: EventMessageUpdate, AssistantMessageEvent: &ev})
}

func (a *Agent) emit(ev Event) {
	if a.cfg.OnEvent == nil {
		return
	}
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	a.cfg.OnEvent(ev)
}

func addUsage(a, b llm.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:      a.InputTokens + b.InputTokens,
		OutputTokens:     a.OutputTokens + b.OutputTokens,
		CacheReadTokens:  a.CacheReadTokens + b.CacheReadTokens,
		CacheWriteTokens: a.CacheWriteTokens + b.CacheWriteTokens,
		TotalTokens:      a.TotalTokens + b.TotalTokens,
		Cost: llm.Cost{
			Input: a.Cost.Input + b.Cost.Input, Output: a.Cost.Output + b.Cost.Output,
			CacheRead: a.Cost.CacheRead + b.Cost.CacheRead, CacheWrite: a.Cost.CacheWrite + b.Cost.CacheWrite,
			Total: a.Cost.Total + b.Cost.Total,
		},
	}
}

// messageText joins the text blocks of a message.
func messageText(m llm.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

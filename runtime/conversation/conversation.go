// Package conversation owns one conversation with the model: the agent
// loop, the session that keeps it, compaction, the model, the steering and
// follow-up queue, a person's shell commands and the slash commands. Every
// front end (the terminal UI, the line mode, RPC, print and JSON modes) and
// every embedder drives a Conversation and only that: its methods are the
// only way to prompt, steer, abort, run !cmd, run a slash command (pi's
// own and the extensions'), compact, start, switch, fork or clone a
// session, change the model and read the state. The extensions' input
// hooks and commands run inside it, so every front end gets them. The agent
// never leaves it.
//
// A Conversation stands on an assembled runtime (runtime/app: config,
// tools, extensions, hooks, approvals), which it does not own: close the
// conversation, then the runtime.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/models"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/skills"
)

// Options say how to hold a conversation on a runtime.
type Options struct {
	// Session says which session file keeps the conversation; nil keeps
	// it in memory only.
	Session *SessionOptions
	// Provider streams the model's turns; nil means the OpenAI-compatible
	// provider of the model settings (app.ResolveModel), resolved when the
	// model is first needed, so that slash commands work without one.
	Provider llm.Provider
	// ModelName names the model in the session when Provider is set here;
	// default "custom".
	ModelName string
	// SystemPrompt replaces the built-in intro, tool list and guidelines
	// (--system-prompt); AppendSystemPrompt is added after them.
	SystemPrompt, AppendSystemPrompt string
	// MaxTurns bounds the model calls of one run; 0 means unlimited.
	MaxTurns int
	// Plan starts in plan mode (--plan; SetPlanMode).
	Plan bool
	// OnEvent, when set, is subscribed before anything is emitted (it
	// sees session_start); see Subscribe.
	OnEvent func(agent.Event)
	// Checkpoints say how the project's files are recorded before and
	// after each turn, for Undo, Redo and Rewind (undo.go).
	Checkpoints CheckpointOptions

	// child makes the conversation a sub-agent's (task.go).
	child *childSpec
}

// Conversation is one conversation on a runtime. Its methods may be called
// from several goroutines; one run (a prompt's, or a compaction) goes on
// at a time, and what changes the session waits for none to run.
type Conversation struct {
	rt           *app.Runtime
	opts         Options
	contextFiles []agent.ContextFile
	// resources are the skills and prompt templates found at New and
	// again at each Reload (resources.go); use res().
	resources atomic.Pointer[skills.Set]

	// sess is the session (read by the event sink, which must not take
	// mu: the agent emits under its own lock).
	sess    atomic.Pointer[session.Session]
	resumed atomic.Bool
	// sink persists an event, hands it to the listeners and to the
	// extensions.
	sink    func(agent.Event)
	persist *sessionSink

	// lmu guards listeners.
	lmu       sync.Mutex
	listeners []listener
	nextID    int

	// mu guards what follows. It is never held while calling an agent
	// method that emits events.
	mu sync.Mutex
	// ag is the agent, built when first needed and again after a session
	// or model change (nil until then).
	ag *agent.Agent
	// model is the model flags as /model left them; names are what the
	// session records of the model the agent talks to.
	model app.ModelOptions
	// thinking is the thinking level set ("" until one is: the default);
	// the model's nearest level is used (ThinkingLevel).
	thinking llm.ThinkingLevel
	names    modelNames
	// steering and followUp are the queue modes, kept across agents.
	steering, followUp agent.QueueMode
	// cancel cancels the run or compaction going on (Abort); running
	// says one goes on.
	cancel  context.CancelFunc
	running int
	// pendingBash are a person's commands that ended while a run went
	// on: recorded when it ends.
	pendingBash []pendingBash
	closed      bool

	// ck is the checkpoints of the session's turns (undo.go).
	ck checkpoints
	// subagents are the agent definitions and the running children
	// (task.go).
	subagents agentsState
	// x12 is the ABI 1.2 state: session_start's reason, the runs
	// extensions asked for (exthooks12.go).
	x12 ext12
}

type listener struct {
	id int
	fn func(agent.Event)
}

// pendingBash is a person's command that ended during a run: its result
// (RunBash) or its message (RunShellCommand).
type pendingBash struct {
	command string
	res     app.BashResult
	msg     *session.Message
}

// New holds a conversation on rt: it opens or creates the session as
// o.Session says (the reference agent's session files), binds it for the
// extensions' session.append and session.entries, loads the context files
// and emits session_start. The model is resolved when first needed.
//
// # Errors
//
// A session that cannot be opened (in use by another pi:
// session.ErrLocked; no such id: session.ErrNoMatch; a file that is not a
// session).
func New(rt *app.Runtime, o Options) (*Conversation, error) {
	c := &Conversation{rt: rt, opts: o, model: rt.ModelOptions()}
	if l, ok := models.ParseLevel(c.model.Thinking); ok {
		c.thinking = l
	}
	if o.OnEvent != nil {
		c.listeners = []listener{{id: 0, fn: o.OnEvent}}
		c.nextID = 1
	}
	if o.Plan {
		if err := rt.SetPlanMode(true); err != nil {
			return nil, fmt.Errorf("plan mode: %w", err)
		}
	}
	if err := c.openSession(); err != nil {
		return nil, err
	}
	if !c.resumed.Load() {
		c.startScoped()
	}
	files, err := agent.LoadContextFiles(rt.Cwd(), rt.PIHome(), func(path string) ([]byte, error) {
		// Instructions for the model from a file another user can change
		// (a shared /tmp, a parent folder) are a prompt injection: refused
		// as a pi.toml would be.
		return config.ReadSafeFile(path, "context file")
	})
	if err != nil {
		rt.Logger().Warn("context file not read", "error", err)
	}
	c.contextFiles = files
	c.loadResources()
	c.persist = &sessionSink{c: c}
	c.sink = func(ev agent.Event) {
		c.persist.onEvent(ev)
		c.emit(ev)
		if ev.Type == agent.EventMessageEnd {
			if cm := DeliveredCustom(ev.Message); cm != nil && cm.Display {
				c.emit(customShown(cm, ev.Message.Content))
			}
		}
	}
	if o.child == nil {
		// A child's events reach the extensions as its parent's
		// subagent_event, not as events of the person's conversation.
		c.sink = rt.EventSink(c.sink)
	}
	if o.child == nil {
		// With --no-session the session is in memory, and so are the
		// extensions' entries.
		rt.BindSession(c.Session)
		rt.BindConversation(extConv{c})
	}
	if o.child == nil {
		rt.BindModelControl(extModel{c}) // ABI 1.2 model.*, llm.complete (run12.go)
	}
	c.sessionStarted()
	return c, nil
}

// Runtime is the runtime the conversation stands on (tools, extensions,
// configuration).
func (c *Conversation) Runtime() *app.Runtime { return c.rt }

// Close emits session_shutdown, unbinds the session from the extensions
// and closes the session file. The runtime stays open. It is safe to call
// more than once; a run still going on is cancelled first.
func (c *Conversation) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	c.ck.mu.Lock() // the last turn's checkpoint is written (undo.go)
	c.ck.mu.Unlock()
	s := c.Session()
	c.sink(agent.Event{Type: agent.EventSessionShutdown, SessionID: s.ID(), SessionFile: c.sessionFile()})
	if c.opts.child == nil {
		c.rt.BindSession(nil)
		c.rt.BindConversation(nil)
		c.rt.BindModelControl(nil)
	}
	c.closeSession(s)
}

// Subscribe adds fn to the listeners of the conversation's events (those of
// the loop, and session_start, session_shutdown, compaction_start,
// compaction_end, queue_update); each listener gets every event in order,
// on the goroutine that emits it, and must not block. The returned func
// removes it.
func (c *Conversation) Subscribe(fn func(agent.Event)) (unsubscribe func()) {
	c.lmu.Lock()
	defer c.lmu.Unlock()
	id := c.nextID
	c.nextID++
	// The listeners' slice is never changed in place, only replaced: an
	// emit goes on with the one it took.
	c.listeners = append(slices.Clip(c.listeners), listener{id: id, fn: fn})
	return func() {
		c.lmu.Lock()
		defer c.lmu.Unlock()
		c.listeners = slices.DeleteFunc(slices.Clone(c.listeners), func(l listener) bool { return l.id == id })
	}
}

// emit hands ev to the listeners of the moment, without copying them for
// each event (a streamed answer is hundreds of events).
func (c *Conversation) emit(ev agent.Event) {
	c.lmu.Lock()
	ls := c.listeners
	c.lmu.Unlock()
	for _, l := range ls {
		l.fn(ev)
	}
}

// sessionStarted emits session_start for the current session.
func (c *Conversation) sessionStarted() {
	resumed := c.resumed.Load()
	reason := c.takeStartReason()
	c.sink(agent.Event{Type: agent.EventSessionStart, SessionID: c.Session().ID(), SessionFile: c.sessionFile(), Resumed: &resumed, Reason: agent.CompactReason(reason)})
}

// agent returns the agent, building it on the current session when there
// is none (first use, or after a session or model change).
//
// # Errors
//
// A model that cannot be resolved (app.ResolveModel's errors: no model
// configured), tools that cannot be wrapped, compaction settings that do
// not fit.
func (c *Conversation) agent() (*agent.Agent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("the conversation is closed")
	}
	if c.ag != nil {
		return c.ag, nil
	}
	ag, names, err := c.buildAgent(c.model)
	if err != nil {
		return nil, err
	}
	c.ag, c.names = ag, names
	if c.steering != "" || c.followUp != "" {
		ag.SetQueueModes(c.steering, c.followUp)
	}
	return ag, nil
}

// current is the agent when there is one (nil before the first use).
func (c *Conversation) current() *agent.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ag
}

// dropAgent forgets the agent after a session or model change; the next
// use builds one on the new session, and what was queued moves to it.
// Called with nothing running.
func (c *Conversation) dropAgent() {
	c.mu.Lock()
	old := c.ag
	c.ag = nil
	c.mu.Unlock()
	if old == nil {
		return
	}
	steer, follow := old.ClearQueues()
	if len(steer)+len(follow) == 0 {
		return
	}
	ag, err := c.agent()
	if err != nil {
		c.rt.Logger().Warn("queued messages dropped: no agent", "error", err.Error())
		return
	}
	for _, m := range steer {
		ag.Steer(m)
	}
	for _, m := range follow {
		ag.FollowUp(m)
	}
}

// begin marks a run or a compaction as going on, cancellable by Abort.
//
// # Errors
//
// agent.ErrBusy when one already goes on.
func (c *Conversation) begin(ctx context.Context, op string) (context.Context, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running > 0 {
		return nil, nil, fmt.Errorf("%s: %w; wait for it to end or abort it", op, agent.ErrBusy)
	}
	if c.closed {
		return nil, nil, fmt.Errorf("%s: the conversation is closed", op)
	}
	ctx, cancel := context.WithCancel(ctx)
	c.running++
	c.cancel = cancel
	return ctx, func() {
		cancel()
		c.mu.Lock()
		c.running--
		c.cancel = nil
		pending := c.pendingBash
		c.pendingBash = nil
		c.mu.Unlock()
		for _, p := range pending {
			var err error
			if p.msg != nil {
				err = c.appendMessage("run bash", *p.msg)
			} else {
				err = c.recordBash(p.command, p.res)
			}
			if err != nil {
				c.rt.Logger().Warn("bash result not added to the conversation", "command", p.command, "error", err.Error())
			}
		}
		c.kickExtensionRuns()
	}, nil
}

// Busy reports whether a run or a compaction goes on.
func (c *Conversation) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running > 0
}

// Abort cancels the run or compaction going on (and its bash commands);
// it returns at once: the run ends with agent_end (stop reason aborted).
func (c *Conversation) Abort() {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// idle fails with agent.ErrBusy while a run or a compaction goes on.
func (c *Conversation) idle(op string) error {
	if c.Busy() {
		return fmt.Errorf("%s: %w; abort it first", op, agent.ErrBusy)
	}
	return nil
}

// SetQueueModes sets how steering and follow-up messages are delivered
// ("" keeps one as it is): all at once, or one at a time.
func (c *Conversation) SetQueueModes(steering, followUp agent.QueueMode) {
	c.mu.Lock()
	if steering != "" {
		c.steering = steering
	}
	if followUp != "" {
		c.followUp = followUp
	}
	ag := c.ag
	c.mu.Unlock()
	if ag != nil {
		ag.SetQueueModes(steering, followUp)
	}
}

// QueueModes are the delivery modes of steering and follow-up messages.
func (c *Conversation) QueueModes() (steering, followUp agent.QueueMode) {
	if ag := c.current(); ag != nil {
		return ag.QueueModes()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return modeOr(c.steering), modeOr(c.followUp)
}

func modeOr(m agent.QueueMode) agent.QueueMode {
	if m == "" {
		return agent.QueueOneAtATime
	}
	return m
}

// Queued lists the messages waiting for delivery.
func (c *Conversation) Queued() (steering, followUp []llm.Message) {
	if ag := c.current(); ag != nil {
		return ag.Queued()
	}
	return nil, nil
}

// ClearQueues takes back the messages waiting for delivery (a front end
// puts them back in its editor).
func (c *Conversation) ClearQueues() (steering, followUp []llm.Message) {
	if ag := c.current(); ag != nil {
		return ag.ClearQueues()
	}
	return nil, nil
}

// Package rpcmode is pi's RPC front end (`pi --mode rpc`): the reference
// agent's JSON-lines protocol over a Conversation (see docs/rpc.md).
// Commands are JSON objects, one per line on stdin; each gets one response
// line on stdout ({"type":"response","command","success",...}, with the
// command's id); the conversation's events (the objects of --mode json)
// and extension UI requests are lines on stdout too. It orchestrates
// nothing of its own: prompts, steering, commands, bash, compaction and
// session changes are the Conversation's.
package rpcmode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/content"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/session"
)

// maxRPCLine bounds one command line (a prompt with images included).
const maxRPCLine = 64 << 20

// rpcResponse is a command's response line.
type rpcResponse struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    string          `json:"type"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// rpcCommand is a command line's common fields; raw is all of it.
type rpcCommand struct {
	ID   json.RawMessage `json:"id"`
	Type string          `json:"type"`
	raw  []byte
}

// activity is something running in the background: a prompt's run, a
// compaction, a bash command.
type activity struct {
	cancel context.CancelFunc
	done   chan struct{}
	// ended: the run emitted agent_end (what follows, such as an
	// auto-compaction, is short).
	ended atomic.Bool
}

// server holds the state of an RPC session: which background work runs,
// for the protocol's answers (busy, abort waits for the end).
type server struct {
	conv *conversation.Conversation
	out  *Output
	ui   *UI

	// mu guards the fields below. It is never held while calling a
	// conversation method that emits events.
	mu  sync.Mutex
	run *activity
	// current is run, for the event listener (which must not take mu).
	current atomic.Pointer[activity]
	compact *activity
	bash    *activity
	wg      sync.WaitGroup
	// agentRuns counts the runs going on by their agent_start and
	// agent_end: the server's own and those an extension started (ABI
	// 1.2 agent.sendUserMessage, sendMessage with triggerTurn), which
	// are busy too.
	agentRuns atomic.Int32
	// quit is signalled when an extension's command asked pi.shutdown:
	// Serve ends as at the end of input, the run aborted.
	quit chan struct{}
}

// Output writes whole JSON lines to stdout, one at a time, with the API
// key redacted (SetRedactor, once the runtime is open).
type Output struct {
	mu       sync.Mutex
	w        io.Writer
	redactor *redact.Redactor
}

// NewOutput writes to w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// SetRedactor makes every later line go through r.
func (o *Output) SetRedactor(r *redact.Redactor) {
	o.mu.Lock()
	o.redactor = r
	o.mu.Unlock()
}

func (o *Output) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"type": "error", "error": "encode: " + err.Error()})
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.redactor != nil {
		b = o.redactor.Bytes(b)
	}
	o.w.Write(append(b, '\n'))
}

// Server is the RPC front end. Make it with NewServer, hand OnEvent to the
// conversation (conversation.Options.OnEvent, so that session_start is on
// the stream too), then Serve.
type Server struct{ s *server }

// NewServer writes its lines to out; ui must write to out as well.
func NewServer(out *Output, ui *UI) *Server {
	return &Server{s: &server{out: out, ui: ui, quit: make(chan struct{}, 1)}}
}

// OnEvent writes an event of the conversation as a line.
func (srv *Server) OnEvent(ev agent.Event) {
	s := srv.s
	switch ev.Type {
	case conversation.EventCustomMessage:
		return // the entry is in get_messages; the stream keeps its shapes
	case agent.EventAgentStart:
		s.agentRuns.Add(1)
	case agent.EventAgentEnd:
		if s.agentRuns.Add(-1) < 0 {
			s.agentRuns.Store(0)
		}
	}
	if ev.Type == agent.EventAgentEnd {
		// A client that saw agent_end may prompt at once (RpcClient's
		// waitForIdle): from here on the run is not busy.
		if a := s.current.Load(); a != nil {
			a.ended.Store(true)
		}
	}
	if ev.Type == agent.EventSessionStart && ev.Reason == "reload" && s.ui != nil {
		// The old extensions' statuses and widgets go before the new
		// set's session_start (whose handlers may set their own).
		s.ui.clearShown()
	}
	s.out.write(conversation.WireEvent(ev))
}

// Serve runs the protocol over conv until stdin ends or an extension's
// command asks pi.shutdown (exit 0), or SIGTERM or SIGHUP (143, 129).
func (srv *Server) Serve(conv *conversation.Conversation, stdin io.Reader) int {
	s := srv.s
	s.conv = conv
	out := s.out
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	lines, stop := make(chan []byte), make(chan struct{})
	defer close(stop)
	go readLines(stdin, lines, stop, out, s.answerDialog)
	for {
		select {
		case line, ok := <-lines:
			if ok {
				s.handleLine(line)
				continue
			}
			// The input ended: what runs finishes (dialogs get their
			// default answers), then pi exits; a signal still stops it.
			s.ui.close()
			idle := make(chan struct{})
			go func() { s.wg.Wait(); close(idle) }()
			select {
			case <-idle:
				return 0
			case sig := <-sigs:
				s.shutdown()
				return signalCode(sig)
			}
		case <-s.quit:
			// pi.shutdown: as the end of input, but what still runs is
			// aborted (the caller's Close sends session_shutdown).
			s.shutdown()
			return 0
		case sig := <-sigs:
			s.shutdown()
			return signalCode(sig)
		}
	}
}

// signalCode is the exit code after SIGTERM (143) or SIGHUP (129).
func signalCode(sig os.Signal) int {
	if sig == syscall.SIGHUP {
		return 129
	}
	return 143
}

// readLines sends each LF-terminated line of r (a trailing CR dropped;
// the last line may lack its LF) to lines, and closes it at the end of
// input. A line longer than maxRPCLine gets an error response and is
// skipped. A line that direct takes (an answer to a dialog) is not sent:
// it must reach its dialog while a command waits for that dialog (a
// session_before_switch hook asking during new_session).
func readLines(r io.Reader, lines chan<- []byte, stop <-chan struct{}, out *Output, direct func([]byte) bool) {
	defer close(lines)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var line []byte
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if !tooLong {
				line = append(line, chunk...)
				if len(line) > maxRPCLine {
					tooLong, line = true, nil
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		switch {
		case tooLong:
			out.write(rpcResponse{Type: "response", Command: "parse", Error: fmt.Sprintf("Failed to parse command: the line is longer than %d MiB", maxRPCLine>>20)})
		case len(bytes.TrimSpace(line)) > 0:
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if direct != nil && direct(line) {
				break
			}
			select {
			case lines <- line:
			case <-stop:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// answerDialog hands an extension_ui_response line to the dialog waiting
// for it, at once, whatever command the server runs; false for any other
// line (and for one that does not parse, which handleLine answers).
func (s *server) answerDialog(line []byte) bool {
	var cmd struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(line, &cmd) != nil || cmd.Type != "extension_ui_response" {
		return false
	}
	s.ui.resolve(line)
	return true
}

// handleLine handles one input line: an extension_ui_response goes to the
// dialog waiting for it; a command is run (long ones in the background).
func (s *server) handleLine(line []byte) {
	var cmd rpcCommand
	if err := json.Unmarshal(line, &cmd); err != nil {
		s.out.write(rpcResponse{Type: "response", Command: "parse", Error: "Failed to parse command: " + err.Error()})
		return
	}
	cmd.raw = line
	if cmd.Type == "extension_ui_response" {
		s.ui.resolve(line)
		return
	}
	if cmd.Type == "" {
		s.reply(cmd, nil, errors.New(`command has no "type"`))
		return
	}
	s.dispatch(cmd)
}

// reply writes cmd's response: data on success, else err's text.
func (s *server) reply(cmd rpcCommand, data any, err error) {
	r := rpcResponse{ID: cmd.ID, Type: "response", Command: cmd.Type, Success: err == nil, Data: data}
	if err != nil {
		r.Data, r.Error = nil, err.Error()
	}
	s.out.write(r)
}

// decode reads cmd's own fields into v.
func decode(cmd rpcCommand, v any) error {
	if err := json.Unmarshal(cmd.raw, v); err != nil {
		return fmt.Errorf("%s: bad fields: %w", cmd.Type, err)
	}
	return nil
}

// errUnsupported is the answer to reference commands pi has no equivalent
// for.
func errUnsupported(cmd, why string) error {
	return fmt.Errorf("%s is not supported by pi: %s", cmd, why)
}

func (s *server) dispatch(cmd rpcCommand) {
	switch cmd.Type {
	case "prompt":
		s.prompt(cmd)
	case "steer", "follow_up":
		var c struct {
			Message string          `json:"message"`
			Images  []content.Block `json:"images"`
		}
		err := decode(cmd, &c)
		if err == nil {
			err = checkImages(c.Images)
		}
		if err == nil {
			p := conversation.Prompt{Text: c.Message, Images: c.Images}
			if cmd.Type == "steer" {
				_, err = s.conv.Steer(context.Background(), p, s.submitOptions())
			} else {
				_, err = s.conv.FollowUp(context.Background(), p, s.submitOptions())
			}
		}
		s.reply(cmd, nil, err)
	case "abort":
		s.abortAndWait()
		s.reply(cmd, nil, nil)
	case "new_session":
		var c struct {
			ParentSession string `json:"parentSession"`
		}
		s.sessionChange(cmd, &c, func() (any, error) {
			return cancelledAnswer(map[string]bool{"cancelled": false}, s.conv.NewSession(c.ParentSession))
		})
	case "switch_session":
		var c struct {
			SessionPath string `json:"sessionPath"`
		}
		s.sessionChange(cmd, &c, func() (any, error) {
			if c.SessionPath == "" {
				return nil, errors.New("switch_session: sessionPath is empty")
			}
			return cancelledAnswer(map[string]bool{"cancelled": false}, s.conv.SwitchSession(c.SessionPath))
		})
	case "fork":
		var c struct {
			EntryID string `json:"entryId"`
		}
		s.sessionChange(cmd, &c, func() (any, error) {
			text, err := s.conv.Fork(c.EntryID)
			if errors.Is(err, conversation.ErrNotUserMessage) {
				// The reference's words first, then which entry and why.
				err = fmt.Errorf("Invalid entry ID for forking: %w", err)
			}
			return cancelledAnswer(map[string]any{"text": text, "cancelled": false}, err)
		})
	case "clone":
		// As the reference: nothing to clone before the first entry (and
		// nothing that runs is stopped for it).
		if s.conv.Session().Leaf() == "" {
			s.reply(cmd, nil, errors.New("Cannot clone session: no current entry selected"))
			return
		}
		s.sessionChange(cmd, &struct{}{}, func() (any, error) {
			return cancelledAnswer(map[string]bool{"cancelled": false}, s.conv.Clone())
		})
	case "get_tree":
		s.reply(cmd, map[string]any{"leafId": s.conv.Session().Leaf(), "entries": conversation.TreeLines(s.conv.Session())}, nil)
	case "navigate_tree":
		var c struct {
			EntryID            string `json:"entryId"`
			Summarize          bool   `json:"summarize"`
			CustomInstructions string `json:"customInstructions"`
			Label              string `json:"label"`
		}
		if err := decode(cmd, &c); err != nil {
			s.reply(cmd, nil, err)
			return
		}
		s.startModelCall(cmd, "navigate_tree", func(ctx context.Context) (any, error) {
			return cancelledAnswer(s.conv.NavigateTree(ctx, c.EntryID, conversation.NavigateOptions{Summarize: c.Summarize, Instructions: c.CustomInstructions, Label: c.Label}))
		})
	case "set_label":
		var c struct {
			EntryID string `json:"entryId"`
			Label   string `json:"label"`
		}
		err := decode(cmd, &c)
		if err == nil {
			err = s.conv.SetLabel(c.EntryID, c.Label)
		}
		s.reply(cmd, nil, err)
	case "get_turns":
		// A run that sent agent_end is over for the client: wait for it
		// to return, so its turn is listed.
		s.mu.Lock()
		s.busyLocked()
		s.mu.Unlock()
		turns, err := s.conv.Turns()
		s.reply(cmd, map[string]any{"turns": turns}, err)
	case "undo", "redo", "rewind":
		var c struct {
			Force  bool   `json:"force"`
			TurnID int    `json:"turnId"`
			Mode   string `json:"mode"`
		}
		if err := decode(cmd, &c); err != nil {
			s.reply(cmd, nil, err)
			return
		}
		s.startModelCall(cmd, cmd.Type, func(ctx context.Context) (any, error) {
			o := conversation.UndoOptions{Force: c.Force}
			switch cmd.Type {
			case "undo":
				return s.conv.Undo(ctx, o)
			case "redo":
				return s.conv.Redo(ctx, o)
			}
			mode := conversation.RewindMode(c.Mode)
			if mode == "" {
				mode = conversation.RewindBoth
			}
			return s.conv.Rewind(ctx, c.TurnID, mode, o)
		})
	case "get_state":
		s.reply(cmd, s.state(), nil)
	case "get_messages":
		msgs := s.conv.Messages()
		out := make([]*session.Message, len(msgs))
		for i := range msgs {
			out[i] = &msgs[i]
		}
		s.reply(cmd, map[string]any{"messages": out}, nil)
	case "get_commands":
		s.reply(cmd, map[string]any{"commands": s.commands()}, nil)
	case "set_model":
		var c struct {
			Provider string `json:"provider"`
			ModelID  string `json:"modelId"`
		}
		err := decode(cmd, &c)
		if err == nil {
			err = s.setModel(c.Provider, c.ModelID)
		}
		var m any
		if err == nil {
			m, err = s.conv.Model()
		}
		s.reply(cmd, m, err)
	case "get_available_models":
		ms, err := s.conv.AvailableModels()
		if ms == nil {
			ms = []conversation.ModelInfo{}
		}
		s.reply(cmd, map[string]any{"models": ms}, err)
	case "cycle_model":
		// No other model: the reference answers null.
		var res *conversation.CycleResult
		err := s.idleForModel(cmd.Type)
		if err == nil {
			res, err = s.conv.CycleModel()
		}
		if err == nil && res == nil {
			s.out.write(map[string]any{"id": cmd.ID, "type": "response", "command": cmd.Type, "success": true, "data": nil})
			break
		}
		s.reply(cmd, res, err)
	case "cycle_thinking_level":
		// A model without reasoning: the reference answers null.
		l, ok := s.conv.CycleThinkingLevel()
		if !ok {
			s.out.write(map[string]any{"id": cmd.ID, "type": "response", "command": cmd.Type, "success": true, "data": nil})
			break
		}
		s.reply(cmd, map[string]any{"level": l}, nil)
	case "set_steering_mode", "set_follow_up_mode":
		var c struct {
			Mode string `json:"mode"`
		}
		err := decode(cmd, &c)
		var mode agent.QueueMode
		if err == nil {
			mode, err = agent.ParseQueueMode(c.Mode)
		}
		if err == nil {
			if cmd.Type == "set_steering_mode" {
				s.conv.SetQueueModes(mode, "")
			} else {
				s.conv.SetQueueModes("", mode)
			}
		}
		s.reply(cmd, nil, err)
	case "compact":
		var c struct {
			CustomInstructions string `json:"customInstructions"`
		}
		if err := decode(cmd, &c); err != nil {
			s.reply(cmd, nil, err)
			return
		}
		s.startCompact(cmd, c.CustomInstructions)
	case "bash":
		var c struct {
			Command string `json:"command"`
		}
		if err := decode(cmd, &c); err != nil {
			s.reply(cmd, nil, err)
			return
		}
		s.startBash(cmd, c.Command)
	case "abort_bash":
		s.mu.Lock()
		if s.bash != nil {
			s.bash.cancel()
		}
		s.mu.Unlock()
		s.reply(cmd, nil, nil)
	case "get_session_stats":
		s.reply(cmd, s.conv.Stats(), nil)
	case "get_fork_messages":
		s.reply(cmd, map[string]any{"messages": s.conv.ForkPoints()}, nil)
	case "get_last_assistant_text":
		// No text: an object without "text", as the reference sends
		// (its undefined).
		data := map[string]any{}
		if t, ok := lastAssistantText(s.conv.Messages()); ok {
			data["text"] = t
		}
		s.reply(cmd, data, nil)
	case "set_session_name":
		var c struct {
			Name string `json:"name"`
		}
		err := decode(cmd, &c)
		if err == nil && strings.TrimSpace(c.Name) == "" {
			err = errors.New("Session name cannot be empty")
		}
		if err == nil {
			err = s.conv.SetSessionName(c.Name)
		}
		s.reply(cmd, nil, err)
	case "set_mode":
		// pi's own: plan mode (docs/sandbox.md#plan-mode).
		var c struct {
			Mode string `json:"mode"`
		}
		err := decode(cmd, &c)
		if err == nil && c.Mode != "plan" && c.Mode != "normal" {
			err = fmt.Errorf("set_mode: mode must be \"plan\" or \"normal\", got %q", c.Mode)
		}
		if err == nil {
			err = s.conv.SetPlanMode(c.Mode == "plan")
		}
		s.reply(cmd, map[string]any{"mode": c.Mode}, err)
	case "set_thinking_level":
		var c struct {
			Level string `json:"level"`
		}
		err := decode(cmd, &c)
		if err == nil {
			_, err = s.conv.SetThinkingLevel(c.Level)
		}
		s.reply(cmd, nil, err)
	case "set_auto_compaction":
		s.reply(cmd, nil, errUnsupported(cmd.Type, "set [compaction] enabled in pi.toml"))
	case "set_auto_retry", "abort_retry":
		s.reply(cmd, nil, errUnsupported(cmd.Type, "the provider retries rate limits and server errors itself, a few times with backoff"))
	case "export_html":
		var c struct {
			OutputPath string `json:"outputPath"`
		}
		err := decode(cmd, &c)
		var path string
		if err == nil {
			path, err = s.conv.ExportHTML(c.OutputPath)
		}
		s.reply(cmd, map[string]string{"path": path}, err)
	default:
		s.reply(cmd, nil, fmt.Errorf("Unknown command: %s", cmd.Type))
	}
}

// background runs f on its own goroutine, which shutdown waits for.
func (s *server) background(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// checkImages checks the images of a prompt, steer or follow_up.
func checkImages(images []content.Block) error {
	for i, b := range images {
		if b.Type != "image" || b.Data == "" || !strings.HasPrefix(b.MimeType, "image/") {
			return fmt.Errorf("images[%d]: want {\"type\":\"image\",\"data\":BASE64,\"mimeType\":\"image/...\"}", i)
		}
	}
	return nil
}

// submitOptions are how RPC prompts are submitted: as a person's (an
// unknown /x is answered, not sent), with what a command or an input hook
// shows the person as a notify request of the extension UI
// sub-protocol, which the reference's clients show.
func (s *server) submitOptions() conversation.SubmitOptions {
	return conversation.SubmitOptions{Interactive: true, Show: func(text string) {
		s.ui.Notify(text, app.NotifyInfo)
	}}
}

// commandInfo is one entry of get_commands, in the reference's shape.
type commandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
	Extension   string `json:"extension,omitempty"`
	// SourceInfo says where a template or skill was found.
	SourceInfo *conversation.SourceInfo `json:"sourceInfo,omitempty"`
}

// commands lists the slash commands a prompt may start with, as the
// reference lists them: the extensions' (source "extension"), the prompt
// templates ("prompt") and the skills ("skill", named skill:NAME), those
// two with the reference's sourceInfo; pi's own interactive commands are
// RPC commands here (new_session, compact, ...).
func (s *server) commands() []commandInfo {
	out := []commandInfo{}
	for _, c := range s.conv.Commands() {
		if c.Extension != "" {
			out = append(out, commandInfo{Name: c.Name, Description: c.Description, Source: "extension", Extension: c.Extension})
		}
	}
	res := s.conv.Skills()
	for _, t := range res.Templates {
		info := t.SourceInfo()
		out = append(out, commandInfo{Name: t.Name, Description: t.Description, Source: "prompt", SourceInfo: &info})
	}
	for _, sk := range res.Skills {
		info := sk.SourceInfo()
		out = append(out, commandInfo{Name: "skill:" + sk.Name, Description: sk.Description, Source: "skill", SourceInfo: &info})
	}
	return out
}

// busyLocked reports whether a run (before its agent_end) or a compaction
// is going on; a run past its agent_end is waited for first (s.mu held;
// it is released while waiting).
func (s *server) busyLocked() bool {
	for s.run != nil && s.run.ended.Load() {
		done := s.run.done
		s.mu.Unlock()
		<-done
		s.mu.Lock()
	}
	return s.run != nil || s.compact != nil || s.agentRuns.Load() > 0
}

func (s *server) prompt(cmd rpcCommand) {
	var c struct {
		Message           string          `json:"message"`
		Images            []content.Block `json:"images"`
		StreamingBehavior string          `json:"streamingBehavior"`
	}
	err := decode(cmd, &c)
	if err == nil {
		err = checkImages(c.Images)
	}
	if err == nil && c.StreamingBehavior != "" && c.StreamingBehavior != "steer" && c.StreamingBehavior != "followUp" {
		err = fmt.Errorf("prompt: streamingBehavior %q: want \"steer\" or \"followUp\"", c.StreamingBehavior)
	}
	if err != nil {
		s.reply(cmd, nil, err)
		return
	}
	p := conversation.Prompt{Text: c.Message, Images: c.Images}
	s.mu.Lock()
	if s.busyLocked() {
		s.mu.Unlock()
		switch c.StreamingBehavior {
		case "steer":
			_, err = s.conv.Steer(context.Background(), p, s.submitOptions())
		case "followUp":
			_, err = s.conv.FollowUp(context.Background(), p, s.submitOptions())
		default:
			err = errors.New("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
		}
		s.reply(cmd, nil, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &activity{cancel: cancel, done: make(chan struct{})}
	s.run = a
	s.current.Store(a)
	s.mu.Unlock()
	s.background(func() {
		defer close(a.done)
		defer cancel()
		// The response comes once the input hooks took the prompt (a
		// failing hook is the error response, as the reference answers a
		// failed preflight); the outcome of a run is in the events
		// (agent_end, with error); what failed before a run started (an
		// extension command, no model) is said as an error notice.
		accepted := false
		o := s.submitOptions()
		o.Accepted = func() {
			accepted = true
			s.reply(cmd, nil, nil)
		}
		sub, err := s.conv.Submit(ctx, p, o)
		if sub.Exit {
			select {
			case s.quit <- struct{}{}:
			default:
			}
		}
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		case !accepted:
			s.reply(cmd, nil, err)
		case !a.ended.Load():
			s.ui.Notify(err.Error(), app.NotifyError)
		}
		s.mu.Lock()
		s.run = nil
		s.current.CompareAndSwap(a, nil)
		s.mu.Unlock()
	})
}

func (s *server) startCompact(cmd rpcCommand, instructions string) {
	s.startModelCall(cmd, "compact", func(ctx context.Context) (any, error) { return s.conv.Compact(ctx, instructions) })
}

// startModelCall runs call, a model call of pi's own (compact,
// navigate_tree's summary), in the background, where abort cancels it;
// refused while the agent is busy.
func (s *server) startModelCall(cmd rpcCommand, op string, call func(context.Context) (any, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busyLocked() {
		s.reply(cmd, nil, fmt.Errorf("%s: the agent is busy; wait for agent_end or send abort first", op))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &activity{cancel: cancel, done: make(chan struct{})}
	s.compact = a
	s.background(func() {
		defer close(a.done)
		defer cancel()
		res, err := call(ctx)
		s.mu.Lock()
		s.compact = nil
		s.mu.Unlock()
		if err != nil {
			s.reply(cmd, nil, err)
			return
		}
		s.reply(cmd, res, nil)
	})
}

// bashData is the bash command's response data (the reference's
// BashResult).
type bashData struct {
	Output         string `json:"output"`
	ExitCode       *int   `json:"exitCode,omitempty"`
	Cancelled      bool   `json:"cancelled"`
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
}

func (s *server) startBash(cmd rpcCommand, command string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bash != nil {
		s.reply(cmd, nil, errors.New("bash: a command is already running; send abort_bash first"))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &activity{cancel: cancel, done: make(chan struct{})}
	s.bash = a
	s.background(func() {
		defer close(a.done)
		defer cancel()
		// The conversation adds it to the session, after the run when one
		// goes on.
		res, err := s.conv.RunBash(ctx, command, nil)
		s.mu.Lock()
		s.bash = nil
		s.mu.Unlock()
		if err != nil {
			s.reply(cmd, nil, err)
			return
		}
		s.reply(cmd, bashData{Output: res.Output, ExitCode: res.ExitCode, Cancelled: res.Cancelled, Truncated: res.Truncated, FullOutputPath: res.FullOutputPath}, nil)
	})
}

// abortAndWait cancels the run and the compaction and waits for them to
// end.
func (s *server) abortAndWait() {
	s.mu.Lock()
	var waits []chan struct{}
	for _, a := range []*activity{s.run, s.compact} {
		if a != nil {
			a.cancel()
			waits = append(waits, a.done)
		}
	}
	s.mu.Unlock()
	// A run an extension started is not one of the server's: aborted
	// through the conversation.
	s.conv.Abort()
	for _, w := range waits {
		<-w
	}
}

// sessionChange aborts what runs (a bash command too), changes the session
// with change and builds the agent for the new one.
func (s *server) sessionChange(cmd rpcCommand, fields any, change func() (any, error)) {
	if err := decode(cmd, fields); err != nil {
		s.reply(cmd, nil, err)
		return
	}
	s.abortAndWait()
	// A bash command belongs to the session it was typed in: end it, and
	// let it be recorded there, before the session changes.
	s.mu.Lock()
	b := s.bash
	s.mu.Unlock()
	if b != nil {
		b.cancel()
		<-b.done
	}
	data, err := change()
	s.reply(cmd, data, err)
}

// setModel switches the model, keeping what is queued.
func (s *server) setModel(provider, id string) error {
	if err := s.idleForModel("set_model"); err != nil {
		return err
	}
	return s.conv.SetModel(provider, id)
}

// idleForModel refuses a model change while the agent runs.
func (s *server) idleForModel(command string) error {
	s.mu.Lock()
	busy := s.busyLocked()
	s.mu.Unlock()
	if busy {
		return fmt.Errorf("%s: the agent is busy; wait for agent_end or send abort first", command)
	}
	return nil
}

// rpcState is get_state's data.
type rpcState struct {
	Model                 *conversation.ModelInfo `json:"model"`
	ThinkingLevel         string                  `json:"thinkingLevel"`
	IsStreaming           bool                    `json:"isStreaming"`
	IsCompacting          bool                    `json:"isCompacting"`
	SteeringMode          string                  `json:"steeringMode"`
	FollowUpMode          string                  `json:"followUpMode"`
	SessionFile           string                  `json:"sessionFile,omitempty"`
	SessionID             string                  `json:"sessionId"`
	SessionName           string                  `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool                    `json:"autoCompactionEnabled"`
	MessageCount          int                     `json:"messageCount"`
	PendingMessageCount   int                     `json:"pendingMessageCount"`
}

func (s *server) state() rpcState {
	s.mu.Lock()
	st := rpcState{ThinkingLevel: string(s.conv.ThinkingLevel()), IsStreaming: (s.run != nil && !s.run.ended.Load()) || s.agentRuns.Load() > 0, IsCompacting: s.compact != nil}
	s.mu.Unlock()
	if m, err := s.conv.Model(); err == nil {
		st.Model = &m
	}
	sm, fm := s.conv.QueueModes()
	st.SteeringMode, st.FollowUpMode = string(sm), string(fm)
	steer, follow := s.conv.Queued()
	st.PendingMessageCount = len(steer) + len(follow)
	sess := s.conv.Session()
	if !sess.InMemory() {
		st.SessionFile = sess.Path()
	}
	st.SessionID, st.SessionName = sess.ID(), sess.Name()
	if cs, err := s.conv.Runtime().Config().CompactionSettings(); err == nil {
		st.AutoCompactionEnabled = cs.Enabled
	}
	st.MessageCount = len(session.ContextInfos(sess.Branch()))
	return st
}

// lastAssistantText is the text of the last assistant message that is not
// an empty aborted one, trimmed, as the reference's getLastAssistantText:
// ok is false when there is no such message or its text is blank.
func lastAssistantText(msgs []session.Message) (text string, ok bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != session.RoleAssistant || (m.StopReason == string(llm.StopAborted) && len(m.Content) == 0) {
			continue
		}
		var b strings.Builder
		for _, c := range m.Content {
			if c.Type == "text" {
				b.WriteString(c.Text)
			}
		}
		t := strings.TrimSpace(b.String())
		return t, t != ""
	}
	return "", false
}

// shutdown ends everything that runs, answers pending dialogs with their
// defaults and waits for the background work.
func (s *server) shutdown() {
	s.ui.close()
	s.mu.Lock()
	for _, a := range []*activity{s.run, s.compact, s.bash} {
		if a != nil {
			a.cancel()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// cancelledAnswer is a session change's answer: {"cancelled": true} when
// an extension's session_before_* hook cancelled it (ABI 1.2), else data
// and err as they are.
func cancelledAnswer[T any](data T, err error) (any, error) {
	if conversation.IsCancelled(err) {
		return map[string]bool{"cancelled": true}, nil
	}
	return data, err
}

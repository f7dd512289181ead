package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/subagent"
	"github.com/pi-go/pi/runtime/tool"
)

// This file is the task tool: a sub-agent runs as a child Conversation on
// the same Runtime, so the permission rules, the approvals, the sandbox
// and every extension's tool hooks apply to its calls as to the parent's.
// Its own are a fresh context, the definition's system prompt after pi's,
// its tools (those the definition names, never more than the parent has),
// its model and thinking level when named, and a session file of its own
// whose header names the parent's (docs/agents.md).

// TaskToolName is the name of the built-in task tool.
const TaskToolName = "task"

// GeneralAgent is the agent a task call without "agent" runs: pi's system
// prompt and all of the parent's tools.
const GeneralAgent = "general-purpose"

// childSpec makes a conversation a sub-agent's (Options.child).
type childSpec struct {
	def   subagent.Definition
	depth int
	// allowed are the names of the tools it may run: the parent's active
	// tools (within the parent's own limit) that the definition names.
	allowed []string
	// parentFile is the parent's session file, recorded in the child's
	// session header ("" when the parent keeps none).
	parentFile string
	// set are the parent's agent definitions.
	set *subagent.Set
}

// agentsState is what a conversation knows of sub-agents: the definitions
// (loaded when the tool set is first built) and the places for its
// children running at once.
type agentsState struct {
	once sync.Once
	set  *subagent.Set
	sem  chan struct{}
}

// agentDefs loads the agent definitions once (a child has its parent's).
func (c *Conversation) agentDefs() *subagent.Set {
	c.subagents.once.Do(func() {
		if c.opts.child != nil {
			c.subagents.set = c.opts.child.set
		} else {
			cfg := c.rt.Config()
			home, _ := os.UserHomeDir()
			s := subagent.Load(subagent.LoadOptions{
				PIHome: c.rt.PIHome(), Home: home, Cwd: c.rt.Cwd(), ProjectRoot: cfg.ProjectRoot,
				Project: c.rt.ProjectContentTrusted(), Claude: cfg.Agents.Claude,
			})
			for _, p := range s.Skipped {
				c.rt.Warn("agent definition skipped: " + p.Msg)
			}
			c.subagents.set = s
		}
		c.subagents.sem = make(chan struct{}, c.rt.Config().Agents.Parallel())
	})
	return c.subagents.set
}

// depth is how deep the conversation is: 0 for the top one.
func (c *Conversation) depth() int {
	if c.opts.child == nil {
		return 0
	}
	return c.opts.child.depth
}

// taskActive says whether the model gets the task tool: there are
// definitions or [agents] task is on, the depth allows a child more, the
// conversation's own definition (a child's) does not leave it out, and no
// tool of the registry has its name.
func (c *Conversation) taskActive() bool {
	cfg := c.rt.Config().Agents
	if c.depth() >= cfg.Depth() {
		return false
	}
	if ch := c.opts.child; ch != nil && ch.def.Tools != nil && !slices.Contains(ch.def.Tools, TaskToolName) {
		return false
	}
	if _, clash := c.rt.Registry().Lookup(TaskToolName); clash {
		return false
	}
	return cfg.Task || len(c.agentDefs().Agents) > 0
}

// activeDefinitions are the runtime's active tools the conversation may
// use: all of them at the top, a child's allowed ones below.
func (c *Conversation) activeDefinitions() []tool.ToolDefinition {
	defs := c.rt.Registry().ActiveDefinitions()
	if ch := c.opts.child; ch != nil {
		defs = slices.DeleteFunc(defs, func(d tool.ToolDefinition) bool { return !slices.Contains(ch.allowed, d.Name) })
	}
	return defs
}

// taskParams is the task tool's schema.
const taskParams = `{
  "type": "object",
  "properties": {
    "agent": {"type": "string", "description": "The agent to run (one of those listed); leave it out for a general-purpose agent with your tools"},
    "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
    "prompt": {"type": "string", "description": "The task for the agent: everything it needs to know, as it sees nothing of this conversation"}
  },
  "required": ["description", "prompt"],
  "additionalProperties": false
}`

// taskDefinition is the task tool, described with the agents it offers.
func (c *Conversation) taskDefinition() tool.ToolDefinition {
	var b strings.Builder
	b.WriteString("Run a sub-agent on a task: a separate agent with a fresh context, its own instructions and a narrower set of tools, which works on its own and answers with one final message (the tool's result). Use it for work that is independent of this conversation or would fill it with output: searches across the code, reviews, investigations. Give it a complete prompt: it sees nothing of this conversation. Several task calls in one message run at the same time.\n\nAgents:\n")
	fmt.Fprintf(&b, "- %s: a general-purpose agent with your tools (leave \"agent\" out)\n", GeneralAgent)
	for _, d := range c.agentDefs().Agents {
		tools := "your tools"
		if d.Tools != nil {
			tools = strings.Join(d.Tools, ", ")
			if tools == "" {
				tools = "none"
			}
		}
		fmt.Fprintf(&b, "- %s: %s (tools: %s)\n", d.Name, oneLine(d.Description), tools)
	}
	return tool.ToolDefinition{
		Name: TaskToolName, Label: "Task", Description: strings.TrimRight(b.String(), "\n"),
		Parameters:    json.RawMessage(taskParams),
		PromptSnippet: "Hand a task to a sub-agent with its own context and tools",
		Execute:       c.runTask,
	}
}

// TaskDetails are the details of a task call's result.
type TaskDetails struct {
	Agent       string `json:"agent"`
	Description string `json:"description"`
	// SessionID and SessionFile are the child's session ("" file when it
	// is kept in memory).
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"`
	// Model is the child's model; Tools the tools it had.
	Model      string         `json:"model,omitempty"`
	Tools      []string       `json:"tools"`
	Turns      int            `json:"turns"`
	Usage      llm.Usage      `json:"usage"`
	StopReason llm.StopReason `json:"stopReason,omitempty"`
	// Notes say what of the definition was not applied (a model that did
	// not resolve).
	Notes []string `json:"notes,omitempty"`
}

// runTask runs one task call: a child conversation, its prompt, its answer
// as the result. It waits for a free place among the conversation's
// running children (max_parallel); cancelling ctx (the parent's abort)
// aborts the child.
func (c *Conversation) runTask(ctx context.Context, call tool.Call, _ tool.Context) (tool.Result, error) {
	var args struct {
		Agent, Description, Prompt string
	}
	if err := json.Unmarshal(call.Input, &args); err != nil {
		return tool.ErrorResult("task: " + err.Error()), nil
	}
	defs := c.agentDefs()
	def := subagent.Definition{Name: GeneralAgent}
	if name := strings.TrimSpace(args.Agent); name != "" && name != GeneralAgent {
		d, ok := defs.Find(name)
		if !ok {
			known := append([]string{GeneralAgent}, defs.Names()...)
			return tool.ErrorResult(fmt.Sprintf("task: no agent %q (the agents: %s)", name, strings.Join(known, ", "))), nil
		}
		def = d
	}
	select {
	case c.subagents.sem <- struct{}{}:
	case <-ctx.Done():
		return tool.ErrorResult("task: aborted before the agent started"), nil
	}
	defer func() { <-c.subagents.sem }()

	child, details, err := c.newChild(def, call)
	if err != nil {
		return tool.ErrorResult("task: " + err.Error()), nil
	}
	defer child.Close()
	details.Description = args.Description
	// Whatever runs on the child's behalf runs only its tools, an
	// extension's tool.call included.
	ctx = app.WithToolLimit(ctx, details.Tools)
	sub, err := child.prompt(ctx, args.Prompt, nil, Submitted{})
	res := tool.Result{Details: details}
	if sub.Result != nil {
		details.Turns, details.Usage, details.StopReason = sub.Result.Turns, sub.Result.Usage, sub.Result.StopReason
	}
	switch {
	case ctx.Err() != nil:
		res.IsError = true
		res.Content = []tool.ContentBlock{tool.Text(fmt.Sprintf("task: agent %s was aborted", def.Name))}
	case err != nil:
		res.IsError = true
		res.Content = []tool.ContentBlock{tool.Text(fmt.Sprintf("task: agent %s failed: %v", def.Name, err))}
	default:
		text := sub.Result.Text
		if strings.TrimSpace(text) == "" {
			text = fmt.Sprintf("(agent %s ended without an answer)", def.Name)
		}
		res.Content = []tool.ContentBlock{tool.Text(text)}
	}
	res.Details = details
	return res, nil
}

// newChild opens the child conversation of a task call: its session beside
// the parent's (in subagents/, its header naming the parent's file; in
// memory when the parent keeps none), the parent's model and thinking level
// unless the definition names its own, and its events sent on to the
// parent's listeners as subagent_event.
func (c *Conversation) newChild(def subagent.Definition, call tool.Call) (*Conversation, *TaskDetails, error) {
	allowed := []string{}
	for _, d := range c.activeDefinitions() {
		if def.Tools == nil || slices.Contains(def.Tools, d.Name) {
			allowed = append(allowed, d.Name)
		}
	}
	so := c.sessionOptions()
	cso := SessionOptions{Disabled: so.Disabled, NoCheckpoints: true}
	parentFile := c.sessionFile()
	if !so.Disabled && parentFile != "" {
		cso.Dir = filepath.Join(filepath.Dir(parentFile), "subagents")
	} else {
		cso.Disabled = true
	}
	info := &agent.SubagentInfo{Agent: def.Name, ToolCallID: call.ID, Depth: c.depth() + 1}
	spec := &childSpec{def: def, depth: c.depth() + 1, allowed: allowed, parentFile: parentFile}
	o := Options{
		Session: &cso, Provider: c.opts.Provider, ModelName: c.opts.ModelName,
		SystemPrompt: c.opts.SystemPrompt, AppendSystemPrompt: c.opts.AppendSystemPrompt,
		MaxTurns: c.opts.MaxTurns, Checkpoints: CheckpointOptions{Disabled: true},
		child: spec,
		OnEvent: func(ev agent.Event) {
			if ev.Type == agent.EventSessionStart || ev.Type == agent.EventSessionShutdown {
				return
			}
			c.emit(agent.Event{Type: agent.EventSubagent, Subagent: info, Event: &ev})
			if ev.Type == agent.EventToolExecutionStart && ev.Subagent == nil {
				call.Update(tool.Result{Content: []tool.ContentBlock{tool.Text(fmt.Sprintf("%s: %s", def.Name, ev.ToolName))}, Details: info})
			}
		},
	}
	spec.set = c.agentDefs()
	child, err := New(c.rt, o)
	if err != nil {
		return nil, nil, err
	}
	info.ID = child.Session().ID() // before any event but session_start
	c.mu.Lock()
	child.model, child.thinking = c.model, c.thinking
	c.mu.Unlock()
	details := &TaskDetails{Agent: def.Name, SessionID: info.ID, SessionFile: child.sessionFile(), Tools: allowed}
	switch {
	case def.Model != "" && c.opts.Provider != nil:
		details.Notes = append(details.Notes, fmt.Sprintf("model %q not used: the front end gives the model", def.Model))
	case def.Model != "":
		if err := child.SetModel("", def.Model); err != nil {
			if !def.Claude {
				child.Close()
				return nil, nil, fmt.Errorf("agent %s: model %q: %w", def.Name, def.Model, err)
			}
			details.Notes = append(details.Notes, fmt.Sprintf("model %q not used (%v); the parent's model ran", def.Model, errors.Unwrap(err)))
		}
	}
	if def.Thinking != "" {
		if _, err := child.SetThinkingLevel(def.Thinking); err != nil {
			details.Notes = append(details.Notes, err.Error())
		}
	}
	if m, err := child.Model(); err == nil {
		details.Model = m.Provider + "/" + m.ID
	}
	return child, details, nil
}

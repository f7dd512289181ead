package config

// Agents is [agents]: the sub-agents and their task tool (docs/agents.md).
type Agents struct {
	// Task makes the task tool active even without agent definitions (it
	// then runs a general-purpose child with the parent's tools).
	Task bool
	// Claude reads Claude Code's .claude/agents folders too.
	Claude bool
	// MaxParallel bounds the children of one conversation running at once;
	// 0 when no file sets it (the default is DefaultAgentsMaxParallel).
	MaxParallel int
	// MaxDepth is how deep children may nest: 1 gives the children no
	// task tool; 0 when no file sets it (the default is
	// DefaultAgentsMaxDepth).
	MaxDepth int
}

// Parallel is MaxParallel, or its default when not set.
func (a Agents) Parallel() int {
	if a.MaxParallel > 0 {
		return a.MaxParallel
	}
	return DefaultAgentsMaxParallel
}

// Depth is MaxDepth, or its default when not set.
func (a Agents) Depth() int {
	if a.MaxDepth > 0 {
		return a.MaxDepth
	}
	return DefaultAgentsMaxDepth
}

// Defaults of [agents].
const (
	DefaultAgentsMaxParallel = 4
	DefaultAgentsMaxDepth    = 1
	maxAgentsParallel        = 64
	maxAgentsDepth           = 8
)

var agentsKeys = []string{"task", "claude", "max_parallel", "max_depth"}

// agentsLayer is one file's [agents]; nil pointers are keys not set.
type agentsLayer struct {
	task, claude          *bool
	maxParallel, maxDepth *int
}

func (d *decoder) agents(l *layer, v any) {
	m, ok := d.table("agents", v, agentsKeys)
	if !ok {
		return
	}
	if v, ok := m["task"]; ok {
		if b, ok := d.boolean("agents.task", v); ok {
			l.agents.task = &b
		}
	}
	if v, ok := m["claude"]; ok {
		if b, ok := d.boolean("agents.claude", v); ok {
			l.agents.claude = &b
		}
	}
	if v, ok := m["max_parallel"]; ok {
		if n, ok := d.positive("agents.max_parallel", v, maxAgentsParallel, "children"); ok {
			l.agents.maxParallel = &n
		}
	}
	if v, ok := m["max_depth"]; ok {
		if n, ok := d.positive("agents.max_depth", v, maxAgentsDepth, "levels"); ok {
			l.agents.maxDepth = &n
		}
	}
}

// applyAgents lays the layer's [agents] over c.
func (l *layer) applyAgents(c *Config) {
	a := l.agents
	if a.task != nil {
		c.Agents.Task = *a.task
	}
	if a.claude != nil {
		c.Agents.Claude = *a.claude
	}
	if a.maxParallel != nil {
		c.Agents.MaxParallel = *a.maxParallel
	}
	if a.maxDepth != nil {
		c.Agents.MaxDepth = *a.maxDepth
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// app is the runtime the commands share: configuration, the tool registry
// with its active set, the extension host and the hooks.
type app struct {
	cwd      string
	piHome   string
	cfg      *config.Config
	logger   hclog.Logger
	registry *tool.Registry
	host     *extensions.Host
	hooks    *tool.Hooks
	closers  []func()
	// redactor hides the model's API key in every output.
	redactor *redact.Redactor
	// outDir holds bash's full-output files; closed (removed) by close.
	outDir *builtin.OutputDir
}

// buildApp loads configuration, loads the extensions and registers every
// tool. apiKey is --api-key (""), for the key's redaction and for hiding it
// from commands. On failure everything already started is closed.
func buildApp(ctx context.Context, f *commonFlags, stderr io.Writer, apiKey string) (a *app, err error) {
	cwd := f.cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("working directory %s: %w", cwd, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--cwd %s: not a directory", cwd)
	}
	logOut := &redactingWriter{w: stderr}
	built := &app{cwd: abs, piHome: config.DefaultPIHome(), logger: newLogger(f.logLevel, logOut), registry: tool.NewRegistry(), hooks: &tool.Hooks{}}
	defer func() {
		if err != nil {
			built.close()
		}
	}()
	a = built
	cfg, err := config.Load(config.LoadOptions{Cwd: abs, PIHome: a.piHome, ConfigFile: f.configFile, Trust: f.trust || os.Getenv("PI_TRUST") == "1"})
	if err != nil {
		return nil, err
	}
	a.cfg = cfg
	for _, w := range cfg.Warnings {
		fmt.Fprintf(stderr, "pi: warning: %s\n", w)
	}
	key, keyEnv := modelKey(cfg, apiKey)
	a.redactor = redact.New(key)
	logOut.r.Store(a.redactor)
	if key != "" && !redact.IsSecret(key) {
		a.logger.Debug("the API key is shorter than the secret minimum; it is not redacted", "min_bytes", redact.MinLen, "from", keyEnv)
	}
	hide := hiddenEnv(cfg, key)
	outDir, logger := builtin.NewOutputDir(""), a.logger
	a.outDir = outDir
	a.closers = append(a.closers, func() {
		if err := outDir.Close(); err != nil {
			logger.Warn("bash full-output files not removed", "error", err.Error())
		}
	})

	specs := make([]extensions.Spec, 0, len(cfg.Extensions)+len(f.extensions))
	for _, e := range cfg.Extensions {
		specs = append(specs, extensions.Spec{
			Name: e.Name, Path: e.Path, SHA256: e.SHA256, Override: e.Override,
			Grants: extensions.Grants{FS: e.Grants.FS, Exec: e.Grants.Exec, Env: e.Grants.Env},
			Limits: extensions.Limits{MemoryMB: e.Limits.MemoryMB, TimeoutMS: e.Limits.TimeoutMS},
			Config: e.Config, Scope: e.Scope,
		})
	}
	for _, p := range f.extensions {
		path, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("-e %s: %w", p, err)
		}
		specs = append(specs, extensions.Spec{Path: path, Scope: "flag"})
	}
	var spawnHooks []tool.SpawnHook
	if len(specs) > 0 {
		host, err := extensions.NewHost(ctx, extensions.Options{
			CacheDir: filepath.Join(a.piHome, "cache"), Logger: a.logger,
			ProjectRoot: cfg.ProjectRoot, Cwd: abs, HostName: "pi", HostVersion: version,
			HideEnv: hide,
		})
		if err != nil {
			return nil, err
		}
		a.host = host
		a.closers = append(a.closers, func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			host.Close(cctx)
		})
		for _, s := range specs {
			if _, err := host.Load(ctx, s); err != nil {
				return nil, err
			}
		}
		a.hooks = host.Hooks()
		spawnHooks = redactSpawnHooks(host.SpawnHooks(), a.redactor)
	}

	bashOpts := builtin.BashOptions{
		Shell: cfg.Tools.Bash.Shell, CommandPrefix: cfg.Tools.Bash.CommandPrefix, SpawnHooks: spawnHooks,
		HideEnv: hide, OutputDir: a.outDir, FullOutputMaxBytes: int64(cfg.Tools.Bash.FullOutputMaxMB) << 20,
		Redactor: a.redactor,
	}
	for _, d := range builtin.Definitions(builtin.Options{Bash: bashOpts}) {
		if err := a.registry.Register(d); err != nil {
			return nil, err
		}
	}
	active := append([]string(nil), builtin.DefaultActive...)
	if a.host != nil {
		for _, e := range a.host.Extensions() {
			for _, d := range e.Definitions() {
				if err := a.registry.Register(d); err != nil {
					return nil, err
				}
				active = append(active, d.Name)
			}
		}
	}
	switch {
	case f.tools != "":
		if err := a.registry.SetActive(splitList(f.tools)); err != nil {
			return nil, fmt.Errorf("--tools: %w", err)
		}
	case cfg.Tools.Active != nil:
		if err := a.registry.SetActive(cfg.Tools.Active); err != nil {
			return nil, fmt.Errorf("%s: tools.active: %w", describeFiles(cfg.Files), err)
		}
	default:
		if err := a.registry.SetActive(active); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func describeFiles(files []string) string {
	if len(files) == 0 {
		return "pi.toml"
	}
	return strings.Join(files, ", ")
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// contextFactory gives each tool call the working directory and a logger
// named for the tool.
func (a *app) contextFactory() tool.ContextFactory {
	return func(name string) tool.Context {
		return tool.Context{Cwd: a.cwd, Logger: a.logger.Named(name)}
	}
}

const defaultBaseURL = llm.DefaultBaseURL

// provider picks the model: --script, else an OpenAI-compatible endpoint
// from flags, pi.toml and the environment (the key as modelKey finds it).
func (a *app) provider(f *agentFlags) (llm.Provider, error) {
	if f.script != "" {
		s, err := llm.LoadScript(f.script)
		if err != nil {
			return nil, err
		}
		return llm.NewScripted(s), nil
	}
	m := a.cfg.Model
	baseURL := firstNonEmpty(f.baseURL, m.BaseURL, os.Getenv("OPENAI_BASE_URL"), defaultBaseURL)
	key, keyEnv := modelKey(a.cfg, f.apiKey)
	name := firstNonEmpty(f.model, m.Name)
	if key == "" && baseURL == defaultBaseURL {
		return nil, fmt.Errorf("no model configured: set %s (and optionally [model] name in pi.toml), or pass --api-key and --model, or --base-url for a local endpoint.\nTo try pi offline: pi demo, or pi --script FILE", keyEnv)
	}
	if name == "" {
		return nil, fmt.Errorf("no model name: pass --model NAME or set [model] name in pi.toml")
	}
	images := true
	if m.Images != nil {
		images = *m.Images
	}
	keySource := keyEnv
	if f.apiKey != "" {
		keySource = "--api-key"
	}
	p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: baseURL, Model: name, APIKey: key, APIKeyEnv: keySource, Images: images, Logger: a.logger.Named("llm")})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// newAgent builds the loop with the active tools, the hooks, the system
// prompt and an event sink for the chosen output mode.
func (a *app) newAgent(f *agentFlags, p llm.Provider, stdout, stderr io.Writer, interactive bool) (*agent.Agent, error) {
	tools, err := a.registry.ActiveTools(a.contextFactory())
	if err != nil {
		return nil, err
	}
	agentsMD, err := agent.LoadAgentsMD(a.cwd)
	if err != nil {
		a.logger.Warn("AGENTS.md not read", "error", err)
	}
	sys := agent.BuildSystemPrompt(agent.PromptOptions{
		Tools: a.registry.ActiveDefinitions(), Cwd: a.cwd, AgentsMD: agentsMD,
		Override: f.systemPrompt, Append: f.appendPrompt, Now: time.Now(),
	})
	hooks := redactionHooks(a.hooks, a.redactor)
	var sink func(agent.Event)
	switch {
	case f.mode == "json":
		sink = jsonEventWriter(stdout, a.redactor)
	case interactive:
		r := &textRenderer{out: stdout, tools: stdout, preview: 4, redactor: a.redactor, spin: &spinner{w: terminalOrNil(stderr)}}
		sink = r.onEvent
	default:
		r := &textRenderer{out: stdout, tools: stderr, redactor: a.redactor, spin: &spinner{}}
		sink = r.onEvent
	}
	if a.host != nil {
		host := a.host
		next := sink
		sink = func(ev agent.Event) {
			next(ev)
			switch ev.Type {
			case agent.EventAgentStart, agent.EventAgentEnd, agent.EventTurnStart, agent.EventTurnEnd,
				agent.EventToolExecutionStart, agent.EventToolExecutionEnd:
				// Extensions see events with the key already redacted.
				raw, err := redactedJSON(a.redactor, ev)
				if err != nil {
					a.logger.Warn("extension event: cannot marshal event", "type", string(ev.Type), "error", err.Error())
					return
				}
				host.Event(context.Background(), raw)
			}
		}
	}
	return agent.New(agent.Config{
		Provider: p, Tools: tools, Hooks: hooks, SystemPrompt: sys,
		Sequential: a.cfg.ToolExecution == "sequential", Logger: a.logger.Named("agent"),
		OnEvent: sink, MaxTurns: f.maxTurns,
	}), nil
}

func terminalOrNil(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && isTerminalFile(f) {
		return w
	}
	return nil
}

func isTerminalFile(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func newLogger(level string, w io.Writer) hclog.Logger {
	lvl := hclog.LevelFromString(level)
	if strings.EqualFold(level, "off") {
		lvl = hclog.Off
	} else if lvl == hclog.NoLevel {
		lvl = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "pi", Level: lvl, Output: w})
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

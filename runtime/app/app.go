package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/mcp"
	"github.com/pi-go/pi/runtime/models"
	"github.com/pi-go/pi/runtime/permission"
	"github.com/pi-go/pi/runtime/redact"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// Options say how to assemble a Runtime. The zero value is a runtime for
// the process's working directory with the default PI_HOME, no logging and
// the tools pi.toml (or the default set) makes active.
type Options struct {
	// Cwd is the working directory of tools and the start of the pi.toml
	// search; "" means the process's working directory.
	Cwd string
	// PIHome holds the global pi.toml, trust.json and the compilation
	// cache; "" means config.DefaultPIHome() ($PI_HOME, else ~/.pi/agent).
	PIHome string
	// ConfigFile is an extra pi.toml layered over the project's (--config);
	// it is trusted for the run.
	ConfigFile string
	// Trust trusts the project's pi.toml for this run (--trust, PI_TRUST=1).
	Trust bool
	// Extensions are more .wasm files to load for this run (-e), with no
	// grants and no sha256 check.
	Extensions []string
	// ExtensionFlags are more .wasm files to load for this run, each with
	// the grants and config given for it on the command line (-e FILE
	// --grant ... --ext-config ...); no sha256 check. They load after
	// Extensions.
	ExtensionFlags []ExtensionFlag
	// Tools, when not nil, is the active set (--tools); else [tools] active
	// in pi.toml, else the built-in default plus every extension tool.
	Tools []string
	// Model overrides [model] in pi.toml (flags); see ResolveModel.
	Model ModelOptions
	// LogOutput receives the runtime's log lines (the API key redacted);
	// nil discards them.
	LogOutput io.Writer
	// LogLevel is trace, debug, info, warn (the default), error or off.
	LogLevel string
	// OnWarning receives each configuration warning (an untrusted project,
	// settings that were ignored); nil logs them at warn level.
	OnWarning func(string)
	// Approver answers the calls that an extension hook or a permission
	// rule wants approved. Nil with a UI asks the person through it
	// (UIApprover); nil without one blocks such calls with "needs
	// approval: ...". YesApprover (--yes) approves every ask, never
	// overriding a block or a deny. The runtime remembers an "always"
	// answer per permission rule (per question for hooks) for its life.
	Approver Approver
	// HostName and HostVersion are what extensions are told in init (and
	// MCP servers in initialize); defaults "pi" and "dev".
	HostName, HostVersion string
	// MCPStart says when the [[mcp]] servers start; the default,
	// MCPPrepare, is what an agent run wants.
	MCPStart MCPStart

	// ABI 1.1 (abi11.go).

	// Mode is how the front end runs, told to extensions: ModeInteractive,
	// ModePrint (the default), ModeJSON, ModeRPC, ModeTool or ModeInspect.
	Mode string
	// UI asks and tells the person in front of the front end: extensions'
	// ui.notify and ui.confirm, and, when Ask and Approve are nil, the calls
	// that need approval (UIApprover). Nil when no person is there (print,
	// json and tool modes).
	UI UI
	// TUI says pi's terminal UI runs (extensions' init gets tui: true;
	// components, shortcuts and renderers show).
	TUI bool

	// CompileProgress is told before the wait when an extension must be
	// compiled because the compilation cache has no copy (compile.go).
	CompileProgress CompileProgress

	// Sandbox (--sandbox) replaces [sandbox] mode for this run: off, full,
	// workspace-write or read-only (docs/sandbox.md).
	Sandbox string
	// SandboxPrivate are folders whose contents bash commands must not
	// see, reads included, but for the writable roots inside them (Linux;
	// sandbox.Policy.Private): pi fleet's workspaces' folder.
	SandboxPrivate []string
	// ConfineFileTools denies every tool call that opens a path outside the
	// project root, the working directory and $TMPDIR (confine.go): what
	// pi fleet sets for its runs, whose built-in file tools run outside
	// the kernel sandbox.
	ConfineFileTools bool
	// SandboxHelper is the program that applies the sandbox to each bash
	// command; "" is the running program's own file (/proc/self/exe),
	// which serves as the helper because it links this package
	// (SandboxHelperArg).
	SandboxHelper string

	// ABI 1.2 (run12.go).

	// ReservedFlags are pi's own long flags (without dashes), which an
	// extension's flags may not take.
	ReservedFlags []string
}

// ExtensionInfo describes a loaded extension: what its init declared and
// what it was granted.
type ExtensionInfo = extensions.Info

// Runtime is an assembled pi: configuration, the tool registry with its
// active set, the extension host, the hooks and the redaction of the
// model's API key. Its methods may be called from several goroutines; Close
// ends everything it started.
type Runtime struct {
	opts Options
	// cacheOnce checks the cache folders once (caches).
	cacheOnce sync.Once
	cacheDirs cacheDirs
	cwd       string
	piHome    string
	cfg       *config.Config
	logger    hclog.Logger
	registry  *tool.Registry
	// hostp is the extension host (nil without any extension); hooksp the
	// extensions' tool_call and tool_result hooks wrapped with the key's
	// redaction, the permission rules and approvals. Both change only
	// with pi.reload (reload.go): read them with extHost and Hooks.
	hostp    atomic.Pointer[extensions.Host]
	hooksp   atomic.Pointer[tool.Hooks]
	redactor *redact.Redactor
	// hideEnv names the variables commands must not get (the key's).
	hideEnv []string
	// outDir holds bash's full-output files; Close removes it.
	outDir *builtin.OutputDir
	// procs owns the processes of the runtime's bash calls; Close ends
	// them (and no other runtime's).
	procs   *builtin.Processes
	closers []func()
	// policy is [permissions] (nil when not configured); approvals holds
	// the "always" answers of the Approver.
	policy    *permission.Policy
	approvals *approvals
	// run12 is ABI 1.2's state (run12.go).
	run12 run12State

	// bashp are bash's options, for RunBash (their spawn hooks change
	// with pi.reload).
	bashp atomic.Pointer[builtin.BashOptions]
	// box is bash's sandbox as configured (nil: none); plan is plan mode
	// (plan.go), under planMu with the active set it replaced.
	box *sandbox.Policy
	// boxImplicit: box is the default, not asked for, so a kernel that
	// cannot give it is found at the first command (boxOnce), which then
	// runs without it (boxOff).
	boxImplicit bool
	boxOnce     sync.Once
	// rerunAsk makes the re-run questions one at a time (askRerun).
	rerunAsk  sync.Mutex
	boxOff    bool
	plan      atomic.Bool
	planMu    sync.Mutex
	planSaved []string
	// session is where extensions' session.append and session.entries
	// go: set by the conversation that keeps the session (BindSession).
	session atomic.Pointer[func() *session.Session]
	// c12 is the ABI 1.2 conversation side (session12.go).
	c12 conv12

	// mcp owns the [[mcp]] servers (nil without any); mcpNames are its
	// tools in the registry as of mcpGen, the manager's generation at the
	// last sync; toolsGen counts the syncs that changed the registry.
	mcp       *mcp.Manager
	mcpMu     sync.Mutex
	mcpNames  []string
	mcpGen    uint64
	mcpSynced bool
	toolsGen  atomic.Uint64
	// baseActive is the default active set without MCP tools; wantActive
	// the names asked for (nil: the default).
	baseActive, wantActive []string

	// ext12 is what pi.reload keeps across extension sets (reload.go).
	reload reloadState
}

// Open assembles a Runtime. On failure everything already started is closed
// again.
//
// # Errors
//
// A working directory that is not a directory; pi.toml errors (with file,
// line and key); an extension that fails to load (with its name and why: a
// security hook that silently did not load would be a bypass); an unknown
// name in the active set. A
// pi.toml extension whose file no longer has its pinned sha256 is the
// exception: it is disabled, fail closed, with a warning naming `pi ext
// update NAME`, and the rest loads (disabled.go).
func Open(ctx context.Context, opts Options) (rt *Runtime, err error) {
	r := &Runtime{opts: opts, registry: tool.NewRegistry()}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if err := r.loadConfig(); err != nil {
		return nil, err
	}
	// The sandbox before what may start processes under it (extensions'
	// exec, MCP servers with sandbox = true, bash).
	if r.box, err = r.sandboxPolicy(); err != nil {
		return nil, err
	}
	r.closers = append(r.closers, r.closeHost)
	set, err := r.loadExtensions(ctx, r.cfg)
	if err != nil {
		return nil, err
	}
	r.hostp.Store(set.host)
	if err := r.startMCP(ctx); err != nil {
		return nil, err
	}
	r.procs = builtin.NewProcesses()
	r.closers = append(r.closers, r.procs.Close)
	r.approvals = &approvals{always: map[string]bool{}, pending: map[string][]string{}}
	// Permissions: the rules of [permissions], and a person's "always".
	if r.policy, err = r.buildPolicy(); err != nil {
		return nil, err
	}
	if err := r.installTools(set); err != nil {
		return nil, err
	}
	r.recordStartActive()
	return r, nil
}

// loadConfig resolves the working directory and PI_HOME, starts the
// redacting logger, loads pi.toml and works out the key's redaction.
func (r *Runtime) loadConfig() error {
	cwd, err := workingDir(r.opts.Cwd)
	if err != nil {
		return err
	}
	r.cwd = cwd
	r.piHome = r.opts.PIHome
	if r.piHome == "" {
		r.piHome = config.DefaultPIHome()
	}
	cfg, err := r.readConfig()
	if err != nil {
		return err
	}
	r.cfg = cfg
	key, keyEnv := modelKey(cfg, r.opts.Model.APIKey)
	// Every provider's key is a secret, not only the one in use: /model
	// may switch to another, and no command may read any of them.
	// (models.Secrets reads the models file, not the catalogue: a run
	// that never resolves a model pays nothing for it.)
	mf, _, regErr := models.ReadFile(r.piHome)
	otherKeys, keyVars := models.Secrets(mf, nil)
	r.redactor = redact.New(append([]string{key}, otherKeys...)...)
	r.hideEnv = cfg.HiddenEnv(key, otherKeys, keyVars...)
	logOut := r.opts.LogOutput
	if logOut == nil {
		logOut = io.Discard
	}
	r.logger = newLogger(r.opts.LogLevel, r.redactor.Writer(logOut))
	if key != "" && !redact.IsSecret(key) {
		r.logger.Debug("the API key is shorter than the secret minimum; it is not redacted", "min_bytes", redact.MinLen, "from", keyEnv)
	}
	for _, w := range cfg.Warnings {
		r.warn(w)
	}
	if regErr != nil {
		r.warn(regErr.Error())
	}
	outDir, logger := builtin.NewOutputDir(""), r.logger
	r.outDir = outDir
	r.closers = append(r.closers, func() {
		if err := outDir.Close(); err != nil {
			logger.Warn("bash full-output files not removed", "error", err.Error())
		}
	})
	return nil
}

// readConfig loads pi.toml as the options say (at start and for
// pi.reload: the same files, the same trust).
func (r *Runtime) readConfig() (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{Cwd: r.cwd, PIHome: r.piHome, ConfigFile: r.opts.ConfigFile, Trust: r.opts.Trust})
	if err != nil {
		return nil, err
	}
	if r.opts.Sandbox != "" {
		if cfg, err = cfg.With(config.Overrides{SandboxMode: r.opts.Sandbox}); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// warn tells the user w: through Options.OnWarning, else the log.
func (r *Runtime) warn(w string) {
	if r.opts.OnWarning != nil {
		r.opts.OnWarning(w)
	} else {
		r.logger.Warn(w)
	}
}

// workingDir makes dir ("" for the process's) absolute and checks that it
// is a directory (config.WorkingDir).
func workingDir(dir string) (string, error) { return config.WorkingDir(dir) }

// extensionSpecs lists what to load: pi.toml's [[extensions]], then the
// extra files of Options.Extensions.
func (r *Runtime) extensionSpecs(cfg *config.Config) ([]extensions.Spec, error) {
	specs := make([]extensions.Spec, 0, len(cfg.Extensions)+len(r.opts.Extensions))
	for _, e := range cfg.Extensions {
		specs = append(specs, extensions.Spec{
			Name: e.Name, Path: e.Path, SHA256: e.SHA256, Override: e.Override,
			Grants: e.Grants, Limits: e.Limits, Config: e.Config, Scope: e.Scope, File: e.File,
			ConfigKey: config.ExtensionConfigKey(cfg.Extensions, e),
		})
	}
	for _, p := range r.opts.Extensions {
		path, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("extension %s: %w", p, err)
		}
		specs = append(specs, extensions.Spec{Path: path, Scope: "flag"})
	}
	return appendFlagSpecs(specs, r.opts.ExtensionFlags)
}

// hostOptions are the extension host's options for this runtime, with
// cfg's project.
func (r *Runtime) hostOptions(cfg *config.Config) extensions.Options {
	return extensions.Options{
		CacheDir: r.caches().cache, Logger: r.logger,
		ProjectRoot: cfg.ProjectRoot, Cwd: r.cwd,
		HostName: firstNonEmpty(r.opts.HostName, "pi"), HostVersion: firstNonEmpty(r.opts.HostVersion, "dev"),
		HideEnv: r.hideEnv,
		// Granted execs run under bash's sandbox (plan mode's too).
		Sandbox: r.bashSandbox, SandboxHelper: r.opts.SandboxHelper,
		Mode: r.mode(), Trusted: r.trusted(cfg), KVDir: r.kvDir(), UI: r.extensionUI(),
		Session: extSession{r},
		TUI:     r.opts.TUI,
		// Lazy loads: records of what pinned extensions declared, in
		// PI_HOME (as trusted as pi.toml: a record decides which hooks
		// are registered before the module runs).
		DeclaredDir: r.caches().lazy,
		// ABI 1.2: tools.*, model.*, llm.complete, pi.* (run12.go).
		Controls: extControls{r}, ReservedFlags: r.opts.ReservedFlags,
	}.WithCompileProgress(r.opts.CompileProgress)
}

// extSet is one set of extensions as pi.toml (cfg) and the flags ask for
// them: loaded, with what the runtime builds on them. Open installs the
// first; pi.reload builds another and installs it in place of the old
// (reload.go).
type extSet struct {
	cfg *config.Config
	// host is nil when no extension is asked for.
	host *extensions.Host
	// disabled are pi.toml extensions not loaded because their file
	// changed (see disabled.go).
	disabled []disabledExtension
	// hooks are the extensions' tool_call and tool_result hooks (the
	// disabled ones' included); spawn their bash_spawn hooks, shown the
	// key redacted.
	hooks *tool.Hooks
	spawn []tool.SpawnHook
}

// close ends the set's extensions (a set that was not installed).
func (s extSet) close() {
	if s.host == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.host.Close(cctx)
}

// closeHost ends the installed extensions.
func (r *Runtime) closeHost() { extSet{host: r.extHost()}.close() }

// extHost is the extension host of the installed set (nil: none).
func (r *Runtime) extHost() *extensions.Host { return r.hostp.Load() }

// loadExtensions starts a host and loads every extension cfg and the
// options ask for. On failure what it started is closed again.
func (r *Runtime) loadExtensions(ctx context.Context, cfg *config.Config) (set extSet, err error) {
	set = extSet{cfg: cfg, hooks: &tool.Hooks{}}
	specs, err := r.extensionSpecs(cfg)
	if err != nil || len(specs) == 0 {
		return set, err
	}
	host, err := extensions.NewHost(ctx, r.hostOptions(cfg))
	if err != nil {
		return set, err
	}
	set.host = host
	defer func() {
		if err != nil {
			set.close()
		}
	}()
	for _, s := range specs {
		e, err := host.Load(ctx, s)
		if d, ok := r.disableOnMismatch(cfg, s, err); ok {
			r.warn(d.message)
			set.disabled = append(set.disabled, d)
			continue
		}
		if err != nil {
			return set, err
		}
		recordLoaded(r.caches().declared, e, s.SHA256)
	}
	set.hooks = host.Hooks()
	spawn := append(host.SpawnHooks(), addDisabledHooks(set.disabled, set.hooks)...)
	set.spawn = redactSpawnHooks(spawn, r.redactor)
	host.SetToolRunner(r.guestToolRunner)
	return set, nil
}

// bashOptions are bash's options with the given spawn hooks.
func (r *Runtime) bashOptions(spawnHooks []tool.SpawnHook) builtin.BashOptions {
	bash := r.cfg.Tools.Bash
	return builtin.BashOptions{
		Shell: bash.Shell, CommandPrefix: bash.CommandPrefix, SpawnHooks: spawnHooks,
		HideEnv: r.hideEnv, Processes: r.procs, OutputDir: r.outDir,
		FullOutputMaxBytes: int64(bash.FullOutputMaxMB) << 20, Redactor: r.redactor,
		DefaultTimeout: float64(cmp.Or(bash.DefaultTimeout, DefaultBashTimeout)),
		Sandbox:        r.bashSandbox, SandboxHelper: r.opts.SandboxHelper,
		SandboxUserCommands: r.cfg.Sandbox.UserCommands,
		Unsandboxed:         r.unsandboxed, AskRerun: r.askRerun,
	}
}

// toolSet is what installTools puts in the registry for a set: the
// built-in tools (bash with the set's spawn hooks), then the extensions'
// tools, then the disabled extensions' stand-ins; active is the default
// active set (without MCP tools).
type toolSet struct {
	reg    *tool.Registry
	bash   builtin.BashOptions
	active []string
}

func (r *Runtime) buildTools(set extSet) (toolSet, error) {
	ts := toolSet{reg: tool.NewRegistry(), bash: r.bashOptions(set.spawn)}
	for _, d := range builtin.Definitions(builtin.Options{Bash: ts.bash}) {
		if err := ts.reg.Register(d); err != nil {
			return ts, err
		}
	}
	ts.active = builtin.DefaultActive()
	if set.host != nil {
		for _, e := range set.host.Extensions() {
			for _, d := range e.Definitions() {
				if err := ts.reg.Register(d); err != nil {
					return ts, err
				}
				ts.active = append(ts.active, d.Name)
			}
		}
	}
	for _, d := range disabledDefinitions(set.disabled) {
		if err := ts.reg.Register(d); err != nil {
			return ts, err
		}
		ts.active = append(ts.active, d.Name)
	}
	return ts, nil
}

// hooksFor are the hooks every tool call runs through with set's
// extensions: theirs with the key's redaction, the permission rules
// (r.policy), the confinement of the file tools, the approver.
func (r *Runtime) hooksFor(set extSet) *tool.Hooks {
	hooks := redactionHooks(set.hooks, r.redactor)
	if r.policy != nil {
		hooks.Permission = r.permissionFunc(r.policy)
	}
	if r.opts.ConfineFileTools {
		hooks.Permission = r.confine(hooks.Permission)
	}
	if a := r.approver(); a != nil {
		hooks.Approve = r.sessionApprove(a)
	}
	return hooks
}

// installTools puts set's tools in the registry (the MCP servers' after
// them), chooses the active set by cfg's [tools] active (or --tools) and
// makes set's hooks and bash options current.
//
// # Errors
//
// Two tools of one name (an extension's over a built-in without
// override): the registry is then as it was. An unknown name in the
// active set (the tools are installed).
func (r *Runtime) installTools(set extSet) error {
	ts, err := r.buildTools(set)
	if err != nil {
		return err
	}
	r.mcpMu.Lock()
	r.registry.ReplaceWith(ts.reg)
	r.baseActive = ts.active
	r.mcpNames, r.mcpSynced = nil, false
	r.mcpMu.Unlock()
	r.bashp.Store(&ts.bash)
	r.hooksp.Store(r.hooksFor(set))
	r.syncMCP()
	if err := r.chooseActive(set.cfg); err != nil {
		return err
	}
	r.toolsGen.Add(1)
	return nil
}

func describeFiles(files []string) string {
	if len(files) == 0 {
		return "pi.toml"
	}
	return strings.Join(files, ", ")
}

// Close ends what the runtime started: the processes of its bash calls
// (and none of another runtime's), the MCP servers (with their process
// groups), the extension host and bash's full-output folder. It is safe to
// call more than once.
func (r *Runtime) Close() {
	// The MCP servers first: they are pi's children in sessions of their
	// own, which bash's sweep of escaped processes (KillAllBash) would
	// otherwise SIGTERM as orphans before they were closed properly.
	if r.mcp != nil {
		r.mcp.Close()
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// Cwd is the absolute working directory of the tools.
func (r *Runtime) Cwd() string { return r.cwd }

// PIHome is the folder of the global pi.toml, trust.json and caches.
func (r *Runtime) PIHome() string { return r.piHome }

// Config is the loaded configuration (with untrusted settings dropped).
func (r *Runtime) Config() *config.Config { return r.cfg }

// Logger is the runtime's logger; its output has the API key redacted.
func (r *Runtime) Logger() hclog.Logger { return r.logger }

// Redactor hides the model's API key; front ends pass everything they
// print through it.
func (r *Runtime) Redactor() *redact.Redactor { return r.redactor }

// Registry holds every registered tool and the active set. The MCP tools
// in it are brought up to date by a conversation's runs (between turns),
// CallTool and SyncTools.
func (r *Runtime) Registry() *tool.Registry { return r.registry }

// SyncTools brings the registry up to date with the MCP servers' tools
// (which change when a server lists them again or dies); it reports whether
// anything changed.
func (r *Runtime) SyncTools() bool { return r.syncMCP() }

// Hooks are the hooks every tool call runs through: the extensions'
// tool_call and tool_result hooks, with the API key redacted from results
// before the first extension sees them and again after the last.
func (r *Runtime) Hooks() *tool.Hooks { return r.hooksp.Load() }

// Extensions describes the loaded extensions, in load order.
func (r *Runtime) Extensions() []ExtensionInfo {
	out := []ExtensionInfo{}
	if h := r.extHost(); h != nil {
		for _, e := range h.Extensions() {
			out = append(out, e.Info())
		}
	}
	return out
}

// ContextFactory gives each tool call the working directory, a logger
// named for the tool and, when path rules could stop reads, which files
// it leaves out (the policy's FileFilter for that call).
func (r *Runtime) ContextFactory() tool.ContextFactory {
	return func(name string) tool.Context {
		tc := tool.Context{Cwd: r.cwd, Logger: r.logger.Named(name)}
		if r.policy != nil {
			if f := r.policy.FileFilter(name); f != nil {
				tc.Hidden = f.Hides
			}
		}
		return tc
	}
}

// ErrUnknownTool is returned (wrapped) by CallTool for a name no tool has.
var ErrUnknownTool = errors.New("unknown tool")

// CallTool runs one call of the registered tool name (active or not)
// through the pipeline the agent loop uses: prepareArguments, validation,
// the tool_call hooks, execution, the tool_result hooks. The result has the
// API key redacted, a blocked call's reason and a validation error
// included. update, when not nil, receives partial results.
//
// # Errors
//
// Only ErrUnknownTool (naming the known tools) and a definition that cannot
// be wrapped; every other failure is an isError result, as the model would
// see it.
func (r *Runtime) CallTool(ctx context.Context, name, callID string, input json.RawMessage, update tool.UpdateFunc) (tool.Result, error) {
	def, ok := r.lookupTool(ctx, name)
	if !ok {
		return tool.Result{}, fmt.Errorf("%w %q; known tools: %s", ErrUnknownTool, name, strings.Join(r.ToolNames(), ", "))
	}
	t, err := tool.Wrap(def, r.ContextFactory())
	if err != nil {
		return tool.Result{}, err
	}
	res := tool.Run(ctx, []tool.AgentTool{t}, r.Hooks(), name, callID, input, update)
	return redactResult(r.redactor, res).Apply(res), nil
}

// ToolNames lists every registered tool's name, sorted.
func (r *Runtime) ToolNames() []string {
	var names []string
	for _, d := range r.registry.Definitions() {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// newLogger makes the runtime's logger; an unknown level means warn.
func newLogger(level string, w io.Writer) hclog.Logger {
	lvl := hclog.LevelFromString(level)
	if strings.EqualFold(level, "off") {
		lvl = hclog.Off
	} else if lvl == hclog.NoLevel {
		lvl = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "pi", Level: lvl, Output: w})
}

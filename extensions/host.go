package extensions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/pi-go/pi/internal/abi"
	"github.com/pi-go/pi/internal/sandbox"
)

// Options configure a Host. The zero value works: no cache, a null logger,
// the process's working directory as project root and cwd.
type Options struct {
	// CacheDir is the on-disk compilation cache ($PI_HOME/cache); "" = none.
	// Every Host of the process with the same CacheDir shares one cache.
	CacheDir string
	// Logger receives guest logs and stdout/stderr lines under
	// Logger.Named("ext."+name).
	Logger hclog.Logger
	// ProjectRoot anchors relative fs grants; default Cwd.
	ProjectRoot string
	// Cwd is sent to init and used for tool calls whose tool.Context has no
	// Cwd; default the process's working directory.
	Cwd string
	// HostName and HostVersion are sent to init.
	HostName, HostVersion string
	// LookupEnv reads granted environment variables; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// HideEnv names variables that an extension never gets, even when
	// grants.env names them (the variable that holds the model's API key):
	// not in its own environment, not in the commands it runs with exec.
	HideEnv []string
	// Sandbox, called at each exec, says under which kernel sandbox a
	// granted command runs (internal/sandbox: the bash tool's; nil, or a
	// policy that is not Active, runs it as it is). What it refused is
	// added to the command's stderr, one "Sandbox refused: ..." line each.
	Sandbox func() *sandbox.Policy
	// SandboxHelper is the program that applies the sandbox ("" is the
	// running program itself).
	SandboxHelper string

	// ABI 1.1 (see initfacts.go, commands.go, prompthooks.go and the host
	// methods kv.go, http.go, toolcall.go, ui.go).

	// Mode is how pi runs, told to init: interactive, print, json, rpc,
	// tool or inspect; default print.
	Mode string
	// Trusted says the project's pi.toml is trusted (or trusted for this
	// run), told to init.
	Trusted bool
	// KVDir holds the extensions' kv stores ($PI_HOME/kv); "" means none:
	// kv.* answer an error.
	KVDir string
	// UI shows ui.notify and asks ui.confirm; nil means no person can be
	// asked (init's hasUI is false, confirm answers "no-ui").
	UI UI
	// TUI says pi's terminal UI runs (init's tui, ABI 1.2): the UI (which
	// then implements UIComponents) shows components.
	TUI bool
	// Session stores session.append and answers session.entries; nil
	// answers "no session".
	Session Session
	// ReservedCommands are more command names an extension may not take,
	// besides BuiltinCommands.
	ReservedCommands []string

	// OnCompile, when set, is told about a module compile (the wait a
	// module not in the compilation cache costs: seconds for a Go guest)
	// that is still running after CompileNoticeAfter, with the module's
	// path; a zero CompileNoticeAfter tells it before the compile starts.
	// The function it returns (nil for none) is called when that compile
	// ends, with how long it took and its error. It may be called from
	// several loads at once.
	OnCompile func(path string) (done func(elapsed time.Duration, err error))
	// CompileNoticeAfter: see OnCompile.
	CompileNoticeAfter time.Duration

	// DeclaredDir, when set, keeps what pinned extensions' init answered
	// (lazy.go): a later Load of the same file (same sha256 pin, same
	// device, inode, size and mtime) with the same init request registers
	// the extension from that record without reading, hashing, compiling
	// or instantiating the module, which happens at its first call.
	DeclaredDir string

	// ABI 1.2 (run12.go, flags.go).

	// Controls answers tools.*, model.*, llm.complete, pi.shutdown and
	// pi.reload; nil answers them "not available in mode MODE".
	Controls Controls
	// ReservedFlags are pi's own flags (without dashes), which an
	// extension's flags may not take.
	ReservedFlags []string
}

// Host loads extensions and runs them. It is safe for concurrent use: calls
// into one extension are serialized, different extensions run in parallel.
type Host struct {
	opts   Options
	logger hclog.Logger

	closing atomic.Bool // set first thing in Close, read without h.mu

	mu       sync.Mutex
	closed   bool
	runtimes map[uint32]*hostRuntime // one per distinct memory limit
	exts     []*Extension
	cache    wazero.CompilationCache // nil: none

	http       *http.Transport // http.request's, shared by the extensions
	tools      atomic.Pointer[ToolRunner]
	subscribed atomic.Pointer[map[string]bool] // event types some extension takes
	components componentSet                    // open ABI 1.2 components (ui12.go)
	run12      hostRun12                       // ABI 1.2: timers, watches, bus, flags (timers.go)
}

// hostRuntime is one wazero runtime (one memory limit) with WASI and the `pi`
// host module instantiated in it.
type hostRuntime struct {
	r        wazero.Runtime
	wasi     map[string]api.FunctionDefinition
	pages    uint32
	compiled map[string]wazero.CompiledModule // by sha256, shared by extensions of this runtime
}

var (
	cachesMu sync.Mutex
	caches   = map[string]wazero.CompilationCache{}
)

// processCache returns the compilation cache for dir, shared by every
// runtime of the process. Caches live as long as the process.
func processCache(dir string) (wazero.CompilationCache, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("compilation cache %s: %w", dir, err)
	}
	cachesMu.Lock()
	defer cachesMu.Unlock()
	if c, ok := caches[abs]; ok {
		return c, nil
	}
	c, err := wazero.NewCompilationCacheWithDir(abs)
	if err != nil {
		return nil, fmt.Errorf("compilation cache %s: %w", abs, err)
	}
	caches[abs] = c
	return c, nil
}

// NewHost returns a Host with no extensions loaded.
//
// # Errors
//
// NewHost fails when the cache directory cannot be created or the working
// directory cannot be determined.
func NewHost(ctx context.Context, opts Options) (*Host, error) {
	_ = ctx
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("new extension host: %w", err)
		}
		opts.Cwd = wd
	}
	if opts.ProjectRoot == "" {
		opts.ProjectRoot = opts.Cwd
	}
	if opts.HostName == "" {
		opts.HostName = "pi"
	}
	if opts.Mode == "" {
		opts.Mode = abi.ModePrint
	}
	h := &Host{opts: opts, logger: opts.Logger, runtimes: map[uint32]*hostRuntime{}}
	h.http = newHTTPTransport()
	if opts.CacheDir != "" {
		c, err := processCache(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("new extension host: %w", err)
		}
		h.cache = c
	}
	return h, nil
}

// runtimeFor returns the runtime of a memory limit, creating it on first use.
// h.mu must be held.
func (h *Host) runtimeFor(ctx context.Context, pages uint32) (*hostRuntime, error) {
	if hr, ok := h.runtimes[pages]; ok {
		return hr, nil
	}
	cfg := runtimeConfig(pages)
	if h.cache != nil {
		cfg = cfg.WithCompilationCache(h.cache)
	}
	r := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("instantiate wasi: %w", err)
	}
	if _, err := newPiModule(r).Instantiate(ctx); err != nil {
		_ = r.Close(ctx)
		return nil, fmt.Errorf("instantiate host module pi: %w", err)
	}
	hr := &hostRuntime{r: r, wasi: r.Module(wasiModule).ExportedFunctionDefinitions(), pages: pages, compiled: map[string]wazero.CompiledModule{}}
	h.runtimes[pages] = hr
	return hr, nil
}

// runtimeConfig is the configuration of the runtime of a memory limit
// (without the compilation cache).
func runtimeConfig(pages uint32) wazero.RuntimeConfig {
	return wazero.NewRuntimeConfig().
		WithMemoryLimitPages(pages).
		WithCloseOnContextDone(true).
		WithDebugInfoEnabled(false)
}

// Load verifies, compiles, instantiates and initializes an extension, and
// adds it to the host. The returned extension's tools and hooks are live.
//
// # Errors
//
// Every error names the extension (Spec.Name, or the file's base name) and
// its path, and says what is wrong: a sha256 mismatch, a missing pi_abi_v1
// marker or ABI export, an import the host does not provide (by
// module.name), bad grants or limits, a failing or malformed init, a name
// that differs from Spec.Name or is already loaded. Nothing is left behind on
// failure.
func (h *Host) Load(ctx context.Context, spec Spec) (*Extension, error) {
	label := spec.Name
	if label == "" {
		label = strings.TrimSuffix(filepath.Base(spec.Path), ".wasm")
	}
	e, err := h.load(ctx, spec, label)
	if err != nil {
		return nil, fmt.Errorf("load extension %s (%s): %w", label, spec.Path, err)
	}
	return e, nil
}

// load runs the steps of Load in order: read and verify the file, resolve
// the grants (opening the mounts), compile and check the module, instantiate
// it and run init, register the extension. When a step fails, what the
// earlier ones opened is closed.
func (h *Host) load(ctx context.Context, spec Spec, label string) (_ *Extension, err error) {
	if e, ok, err := h.loadLazy(ctx, spec, label); ok || err != nil {
		return e, err
	}
	m, err := readModule(spec)
	if err != nil {
		return nil, err
	}
	defer m.release()
	grants, mounts, err := resolveGrants(spec.Grants, h.opts.ProjectRoot)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			closeMounts(mounts)
		}
	}()
	hr, compiled, err := h.compile(ctx, m)
	m.release()
	if err != nil {
		return nil, err
	}
	e, err := h.newExtension(spec, label, m, hr, compiled, grants, mounts)
	if err != nil {
		return nil, err
	}
	if err := e.initialize(ctx); err != nil {
		return nil, err
	}
	if err := h.register(ctx, e); err != nil {
		return nil, err
	}
	h.recordDeclared(spec, e)
	return e, nil
}

// module is a module file that was read and verified, with the limits of
// its spec resolved.
type module struct {
	path           string
	wasm           []byte
	release        func() // gives wasm back (readWasm): once compiled, nothing reads it
	sha256         string // hex
	pages          uint32 // memory limit in 64 KiB pages
	execTO, hookTO time.Duration
}

// readModule checks the spec's name, path and limits, reads the file and
// verifies its sha256 when the spec gives one. The caller calls the
// module's release once it is compiled (or not).
func readModule(spec Spec) (module, error) {
	if spec.Name != "" && !extNameRE.MatchString(spec.Name) {
		return module{}, fmt.Errorf("name %q must match [a-z][a-z0-9_-]*", spec.Name)
	}
	if !filepath.IsAbs(spec.Path) {
		return module{}, errors.New("path must be absolute")
	}
	pages, execTO, hookTO, err := limitsOf(spec.Limits)
	if err != nil {
		return module{}, err
	}
	wasm, release, err := readWasm(spec.Path)
	if err != nil {
		return module{}, err
	}
	sum := sha256.Sum256(wasm)
	got := hex.EncodeToString(sum[:])
	if spec.SHA256 != "" && !strings.EqualFold(spec.SHA256, got) {
		release()
		return module{}, fmt.Errorf("%w: the file has %s, pi.toml expects %s (the file changed since it was installed; if you rebuilt it, pin the new build with pi ext update NAME)", ErrSHA256Mismatch, got, spec.SHA256)
	}
	return module{path: spec.Path, wasm: wasm, release: release, sha256: got, pages: pages, execTO: execTO, hookTO: hookTO}, nil
}

// compile returns the runtime of the module's memory limit and the module
// compiled in it, checked against the ABI's exports and imports. A module
// is compiled once per runtime (by sha256) and shared by the extensions
// that load it.
func (h *Host) compile(ctx context.Context, m module) (*hostRuntime, wazero.CompiledModule, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, nil, errors.New("the extension host is closed")
	}
	hr, err := h.runtimeFor(ctx, m.pages)
	if err != nil {
		h.mu.Unlock()
		return nil, nil, err
	}
	compiled, cached := hr.compiled[m.sha256]
	h.mu.Unlock()
	if cached {
		return hr, compiled, nil
	}

	compiled, err = h.compileNoticed(ctx, hr, m)
	if err != nil {
		return nil, nil, fmt.Errorf("compile: %w", explainCompileError(err, m.pages))
	}
	if err := check(ctx, compiled, hr); err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if prev, ok := hr.compiled[m.sha256]; ok {
		_ = compiled.Close(ctx)
		return hr, prev, nil
	}
	hr.compiled[m.sha256] = compiled
	return hr, compiled, nil
}

// check verifies a freshly compiled module against ABI v1 (marker, exports
// and their signatures, imports) before anything of it runs; a module that
// fails is closed.
func check(ctx context.Context, compiled wazero.CompiledModule, hr *hostRuntime) error {
	if err := verifyModule(compiled, hr.wasi); err != nil {
		_ = compiled.Close(ctx)
		return err
	}
	return nil
}

// newExtension assembles an extension from its parts, with the granted
// environment read and its init request encoded, before any instance
// exists.
func (h *Host) newExtension(spec Spec, label string, m module, hr *hostRuntime, compiled wazero.CompiledModule, grants Grants, mounts []mount) (*Extension, error) {
	e := &Extension{
		host:     h,
		spec:     spec,
		name:     label,
		compiled: compiled,
		rt:       hr,
		execTO:   m.execTO,
		hookTO:   m.hookTO,
		grants:   grants,
		mounts:   mounts,
		logger:   h.logger.Named("ext." + label),
	}
	e.info = Info{Path: spec.Path, SHA256: m.sha256, Grants: grants, Scope: spec.Scope}
	for _, kv := range grantedEnv(spec.Grants.Env, h.opts.LookupEnv) {
		if !slices.Contains(h.opts.HideEnv, kv[0]) {
			e.env = append(e.env, kv)
		}
	}
	var err error
	e.initReq, err = initRequest(h.opts, spec.Config, grants)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// initialize instantiates the first instance and runs init, then takes the
// extension's name, tools and hooks from init's answer. The instance is
// discarded when init fails, the extension closed when the name is not the
// one configured.
func (e *Extension) initialize(ctx context.Context) error {
	e.mu.Lock()
	res, err := e.start(ctx)
	if err != nil {
		err = e.withStderr(err)
		e.discard(ctx)
		e.mu.Unlock()
		return err
	}
	if e.inst != nil {
		e.inst.endCall()
	}
	e.mu.Unlock()
	return e.apply(ctx, res)
}

// apply takes the extension's name, tools, hooks and the rest from init's
// answer (a live one, or the one recorded for a lazy load); the extension
// is closed when the name is not the one configured.
func (e *Extension) apply(ctx context.Context, res initResult) error {
	if e.spec.Name != "" && res.Name != e.spec.Name {
		e.close(ctx)
		return fmt.Errorf("init says the extension is named %q, but it is configured as %q", res.Name, e.spec.Name)
	}
	e.name = res.Name
	e.logger = e.host.logger.Named("ext." + res.Name)
	e.info.Name, e.info.Version, e.info.Description = res.Name, res.Version, res.Description
	e.info.Tools, e.info.Hooks = res.Tools, res.Hooks
	if res.Wants != nil {
		e.info.Wants = *res.Wants
	}
	for _, hk := range res.Hooks {
		switch hk {
		case HookToolCall:
			e.hookToolCall = true
		case HookToolResult:
			e.hookToolResult = true
		case HookBashSpawn:
			e.hookBashSpawn = true
		case HookEvent:
			e.hookEvent = true
		}
	}
	if err := e.initialize11(res); err != nil {
		e.close(ctx)
		return err
	}
	e.info.Shortcuts, e.info.MessageRenderers = res.Shortcuts, res.MessageRenderers
	e.initializeRun12(res)
	return nil
}

// register adds an initialized extension to the host, unless the host was
// closed meanwhile or an extension of the same name is loaded; then the
// extension is closed.
func (h *Host) register(ctx context.Context, e *Extension) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		e.close(ctx)
		return errors.New("the extension host is closed")
	}
	for _, o := range h.exts {
		if o.name == e.name {
			e.close(ctx)
			return fmt.Errorf("an extension named %q is already loaded from %s", e.name, o.spec.Path)
		}
	}
	if err := commandClash(e, h.exts); err != nil {
		e.close(ctx)
		return err
	}
	if err := flagClash(e, h.exts, h.opts.ReservedFlags); err != nil {
		e.close(ctx)
		return err
	}
	h.exts = append(h.exts, e)
	h.updateSubscribed()
	return nil
}

// explainCompileError adds the memory limit to wazero's memory errors.
func explainCompileError(err error, pages uint32) error {
	if strings.Contains(err.Error(), "memory") && strings.Contains(err.Error(), "limit") {
		return fmt.Errorf("%w (the extension's memory limit is %d MiB; raise limits.memory_mb)", err, pages/16)
	}
	if strings.Contains(err.Error(), "invalid magic number") {
		return fmt.Errorf("%w: the file is not a WebAssembly module (build it with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, or wat2wasm)", err)
	}
	return err
}

// Extensions returns the loaded extensions in load order.
func (h *Host) Extensions() []*Extension {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Extension(nil), h.exts...)
}

// Close closes every extension and runtime. Calls in flight are aborted;
// later calls fail.
//
// # Errors
//
// Close returns the first error of closing a runtime.
func (h *Host) Close(ctx context.Context) error {
	h.closing.Store(true)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.closeRun12()
	h.http.CloseIdleConnections()
	exts := h.exts
	rts := h.runtimes
	h.exts, h.runtimes = nil, nil
	h.mu.Unlock()
	// The background calls (timers, watches, the bus), aborted by
	// closeRun12, end first: closing a runtime under a running call races
	// inside wazero.
	h.bgWait(5 * time.Second)
	var first error
	for _, hr := range rts {
		// Closing the runtime aborts running guests, so the extension locks
		// below are released promptly.
		if err := hr.r.Close(ctx); err != nil && first == nil {
			first = fmt.Errorf("close extension runtime: %w", err)
		}
	}
	for _, e := range exts {
		e.close(ctx)
	}
	return first
}

// FileSHA256 returns the hex sha256 of a file, as pi.toml records it.
//
// # Errors
//
// FileSHA256 fails when the file cannot be read.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("sha256 %s: %w", path, err)
	}
	defer f.Close()
	s := sha256.New()
	if _, err := io.Copy(s, f); err != nil {
		return "", fmt.Errorf("sha256 %s: %w", path, err)
	}
	return hex.EncodeToString(s.Sum(nil)), nil
}

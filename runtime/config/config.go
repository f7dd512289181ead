package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/runtime/extspec"
	"github.com/pi-go/pi/runtime/llm"
)

// FileName is the name of every pi.toml file.
const FileName = "pi.toml"

// DefaultToolExecution is Config.ToolExecution when no file sets it.
const DefaultToolExecution = "parallel"

// Scopes of an extension: which file named it.
const (
	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// Config is the result of Load: the global and project pi.toml files laid
// over each other. Nothing changes it after Load; With returns a new one.
type Config struct {
	// ToolExecution is "parallel" (the default) or "sequential".
	ToolExecution string
	Model         Model
	Tools         Tools
	// Permissions are the allow / ask / deny rules for tool calls.
	Permissions Permissions
	// Compaction configures compacting long sessions ([compaction]).
	Compaction Compaction
	// Checkpoints configures the snapshots /undo restores ([checkpoints]).
	Checkpoints Checkpoints
	// Extensions in load order: global ones first, then the project's; a
	// project extension with the name of a global one takes its place.
	Extensions []Extension
	// MCP are the [[mcp]] servers, global ones first, then the project's
	// (only when it is trusted); a project server with the name of a
	// global one takes its place.
	MCP []MCPServer
	// Files are the absolute paths of the pi.toml files read, global first.
	Files []string
	// ProjectRoot is the folder of the project pi.toml; without one, the
	// project root (the nearest folder from the working directory up that
	// holds .git or .pi/, see Load), else the working directory; with
	// LoadOptions.ConfigFile, the working directory. Extension fs grants are
	// relative to it.
	ProjectRoot string
	// ProjectFile is the absolute path of the project pi.toml (or of
	// LoadOptions.ConfigFile); empty when there is none.
	ProjectFile string
	// GlobalFile is $PI_HOME/pi.toml, absolute; set even when it does not
	// exist (then it is not in Files), empty when there is no PI_HOME.
	GlobalFile string
	// Warnings are for the user, one sentence each (at most one today: the
	// project settings ignored because the project is not trusted).
	Warnings []string
	// Untrusted says the project's settings that run code (extensions,
	// MCP servers, bash's shell and prefix) were dropped because the
	// project is not trusted.
	Untrusted bool
	// Sandbox is [sandbox] (sandbox.go).
	Sandbox Sandbox
	// Skills is [skills] (skills.go).
	Skills Skills
	// Agents is [agents] (agents.go).
	Agents Agents
	// Fleet is [fleet] (fleet.go).
	Fleet Fleet
}

// Model says which model to talk to.
type Model struct {
	// BaseURL of an OpenAI-compatible API; empty when no file sets it, so
	// the caller can tell "not set" and fall back to flags or the
	// environment (OPENAI_BASE_URL) before llm.DefaultBaseURL.
	BaseURL string
	// Name of the model; empty when no file sets it.
	Name string
	// Provider names the model's provider in the models catalogue or
	// $PI_HOME/models.json (runtime/models); empty when no file sets it.
	Provider string
	// APIKeyEnv names the environment variable holding the API key; empty
	// when no file sets it (the caller's default is llm.DefaultAPIKeyEnv).
	APIKeyEnv string
	// Images says whether the model accepts images in tool results; nil
	// when not set.
	Images *bool
	// ContextWindow is the model's context size in tokens; 0 when not
	// set (the default is compaction.DefaultContextWindow).
	ContextWindow int
	// IgnoredBaseURL is the base_url of an untrusted project file, which
	// was left out (an untrusted project must not choose the model: the
	// model decides which tools run), for messages that say what to do.
	IgnoredBaseURL string
}

// Tools says which tools are active and how bash runs.
type Tools struct {
	// Active tool names; nil when no file sets tools.active (the caller's
	// default applies), empty when a file sets it to [].
	Active []string
	// ActiveAt is "FILE:LINE" of the tools.active that applies, for
	// messages about its names (an unknown tool); empty when not set.
	ActiveAt string
	Bash     Bash
}

// Bash configures the bash tool. CommandPrefix and Shell run code, and
// PassEnv hands the API key to commands, so a project file's values for
// those apply only when the project is trusted.
type Bash struct {
	// CommandPrefix is run before every command (e.g. activating a venv).
	CommandPrefix string
	// Shell is the shell binary; empty for the tool's default.
	Shell string
	// PassEnv names variables that commands get even though they hold the
	// model's API key ([model] api_key_env, OPENAI_API_KEY), which pi
	// otherwise removes from the environment of bash and of extensions'
	// exec children. Nil when not set.
	PassEnv []string
	// FullOutputMaxMB caps each bash full-output file, in MiB; 0 when not
	// set (the caller's default, 100).
	FullOutputMaxMB int
	// DefaultTimeout is the timeout in seconds of a command the model gives
	// none; 0 when not set (the caller's default, 600).
	DefaultTimeout int
}

// Extension is one [[extensions]] entry.
type Extension struct {
	// Name matches [a-z][a-z0-9_-]* (extspec.CheckName) and is unique.
	Name string
	// Path is the absolute path of the .wasm module (written relative to
	// the folder of the pi.toml that names it).
	Path string
	// SHA256 is the module's digest, 64 lowercase hex digits.
	SHA256 string
	// Override lets the extension replace a built-in tool of the same name.
	Override bool
	Grants   Grants
	Limits   Limits
	// Config is the [extensions.config] table, handed to the extension's
	// init as JSON; it holds only JSON types (string, float64, int64, bool,
	// []any, map[string]any; date-times become RFC 3339 strings). Nil when
	// not set.
	Config map[string]any
	// Scope is ScopeGlobal or ScopeProject.
	Scope string
	// File is the absolute path of the pi.toml naming it, Line the line of
	// its [[extensions]] header.
	File string
	Line int
}

// Grants are what an extension may reach outside its sandbox: the one
// grants type, declared (with its rules) in runtime/extspec.
type Grants = extspec.Grants

// Limits cap an extension; 0 means the host's default. The one limits
// type, declared (with its bounds) in runtime/extspec.
type Limits = extspec.Limits

// LoadOptions say where Load looks.
type LoadOptions struct {
	// Cwd is where the search for the project pi.toml starts; default the
	// process's working directory.
	Cwd string
	// PIHome holds the global pi.toml and trust.json; default DefaultPIHome().
	PIHome string
	// Home is the user's home folder: the search for the project pi.toml
	// never goes above it. Default os.UserHomeDir(); none when unknown.
	Home string
	// ConfigFile (--config) is read instead of the project's pi.toml. It is
	// treated as the project file, trust included.
	ConfigFile string
	// Trust (--trust, or PI_TRUST=1 as the CLI reads it) trusts the project
	// file for this run without recording it.
	Trust bool
}

// DefaultPIHome returns $PI_HOME, else ~/.pi/agent, as an absolute path;
// empty when neither is known.
func DefaultPIHome() string {
	if h := os.Getenv("PI_HOME"); h != "" {
		if abs, err := filepath.Abs(h); err == nil {
			return abs
		}
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".pi", "agent")
}

// CacheDir returns where compiled extensions are cached: $PI_CACHE_DIR, else
// piHome/cache. The cache is safe to share between pi homes, processes and
// versions (entries are keyed by module hash, wazero version and settings),
// and to delete.
func CacheDir(piHome string) string {
	if d := os.Getenv("PI_CACHE_DIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	return filepath.Join(piHome, "cache")
}

// Load reads the global pi.toml ($PIHome/pi.toml, when it exists) and the
// project's (opts.ConfigFile, else the nearest pi.toml found by the search
// below), validates both strictly, and lays the project over the global
// file: scalars override, tools.active replaces, extensions concatenate
// (global first; a project extension with a global one's name replaces it
// in place). Settings of an untrusted project file that run code
// (tools.bash.command_prefix, tools.bash.shell, [[extensions]], [[mcp]]) or choose
// where the API key goes (model.base_url, model.api_key_env) are left out,
// with one warning in Config.Warnings. A trusted file whose extensions' fs
// grants now resolve somewhere else than when it was trusted counts as
// untrusted (see Trust).
//
// # Where the project pi.toml is searched
//
// The project root is the nearest folder, from opts.Cwd up, that holds .git
// (a folder or a file) or a .pi folder; the walk stops at opts.Home (a .pi
// folder in Home itself is pi's own, ~/.pi/agent, and marks nothing) and
// never reaches the file-system root /. The project pi.toml is the nearest
// one from opts.Cwd up to the project root; without a project root only
// opts.Cwd is searched. So a pi.toml above the project, above $HOME or in /
// never applies.
//
// # Files others can change
//
// The global pi.toml, the project's (a ConfigFile too) and trust.json are
// refused (ErrUnsafeFile) unless they are owned by the current user or root
// and not writable by other users; a group-writable file is accepted only
// when its group is its owner's private group (see docs/config.md).
//
// # Errors
//
// Every problem found in either file, as *Error values joined with
// errors.Join: TOML syntax errors (file:line:column), unknown keys, wrong
// types and bad values (file:line, naming the key). Also a ConfigFile that
// cannot be read, a pi.toml that exists but cannot be read, a file refused
// as unsafe (ErrUnsafeFile), and a corrupt trust.json.
func Load(opts LoadOptions) (*Config, error) {
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	piHome := opts.PIHome
	if piHome == "" {
		piHome = DefaultPIHome()
	}
	if piHome != "" {
		if piHome, err = filepath.Abs(piHome); err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
	}

	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		if home, err = filepath.Abs(home); err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
	}

	c := &Config{ProjectRoot: cwd}
	var global, project *layer
	var errs []error

	if piHome != "" {
		c.GlobalFile = filepath.Join(piHome, FileName)
		data, err := readIfExists(c.GlobalFile)
		switch {
		case err != nil:
			errs = append(errs, err)
		case data != nil:
			c.Files = append(c.Files, c.GlobalFile)
			global, err = parseLayer(c.GlobalFile, data, ScopeGlobal)
			errs = append(errs, err)
		}
	}

	var projectData []byte
	if opts.ConfigFile != "" {
		file := filepath.Clean(opts.ConfigFile)
		if !filepath.IsAbs(file) {
			file = filepath.Join(cwd, file)
		}
		data, err := readSafe(file, "config file")
		if err != nil {
			return nil, fmt.Errorf("load config %s: %w", file, err)
		}
		c.ProjectFile, projectData = file, data
	} else {
		file, data, root, err := findProject(cwd, home, c.GlobalFile)
		if err != nil {
			return nil, err
		}
		c.ProjectRoot = root
		if file != "" {
			c.ProjectFile, projectData = file, data
			c.ProjectRoot = filepath.Dir(file)
		}
	}
	if c.ProjectFile != "" {
		c.Files = append(c.Files, c.ProjectFile)
		project, err = parseLayer(c.ProjectFile, projectData, ScopeProject)
		errs = append(errs, err)
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}

	var base Config // the global file's [sandbox], for what loosens it
	if global != nil {
		global.applySandbox(&base)
	}
	if project != nil && (project.runsCode() || project.sandbox.loosens(base.Sandbox)) && !opts.Trust {
		status, err := trustStatus(piHome, c.ProjectFile, projectData, c.ProjectRoot, cwd, project)
		if err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
		if status.state != trusted {
			project.sandboxIgnored = project.sandbox.dropLoosening(base.Sandbox)
			c.Warnings = append(c.Warnings, untrustedWarning(project, status, opts.ConfigFile != ""))
			c.Untrusted = true
			if project.baseURL != nil {
				c.Model.IgnoredBaseURL = *project.baseURL
			}
			project.dropCode()
		}
	}

	c.ToolExecution = DefaultToolExecution
	for _, l := range []*layer{global, project} {
		if l != nil {
			l.applyTo(c)
		}
	}
	return c, nil
}

// joinErrors is errors.Join that returns a lone error as it is.
func joinErrors(errs []error) error {
	var nonNil []error
	for _, err := range errs {
		if err != nil {
			nonNil = append(nonNil, err)
		}
	}
	if len(nonNil) == 1 {
		return nonNil[0]
	}
	return errors.Join(nonNil...)
}

// readIfExists reads file (refusing it when others can change it); nil data
// and nil error when it does not exist.
func readIfExists(file string) ([]byte, error) {
	data, err := readSafe(file, "config file")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load config %s: %w", file, err)
	}
	return data, nil
}

// findProject finds the project root from cwd and the project pi.toml in it
// (the rule is Load's doc). root is the project root, or cwd when there is
// none; file is "" when no pi.toml applies. The global file is never a
// project file.
func findProject(cwd, home, globalFile string) (file string, data []byte, root string, err error) {
	file, root, err = locateProject(cwd, home, globalFile)
	if err != nil || file == "" {
		return "", nil, root, err
	}
	data, err = readSafe(file, "config file")
	if err != nil {
		return "", nil, "", fmt.Errorf("load config %s: %w", file, err)
	}
	return file, data, root, nil
}

// FindProjectFile returns the project pi.toml that applies in cwd by
// Load's search, without reading or parsing it ("" when there is none):
// `pi untrust` must work on a file that does not parse.
//
// # Errors
//
// cwd cannot be made absolute, or a pi.toml cannot be examined.
func FindProjectFile(cwd, piHome string) (string, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("find project config: %w", err)
	}
	if piHome == "" {
		piHome = DefaultPIHome()
	}
	home, _ := os.UserHomeDir()
	global := ""
	if piHome != "" {
		if abs, err := filepath.Abs(piHome); err == nil {
			global = filepath.Join(abs, FileName)
		}
	}
	file, _, err := locateProject(abs, home, global)
	return file, err
}

// locateProject is findProject without reading the file.
func locateProject(cwd, home, globalFile string) (file string, root string, err error) {
	var homeInfo, globalInfo os.FileInfo
	if home != "" {
		homeInfo, _ = os.Stat(home)
	}
	if globalFile != "" {
		globalInfo, _ = os.Stat(globalFile)
	}
	// The folders that may hold the project's files: cwd and its parents,
	// up to and including home, never the file-system root.
	var dirs []string
	homeAt := -1
	for dir := cwd; ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			break // the file-system root is never searched
		}
		dirs = append(dirs, dir)
		if home != "" && sameDir(dir, home, homeInfo) {
			homeAt = len(dirs) - 1
			break
		}
		dir = parent
	}
	search := dirs[:min(1, len(dirs))]
	root = cwd
	for i, dir := range dirs {
		if isProjectRoot(dir, i == homeAt) {
			search, root = dirs[:i+1], dir
			break
		}
	}
	for _, dir := range search {
		file := filepath.Join(dir, FileName)
		info, err := os.Stat(file)
		if err == nil && info.Mode().IsRegular() && (globalInfo == nil || !os.SameFile(info, globalInfo)) {
			return file, root, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
			return "", "", fmt.Errorf("load config %s: %w", file, err)
		}
	}
	return "", root, nil
}

// isProjectRoot reports whether dir holds .git (any kind of file) or a .pi
// folder; in the home folder (isHome) .pi is pi's own and does not count.
func isProjectRoot(dir string, isHome bool) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	if isHome {
		return false
	}
	info, err := os.Stat(filepath.Join(dir, ".pi"))
	return err == nil && info.IsDir()
}

// sameDir reports whether dir is home, by name or (homeInfo non-nil) by
// identity, so that a home reached through a symlink is still home.
func sameDir(dir, home string, homeInfo os.FileInfo) bool {
	if dir == home {
		return true
	}
	if homeInfo == nil {
		return false
	}
	info, err := os.Stat(dir)
	return err == nil && os.SameFile(info, homeInfo)
}

// untrustedWarning says what an untrusted project file would have done and
// how to trust it; a --config file (fromFlag) is trusted for a run only.
func untrustedWarning(l *layer, status trustResult, fromFlag bool) string {
	var ignored []string
	if l.baseURL != nil {
		ignored = append(ignored, "model.base_url")
	}
	if l.apiKeyEnv != nil {
		ignored = append(ignored, "model.api_key_env")
	}
	if l.bashPrefix != nil {
		ignored = append(ignored, "tools.bash.command_prefix")
	}
	if l.bashShell != nil {
		ignored = append(ignored, "tools.bash.shell")
	}
	if l.bashPassEnvSet {
		ignored = append(ignored, "tools.bash.pass_env")
	}
	ignored = append(ignored, l.perm.ignoredNames()...)
	ignored = append(ignored, l.sandboxIgnored...)
	if len(l.extensions) > 0 {
		names := make([]string, len(l.extensions))
		for i, e := range l.extensions {
			names[i] = fmt.Sprintf("%q", e.Name)
		}
		word := "extension"
		if len(names) > 1 {
			word = "extensions"
		}
		ignored = append(ignored, word+" "+strings.Join(names, ", "))
	}
	if m := untrustedMCP(l); m != "" {
		ignored = append(ignored, m)
	}
	why := "is not trusted"
	switch status.state {
	case trustChanged:
		why = "changed since it was trusted"
	case trustGrantMoved:
		why = "is no longer trusted because the " + status.detail
	case trustGrantsUnseen:
		why = "was trusted by an older pi that did not record where its extensions' fs grants point, so it must be trusted again"
	case trustProgramChanged:
		why = "is no longer trusted because the " + status.detail
	case trustProgramsUnseen:
		why = "was trusted by an older pi that did not record the repository programs it runs, so it must be trusted again"
	}
	how := fmt.Sprintf("run `pi trust` in %s to trust it, or pass --trust (or set PI_TRUST=1) for one run", filepath.Dir(l.file))
	if fromFlag {
		how = "pass --trust (or set PI_TRUST=1) to apply them"
	}
	return fmt.Sprintf("project config %s %s, so these settings that run code or choose where the API key goes were ignored: %s. Review the file, then %s.",
		l.file, why, strings.Join(ignored, "; "), how)
}

// Overrides are command-line flags laid over a loaded Config by With. Zero
// fields keep the loaded value.
type Overrides struct {
	BaseURL       string
	Model         string
	APIKeyEnv     string
	ToolExecution string
	Images        *bool
	// Tools, when non-nil, replaces tools.active.
	Tools []string
	// SandboxMode (--sandbox) replaces sandbox.mode: the person may
	// loosen it as well as tighten it.
	SandboxMode string
}

// With returns a copy of c with o laid over it; c is unchanged.
//
// # Errors
//
// An override value that pi.toml would reject, naming the key.
func (c *Config) With(o Overrides) (*Config, error) {
	n := c.Clone()
	if o.ToolExecution != "" {
		if err := checkToolExecution(o.ToolExecution); err != nil {
			return nil, fmt.Errorf("override tool_execution: %w", err)
		}
		n.ToolExecution = o.ToolExecution
	}
	if o.BaseURL != "" {
		if err := llm.CheckBaseURL(o.BaseURL); err != nil {
			return nil, fmt.Errorf("override model.base_url: %w", err)
		}
		n.Model.BaseURL = o.BaseURL
	}
	if o.Model != "" {
		n.Model.Name = o.Model
	}
	if o.APIKeyEnv != "" {
		if err := extspec.CheckEnvName(o.APIKeyEnv); err != nil {
			return nil, fmt.Errorf("override model.api_key_env: %w", err)
		}
		n.Model.APIKeyEnv = o.APIKeyEnv
	}
	if o.Images != nil {
		v := *o.Images
		n.Model.Images = &v
	}
	if o.Tools != nil {
		if err := checkToolNames(o.Tools); err != nil {
			return nil, fmt.Errorf("override tools.active: %w", err)
		}
		n.Tools.Active = slices.Clone(o.Tools)
		n.Tools.ActiveAt = ""
	}
	if o.SandboxMode != "" {
		if err := sandbox.CheckMode(o.SandboxMode); err != nil {
			return nil, fmt.Errorf("override sandbox.mode: %w", err)
		}
		n.Sandbox.Mode, n.Sandbox.ModeAt = o.SandboxMode, "--sandbox"
	}
	return n, nil
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	n := *c
	if c.Model.Images != nil {
		v := *c.Model.Images
		n.Model.Images = &v
	}
	if c.Checkpoints.Enabled != nil {
		v := *c.Checkpoints.Enabled
		n.Checkpoints.Enabled = &v
	}
	if c.Compaction.Enabled != nil {
		v := *c.Compaction.Enabled
		n.Compaction.Enabled = &v
	}
	n.Tools.Active = slices.Clone(c.Tools.Active)
	n.Tools.Bash.PassEnv = slices.Clone(c.Tools.Bash.PassEnv)
	n.Files = slices.Clone(c.Files)
	n.Warnings = slices.Clone(c.Warnings)
	n.Permissions = c.Permissions.clone()
	n.Sandbox.Writable = slices.Clone(c.Sandbox.Writable)
	n.Sandbox.AllowHosts = slices.Clone(c.Sandbox.AllowHosts)
	if c.Extensions != nil {
		n.Extensions = make([]Extension, len(c.Extensions))
		for i, e := range c.Extensions {
			n.Extensions[i] = e.clone()
		}
	}
	if c.MCP != nil {
		n.MCP = make([]MCPServer, len(c.MCP))
		for i, s := range c.MCP {
			n.MCP[i] = s.clone()
		}
	}
	return &n
}

func (e Extension) clone() Extension {
	e.Grants.FS = slices.Clone(e.Grants.FS)
	e.Grants.Exec = slices.Clone(e.Grants.Exec)
	e.Grants.Env = slices.Clone(e.Grants.Env)
	e.Grants.HTTP = slices.Clone(e.Grants.HTTP)
	e.Grants.Tools = slices.Clone(e.Grants.Tools)
	e.Config = cloneJSON(e.Config)
	return e
}

func cloneJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	n := maps.Clone(m)
	for k, v := range n {
		n[k] = cloneJSONValue(v)
	}
	return n
}

func cloneJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneJSON(v)
	case []any:
		n := make([]any, len(v))
		for i, e := range v {
			n[i] = cloneJSONValue(e)
		}
		return n
	}
	return v
}

// Extension returns the extension named name.
func (c *Config) Extension(name string) (Extension, bool) {
	for _, e := range c.Extensions {
		if e.Name == name {
			return e.clone(), true
		}
	}
	return Extension{}, false
}

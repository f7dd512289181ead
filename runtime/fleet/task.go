package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pi-go/pi/runtime/conversation"
)

// Task is one agent run to do: where its workspace comes from, what to
// ask, with which model, tools and limits. Its JSON names are the flags of
// `pi fleet submit` (a line of --file). A task never names an endpoint or
// a key: those come from the worker's configuration.
type Task struct {
	// ID names the task (letters, digits, - and _; at most 64); a new one
	// is made when empty.
	ID string `json:"id,omitempty"`
	// Repo is a local folder, packed at submit time (its git-tracked and
	// untracked-but-not-ignored files in a git work tree, else every file
	// but .git).
	Repo string `json:"repo,omitempty"`
	// Git is a repository URL cloned by the worker at Rev (default HEAD).
	Git string `json:"git,omitempty"`
	Rev string `json:"rev,omitempty"`
	// Prompt is the message, or several sent one after the other.
	Prompt Strings `json:"prompt"`
	// Model and Thinking pick the model (a name of the worker's catalogue
	// or models.json) and its thinking level; empty: the worker's.
	Model    string `json:"model,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	// Tools are the active tools; empty: the submitter's.
	Tools Strings `json:"tools,omitempty"`
	// Sandbox is the bash sandbox mode; never looser than the submitter's.
	Sandbox string `json:"sandbox,omitempty"`
	// Plan runs in plan mode (no write or edit, bash read-only).
	Plan bool `json:"plan,omitempty"`
	// MaxTurns stops the run after that many model turns (0: the limit
	// of the submitter, else none).
	MaxTurns int `json:"max-turns,omitempty"`
	// Timeout bounds the run's wall time ("10m"); empty: the default.
	Timeout string `json:"timeout,omitempty"`
	// MaxTokens and MaxCost stop the run once the model's usage, as pi
	// reports it after each answer, passes them (tokens; US dollars).
	MaxTokens int     `json:"max-tokens,omitempty"`
	MaxCost   float64 `json:"max-cost,omitempty"`
	// Label tags the task for `pi fleet status --label`.
	Label Strings `json:"label,omitempty"`
}

// Strings is a JSON string or list of strings.
type Strings []string

// UnmarshalJSON takes "a" or ["a", "b"].
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings")
	}
	*s = many
	return nil
}

// DefaultTimeout bounds a run whose task sets no timeout.
const DefaultTimeout = 30 * time.Minute

// maxTimeout is the longest timeout a task may ask for.
const maxTimeout = 24 * time.Hour

// forbidden are the fields that would choose an endpoint or a key: a task
// never names them (the worker's configuration does).
var forbidden = map[string]string{
	"base_url": "the endpoint", "base-url": "the endpoint", "baseUrl": "the endpoint", "endpoint": "the endpoint",
	"provider": "the endpoint", "api_key": "the key", "api-key": "the key", "apiKey": "the key", "api_key_env": "the key",
	"api-key-env": "the key", "key": "the key", "headers": "the endpoint's headers", "script": "the model",
}

var (
	idRe      = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	modelRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$`)
	labelRe   = regexp.MustCompile(`^[A-Za-z0-9._:/=+-]{1,100}$`)
	toolRe    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	thinkings = []string{"off", "minimal", "low", "medium", "high", "xhigh"}
	// SandboxModes from the loosest to the strictest.
	sandboxOrder = []string{"off", "full", "workspace-write", "read-only"}
)

// FieldError is a problem with one field of a task, at a line of a file
// when the task came from one.
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	where := ""
	if e.File != "" {
		where = fmt.Sprintf("%s:%d: ", e.File, e.Line)
	}
	if e.Field == "" {
		return where + e.Msg
	}
	return fmt.Sprintf("%sfield %q: %s", where, e.Field, e.Msg)
}

// ParseTasks reads JSONL tasks (one object a line; blank lines and lines
// starting with # are skipped) from r, name being the file for errors.
// Every task is checked (Check); the errors of every bad line are joined.
//
// # Errors
//
// A line that is not a JSON object, an unknown field, a field that names
// an endpoint or a key, or a bad value: each *FieldError names the file,
// the line and the field.
func ParseTasks(r io.Reader, name string) ([]Task, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var tasks []Task
	var errs []error
	ids := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		t, err := parseTask(line)
		if err == nil {
			err = t.Check()
		}
		if err != nil {
			if fe, ok := err.(*FieldError); ok {
				fe.File, fe.Line = name, n
			} else {
				err = &FieldError{File: name, Line: n, Msg: err.Error()}
			}
			errs = append(errs, err)
			continue
		}
		if t.ID != "" {
			if first, dup := ids[t.ID]; dup {
				errs = append(errs, &FieldError{File: name, Line: n, Field: "id", Msg: fmt.Sprintf("%q is also the id of line %d", t.ID, first)})
				continue
			}
			ids[t.ID] = n
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("read %s: %w", name, err))
	}
	if len(errs) > 0 {
		return nil, joinErrs(errs)
	}
	return tasks, nil
}

func joinErrs(errs []error) error {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return &multiError{msg: b.String(), errs: errs}
}

type multiError struct {
	msg  string
	errs []error
}

func (m *multiError) Error() string   { return m.msg }
func (m *multiError) Unwrap() []error { return m.errs }

// parseTask decodes one line strictly, naming the field that is wrong.
func parseTask(line []byte) (Task, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Task{}, &FieldError{Msg: "not a JSON object: " + err.Error()}
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if what, bad := forbidden[k]; bad {
			return Task{}, &FieldError{Field: k, Msg: "a task cannot choose " + what + ": the model's endpoint and key come from the worker's configuration"}
		}
		if !slices.Contains(taskFields, k) {
			return Task{}, &FieldError{Field: k, Msg: "unknown field (known: " + strings.Join(taskFields, ", ") + ")"}
		}
	}
	var t Task
	for _, k := range keys {
		if err := t.setField(k, raw[k]); err != nil {
			return Task{}, &FieldError{Field: k, Msg: err.Error()}
		}
	}
	return t, nil
}

var taskFields = []string{"id", "repo", "git", "rev", "prompt", "model", "thinking", "tools", "sandbox", "plan", "max-turns", "timeout", "max-tokens", "max-cost", "label"}

func (t *Task) setField(k string, v json.RawMessage) error {
	var dst any
	switch k {
	case "id":
		dst = &t.ID
	case "repo":
		dst = &t.Repo
	case "git":
		dst = &t.Git
	case "rev":
		dst = &t.Rev
	case "prompt":
		dst = &t.Prompt
	case "model":
		dst = &t.Model
	case "thinking":
		dst = &t.Thinking
	case "tools":
		dst = &t.Tools
	case "sandbox":
		dst = &t.Sandbox
	case "plan":
		dst = &t.Plan
	case "max-turns":
		dst = &t.MaxTurns
	case "timeout":
		dst = &t.Timeout
	case "max-tokens":
		dst = &t.MaxTokens
	case "max-cost":
		dst = &t.MaxCost
	case "label":
		dst = &t.Label
	}
	if err := json.Unmarshal(v, dst); err != nil {
		var ue *json.UnmarshalTypeError
		if errorsAs(err, &ue) {
			return fmt.Errorf("want %s, got %s", ue.Type, ue.Value)
		}
		return err
	}
	if k == "tools" {
		// "read,bash" as the flag takes it.
		var split Strings
		for _, v := range t.Tools {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					split = append(split, n)
				}
			}
		}
		t.Tools = split
	}
	return nil
}

// Check reports the first field of t that is wrong on its own (Limit
// checks it against a configuration).
//
// # Errors
//
// A *FieldError naming the field.
func (t *Task) Check() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if t.ID != "" && !idRe.MatchString(t.ID) {
		return bad("id", "%q: letters, digits, - and _ only, at most 64", t.ID)
	}
	switch {
	case t.Repo == "" && t.Git == "":
		return bad("repo", "a task needs a workspace: repo (a local folder) or git (a URL)")
	case t.Repo != "" && t.Git != "":
		return bad("git", "give repo or git, not both")
	case t.Rev != "" && t.Git == "":
		return bad("rev", "rev goes with git")
	}
	if t.Git != "" && !validGitURL(t.Git) {
		return bad("git", "%q: want an https://, http://, ssh://, git:// or git@host: URL (not a path or file://: the worker's own files are not a task's)", t.Git)
	}
	if t.Rev != "" && (strings.HasPrefix(t.Rev, "-") || strings.ContainsAny(t.Rev, " \t\n\x00")) {
		return bad("rev", "%q is not a revision", t.Rev)
	}
	if len(t.Prompt) == 0 {
		return bad("prompt", "a task needs a prompt")
	}
	for _, p := range t.Prompt {
		if strings.TrimSpace(p) == "" {
			return bad("prompt", "an empty prompt")
		}
		// pi -p runs a prompt that is a slash command (/export FILE,
		// /import FILE, /plan off, an extension's) on the worker, outside
		// the sandbox: a task's prompt is only ever a message.
		for _, text := range []string{p, strings.TrimSpace(p)} {
			if name, _, ok := conversation.ParseCommand(text); ok {
				return bad("prompt", "%q is the slash command /%s: a task's prompts are messages to the model, never pi commands (they would run on the worker)", firstLine(p), name)
			}
		}
	}
	if t.Model != "" && !modelRe.MatchString(t.Model) {
		return bad("model", "%q is not a model name", t.Model)
	}
	if t.Thinking != "" && !slices.Contains(thinkings, t.Thinking) {
		return bad("thinking", "%q: want one of %s", t.Thinking, strings.Join(thinkings, ", "))
	}
	for _, n := range t.Tools {
		if !toolRe.MatchString(n) {
			return bad("tools", "%q is not a tool name", n)
		}
	}
	if t.Sandbox != "" && !slices.Contains(sandboxOrder, t.Sandbox) {
		return bad("sandbox", "%q: want one of %s", t.Sandbox, strings.Join(sandboxOrder, ", "))
	}
	if t.MaxTurns < 0 {
		return bad("max-turns", "must not be negative, got %d", t.MaxTurns)
	}
	if t.MaxTokens < 0 {
		return bad("max-tokens", "must not be negative, got %d", t.MaxTokens)
	}
	if t.MaxCost < 0 {
		return bad("max-cost", "must not be negative, got %g", t.MaxCost)
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil || d <= 0 || d > maxTimeout {
			return bad("timeout", "%q: want a duration such as 10m, at most %s", t.Timeout, maxTimeout)
		}
	}
	for _, l := range t.Label {
		if !labelRe.MatchString(l) {
			return bad("label", "%q: letters, digits and ._:/=+- only, at most 100", l)
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

func validGitURL(u string) bool {
	if strings.HasPrefix(u, "-") || strings.ContainsAny(u, " \t\n\x00") {
		return false
	}
	// Not file:// or a path: a task must not clone the worker's own files;
	// not ext:: or other transports that run commands.
	for _, p := range []string{"https://", "http://", "ssh://", "git://"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return strings.HasPrefix(u, "git@") && strings.Contains(u, ":")
}

// timeout is the run's time limit.
func (t *Task) timeout() time.Duration {
	if d, err := time.ParseDuration(t.Timeout); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

// Policy is what a configuration allows a task: Limit narrows a task to
// it, so that a task is never looser than the submitter's configuration
// (at submit time) nor the worker's (at run time).
type Policy struct {
	// Tools are the active tools; nil: pi's default set.
	Tools []string
	// Sandbox is the configured mode ("" is workspace-write).
	Sandbox string
	// MaxTurns is a limit on turns (0: none).
	MaxTurns int
}

// DefaultTools are the tools active when no configuration names them.
var DefaultTools = []string{"read", "bash", "edit", "write"}

// Limit checks t against p and fills in what t leaves to it: the tools
// (p's when t names none), the sandbox (p's when t sets none) and the
// turn limit.
//
// # Errors
//
// A *FieldError when t asks for a tool p does not have active, a looser
// sandbox, or more turns.
func (p Policy) Limit(t *Task) error {
	tools := p.Tools
	if tools == nil {
		tools = DefaultTools
	}
	if len(t.Tools) == 0 {
		t.Tools = slices.Clone(tools)
	}
	for _, n := range t.Tools {
		if !slices.Contains(tools, n) {
			return &FieldError{Field: "tools", Msg: fmt.Sprintf("%q is not active in the configuration (active: %s); a task is never looser than it", n, strings.Join(tools, ", "))}
		}
	}
	mode := p.Sandbox
	if mode == "" {
		mode = "workspace-write"
	}
	if t.Sandbox == "" {
		t.Sandbox = mode
	}
	if slices.Index(sandboxOrder, t.Sandbox) < slices.Index(sandboxOrder, mode) {
		return &FieldError{Field: "sandbox", Msg: fmt.Sprintf("%q is looser than the configuration's %q; a task is never looser than it", t.Sandbox, mode)}
	}
	if p.MaxTurns > 0 {
		if t.MaxTurns == 0 {
			t.MaxTurns = p.MaxTurns
		} else if t.MaxTurns > p.MaxTurns {
			return &FieldError{Field: "max-turns", Msg: fmt.Sprintf("%d is more than the configuration's %d", t.MaxTurns, p.MaxTurns)}
		}
	}
	return nil
}

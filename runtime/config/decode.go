package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/extspec"
	"github.com/pi-go/pi/runtime/llm"
)

// layer is one pi.toml, decoded and validated; nil pointers are keys the
// file does not set.
type layer struct {
	file  string
	scope string

	toolExecution *string
	baseURL       *string
	name          *string
	provider      *string
	apiKeyEnv     *string
	images        *bool
	active        []string
	activeSet     bool
	activeAt      string // FILE:LINE of tools.active
	bashPrefix    *string
	bashShell     *string
	// bashPassEnv is tools.bash.pass_env; bashPassEnvSet says it is set.
	bashPassEnv    []string
	bashPassEnvSet bool
	bashFullMaxMB  *int
	extensions     []Extension
	// perm is [permissions]; bashTimeout is tools.bash.default_timeout.
	perm        permLayer
	bashTimeout *int

	// [model] context_window and [compaction] (see compaction.go).
	contextWindow     *int
	compactionEnabled *bool
	compactReserve    *int
	compactKeepRecent *int

	mcp []MCPServer // [[mcp]]: servers start processes or send requests

	checkpoints Checkpoints // [checkpoints] (checkpoints.go)

	fleet Fleet // [fleet] (fleet.go): needs trust (the server gets the project)

	sandbox sandboxLayer // [sandbox] (sandbox.go)

	skillsClaude *bool       // [skills] claude (skills.go)
	agents       agentsLayer // [agents] (agents.go)
	// sandboxIgnored names the [sandbox] keys dropped as loosening in an
	// untrusted project, for the warning.
	sandboxIgnored []string
}

// runsCode reports whether the layer sets anything that runs code, or that
// could send the API key somewhere else (model.base_url, model.api_key_env,
// tools.bash.pass_env): the settings an untrusted project may not make.
func (l *layer) runsCode() bool {
	return l.bashPrefix != nil || l.bashShell != nil || len(l.extensions) > 0 || l.baseURL != nil || l.apiKeyEnv != nil || l.bashPassEnvSet ||
		l.perm.loosens() || len(l.mcp) > 0 || l.fleet.set()
}

// dropCode forgets the settings that need trust.
func (l *layer) dropCode() {
	l.bashPrefix, l.bashShell, l.extensions = nil, nil, nil
	l.baseURL, l.apiKeyEnv = nil, nil
	l.bashPassEnv, l.bashPassEnvSet = nil, false
	l.perm.dropLoosening()
	l.mcp = nil
	l.fleet = Fleet{}
}

// applyTo lays l over c.
func (l *layer) applyTo(c *Config) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&c.ToolExecution, l.toolExecution)
	set(&c.Model.BaseURL, l.baseURL)
	set(&c.Model.Name, l.name)
	set(&c.Model.Provider, l.provider)
	set(&c.Model.APIKeyEnv, l.apiKeyEnv)
	if l.images != nil {
		v := *l.images
		c.Model.Images = &v
	}
	if l.activeSet {
		c.Tools.Active = slices.Clone(l.active)
		c.Tools.ActiveAt = l.activeAt
	}
	set(&c.Tools.Bash.CommandPrefix, l.bashPrefix)
	set(&c.Tools.Bash.Shell, l.bashShell)
	if l.bashPassEnvSet {
		c.Tools.Bash.PassEnv = slices.Clone(l.bashPassEnv)
	}
	if l.bashFullMaxMB != nil {
		c.Tools.Bash.FullOutputMaxMB = *l.bashFullMaxMB
	}
	if l.bashTimeout != nil {
		c.Tools.Bash.DefaultTimeout = *l.bashTimeout
	}
	l.perm.applyTo(&c.Permissions)
	l.applyCompaction(c)
	l.applyCheckpoints(c)
	l.applyFleet(c)
	l.applySandbox(c)
	l.applySkills(c)
	l.applyAgents(c)
	for _, e := range l.extensions {
		i := slices.IndexFunc(c.Extensions, func(o Extension) bool { return o.Name == e.Name })
		if i >= 0 {
			c.Extensions[i] = e.clone()
		} else {
			c.Extensions = append(c.Extensions, e.clone())
		}
	}
	applyMCP(c, l.mcp)
}

// Known keys, in the order the docs list them.
var (
	topKeys              = []string{"tool_execution", "model", "tools", "extensions", "permissions", "compaction", "mcp", "sandbox", "checkpoints", "skills", "agents", "fleet"}
	modelKeys            = []string{"base_url", "name", "provider", "api_key_env", "images", "context_window"}
	toolsKeys            = []string{"active", "bash"}
	bashKeys             = []string{"command_prefix", "shell", "pass_env", "full_output_max_mb", "default_timeout"}
	extensionKeys        = []string{"name", "path", "sha256", "override", "grants", "limits", "config"}
	grantsKeys           = []string{"fs", "exec", "env", "http", "tools", "llm", "model"}
	limitsKeys           = []string{"memory_mb", "timeout_ms", "kv_mb", "llm_tokens"}
	maxFullOutMB   int64 = 102_400 // 100 GiB
	maxErrorsShown       = 20
)

// parseLayer decodes and validates one pi.toml.
func parseLayer(file string, data []byte, scope string) (*layer, error) {
	raw, err := decodeTOML(file, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: file, idx: indexDocument(data)}
	l := d.layer(raw, scope)
	if err := d.err(); err != nil {
		return nil, err
	}
	return l, nil
}

// decodeTOML parses data without a schema; a syntax error is an *Error
// with line and column.
func decodeTOML(file string, data []byte) (map[string]any, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line, col := lineCol(data, pe.Position.Start)
			return nil, &Error{File: file, Line: line, Column: col, Msg: "syntax error: " + pe.Message}
		}
		return nil, &Error{File: file, Msg: "syntax error: " + err.Error()}
	}
	return raw, nil
}

// lineCol turns the byte offset of a toml.ParseError into a 1-based line
// and column (in characters). The library's own line is one too far when
// the error is at a newline, so it is not used.
func lineCol(data []byte, start int) (line, col int) {
	// The library drops a byte order mark before parsing.
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		start += 3
	case bytes.HasPrefix(data, []byte("\xff\xfe")), bytes.HasPrefix(data, []byte("\xfe\xff")):
		start += 2
	}
	start = min(max(start, 0), len(data))
	lineStart := bytes.LastIndexByte(data[:start], '\n') + 1
	line = 1 + bytes.Count(data[:start], []byte("\n"))
	col = 1 + utf8.RuneCount(data[lineStart:start])
	return line, col
}

// decoder walks a decoded document, collecting every problem.
type decoder struct {
	file string
	idx  *docIndex
	errs []*Error
}

func (d *decoder) errorf(key, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: d.idx.keyLine(key), Key: key, Msg: fmt.Sprintf(format, args...)})
}

// err returns the problems in line order, nil when there are none.
func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(d.errs, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Key, b.Key))
	})
	if len(d.errs) == 1 {
		return d.errs[0]
	}
	errs := make([]error, 0, len(d.errs))
	for i, e := range d.errs {
		if i == maxErrorsShown {
			errs = append(errs, fmt.Errorf("%s: %s more", d.file, plural.Count(len(d.errs)-i, "error")))
			break
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// table checks that v is a table with only known keys.
func (d *decoder) table(key string, v any, known []string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(key, "key %q must be a table, got %s", key, typeName(v))
		return nil, false
	}
	for k := range m {
		if !slices.Contains(known, k) {
			d.errorf(joinKey(key, k), "unknown key %q (known keys: %s)", joinKey(key, k), strings.Join(known, ", "))
		}
	}
	return m, true
}

func (d *decoder) str(key string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.errorf(key, "key %q must be a string, got %s", key, typeName(v))
	}
	return s, ok
}

// nonEmpty is str that also rejects "".
func (d *decoder) nonEmpty(key string, v any) (string, bool) {
	s, ok := d.str(key, v)
	if ok && s == "" {
		d.errorf(key, "key %q must not be empty", key)
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(key string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.errorf(key, "key %q must be a boolean, got %s", key, typeName(v))
	}
	return b, ok
}

// strings checks an array of strings, each passing check (nil check: any).
func (d *decoder) strings(key string, v any, check func(string) error) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		d.errorf(key, "key %q must be an array of strings, got %s", key, typeName(v))
		return nil, false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		ek := indexKey(key, i)
		s, ok := e.(string)
		if !ok {
			d.errorf(ek, "key %q must be a string, got %s", ek, typeName(e))
			good = false
			continue
		}
		if check != nil {
			if err := check(s); err != nil {
				d.errorf(ek, "key %q: %v", ek, err)
				good = false
				continue
			}
		}
		out = append(out, s)
	}
	return out, good
}

// noTilde rejects a path starting with ~, which pi.toml does not expand.
func (d *decoder) noTilde(key, p string) bool {
	if strings.HasPrefix(p, "~") {
		d.errorf(key, "key %q: %q: ~ is not expanded; write the path absolute or relative to this file's folder", key, p)
		return false
	}
	return true
}

// integer checks an integer that check accepts (its error follows the key
// in the message).
func (d *decoder) integer(key string, v any, check func(int64) error) (int, bool) {
	n, ok := v.(int64)
	if !ok {
		d.errorf(key, "key %q must be an integer, got %s", key, typeName(v))
		return 0, false
	}
	if err := check(n); err != nil {
		d.errorf(key, "key %q %v", key, err)
		return 0, false
	}
	return int(n), true
}

// checkFullOutputMB checks tools.bash.full_output_max_mb: 1..maxFullOutMB.
func checkFullOutputMB(n int64) error { return upTo(maxFullOutMB, "MiB")(n) }

// upTo is the check of a positive integer with an upper bound in unit.
func upTo(upper int64, unit string) func(int64) error {
	return func(n int64) error {
		if n <= 0 {
			return fmt.Errorf("must be positive, got %d (leave it out for the default)", n)
		}
		if n > upper {
			return fmt.Errorf("must be at most %d %s, got %d", upper, unit, n)
		}
		return nil
	}
}

// positive decodes a positive integer key of at most upper unit.
func (d *decoder) positive(key string, v any, upper int, unit string) (int, bool) {
	return d.integer(key, v, upTo(int64(upper), unit))
}

func (d *decoder) layer(raw map[string]any, scope string) *layer {
	l := &layer{file: d.file, scope: scope}
	d.table("", raw, topKeys) // unknown top-level keys
	if v, ok := raw["tool_execution"]; ok {
		if s, ok := d.str("tool_execution", v); ok {
			if err := checkToolExecution(s); err != nil {
				d.errorf("tool_execution", "key %q: %v", "tool_execution", err)
			} else {
				l.toolExecution = &s
			}
		}
	}
	if v, ok := raw["model"]; ok {
		d.model(l, v)
	}
	if v, ok := raw["tools"]; ok {
		d.tools(l, v)
	}
	if v, ok := raw["extensions"]; ok {
		d.extensions(l, v)
	}
	if v, ok := raw["permissions"]; ok {
		d.permissions(l, v)
	}
	if v, ok := raw["compaction"]; ok {
		d.compaction(l, v)
	}
	if v, ok := raw["mcp"]; ok {
		d.mcpServers(l, v)
	}
	if v, ok := raw["sandbox"]; ok {
		d.sandbox(l, v)
	}
	if v, ok := raw["checkpoints"]; ok {
		d.checkpoints(l, v)
	}
	if v, ok := raw["fleet"]; ok {
		d.fleet(l, v)
	}
	if v, ok := raw["skills"]; ok {
		d.skills(l, v)
	}
	if v, ok := raw["agents"]; ok {
		d.agents(l, v)
	}
	return l
}

func (d *decoder) model(l *layer, v any) {
	m, ok := d.table("model", v, modelKeys)
	if !ok {
		return
	}
	if v, ok := m["base_url"]; ok {
		if s, ok := d.str("model.base_url", v); ok {
			if err := llm.CheckBaseURL(s); err != nil {
				d.errorf("model.base_url", "key %q: %v", "model.base_url", err)
			} else {
				l.baseURL = &s
			}
		}
	}
	if v, ok := m["name"]; ok {
		if s, ok := d.nonEmpty("model.name", v); ok {
			l.name = &s
		}
	}
	if v, ok := m["provider"]; ok {
		if s, ok := d.nonEmpty("model.provider", v); ok {
			l.provider = &s
		}
	}
	if v, ok := m["api_key_env"]; ok {
		if s, ok := d.str("model.api_key_env", v); ok {
			if err := extspec.CheckEnvName(s); err != nil {
				d.errorf("model.api_key_env", "key %q: %v", "model.api_key_env", err)
			} else {
				l.apiKeyEnv = &s
			}
		}
	}
	if v, ok := m["images"]; ok {
		if b, ok := d.boolean("model.images", v); ok {
			l.images = &b
		}
	}
	if v, ok := m["context_window"]; ok {
		if n, ok := d.positive("model.context_window", v, maxContextWindow, "tokens"); ok {
			l.contextWindow = &n
		}
	}
}

func (d *decoder) tools(l *layer, v any) {
	m, ok := d.table("tools", v, toolsKeys)
	if !ok {
		return
	}
	if v, ok := m["active"]; ok {
		names, ok := d.strings("tools.active", v, uniqueBy("tool", extspec.CheckToolName))
		if ok {
			l.active, l.activeSet = names, true
			l.activeAt = fmt.Sprintf("%s:%d", d.file, d.idx.keyLine("tools.active"))
		}
	}
	if v, ok := m["bash"]; ok {
		b, ok := d.table("tools.bash", v, bashKeys)
		if !ok {
			return
		}
		if v, ok := b["command_prefix"]; ok {
			if s, ok := d.str("tools.bash.command_prefix", v); ok {
				l.bashPrefix = &s
			}
		}
		if v, ok := b["shell"]; ok {
			if s, ok := d.nonEmpty("tools.bash.shell", v); ok {
				l.bashShell = &s
			}
		}
		if v, ok := b["pass_env"]; ok {
			names, ok := d.strings("tools.bash.pass_env", v, uniqueBy("variable", extspec.CheckEnvName))
			if ok {
				l.bashPassEnv, l.bashPassEnvSet = names, true
			}
		}
		if v, ok := b["full_output_max_mb"]; ok {
			if n, ok := d.integer("tools.bash.full_output_max_mb", v, checkFullOutputMB); ok {
				l.bashFullMaxMB = &n
			}
		}
		if v, ok := b["default_timeout"]; ok {
			if n, ok := d.positive("tools.bash.default_timeout", v, maxBashTimeout, "seconds"); ok {
				l.bashTimeout = &n
			}
		}
	}
}

func (d *decoder) extensions(l *layer, v any) {
	exts, lines := namedTables(d, "extensions", "extension", v, d.extension, func(e Extension) string { return e.Name })
	for i := range exts {
		exts[i].Scope, exts[i].File, exts[i].Line = l.scope, d.file, lines[i]
	}
	l.extensions = append(l.extensions, exts...)
}

// tableArray is the elements of the array of tables [[kind]] (v), or an
// error at kind when v is something else.
func (d *decoder) tableArray(kind string, v any) ([]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		elems := make([]any, len(v))
		for i, e := range v {
			elems[i] = e
		}
		return elems, true
	case []any:
		return v, true
	}
	d.errorf(kind, "key %q must be an array of tables ([[%s]]), got %s", kind, kind, typeName(v))
	return nil, false
}

// namedTables decodes the array of tables [[kind]] in v, each table with
// decode at its key ("kind[i]"), and returns the tables decode took with
// the line of each. A table with the name (name) of a table before it is
// an error at its name key that gives the first one's line (noun names
// the kind: "duplicate extension name"), and is left out.
func namedTables[T any](d *decoder, kind, noun string, v any, decode func(key string, v any) (T, bool), name func(T) string) (out []T, lines []int) {
	elems, ok := d.tableArray(kind, v)
	if !ok {
		return nil, nil
	}
	firstLine := map[string]int{}
	for i, ev := range elems {
		key := indexKey(kind, i)
		t, ok := decode(key, ev)
		if !ok {
			continue
		}
		if line, dup := firstLine[name(t)]; dup {
			d.errorf(joinKey(key, "name"), "duplicate %s name %q (first at line %d)", noun, name(t), line)
			continue
		}
		firstLine[name(t)] = d.idx.keyLine(joinKey(key, "name"))
		out, lines = append(out, t), append(lines, d.idx.keyLine(key))
	}
	return out, lines
}

func (d *decoder) extension(key string, v any) (Extension, bool) {
	m, ok := d.table(key, v, extensionKeys)
	if !ok {
		return Extension{}, false
	}
	var e Extension
	good := len(d.errs)
	required := func(k string) (any, bool) {
		v, ok := m[k]
		if !ok {
			d.errorf(key, "key %q is required", joinKey(key, k))
		}
		return v, ok
	}
	if v, ok := required("name"); ok {
		if s, ok := d.str(joinKey(key, "name"), v); ok {
			if err := extspec.CheckName(s); err != nil {
				d.errorf(joinKey(key, "name"), "key %q: %v", joinKey(key, "name"), err)
			}
			e.Name = s
		}
	}
	if v, ok := required("path"); ok {
		if s, ok := d.nonEmpty(joinKey(key, "path"), v); ok && d.noTilde(joinKey(key, "path"), s) {
			p := filepath.FromSlash(s)
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(d.file), p)
			}
			e.Path = filepath.Clean(p)
		}
	}
	if v, ok := required("sha256"); ok {
		if s, ok := d.str(joinKey(key, "sha256"), v); ok {
			if err := extspec.CheckSHA256(s); err != nil {
				d.errorf(joinKey(key, "sha256"), "key %q %v", joinKey(key, "sha256"), err)
			}
			e.SHA256 = strings.ToLower(s)
		}
	}
	if v, ok := m["override"]; ok {
		e.Override, _ = d.boolean(joinKey(key, "override"), v)
	}
	if v, ok := m["grants"]; ok {
		gk := joinKey(key, "grants")
		if g, ok := d.table(gk, v, grantsKeys); ok {
			for _, k := range grantsKeys {
				if v, ok := g[k]; ok && (k == extspec.KindLLM || k == extspec.KindModel) {
					b, _ := d.boolean(joinKey(gk, k), v)
					e.Grants.LLM = e.Grants.LLM || k == extspec.KindLLM && b
					e.Grants.Model = e.Grants.Model || k == extspec.KindModel && b
					continue
				}
				if v, ok := g[k]; ok {
					list, _ := d.strings(joinKey(gk, k), v, func(s string) error { return extspec.CheckGrant(k, s) })
					switch k {
					case extspec.KindFS:
						e.Grants.FS = list
					case extspec.KindExec:
						e.Grants.Exec = list
					case extspec.KindEnv:
						e.Grants.Env = list
					case extspec.KindHTTP:
						e.Grants.HTTP = list
					case extspec.KindTools:
						e.Grants.Tools = list
					}
				}
			}
		}
	}
	if v, ok := m["limits"]; ok {
		lk := joinKey(key, "limits")
		if lm, ok := d.table(lk, v, limitsKeys); ok {
			if v, ok := lm["memory_mb"]; ok {
				e.Limits.MemoryMB, _ = d.integer(joinKey(lk, "memory_mb"), v, extspec.CheckMemoryMB)
			}
			if v, ok := lm["timeout_ms"]; ok {
				e.Limits.TimeoutMS, _ = d.integer(joinKey(lk, "timeout_ms"), v, extspec.CheckTimeoutMS)
			}
			if v, ok := lm["kv_mb"]; ok {
				e.Limits.KVMB, _ = d.integer(joinKey(lk, "kv_mb"), v, extspec.CheckKVMB)
			}
			if v, ok := lm["llm_tokens"]; ok {
				e.Limits.LLMTokens, _ = d.integer(joinKey(lk, "llm_tokens"), v, extspec.CheckLLMTokens)
			}
		}
	}
	if v, ok := m["config"]; ok {
		ck := joinKey(key, "config")
		if cm, ok := v.(map[string]any); ok {
			e.Config, _ = d.jsonValue(ck, cm).(map[string]any)
		} else {
			d.errorf(ck, "key %q must be a table, got %s", ck, typeName(v))
		}
	}
	return e, len(d.errs) == good
}

// jsonValue converts a decoded TOML value to the types encoding/json
// writes, reporting floats JSON cannot hold.
func (d *decoder) jsonValue(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = d.jsonValue(joinKey(key, k), e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = d.jsonValue(indexKey(key, i), e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = d.jsonValue(indexKey(key, i), e)
		}
		return out
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.errorf(key, "key %q: %v cannot be passed as JSON", key, v)
			return nil
		}
		return v
	case time.Time:
		switch v.Location().String() {
		case "datetime-local":
			return v.Format("2006-01-02T15:04:05.999999999")
		case "date-local":
			return v.Format("2006-01-02")
		case "time-local":
			return v.Format("15:04:05.999999999")
		}
		return v.Format(time.RFC3339Nano)
	}
	return v
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case time.Time:
		return "date-time"
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

func checkToolExecution(s string) error {
	if s != "parallel" && s != "sequential" {
		return fmt.Errorf(`must be "parallel" or "sequential", got %q`, s)
	}
	return nil
}

// checkToolNames checks a tools.active list: tool names, none twice.
func checkToolNames(names []string) error {
	check := uniqueBy("tool", extspec.CheckToolName)
	for _, n := range names {
		if err := check(n); err != nil {
			return err
		}
	}
	return nil
}

// uniqueBy returns the check of one entry of a list whose entries pass
// check and are all different; noun names an entry in the message. Each
// call of uniqueBy starts a new list.
func uniqueBy(noun string, check func(string) error) func(string) error {
	seen := map[string]bool{}
	return func(s string) error {
		if err := check(s); err != nil {
			return err
		}
		if seen[s] {
			return fmt.Errorf("%s %q is listed twice", noun, s)
		}
		seen[s] = true
		return nil
	}
}

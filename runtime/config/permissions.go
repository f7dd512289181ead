package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pi-go/pi/runtime/permission"
)

// Permissions is [permissions]: allow / ask / deny rules for tool calls
// (see docs/permissions.md and package runtime/permission).
type Permissions struct {
	// Default is "allow", "ask" or "deny" for calls no rule matches; ""
	// when no file that applies sets it (the caller's default: allow).
	Default string
	// DefaultAt is "FILE:LINE" of the default that applies.
	DefaultAt string
	// Rules in order: the global file's, then the project's.
	Rules []PermissionRule
	// Ignored are the rules and default of an untrusted project that would
	// loosen the policy (its allow rules and its default), for `pi
	// permissions list`; they do not apply.
	Ignored          []PermissionRule
	IgnoredDefault   string
	IgnoredDefaultAt string
}

// PermissionRule is one [[permissions.rules]] entry with where it is
// written (File, Line) and its scope ("global" or "project").
type PermissionRule = permission.Rule

// Set reports whether any file that applies configures permissions.
func (p Permissions) Set() bool { return p.Default != "" || len(p.Rules) > 0 }

func (p Permissions) clone() Permissions {
	n := p
	n.Rules = cloneRules(p.Rules)
	n.Ignored = cloneRules(p.Ignored)
	return n
}

func cloneRules(rs []PermissionRule) []PermissionRule {
	if rs == nil {
		return nil
	}
	out := make([]PermissionRule, len(rs))
	for i, r := range rs {
		out[i] = r.Clone()
	}
	return out
}

var (
	permissionsKeys = []string{"default", "rules"}
	ruleKeys        = []string{"tool", "command", "path", "args", "decision", "reason", "match", "not_match", "sandbox"}
	maxBashTimeout  = 86_400 // one day, in seconds
)

// permLayer is what one file says in [permissions].
type permLayer struct {
	def     *string
	defAt   string
	rules   []PermissionRule
	ignored []PermissionRule
	// ignoredDef is the default of an untrusted project.
	ignoredDef   *string
	ignoredDefAt string
}

// loosens reports whether the layer has settings that need trust: a
// default, or allow rules.
func (p *permLayer) loosens() bool {
	return p.def != nil || slices.ContainsFunc(p.rules, loosensRule)
}

// loosensRule: an allow rule, or one that takes commands out of the
// sandbox (sandbox = "off", even on an ask rule).
func loosensRule(r PermissionRule) bool {
	return r.Decision == permission.Allow || r.Sandbox != ""
}

// dropLoosening keeps only the deny and ask rules that do not take
// commands out of the sandbox: they restrict, and so apply without trust.
func (p *permLayer) dropLoosening() {
	var keep []PermissionRule
	for _, r := range p.rules {
		if loosensRule(r) {
			p.ignored = append(p.ignored, r)
		} else {
			keep = append(keep, r)
		}
	}
	p.rules = keep
	p.ignoredDef, p.ignoredDefAt = p.def, p.defAt
	p.def, p.defAt = nil, ""
}

// ignoredNames lists what dropLoosening dropped, for the warning.
func (p *permLayer) ignoredNames() []string {
	var out []string
	if p.def != nil {
		out = append(out, "permissions.default")
	}
	var lines []string
	var offLines []string // ask rules with sandbox = "off"
	for _, r := range p.rules {
		switch {
		case r.Decision == permission.Allow:
			lines = append(lines, fmt.Sprint(r.Line))
		case loosensRule(r):
			offLines = append(offLines, fmt.Sprint(r.Line))
		}
	}
	switch len(lines) {
	case 0:
	case 1:
		out = append(out, "the permissions allow rule at line "+lines[0])
	default:
		out = append(out, "the permissions allow rules at lines "+strings.Join(lines, ", "))
	}
	switch len(offLines) {
	case 0:
	case 1:
		out = append(out, `the permissions rule with sandbox = "off" at line `+offLines[0])
	default:
		out = append(out, `the permissions rules with sandbox = "off" at lines `+strings.Join(offLines, ", "))
	}
	return out
}

func (p *permLayer) applyTo(c *Permissions) {
	if p.def != nil {
		c.Default, c.DefaultAt = *p.def, p.defAt
	}
	c.Rules = append(c.Rules, cloneRules(p.rules)...)
	c.Ignored = append(c.Ignored, cloneRules(p.ignored)...)
	if p.ignoredDef != nil {
		c.IgnoredDefault, c.IgnoredDefaultAt = *p.ignoredDef, p.ignoredDefAt
	}
}

// permissions decodes [permissions]; every rule is checked, its examples
// included (permission.Rule.Check).
func (d *decoder) permissions(l *layer, v any) {
	m, ok := d.table("permissions", v, permissionsKeys)
	if !ok {
		return
	}
	if v, ok := m["default"]; ok {
		if s, ok := d.str("permissions.default", v); ok {
			if _, err := permission.ParseDecision(s); err != nil {
				d.errorf("permissions.default", "key %q: %v", "permissions.default", err)
			} else {
				l.perm.def = &s
				l.perm.defAt = fmt.Sprintf("%s:%d", d.file, d.idx.keyLine("permissions.default"))
			}
		}
	}
	v, ok = m["rules"]
	if !ok {
		return
	}
	elems, ok := d.tableArray("permissions.rules", v)
	if !ok {
		return
	}
	for i, ev := range elems {
		key := indexKey("permissions.rules", i)
		if r, ok := d.permissionRule(key, ev); ok {
			r.Scope, r.File, r.Line = l.scope, d.file, d.idx.keyLine(key)
			l.perm.rules = append(l.perm.rules, r)
		}
	}
}

func (d *decoder) permissionRule(key string, v any) (PermissionRule, bool) {
	m, ok := d.table(key, v, ruleKeys)
	if !ok {
		return PermissionRule{}, false
	}
	good := len(d.errs)
	var r PermissionRule
	if v, ok := m["tool"]; ok {
		r.Tool, _ = d.nonEmpty(joinKey(key, "tool"), v)
	} else {
		d.errorf(key, "key %q is required: a tool name or glob (\"bash\", \"write|edit\", \"*\")", joinKey(key, "tool"))
	}
	if v, ok := m["decision"]; ok {
		if s, ok := d.str(joinKey(key, "decision"), v); ok {
			r.Decision = permission.Decision(s)
		}
	} else {
		d.errorf(key, "key %q is required: \"allow\", \"ask\" or \"deny\"", joinKey(key, "decision"))
	}
	if v, ok := m["reason"]; ok {
		r.Reason, _ = d.str(joinKey(key, "reason"), v)
	}
	if v, ok := m["sandbox"]; ok {
		r.Sandbox, _ = d.str(joinKey(key, "sandbox"), v)
	}
	if v, ok := m["command"]; ok {
		if ws, ok := d.strings(joinKey(key, "command"), v, nil); ok {
			r.Command = ws
		}
	}
	if v, ok := m["path"]; ok {
		if ws, ok := d.strings(joinKey(key, "path"), v, nil); ok {
			r.Path = ws
		}
	}
	if v, ok := m["args"]; ok {
		ak := joinKey(key, "args")
		if am, ok := v.(map[string]any); ok {
			r.Args = map[string]string{}
			for p, g := range am {
				if s, ok := d.str(joinKey(ak, p), g); ok {
					r.Args[p] = s
				}
			}
		} else {
			d.errorf(ak, "key %q must be a table of JSON pointer = glob ({ \"/url\" = \"https://*\" }), got %s", ak, typeName(v))
		}
	}
	if v, ok := m["match"]; ok {
		r.Match, _ = d.strings(joinKey(key, "match"), v, nil)
	}
	if v, ok := m["not_match"]; ok {
		r.NotMatch, _ = d.strings(joinKey(key, "not_match"), v, nil)
	}
	if len(d.errs) != good {
		return PermissionRule{}, false
	}
	for _, fe := range r.Check() {
		field := fe.Field
		fk := key + "." + field
		if i := strings.IndexByte(field, '['); i > 0 {
			fk = joinKey(key, field[:i]) + field[i:]
		} else if k, err := strconv.Unquote(strings.TrimPrefix(field, "args.")); err == nil && strings.HasPrefix(field, "args.") {
			fk = joinKey(joinKey(key, "args"), k)
		}
		d.errorf(fk, "key %q: %s", fk, fe.Msg)
	}
	return r, len(d.errs) == good
}

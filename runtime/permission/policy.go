package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Options say how a Policy reads paths and what it does when no rule
// matches.
type Options struct {
	// Default is the decision for calls no rule matches; "" means Allow.
	Default Decision
	// DefaultAt is "FILE:LINE" of the default as written, for messages;
	// empty when it is not written.
	DefaultAt string
	// Root is the project root: path globs with a "/" are relative to it.
	Root string
	// Cwd is the tools' working directory, for relative "path" arguments.
	Cwd string
	// Home replaces a leading home folder in the FILE of messages by "~",
	// and is what "~" means in a "path" argument.
	Home string
}

// Policy decides calls. Its rules do not change after New, and it is safe
// for concurrent use.
type Policy struct {
	rules []*compiled
	def   Decision
	defAt string
	// root and realRoot are the project root as given and with symlinks
	// resolved.
	root, realRoot, cwd, home string
	// commandTools: some rule with a command applies to a tool other than
	// bash (so that tool's "command" argument is parsed too).
	commandTools bool
	// forTool caches, per tool name, the rules whose tool pattern matches
	// it, in order ([]*compiled).
	forTool sync.Map
}

// rulesFor returns the rules whose tool pattern matches name, in order.
func (p *Policy) rulesFor(name string) []*compiled {
	if v, ok := p.forTool.Load(name); ok {
		return v.([]*compiled)
	}
	var out []*compiled
	for _, c := range p.rules {
		if c.tool.MatchString(name) {
			out = append(out, c)
		}
	}
	p.forTool.Store(name, out)
	return out
}

// New compiles rules (in order: global first, then the project's) into a
// Policy.
//
// # Errors
//
// A rule that Rule.Check rejects, named by its FILE:LINE, and a bad default.
func New(rules []Rule, opts Options) (*Policy, error) {
	p := &Policy{def: opts.Default, defAt: opts.DefaultAt, root: opts.Root, cwd: opts.Cwd, home: opts.Home}
	if p.def == "" {
		p.def = Allow
	}
	if _, err := ParseDecision(string(p.def)); err != nil {
		return nil, fmt.Errorf("permissions default: %w", err)
	}
	if p.root != "" {
		if real, err := filepath.EvalSymlinks(p.root); err == nil {
			p.realRoot = real
		} else {
			p.realRoot = filepath.Clean(p.root)
		}
	}
	var errs []error
	for _, r := range rules {
		c, ferrs := compileRule(r)
		where := Where(r, opts.Root, opts.Home)
		for _, fe := range ferrs {
			errs = append(errs, fmt.Errorf("permission rule %s: %s", where, fe.Error()))
		}
		if len(ferrs) > 0 {
			continue
		}
		c.where = where
		if c.command != nil && !c.tool.MatchString("bash") {
			p.commandTools = true
		}
		p.rules = append(p.rules, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Default is the decision for calls no rule matches.
func (p *Policy) Default() Decision { return p.def }

// Where is "FILE:LINE" of r as messages show it: the file relative to the
// project root when it is inside it, else with the home folder as "~".
func Where(r Rule, root, home string) string {
	file := r.File
	switch {
	case file == "":
		file = "rule"
	case root != "" && strings.HasPrefix(file, root+string(filepath.Separator)):
		file = filepath.ToSlash(file[len(root)+1:])
	case home != "" && strings.HasPrefix(file, home+string(filepath.Separator)):
		file = "~/" + filepath.ToSlash(file[len(home)+1:])
	}
	if r.Line > 0 {
		return fmt.Sprintf("%s:%d", file, r.Line)
	}
	return file
}

// Result is the policy's answer for one call.
type Result struct {
	Decision Decision
	// Rule is the rule that decided; nil when the default or an unknown
	// command did.
	Rule *Rule
	// RuleText names what decided for messages: "pi.toml:12 bash git push"
	// for a rule, "default ask (pi.toml:3)" for the default, "" for an
	// unknown command.
	RuleText string
	// Reason says why: the rule's reason, or pi's words for the default
	// and for a command it cannot see.
	Reason string
	// Commands are, for a bash call, the simple commands found, each with
	// its own decision.
	Commands []CommandResult
	// SandboxOff is set for a bash call whose every command was decided
	// (allow or ask) by a rule with sandbox = "off", and that has no
	// command pi cannot see: it runs outside the kernel sandbox.
	SandboxOff bool
	// Asks are, when Decision is Ask, every distinct reason to ask (one
	// per asking rule, per command no rule matches under a default ask,
	// per command pi cannot see), for a person to answer once each.
	Asks []Question
}

// Question is one question a call raises. Key identifies what asks (a rule,
// or the default or an unknown command with the command's text), so that a
// front end can remember an "always" answer for it.
type Question struct {
	Key      string
	RuleText string
	Reason   string
}

// CommandResult is one simple command of a bash call and what decided it.
type CommandResult struct {
	// Text is the command's words (a dynamic word as written).
	Text string
	// Via names the wrappers it was found behind ("sudo", "bash -c").
	Via string
	// Latent is set for a command found in quoted text that only runs if
	// something evaluates it; only deny and ask rules apply to it.
	Latent bool
	// Decision is empty when nothing applies to it (a transparent wrapper
	// whose inner command is decided instead).
	Decision Decision
	RuleText string
	Reason   string
}

// verdict is one decision with what made it: a rule, a command pi cannot
// see (unknown), or the default.
type verdict struct {
	d       Decision
	rule    *compiled
	unknown string
	// note says why allow rules did not apply (for the default).
	note string
	text string
}

// Check decides a call of the tool name with the JSON arguments input,
// which opens the absolute real paths.
func (p *Policy) Check(name string, input json.RawMessage, paths []string) Result {
	call := &callView{p: p, input: input, paths: paths}
	rules := p.rulesFor(name)
	cmdTool := name == "bash"
	for _, c := range rules {
		if c.command != nil {
			cmdTool = true
		}
	}
	var cmds []command
	hasScript := false
	if cmdTool {
		var script string
		if script, hasScript = call.command(); hasScript {
			// The files a script's redirections name count as its paths
			// for deny and ask path rules (`echo x > .env`).
			cmds, call.redirects = analyzeAll(script)
		}
	}
	var applicable []*compiled
	for _, c := range rules {
		if (c.paths != nil && !call.pathsMatch(c)) || (c.args != nil && !c.matchArgs(call.value())) {
			continue
		}
		applicable = append(applicable, c)
	}
	var res Result
	var best verdict
	off, decided := true, 0 // SandboxOff: every decided command's rule says so
	if hasScript {
		{
			for i := range cmds {
				v := p.decide(applicable, &cmds[i])
				if v.d != "" {
					decided++
					if v.rule == nil || v.rule.rule.Sandbox != SandboxOff || v.d == Deny {
						off = false
					}
				}
				cr := CommandResult{Text: cmds[i].text(), Via: cmds[i].via, Latent: cmds[i].latent, Decision: v.d}
				if v.d != "" {
					cr.RuleText, cr.Reason = p.describe(v, name)
				}
				res.Commands = append(res.Commands, cr)
				if v.d == Ask {
					res.addAsk(p, v, name)
				}
				if v.d.rank() > best.d.rank() {
					best = v
				}
			}
		}
	}
	if best.d == "" {
		best = p.decide(applicable, nil)
	}
	res.Decision = best.d
	if best.rule != nil {
		r := best.rule.rule
		res.Rule = &r
	}
	res.RuleText, res.Reason = p.describe(best, name)
	if why := call.linkNotes[best.rule]; why != "" && best.rule != nil {
		if res.Reason != "" {
			res.Reason += "; "
		}
		res.Reason += why
	}
	switch {
	case res.Decision != Ask:
		res.Asks = nil
	case len(res.Asks) == 0:
		res.addAsk(p, best, name)
	}
	res.SandboxOff = hasScript && off && decided > 0 && res.Decision != Deny
	return res
}

func (r *Result) addAsk(p *Policy, v verdict, tool string) {
	var key string
	switch {
	case v.rule != nil:
		key = "rule\x00" + v.rule.where + "\x00" + v.rule.rule.Short()
	case v.unknown != "":
		key = "unknown\x00" + v.text
	default:
		key = "default\x00" + tool + "\x00" + v.text
	}
	for _, a := range r.Asks {
		if a.Key == key {
			return
		}
	}
	text, reason := p.describe(v, tool)
	r.Asks = append(r.Asks, Question{Key: key, RuleText: text, Reason: reason})
}

// decide is the strictest rule that matches cmd (nil: the call as a
// whole), an unknown command's ask, or the default. For a command that
// only counts when a rule names it, the verdict may be empty.
func (p *Policy) decide(applicable []*compiled, cmd *command) verdict {
	var best verdict
	for _, c := range applicable {
		if c.command != nil {
			if cmd == nil || !c.matchCommand(cmd) {
				continue
			}
		} else if cmd != nil && cmd.latent {
			continue
		}
		if c.rule.Decision == Allow && cmd != nil && (cmd.noAllow != "" || cmd.latent) {
			continue
		}
		if c.rule.Decision.rank() > best.d.rank() {
			best = verdict{d: c.rule.Decision, rule: c}
		}
	}
	if cmd == nil {
		if best.d == "" {
			best.d = p.def
		}
		return best
	}
	best.text = cmd.text()
	if cmd.unknown != "" {
		u := Ask
		if p.def == Deny {
			u = Deny
		}
		if u.rank() > best.d.rank() {
			return verdict{d: u, unknown: cmd.unknown, text: best.text}
		}
	}
	if best.d == "" && cmd.counts && !cmd.latent {
		best.d = p.def
		best.note = cmd.noAllow
	}
	return best
}

// describe is the rule text and reason of a verdict.
func (p *Policy) describe(v verdict, tool string) (string, string) {
	switch {
	case v.rule != nil:
		return v.rule.where + " " + v.rule.rule.Short(), v.rule.rule.Reason
	case v.unknown != "":
		return "", fmt.Sprintf("`%s`: %s", v.text, v.unknown)
	}
	rule := "default " + string(p.def)
	if p.defAt != "" {
		rule += " (" + p.defAt + ")"
	}
	what := tool
	if v.text != "" {
		what = "`" + v.text + "`"
	}
	reason := "no rule matches " + what
	if v.note != "" && p.def != Allow {
		reason += "; allow rules do not apply because " + v.note
	}
	return rule, reason
}

// callView decodes what rules need of a call, once.
type callView struct {
	p       *Policy
	input   json.RawMessage
	paths   []string
	decoded bool
	v       any
	lexical []string
	// redirects are the files a bash script's redirections name, as
	// written.
	redirects []string
	// targets are the call's paths whose files have more than one link,
	// links their other links (links.go), linkNotes why a rule matched
	// through one.
	targets   []linkTarget
	links     *linkIndex
	linkNotes map[*compiled]string
}

func (c *callView) value() any {
	if !c.decoded {
		c.decoded = true
		_ = json.Unmarshal(c.input, &c.v)
	}
	return c.v
}

// command is the call's "command" argument.
func (c *callView) command() (string, bool) {
	if c.decoded {
		m, ok := c.v.(map[string]any)
		if !ok {
			return "", false
		}
		s, ok := m["command"].(string)
		return s, ok
	}
	var args struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(c.input, &args) != nil || args.Command == nil {
		return "", false
	}
	return *args.Command, true
}

// pathsMatch applies a rule's path globs: a deny or ask rule matches when
// any path of the call matches (the real path, or the "path" argument as
// written, made absolute), or another hard link of its file does
// (links.go); an allow rule only when every real path does.
func (c *callView) pathsMatch(r *compiled) bool {
	if r.rule.Decision == Allow {
		if len(c.paths) == 0 {
			return false
		}
		for _, a := range c.paths {
			if !r.matchPath(filepath.ToSlash(a), c.p.rel(a, true)) {
				return false
			}
		}
		return true
	}
	for _, a := range c.paths {
		if r.matchPath(filepath.ToSlash(a), c.p.rel(a, true)) {
			return true
		}
	}
	for _, a := range c.lexicalPaths() {
		if r.matchPath(filepath.ToSlash(a), c.p.rel(a, false)) {
			return true
		}
	}
	return c.linkMatch(r)
}

// lexicalPaths is the "path" argument made absolute without resolving
// symlinks: a deny rule on ".env" also stops a call through a link to it.
func (c *callView) lexicalPaths() []string {
	if c.lexical != nil {
		return c.lexical
	}
	c.lexical = []string{}
	for _, r := range c.redirects {
		c.lexical = append(c.lexical, c.p.absolute(r))
	}
	if len(c.redirects) > 0 {
		return c.lexical
	}
	m, ok := c.value().(map[string]any)
	if !ok {
		return c.lexical
	}
	s, ok := m["path"].(string)
	if !ok || s == "" {
		return c.lexical
	}
	c.lexical = append(c.lexical, c.p.absolute(strings.TrimPrefix(s, "@")))
	return c.lexical
}

// absolute makes a path as written absolute: "~" is the home folder, a
// relative path is taken from the working directory; links are not
// followed.
func (p *Policy) absolute(s string) string {
	switch {
	case s == "~" && p.home != "":
		s = p.home
	case strings.HasPrefix(s, "~/") && p.home != "":
		s = filepath.Join(p.home, s[2:])
	case !filepath.IsAbs(s):
		cwd := p.cwd
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		s = filepath.Join(cwd, s)
	}
	return filepath.Clean(s)
}

// rel is abs relative to the project root, slash-separated, or "" outside
// it. real says abs has its symlinks resolved.
func (p *Policy) rel(abs string, real bool) string {
	for _, root := range []string{p.realRoot, p.root} {
		if root == "" {
			continue
		}
		if abs == root {
			return "."
		}
		if strings.HasPrefix(abs, root+string(filepath.Separator)) || root == string(filepath.Separator) {
			return filepath.ToSlash(strings.TrimPrefix(abs[len(root):], string(filepath.Separator)))
		}
		if real {
			break // a real path is compared with the real root
		}
	}
	return ""
}

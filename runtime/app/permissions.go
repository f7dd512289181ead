package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pi-go/pi/runtime/permission"
	"github.com/pi-go/pi/runtime/tool"
)

// DefaultBashTimeout is the timeout in seconds of a bash command the model
// gives none, when [tools.bash] default_timeout is not set.
const DefaultBashTimeout = 600

// ApprovalAnswer is a person's answer to an approval question.
type ApprovalAnswer int

// The answers: no, yes for this call, yes for this call and every later
// call that raises only questions answered "always" before (per rule, for
// the runtime's life).
const (
	Decline ApprovalAnswer = iota
	ApproveOnce
	ApproveAlways
)

// Approver answers a call that an extension hook or a permission rule
// wants approved: once, always (for the runtime's life: the same rules, or
// hook questions, are not asked again), or no. There is one per runtime
// (Options.Approver): a person through a front end's UI (UIApprover, the
// TUI's and the line mode's own), or YesApprover for --yes.
type Approver interface {
	Approve(ctx context.Context, req tool.ApprovalRequest) (ApprovalAnswer, error)
}

// ApproverFunc is a function as an Approver.
type ApproverFunc func(ctx context.Context, req tool.ApprovalRequest) (ApprovalAnswer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req tool.ApprovalRequest) (ApprovalAnswer, error) {
	return f(ctx, req)
}

// YesApprover approves every ask without a person (--yes); a block or a
// deny is never an ask, so it overrides neither.
type YesApprover struct{}

// Approve approves req once.
func (YesApprover) Approve(context.Context, tool.ApprovalRequest) (ApprovalAnswer, error) {
	return ApproveOnce, nil
}

// approver is Options.Approver, else the UI's (UIApprover), else nil:
// asks are then blocked.
func (r *Runtime) approver() Approver {
	switch {
	case r.opts.Approver != nil:
		return r.opts.Approver
	case r.opts.UI != nil:
		return UIApprover(r.opts.UI)
	}
	return nil
}

// policy builds the permission policy from [permissions]; nil when no file
// configures permissions (then every call is allowed, as before).
func (r *Runtime) buildPolicy() (*permission.Policy, error) {
	p := r.cfg.Permissions
	if !p.Set() {
		return nil, nil
	}
	home, _ := os.UserHomeDir()
	return permission.New(p.Rules, permission.Options{
		Default: permission.Decision(p.Default), DefaultAt: r.where(p.DefaultAt),
		Root: r.cfg.ProjectRoot, Cwd: r.cwd, Home: home,
	})
}

// where shortens "FILE:LINE" as permission.Where does.
func (r *Runtime) where(at string) string {
	i := strings.LastIndexByte(at, ':')
	if i < 0 {
		return at
	}
	var line int
	fmt.Sscan(at[i+1:], &line)
	home, _ := os.UserHomeDir()
	return permission.Where(permission.Rule{File: at[:i], Line: line}, r.cfg.ProjectRoot, home)
}

// approvals remembers "always" answers: the questions (a permission rule's
// key, or a hook's question text) approved for the runtime's life.
type approvals struct {
	mu     sync.Mutex
	always map[string]bool
	// pending maps a permission question's text to the keys it stands for,
	// until the person answers it.
	pending map[string][]string
}

func (a *approvals) remembered(key string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.always[key]
}

func (a *approvals) expect(question string, keys []string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending[question] = keys
}

// permissionFunc is the call pipeline's permission check: the policy's
// decision on the final arguments and real paths. Questions answered
// "always" before are not asked again.
func (r *Runtime) permissionFunc(p *permission.Policy) tool.PermissionFunc {
	return func(ctx context.Context, call tool.CallInfo) (tool.PermissionDecision, error) {
		res := p.Check(call.Name, call.Input, call.Paths)
		switch res.Decision {
		case permission.Deny:
			return tool.PermissionDecision{Verdict: tool.Deny, Rule: res.RuleText, Reason: res.Reason}, nil
		case permission.Ask:
			var open []permission.Question
			for _, q := range res.Asks {
				if !r.approvals.remembered(q.Key) {
					open = append(open, q)
				}
			}
			if len(open) == 0 {
				return tool.PermissionDecision{Verdict: tool.Allow, Rule: res.RuleText, Reason: "approved for this session"}, nil
			}
			keys := make([]string, len(open))
			texts := make([]string, len(open))
			for i, q := range open {
				keys[i], texts[i] = q.Key, describeQuestion(q)
			}
			d := tool.PermissionDecision{Verdict: tool.Ask, Rule: open[0].RuleText, Reason: open[0].Reason}
			if len(open) > 1 {
				d = tool.PermissionDecision{Verdict: tool.Ask, Reason: strings.Join(texts, "; ")}
			}
			r.approvals.expect(describeQuestion(permission.Question{RuleText: d.Rule, Reason: d.Reason}), keys)
			return d, nil
		}
		return tool.PermissionDecision{Verdict: tool.Allow, Rule: res.RuleText, Reason: res.Reason}, nil
	}
}

// describeQuestion is the question as the pipeline words it: "RULE
// (REASON)".
func describeQuestion(q permission.Question) string {
	switch {
	case q.RuleText != "" && q.Reason != "":
		return q.RuleText + " (" + q.Reason + ")"
	case q.RuleText != "":
		return q.RuleText
	}
	return q.Reason
}

// sessionApprove turns an Approver into the pipeline's ApproveFunc: a
// request whose questions were all answered "always" before is approved
// without asking; an "always" answer remembers each question (a permission
// question by the rule it stands for). Asks are made one at a time.
func (r *Runtime) sessionApprove(ask Approver) tool.ApproveFunc {
	var asking sync.Mutex
	return func(ctx context.Context, req tool.ApprovalRequest) (bool, error) {
		asking.Lock()
		defer asking.Unlock()
		a := r.approvals
		a.mu.Lock()
		all := true
		for _, q := range req.Questions {
			if !a.always[q] {
				all = false
			}
		}
		a.mu.Unlock()
		if all {
			return true, nil
		}
		ans, err := ask.Approve(ctx, req)
		if err != nil || ans == Decline {
			return false, err
		}
		if ans == ApproveAlways {
			a.mu.Lock()
			for _, q := range req.Questions {
				if keys, ok := a.pending[q]; ok {
					for _, k := range keys {
						a.always[k] = true
					}
					delete(a.pending, q)
				} else {
					a.always[q] = true
				}
			}
			a.mu.Unlock()
		}
		return true, nil
	}
}

// CheckPermission is what the permission rules decide about a call of the
// tool name with these arguments (after prepareArguments and validation,
// with the real paths the tool would open), without running it or the
// extensions' hooks. With no [permissions] configured every call is
// allowed, and the result says so.
//
// # Errors
//
// ErrUnknownTool (wrapped), arguments the tool rejects, and paths the tool
// cannot name.
func (r *Runtime) CheckPermission(name string, input json.RawMessage) (permission.Result, error) {
	def, ok := r.registry.Lookup(name)
	if !ok {
		return permission.Result{}, fmt.Errorf("%w %q; known tools: %s", ErrUnknownTool, name, strings.Join(r.ToolNames(), ", "))
	}
	t, err := tool.Wrap(def, r.ContextFactory())
	if err != nil {
		return permission.Result{}, err
	}
	args, err := t.PrepareArguments(input)
	if err == nil {
		err = t.Validate(args)
	}
	if err != nil {
		return permission.Result{}, fmt.Errorf("check permission for %s: %w", name, err)
	}
	var paths []string
	if pl, ok := t.(tool.PathLister); ok {
		if paths, err = pl.CallPaths(args); err != nil {
			return permission.Result{}, fmt.Errorf("check permission for %s: cannot tell which paths it would open: %w", name, err)
		}
	}
	if r.policy == nil {
		return permission.Result{Decision: permission.Allow, Reason: "no [permissions] in pi.toml: every call is allowed"}, nil
	}
	return r.policy.Check(name, args, paths), nil
}

// PermissionRule is a rule as `pi permissions list` shows it.
type PermissionRule struct {
	permission.Rule
	// Where is "FILE:LINE" as messages show it.
	Where string
	// Ignored says why the rule does not apply ("" when it does).
	Ignored string
}

// PermissionsInfo is the permission configuration as `pi permissions
// list` shows it.
// Decision is a permission rule's decision: allow, ask or deny.
type Decision = permission.Decision

// PermissionsInfo is what /permissions and pi permissions list show.
type PermissionsInfo struct {
	// Default is the decision for calls no rule matches; DefaultAt where
	// it is written ("" for pi's own default, allow).
	Default   permission.Decision
	DefaultAt string
	// IgnoredDefault is an untrusted project's default, which does not
	// apply ("" when there is none); IgnoredDefaultAt is where it is.
	IgnoredDefault   permission.Decision
	IgnoredDefaultAt string
	// Rules are the rules that apply, in order, then the allow rules of an
	// untrusted project (with Ignored set).
	Rules []PermissionRule
}

// Permissions describes the permission rules and default.
func (r *Runtime) Permissions() PermissionsInfo {
	home, _ := os.UserHomeDir()
	p := r.cfg.Permissions
	var info PermissionsInfo
	for _, x := range p.Rules {
		info.Rules = append(info.Rules, PermissionRule{Rule: x.Clone(), Where: permission.Where(x, r.cfg.ProjectRoot, home)})
	}
	for _, x := range p.Ignored {
		info.Rules = append(info.Rules, PermissionRule{Rule: x.Clone(), Where: permission.Where(x, r.cfg.ProjectRoot, home),
			Ignored: "the project is not trusted: its allow rules do not apply (pi trust)"})
	}
	info.Default = permission.Decision(p.Default)
	if info.Default == "" {
		info.Default = permission.Allow
	}
	if p.DefaultAt != "" {
		info.DefaultAt = r.where(p.DefaultAt)
	}
	if p.IgnoredDefault != "" {
		info.IgnoredDefault, info.IgnoredDefaultAt = permission.Decision(p.IgnoredDefault), r.where(p.IgnoredDefaultAt)
	}
	return info
}

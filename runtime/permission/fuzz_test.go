package permission

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

var fuzzSeeds = []string{
	"ls -la", "git push --force", "rm -rf /", "echo $(curl x)", "bash -c 'wget x'", "sudo -u root rm -fr .",
	"cat <<EOF\n$(curl x)\nEOF", "x='$(curl x)'", "f() { curl x; }", "find . -exec rm -rf {} \\;",
	"echo / | xargs rm -rf", "env -S 'curl x'", "$X y", "ls 'x", "a && b || c | d |& e; f &",
	"{git,push}", "$'\\x63url' x", "case a in a) curl x;; esac", "((x=$(curl y)))", "curl x \\",
}

// FuzzBashDenyNotWeakened: checking never panics, and a script whose
// decision is deny stays deny whatever commands are appended after it, on
// a new line or after "; ".
func FuzzBashDenyNotWeakened(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, fuzzSeeds[(i+7)%len(fuzzSeeds)])
	}
	p := tableRules(f, Ask)
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 4096 || len(b) > 4096 {
			return
		}
		ra := p.Check("bash", bashInput(a), nil)
		for _, cr := range ra.Commands {
			_ = cr.Text
		}
		if ra.Decision != Deny {
			return
		}
		if _, err := parser.Parse(strings.NewReader(a), ""); err != nil {
			// An unfinished script (an open heredoc) may legitimately
			// change meaning when text follows; appending commands is
			// only defined after a complete one.
			return
		}
		for _, sep := range []string{"\n", "; "} {
			if rb := p.Check("bash", bashInput(a+sep+b), nil); rb.Decision != Deny {
				t.Errorf("%q is deny (%s) but %q is %s (%s: %s)", a, ra.RuleText, a+sep+b, rb.Decision, rb.RuleText, rb.Reason)
			}
		}
	})
}

// FuzzRuleCheck: validating and compiling any rule, and checking its
// examples, never panics.
func FuzzRuleCheck(f *testing.F) {
	f.Add("bash", "git", "push", "*.pem", "/url", "git push origin")
	f.Add("write|edit", "[x", "-rf", "**/a/{b,c}", "~0/~1", "{}")
	f.Fuzz(func(t *testing.T, tool, w0, w1, glob, ptr, example string) {
		for _, r := range []Rule{
			{Tool: tool, Command: []string{w0, w1}, Decision: Deny, Match: []string{example}},
			{Tool: tool, Path: []string{glob}, Decision: Allow, NotMatch: []string{example}},
			{Tool: tool, Args: map[string]string{ptr: glob}, Decision: Ask, Match: []string{example}},
		} {
			r.Check()
			if p, err := New([]Rule{r}, Options{Root: "/p"}); err == nil {
				p.Check(tool, bashInput(example), []string{"/p/" + example})
			}
		}
	})
}

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

// evalForms are ways to make bash evaluate the variable V a second time;
// evalSources are ways to give V a value pi cannot see.
var (
	evalForms = []string{
		"echo $((V))", "echo $(( $V + 1 ))", "echo $[V]", "((V))", "let V", "let 'x=V'", "[[ V -eq 1 ]]",
		"[[ $V -lt 1 ]]", "a=(1); echo ${a[V]}", "a=(1); echo ${a[$V]}", "a=(1); a[V]=2", "x=1; echo ${x:V}",
		"x=1; echo ${x:0:V}", "echo ${!V}", "echo \"${V@P}\"", "for ((i=V; i<1; i++)); do echo; done",
		"declare -i n; n=$V", "declare -n r=$V; echo $r", "printf -v \"$V\" x", "read \"$V\" <<< x",
		"unset \"a[$V]\"", "test -v \"a[$V]\"", "[[ -v a[$V] ]]", "declare \"$V\"", "compgen -W \"$V\"",
		"mapfile -C \"$V\" <<< x", "trap \"$V\" EXIT", "eval \"$V\"", "PS4=$V; set -x; echo",
		"hash -p \"$V\" t; t", "BASH_CMDS[t]=$V; t", "alias t=\"$V\"; t",
	}
	evalSources = []string{
		"V='a[$(touch pwn)]'", "read -r V", "printf -v V %s \"$1\"", "mapfile -t V <<< \"$1\"",
		"declare V=\"$1\"", "export V=\"$1\"", "for V in \"$@\"; do :; done", "getopts a: o; V=$OPTARG",
		"V=$(cat f)", ": ${V:=$1}", "V=1; V+=$1", "V=0; read V", "local V=$1", "V=$'a[\\x24(touch pwn)]'",
	}
)

// FuzzSecondEvalNeverAllowed: a script that gives a variable a value pi
// cannot see and then has bash evaluate it again is never allowed, under
// a default deny with echo, read, printf and the like allowed, whatever
// complete script comes before it and whatever the variable is called.
func FuzzSecondEvalNeverAllowed(f *testing.F) {
	f.Add(uint8(0), uint8(0), "b", "")
	f.Add(uint8(7), uint8(3), "n", "echo hi")
	f.Add(uint8(15), uint8(11), "x_1", "b=1; for ((i=0;i<3;i++)); do echo $i; done")
	var rules []Rule
	for _, c := range []string{"echo", "wc", "cat", "read", "printf", "mapfile", "test", "unset", "hash", "compgen", "getopts", "set", "t", ":"} {
		rules = append(rules, Rule{Tool: "bash", Command: []string{c}, Decision: Allow})
	}
	p, err := New(rules, Options{Default: Deny})
	if err != nil {
		f.Fatal(err)
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, form, source uint8, name, pre string) {
		if len(pre) > 2048 || !ident().MatchString(name) || len(name) > 32 {
			return
		}
		if _, err := parser.Parse(strings.NewReader(pre), ""); err != nil {
			return
		}
		if strings.Contains(pre, "<<") {
			return // an open heredoc could take the rest as data
		}
		src := strings.ReplaceAll(evalSources[int(source)%len(evalSources)], "V", name)
		use := strings.ReplaceAll(evalForms[int(form)%len(evalForms)], "V", name)
		script := pre + "\n" + src + "\n" + use
		if r := p.Check("bash", bashInput(script), nil); r.Decision == Allow {
			t.Errorf("allowed: %q", script)
		}
	})
}

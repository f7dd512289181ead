package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustPolicy(t *testing.T, rules []Rule, opts Options) *Policy {
	t.Helper()
	for i := range rules {
		if rules[i].File == "" {
			rules[i].File, rules[i].Line = filepath.Join(opts.Root, "pi.toml"), 3+i
		}
	}
	p, err := New(rules, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDefaults: with default allow, only rules restrict, and commands pi
// cannot see still ask; with default deny they are denied.
func TestDefaults(t *testing.T) {
	for _, c := range []struct {
		def  Decision
		cmd  string
		want Decision
	}{
		{Allow, "npm install", Allow},
		{Allow, "git push", Ask},
		{Allow, "$X push", Ask},
		{Allow, "cat f | sh", Ask},
		{Allow, "ls 'x", Ask},
		{Allow, "PATH=. ls", Allow},
		{Allow, "git --no-pager log push", Allow},
		{Deny, "npm install", Deny},
		{Deny, "ls -la", Allow},
		{Deny, "$X push", Deny},
		{Deny, "bash <<'EOF'\nls\nEOF", Deny},
		{Deny, "sudo ls", Deny},
		{Deny, "nice ls", Allow},
		{Deny, "PATH=. ls", Deny},
		{Deny, "ls; ls -la | cat", Allow},
	} {
		p := tableRules(t, c.def)
		if got := p.Check("bash", bashInput(c.cmd), nil); got.Decision != c.want {
			t.Errorf("default %s, %q: got %s (%s: %s), want %s", c.def, c.cmd, got.Decision, got.RuleText, got.Reason, c.want)
		}
	}
}

// TestMessages: the rule text is FILE:LINE plus the rule's short form; the
// default and an unknown command say what happened in words.
func TestMessages(t *testing.T) {
	root := t.TempDir()
	p := mustPolicy(t, []Rule{
		{Tool: "bash", Command: []string{"git", "push"}, Decision: Ask, Reason: "pushing needs a look"},
	}, Options{Default: Deny, DefaultAt: "pi.toml:2", Root: root})
	r := p.Check("bash", bashInput("ls && git push origin"), nil)
	if r.Decision != Deny || r.RuleText != "default deny (pi.toml:2)" || r.Reason != "no rule matches `ls`" {
		t.Errorf("default: %+v", r)
	}
	r = p.Check("bash", bashInput("git push origin"), nil)
	if r.Decision != Ask || r.RuleText != "pi.toml:3 bash git push" || r.Reason != "pushing needs a look" || r.Rule == nil || r.Rule.Line != 3 {
		t.Errorf("rule: %+v", r)
	}
	if len(r.Commands) != 1 || r.Commands[0].Text != "git push origin" {
		t.Errorf("commands: %+v", r.Commands)
	}
	r = p.Check("bash", bashInput("$CMD push"), nil)
	if r.Decision != Deny || r.RuleText != "" || !strings.Contains(r.Reason, "`$CMD push`: the command name is not literal") {
		t.Errorf("unknown: %+v", r)
	}
	r = p.Check("write", json.RawMessage(`{"path":"x","content":""}`), []string{filepath.Join(root, "x")})
	if r.Decision != Deny || r.Reason != "no rule matches write" {
		t.Errorf("other tool: %+v", r)
	}
}

// TestPathRules: globs on the real path, relative to the project root; a
// glob without "/" matches a name in any folder; deny rules also see the
// path as written, so a symlink to a protected file is no way around them;
// an allow rule needs the real path to match.
func TestPathRules(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, f := range []string{".env", "src/main.go", "certs/server.pem", "secrets/db.txt"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	os.WriteFile(filepath.Join(outside, "prod.txt"), nil, 0o644)
	os.Symlink(filepath.Join(root, ".env"), filepath.Join(root, "notes.txt"))
	os.Symlink(filepath.Join(outside, "prod.txt"), filepath.Join(root, ".env.prod"))
	os.Symlink(outside, filepath.Join(root, "src", "escape"))
	p := mustPolicy(t, []Rule{
		{Tool: "write|edit", Path: []string{".env*", "**/*.pem", "secrets"}, Decision: Deny, Reason: "secrets"},
		{Tool: "read", Path: []string{".env*"}, Decision: Ask},
		{Tool: "write|edit", Path: []string{"src/**"}, Decision: Allow},
		{Tool: "ls", Path: []string{"/etc/**"}, Decision: Deny},
	}, Options{Default: Ask, Root: root, Cwd: root})
	real := func(rel string) string {
		r, err := filepath.EvalSymlinks(filepath.Join(root, rel))
		if err != nil {
			return filepath.Join(root, rel)
		}
		return r
	}
	for _, c := range []struct {
		tool, path string
		want       Decision
	}{
		{"write", ".env", Deny},
		{"edit", "sub/dir/.env.local", Deny},
		{"write", "certs/server.pem", Deny},
		{"write", "secrets/db.txt", Deny},
		{"write", "notes.txt", Deny}, // a link to .env: its real path is .env
		{"write", ".env.prod", Deny}, // a link out: the path as written is .env.prod
		{"read", ".env", Ask},
		{"read", "src/main.go", Ask}, // no rule: the default
		{"write", "src/main.go", Allow},
		{"write", "src/new.go", Allow},
		{"write", "src/escape/prod.txt", Ask}, // allowed folder, but the real path is outside
		{"write", "README.md", Ask},
		{"ls", "/etc/ssh", Deny},
		{"grep", "/etc/ssh", Ask},
	} {
		abs := c.path
		if !filepath.IsAbs(abs) {
			abs = real(c.path)
		}
		in, _ := json.Marshal(map[string]string{"path": c.path})
		if got := p.Check(c.tool, in, []string{abs}); got.Decision != c.want {
			t.Errorf("%s %s: got %s (%s: %s), want %s", c.tool, c.path, got.Decision, got.RuleText, got.Reason, c.want)
		}
	}
}

// TestBashRedirectPaths: the files a bash script's redirections name are
// its paths for deny and ask path rules.
func TestBashRedirectPaths(t *testing.T) {
	root := t.TempDir()
	p := mustPolicy(t, []Rule{
		{Tool: "*", Path: []string{".env*", "/etc/**"}, Decision: Deny},
		{Tool: "bash", Command: []string{"cat"}, Decision: Allow},
		{Tool: "bash", Command: []string{"echo"}, Decision: Allow},
	}, Options{Default: Allow, Root: root, Cwd: root})
	for _, c := range []struct {
		cmd  string
		want Decision
	}{
		{"echo KEY=1 > .env", Deny},
		{"cat < config/.env.prod", Deny},
		{"echo x >> /etc/hosts", Deny},
		{"cat .env", Allow}, // an argument is not a path to pi: see docs/permissions.md
		{"echo x > notes.txt", Allow},
	} {
		if got := p.Check("bash", bashInput(c.cmd), nil); got.Decision != c.want {
			t.Errorf("%q: got %s (%s), want %s", c.cmd, got.Decision, got.RuleText, c.want)
		}
	}
}

// TestArgsAndTools: args rules read JSON pointers; tool globs cover
// extension and MCP tools.
func TestArgsAndTools(t *testing.T) {
	p := mustPolicy(t, []Rule{
		{Tool: "fetch|mcp_*", Args: map[string]string{"/url": "http://*"}, Decision: Deny, Reason: "https only"},
		{Tool: "mcp_github_*", Decision: Ask},
		{Tool: "deploy", Args: map[string]string{"/options/0/env": "prod*"}, Decision: Deny},
		{Tool: "*", Args: map[string]string{"/force": "true"}, Decision: Ask},
	}, Options{Root: "/p"})
	for _, c := range []struct {
		tool, args string
		want       Decision
	}{
		{"fetch", `{"url":"http://x"}`, Deny},
		{"fetch", `{"url":"https://x"}`, Allow},
		{"mcp_web_get", `{"url":"http://x"}`, Deny},
		{"mcp_github_create_issue", `{}`, Ask},
		{"deploy", `{"options":[{"env":"production"}]}`, Deny},
		{"deploy", `{"options":[{"env":"dev"}]}`, Allow},
		{"deploy", `{"options":[]}`, Allow},
		{"anything", `{"force":true}`, Ask},
		{"anything", `{"force":"true"}`, Ask},
		{"anything", `{"force":false}`, Allow},
	} {
		if got := p.Check(c.tool, json.RawMessage(c.args), nil); got.Decision != c.want {
			t.Errorf("%s %s: got %s (%s), want %s", c.tool, c.args, got.Decision, got.RuleText, c.want)
		}
	}
}

// TestCommandRuleOnOtherTool: a command rule on a tool other than bash
// parses that tool's "command" argument.
func TestCommandRuleOnOtherTool(t *testing.T) {
	p := mustPolicy(t, []Rule{{Tool: "shell*", Command: []string{"rm"}, Decision: Deny}}, Options{Root: "/p"})
	if got := p.Check("shell_exec", json.RawMessage(`{"command":"ls; rm x"}`), nil); got.Decision != Deny {
		t.Errorf("got %s", got.Decision)
	}
	if got := p.Check("bash", bashInput("rm x"), nil); got.Decision != Allow {
		t.Errorf("bash got %s: the rule names shell* only", got.Decision)
	}
}

// TestCheckExamples: match and not_match examples are checked, and bad
// rules are refused, each with the field that is wrong.
func TestCheckExamples(t *testing.T) {
	good := Rule{Tool: "bash", Command: []string{"git", "push"}, Decision: Ask,
		Match: []string{"git push origin main", "cd x && git -C y push", "sudo git push"}, NotMatch: []string{"git pull", "echo git push"}}
	if errs := good.Check(); errs != nil {
		t.Errorf("good rule: %v", errs)
	}
	for _, c := range []struct {
		rule  Rule
		field string
		msg   string
	}{
		{Rule{Tool: "bash", Command: []string{"git", "push"}, Decision: Ask, Match: []string{"git pull"}}, "match[0]", "does not match the command"},
		{Rule{Tool: "bash", Command: []string{"git", "push"}, Decision: Ask, NotMatch: []string{"x; git push"}}, "not_match[0]", "must not"},
		{Rule{Tool: "write", Path: []string{".env*"}, Decision: Deny, Match: []string{"a/.env.local", ".envrc"}, NotMatch: []string{"env"}}, "", ""},
		{Rule{Tool: "write", Path: []string{".env*"}, Decision: Deny, Match: []string{"env"}}, "match[0]", "path"},
		{Rule{Tool: "fetch", Args: map[string]string{"/url": "http://*"}, Decision: Deny, Match: []string{`{"url":"http://a"}`}, NotMatch: []string{`{"url":"https://a"}`}}, "", ""},
		{Rule{Tool: "fetch", Args: map[string]string{"/url": "x"}, Decision: Deny, Match: []string{`nope`}}, "match[0]", "not JSON"},
		{Rule{Tool: "", Decision: Deny}, "tool", "required"},
		{Rule{Tool: "a b", Decision: Deny}, "tool", "not a tool name"},
		{Rule{Tool: "bash", Decision: "block"}, "decision", `"allow", "ask" or "deny"`},
		{Rule{Tool: "bash", Command: []string{}, Decision: Deny}, "command", "at least"},
		{Rule{Tool: "bash", Command: []string{"-rf"}, Decision: Deny}, "command[0]", "not an option"},
		{Rule{Tool: "bash", Command: []string{"rm", "[x"}, Decision: Deny}, "command[1]", "unclosed"},
		{Rule{Tool: "write", Path: []string{"~/.ssh/*"}, Decision: Deny}, "path[0]", "~ is not expanded"},
		{Rule{Tool: "write", Path: []string{"a[b"}, Decision: Deny}, "path[0]", "bad glob"},
		{Rule{Tool: "x", Args: map[string]string{"url": "*"}, Decision: Deny}, `args."url"`, "JSON pointer"},
	} {
		errs := c.rule.Check()
		if c.field == "" {
			if errs != nil {
				t.Errorf("%+v: %v", c.rule, errs)
			}
			continue
		}
		if len(errs) == 0 || errs[0].Field != c.field || !strings.Contains(errs[0].Msg, c.msg) {
			t.Errorf("%+v: got %v, want %s: …%s…", c.rule, errs, c.field, c.msg)
		}
	}
}

// TestSandboxOff: a bash call runs outside the sandbox only when every
// command in it was decided by a rule with sandbox = "off" (allow or ask);
// one other command, a command pi cannot see or a deny keeps it inside.
func TestSandboxOff(t *testing.T) {
	root := t.TempDir()
	p := mustPolicy(t, []Rule{
		{Tool: "bash", Command: []string{"docker", "*"}, Decision: Allow, Sandbox: SandboxOff},
		{Tool: "bash", Command: []string{"docker", "rm"}, Decision: Ask, Sandbox: SandboxOff},
		{Tool: "bash", Command: []string{"docker", "system", "prune"}, Decision: Deny},
		{Tool: "bash", Command: []string{"ls"}, Decision: Allow},
	}, Options{Default: Ask, Root: root, Cwd: root})
	for cmd, want := range map[string]bool{
		"docker ps":                      true,
		"docker ps && docker images":     true,
		"docker rm x":                    true, // ask, sandbox off once approved
		"docker ps; ls":                  false,
		"ls":                             false,
		"docker ps $(cat secret)":        false,
		"docker ps | sh":                 false,
		"$CMD ps":                        false,
		"docker system prune":            false,
		"docker ps; docker system prune": false,
		"echo hi":                        false,
	} {
		if got := p.Check("bash", bashInput(cmd), nil); got.SandboxOff != want {
			t.Errorf("%q: SandboxOff = %v, want %v (%s %s)", cmd, got.SandboxOff, want, got.Decision, got.RuleText)
		}
	}
	if got := p.Check("bash", bashInput("docker ps"), nil); !strings.HasSuffix(got.RuleText, "bash docker * sandbox=off") {
		t.Errorf("rule text %q does not say sandbox=off", got.RuleText)
	}
	if got := p.Check("write", []byte(`{"path":"x","content":""}`), []string{root + "/x"}); got.SandboxOff {
		t.Error("a write call is SandboxOff")
	}
}

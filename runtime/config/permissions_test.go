package config

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/permission"
)

const globalPerms = `[permissions]
default = "ask"

[[permissions.rules]]
tool = "bash"
command = ["git", "push"]
decision = "ask"
reason = "pushing needs a look"
match = ["git push origin main"]
not_match = ["git pull"]
`

const projectPerms = `[permissions]
default = "allow"

[[permissions.rules]]
tool = "write|edit"
path = [".env*", "**/*.pem"]
decision = "deny"

[[permissions.rules]]
tool = "bash"
command = ["make"]
decision = "allow"

[[permissions.rules]]
tool = "fetch"
args = { "/url" = "http://*" }
decision = "ask"
`

// TestPermissionsLayering: global and project rules both apply, global
// first; a project's deny and ask rules apply untrusted, its allow rules
// and default only when trusted (with a warning naming what was ignored).
func TestPermissionsLayering(t *testing.T) {
	for _, trust := range []bool{false, true} {
		e := newEnv(t)
		gfile := writeFile(t, filepath.Join(e.home, "pi.toml"), globalPerms)
		pfile := writeFile(t, filepath.Join(e.proj, "pi.toml"), projectPerms)
		c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: trust})
		if err != nil {
			t.Fatal(err)
		}
		p := c.Permissions
		var got []string
		for _, r := range p.Rules {
			got = append(got, r.Scope+":"+r.Short()+":"+string(r.Decision)+":"+filepath.Base(filepath.Dir(r.File))+":"+strconv.Itoa(r.Line))
		}
		want := []string{"global:bash git push:ask:home:4", "project:write|edit .env*,**/*.pem:deny:proj:4", "project:fetch /url=http://*:ask:proj:14"}
		wantDefault, wantAt := "ask", gfile+":2"
		if trust {
			want = []string{"global:bash git push:ask:home:4", "project:write|edit .env*,**/*.pem:deny:proj:4", "project:bash make:allow:proj:9", "project:fetch /url=http://*:ask:proj:14"}
			wantDefault, wantAt = "allow", pfile+":2"
		}
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("trust %v: rules\n got  %s\n want %s", trust, strings.Join(got, " | "), strings.Join(want, " | "))
		}
		if p.Default != wantDefault || p.DefaultAt != wantAt {
			t.Errorf("trust %v: default %q at %q, want %q at %q", trust, p.Default, p.DefaultAt, wantDefault, wantAt)
		}
		if r := p.Rules[0]; r.Reason != "pushing needs a look" || len(r.Match) != 1 || len(r.NotMatch) != 1 {
			t.Errorf("rule fields: %+v", r)
		}
		if trust {
			if len(c.Warnings) != 0 || len(p.Ignored) != 0 {
				t.Errorf("trusted: warnings %q, ignored %v", c.Warnings, p.Ignored)
			}
			continue
		}
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "ignored: permissions.default; the permissions allow rule at line 9.") {
			t.Errorf("untrusted: warnings %q", c.Warnings)
		}
		if len(p.Ignored) != 1 || p.Ignored[0].Line != 9 || p.IgnoredDefault != "allow" {
			t.Errorf("untrusted: ignored %+v, default %q", p.Ignored, p.IgnoredDefault)
		}
	}
}

// TestPermissionsSandboxOffNeedsTrust: an ask rule that takes commands
// out of the sandbox loosens it, so an untrusted project's is ignored and
// named; trusted, it applies.
func TestPermissionsSandboxOffNeedsTrust(t *testing.T) {
	for _, trust := range []bool{false, true} {
		e := newEnv(t)
		writeFile(t, filepath.Join(e.proj, "pi.toml"), "[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"docker\", \"*\"]\ndecision = \"ask\"\nsandbox = \"off\"\n")
		c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: trust})
		if err != nil {
			t.Fatal(err)
		}
		rules := c.Permissions.Rules
		if trust {
			if len(rules) != 1 || rules[0].Sandbox != "off" {
				t.Errorf("trusted: rules %+v", rules)
			}
			continue
		}
		if len(rules) != 0 || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `the permissions rule with sandbox = "off" at line 1`) {
			t.Errorf("untrusted: rules %+v, warnings %q", rules, c.Warnings)
		}
	}
}

// TestPermissionsRestrictOnlyNeedNoTrust: a project with only deny and ask
// rules is not "untrusted" at all: nothing is ignored, nothing warned.
func TestPermissionsRestrictOnlyNeedNoTrust(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.proj, "pi.toml"), "[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"rm\"]\ndecision = \"deny\"\n")
	c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 || len(c.Permissions.Rules) != 1 || c.Permissions.Rules[0].Decision != permission.Deny {
		t.Errorf("warnings %q, rules %+v", c.Warnings, c.Permissions.Rules)
	}
	// A clone is deep.
	n := c.Clone()
	n.Permissions.Rules[0].Command[0] = "x"
	if c.Permissions.Rules[0].Command[0] != "rm" {
		t.Error("Clone shares rules")
	}
}

// TestPermissionsErrors: bad rules and failing examples are load errors
// with the file and line of the key.
func TestPermissionsErrors(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"[permissions]\ndefault = \"maybe\"\n", `FILE:2: key "permissions.default": must be "allow", "ask" or "deny", got "maybe"`},
		{"[permissions]\ndefaults = \"ask\"\n", `FILE:2: unknown key "permissions.defaults" (known keys: default, rules)`},
		{"[[permissions.rules]]\ntool = \"bash\"\ndecision = \"deny\"\ncmd = [\"rm\"]\n", `FILE:4: unknown key "permissions.rules[0].cmd" (known keys: tool, command, path, args, decision, reason, match, not_match, sandbox)`},
		{"[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"docker\", \"*\"]\ndecision = \"allow\"\nsandbox = \"none\"\n", `FILE:5: key "permissions.rules[0].sandbox": must be "off" (the commands the rule matches run outside the kernel sandbox), got "none"`},
		{"[[permissions.rules]]\ntool = \"bash\"\ndecision = \"allow\"\nsandbox = \"off\"\n", `FILE:4: key "permissions.rules[0].sandbox": needs command: it says which commands run outside the sandbox (command = ["docker", "*"])`},
		{"[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"docker\"]\ndecision = \"deny\"\nsandbox = \"off\"\n", `FILE:5: key "permissions.rules[0].sandbox": a deny rule runs nothing: sandbox = "off" goes with allow or ask`},
		{"[[permissions.rules]]\ndecision = \"deny\"\n", `FILE:1: key "permissions.rules[0].tool" is required: a tool name or glob ("bash", "write|edit", "*")`},
		{"[[permissions.rules]]\ntool = \"bash\"\n", `FILE:1: key "permissions.rules[0].decision" is required: "allow", "ask" or "deny"`},
		{"[[permissions.rules]]\ntool = \"bash\"\ndecision = \"block\"\n", `FILE:3: key "permissions.rules[0].decision": must be "allow", "ask" or "deny", got "block"`},
		{"[[permissions.rules]]\ntool = \"bash\"\ncommand = \"git push\"\ndecision = \"ask\"\n", `FILE:3: key "permissions.rules[0].command" must be an array of strings, got string`},
		{"[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"git\", \"push\"]\ndecision = \"ask\"\nmatch = [\n  \"git push\",\n  \"git pull\",\n]\n",
			`FILE:7: key "permissions.rules[0].match[1]": the rule does not match the command "git pull", but the example says it must`},
		{"\n\n[[permissions.rules]]\ntool = \"bash\"\ncommand = [\"git\", \"push\"]\ndecision = \"ask\"\nnot_match = [\"cd x && git push\"]\n",
			`FILE:7: key "permissions.rules[0].not_match[0]": the rule matches the command "cd x && git push", but the example says it must not`},
		{"[[permissions.rules]]\ntool = \"write\"\npath = [\"[x\"]\ndecision = \"deny\"\n", `FILE:3: key "permissions.rules[0].path[0]": bad glob "[x"`},
		{"[[permissions.rules]]\ntool = \"x\"\nargs = { url = \"*\" }\ndecision = \"deny\"\n", `FILE:3: key "permissions.rules[0].args.url": "url" is not a JSON pointer (it starts with "/": "/url", "/options/0")`},
		{"[tools.bash]\ndefault_timeout = 0\n", `FILE:2: key "tools.bash.default_timeout" must be positive, got 0 (leave it out for the default)`},
		{"[tools.bash]\ndefault_timeout = 86401\n", `FILE:2: key "tools.bash.default_timeout" must be at most 86400 seconds, got 86401`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			e := newEnv(t)
			file := writeFile(t, filepath.Join(e.proj, "pi.toml"), tt.toml)
			_, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home, Trust: true})
			if err == nil {
				t.Fatal("no error")
			}
			if want := strings.ReplaceAll(tt.want, "FILE", file); err.Error() != want {
				t.Errorf("got  %s\nwant %s", err, want)
			}
		})
	}
}

func TestBashDefaultTimeout(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.home, "pi.toml"), "[tools.bash]\ndefault_timeout = 120\n")
	writeFile(t, filepath.Join(e.proj, "pi.toml"), "[tools.bash]\ndefault_timeout = 30\n")
	c, err := Load(LoadOptions{Cwd: e.proj, PIHome: e.home})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tools.Bash.DefaultTimeout != 30 || len(c.Warnings) != 0 {
		t.Errorf("timeout %d, warnings %q: a project's timeout only limits, so it needs no trust", c.Tools.Bash.DefaultTimeout, c.Warnings)
	}
}

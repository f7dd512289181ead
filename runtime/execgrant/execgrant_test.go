package execgrant

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		argv    []string
		want    bool
	}{
		// Command names: any arguments, argv[0] exact or globbed.
		{"git", []string{"git"}, true},
		{"git", []string{"git", "-c", "alias.x=!sh", "x"}, true},
		{"git", []string{"/usr/bin/git"}, false},
		{"git", []string{"gitx"}, false},
		{"git-*", []string{"git-lfs", "pull"}, true},
		{"git-*", []string{"git-/x"}, false},
		{"/usr/bin/git", []string{"/usr/bin/git", "log"}, true},
		{"my\\ tool", []string{"my tool"}, true},

		// Argument patterns: the attacks.
		{"git status*", []string{"git", "status"}, true},
		{"git status*", []string{"git", "status", "--porcelain"}, true},
		{"git status*", []string{"git", "status", "-s", "--", "src/a b"}, true},
		{"git status*", []string{"git", "-c", "alias.x=!sh -c id", "x"}, false},
		{"git status*", []string{"git", "-c", "core.fsmonitor=sh", "status"}, false},
		{"git status*", []string{"git", "log"}, false},
		{"git status*", []string{"sh", "-c", "git status"}, false},
		{"git status*", []string{"git status; sh"}, false},   // one element with spaces is no command and arguments
		{"git status*", []string{"git", "status; sh"}, true}, // git gets "status; sh" as one argument, no shell runs
		{"git status*", []string{"git status", "--porcelain"}, false},
		{"git status*", []string{"/tmp/evil/git", "status"}, false},
		{"git status*", []string{"git", "statusx"}, true}, // documented: write "git status" + "git status *" to refuse
		{"git status *", []string{"git", "statusx"}, false},
		{"git status *", []string{"git", "status"}, false},
		{"git status *", []string{"git", "status", ""}, true},
		{"git status", []string{"git", "status"}, true},
		{"git status", []string{"git", "status", "x"}, false},
		{"git status", []string{"git", ""}, false},
		{"git log -?", []string{"git", "log", "-1"}, true},
		{"git log -?", []string{"git", "log", "-", "1"}, false}, // ? is not a boundary
		{"git log -?", []string{"git", "log", "-12"}, false},
		{"echo a\\ b", []string{"echo", "a b"}, true},
		{"echo a\\ b", []string{"echo", "a", "b"}, false},
		{"echo a b", []string{"echo", "a b"}, false},
		{"echo \\*", []string{"echo", "*"}, true},
		{"echo \\*", []string{"echo", "x"}, false},
		{"echo [x]", []string{"echo", "[x]"}, true},
		{"echo [x]", []string{"echo", "x"}, false},
		{"ls *", []string{"ls", "a\x00b"}, false},
		{"ls *", []string{"ls", "\xff"}, true},
		{"ls \xef\xbf\xbd", []string{"ls", "\xff"}, false}, // an invalid byte is not U+FFFD
		{"* status", []string{"anything", "status"}, true},
		{"git * status*", []string{"git", "-C", "/x", "status"}, true},
		{"a *b*c*d", []string{"a", "xb", "yc", "zd"}, true},
		{"a *b*c*d", []string{"a", "xb", "yc", "z"}, false},
		{"git", nil, false},
		{"git", []string{""}, false},
		{"*", []string{""}, false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.pattern)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.argv); got != tt.want {
			t.Errorf("%q.Match(%q) = %v, want %v", tt.pattern, tt.argv, got, tt.want)
		}
		if got := Allowed([]string{"nothing-else", tt.pattern}, tt.argv); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.pattern, tt.argv, got, tt.want)
		}
	}
}

// A pattern of many stars against a long argv stays fast (no exponential
// backtracking).
func TestMatchNoBlowUp(t *testing.T) {
	p, err := Parse(strings.Repeat("a*", 50) + " b")
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{strings.Repeat("a", 5000)}
	if p.Match(argv) {
		t.Error("matched without the b")
	}
}

func TestParseRefuses(t *testing.T) {
	tests := map[string]string{
		"":           "empty",
		" git":       "starts with a space",
		"git \\":     "lone \\",
		"git\x00":    "control character",
		"git\nsh":    "control character",
		"\xff":       "not UTF-8",
		"git[":       "syntax error",
		"git status": "",
		"git [":      "", // literal in an argument pattern
	}
	for in, want := range tests {
		err := Validate(in)
		if want == "" {
			if err != nil {
				t.Errorf("Validate(%q) = %v", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestRunsCode(t *testing.T) {
	tests := []struct {
		pattern, want string // want "" = no warning
	}{
		{"git", "can run arbitrary code: git runs programs from its configuration"},
		{"/usr/bin/git", "can run arbitrary code: git"},
		{"git status*", "narrows the arguments, but git runs programs"},
		{"sh", "is a shell"},
		{"bash", "is a shell"},
		{"python3.12", "python3.12 runs code"},
		{"env", "runs the command named"},
		{"xargs", "runs the command named"},
		{"find", "-exec"},
		{"sed", "s///e"},
		{"awk", "system()"},
		{"npx", "runs packages"},
		{"sudo", "another user"},
		{"docker", "containers"},
		{"*", "can run arbitrary code: it matches"},
		{"py*", "it matches python"},
		{"* --version", "command is a wildcard"},
		{"g?t status", "command is a wildcard"},
		{"echo", ""},
		{"wc", ""},
		{"rg *", ""},
		{"jq", ""},
		{"git[", ""}, // invalid: refused elsewhere
	}
	for _, tt := range tests {
		got := RunsCode(tt.pattern)
		if tt.want == "" {
			if got != "" {
				t.Errorf("RunsCode(%q) = %q, want no warning", tt.pattern, got)
			}
			continue
		}
		if !strings.Contains(got, tt.want) || !strings.Contains(got, `"`+tt.pattern+`"`) {
			t.Errorf("RunsCode(%q) = %q, want it to name the pattern and say %q", tt.pattern, got, tt.want)
		}
	}
}

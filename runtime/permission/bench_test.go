package permission

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// benchPolicy has 50 rules: 30 on bash commands, 10 on paths, 10 on other
// tools' arguments.
func benchPolicy(b *testing.B) *Policy {
	var rules []Rule
	for i := 0; i < 10; i++ {
		rules = append(rules,
			Rule{Tool: "bash", Command: []string{fmt.Sprintf("tool%d", i), "deploy"}, Decision: Deny},
			Rule{Tool: "bash", Command: []string{"git", fmt.Sprintf("sub%d", i), "--force"}, Decision: Ask},
			Rule{Tool: "bash", Command: []string{fmt.Sprintf("safe%d", i)}, Decision: Allow},
			Rule{Tool: "write|edit", Path: []string{fmt.Sprintf("**/*.secret%d", i)}, Decision: Deny},
			Rule{Tool: fmt.Sprintf("mcp_%d_*", i), Args: map[string]string{"/url": "http://*"}, Decision: Deny},
		)
	}
	for i := range rules {
		rules[i].File, rules[i].Line = "/p/pi.toml", i+1
	}
	p, err := New(rules, Options{Default: Ask, Root: "/p", Cwd: "/p"})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkCheck is the permission check's cost per tool call with 50
// rules (docs/performance.md).
func BenchmarkCheck(b *testing.B) {
	p := benchPolicy(b)
	cases := map[string]struct {
		tool  string
		input json.RawMessage
		paths []string
	}{
		"bash-simple":   {"bash", bashInput("go test ./..."), nil},
		"bash-pipeline": {"bash", bashInput("cd src && go test ./... 2>&1 | tail -20; git status --short"), nil},
		"bash-wrappers": {"bash", bashInput(`sudo -u ci env A=1 timeout 60 bash -c "make build && git push origin main"`), nil},
		"bash-heredoc":  {"bash", bashInput("cat > notes.md <<'EOF'\n" + longText(40) + "EOF\n"), nil},
		"write":         {"write", json.RawMessage(`{"path":"src/main.go","content":"package main"}`), []string{filepath.FromSlash("/p/src/main.go")}},
		"mcp":           {"mcp_3_fetch", json.RawMessage(`{"url":"https://example.com"}`), nil},
	}
	for name, c := range cases {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Check(c.tool, c.input, c.paths)
			}
		})
	}
}

func longText(lines int) string {
	s := ""
	for i := 0; i < lines; i++ {
		s += fmt.Sprintf("line %d: some text with $(not run) and `quotes`\n", i)
	}
	return s
}

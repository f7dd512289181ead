package permission

import (
	"strings"
	"testing"
	"time"
)

// TestPathologicalInputsAreCheap: inputs built to make the analysis work
// hard (deep nesting, branching wrappers, many quoted substitutions, long
// argv) are decided quickly and never allowed by accident.
func TestPathologicalInputsAreCheap(t *testing.T) {
	p := tableRules(t, Ask)
	inputs := map[string]string{
		"nested substitutions": strings.Repeat("$(", 2000) + "curl x" + strings.Repeat(")", 2000),
		"branching wrappers":   strings.Repeat("sudo -X ", 200) + "curl x",
		"nested bash -c":       nestedBashC(12),
		"quoted substitutions": strings.Repeat("echo '$(x '\"$(y)\"' )'; ", 2000) + "curl x",
		"long argv":            "rm " + strings.Repeat("a ", 50000) + "-rf",
		"many commands":        strings.Repeat("ls; ", 5000) + "curl x",
		"brace bomb":           "echo {1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}; curl x",
		"unparsable":           strings.Repeat("'$(curl x); ", 500),
		"positional backtrack": "git " + strings.Repeat("-x ", 3000) + "push",
		"dynamic words":        "git " + strings.Repeat("$a ", 3000) + "push --force",
	}
	for name, in := range inputs {
		start := time.Now()
		r := p.Check("bash", bashInput(in), nil)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		if r.Decision == Allow {
			t.Errorf("%s: allowed", name)
		}
	}
}

func nestedBashC(n int) string {
	s := "curl x"
	for i := 0; i < n; i++ {
		q, _ := quoteForTest(s)
		s = "bash -c " + q
	}
	return s
}

func quoteForTest(s string) (string, error) {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

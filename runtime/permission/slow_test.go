package permission

import (
	"fmt"
	"strings"
	"testing"
)

// pathologicalInputs are built to make the analysis work hard (deep
// nesting, branching wrappers, many quoted substitutions, long argv).
var pathologicalInputs = map[string]string{
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
	"arithmetic refs":      "i=0; " + strings.Repeat("echo $((i+j)); ", 3000) + "curl x",
	"nested subscripts":    "echo $((" + strings.Repeat("a[", 2000) + "i" + strings.Repeat("]", 2000) + ")); curl x",
	"alias chain":          aliasChain(300) + "a0 x; curl x",
}

// TestPathologicalInputsAreNeverAllowed: the work bounds end such inputs
// with ask, never with an accidental allow. How long they take is measured
// by BenchmarkPathologicalInputs (speed is a benchmark, not a timed test).
func TestPathologicalInputsAreNeverAllowed(t *testing.T) {
	p := tableRules(t, Ask)
	for name, in := range pathologicalInputs {
		if r := p.Check("bash", bashInput(in), nil); r.Decision == Allow {
			t.Errorf("%s: allowed", name)
		}
	}
}

// BenchmarkPathologicalInputs: what the work bounds cost, per input.
func BenchmarkPathologicalInputs(b *testing.B) {
	p := tableRules(b, Ask)
	for name, in := range pathologicalInputs {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			raw := bashInput(in)
			for b.Loop() {
				p.Check("bash", raw, nil)
			}
		})
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

func aliasChain(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "alias a%d='a%d a%d'; ", i, i+1, i+1)
	}
	return b.String()
}

package permission

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// evalCase is one case of testdata/second_eval.txt.
type evalCase struct {
	kind, what, script string
	line               int
}

func readEvalCases(t *testing.T) []evalCase {
	t.Helper()
	f, err := os.Open("testdata/second_eval.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []evalCase
	var body []string
	flush := func() {
		if len(cases) > 0 {
			cases[len(cases)-1].script = strings.TrimRight(strings.Join(body, "\n"), "\n")
		}
		body = nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --") {
			flush()
			kind, what, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --"), ": ")
			if !ok || (kind != "attack" && kind != "attack-dead" && kind != "safe") {
				t.Fatalf("testdata/second_eval.txt:%d: bad header %q", n, line)
			}
			cases = append(cases, evalCase{kind: kind, what: what, line: n})
			continue
		}
		if len(cases) > 0 {
			body = append(body, line)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// evalPolicy is the read-only recipe's shape: default deny, a few
// commands allowed, and the harmless builtins the table's scripts use, so
// that an attack is refused for what it evaluates, not for a builtin no
// rule allows.
func evalPolicy(t *testing.T, def Decision, denyTouch bool) *Policy {
	t.Helper()
	var rules []Rule
	if denyTouch {
		rules = append(rules, Rule{Tool: "bash", Command: []string{"touch"}, Decision: Deny, Reason: "no touching"})
	}
	for _, c := range []string{"echo", "wc", "cat", "test", "\\[", "read", "mapfile", "readarray", "printf", "unset",
		"shopt", "hash", "compgen", "complete", "true", ":", "set", "getopts", "enable", "fc", "bind", "jobs", "f", "greet", "say", "history"} {
		rules = append(rules, Rule{Tool: "bash", Command: []string{c}, Decision: Allow})
	}
	p, err := New(rules, Options{Default: def, Root: "/p", Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runBash runs script with /bin/bash in a new folder and reports whether
// it created the file pwn there. The environment holds b=a[$(touch pwn)],
// a value inherited from outside the script.
func runBash(t *testing.T, script string) bool {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "b=a[$(touch pwn)]", "TERM=dumb"}
	cmd.WaitDelay = 5 * time.Second
	_ = cmd.Run() // many scripts fail after doing their damage
	_, err := os.Stat(filepath.Join(dir, "pwn"))
	return err == nil
}

// TestSecondEvaluation: every construct that makes bash evaluate data a
// second time, or run code through a builtin, is never allowed — deny
// under default deny, ask or deny under default ask, not allowed under
// default allow with touch denied — even with the builtins it uses
// allowed; each live attack really creates its file under /bin/bash, and
// the harmless scripts are allowed and create none.
func TestSecondEvaluation(t *testing.T) {
	cases := readEvalCases(t)
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	deny, ask, allowed := evalPolicy(t, Deny, false), evalPolicy(t, Ask, false), evalPolicy(t, Allow, true)
	_, bashErr := os.Stat("/bin/bash")
	for _, c := range cases {
		name := c.what
		at := "testdata/second_eval.txt:" + strconv.Itoa(c.line)
		rd := deny.Check("bash", bashInput(c.script), nil)
		switch c.kind {
		case "safe":
			if rd.Decision != Allow {
				t.Errorf("%s (%s): safe script is %s under default deny (%s)\n%s", at, name, rd.Decision, rd.Reason, c.script)
			}
			if bashErr == nil && runBash(t, c.script) {
				t.Errorf("%s (%s): safe script created pwn under bash", at, name)
			}
			continue
		}
		if rd.Decision != Deny {
			t.Errorf("%s (%s): %s under default deny, want deny (%s)\n%s", at, name, rd.Decision, rd.Reason, c.script)
		}
		if ra := ask.Check("bash", bashInput(c.script), nil); ra.Decision == Allow {
			t.Errorf("%s (%s): allowed under default ask\n%s", at, name, c.script)
		}
		rl := allowed.Check("bash", bashInput(c.script), nil)
		if rl.Decision == Allow {
			t.Errorf("%s (%s): allowed under default allow with touch denied\n%s", at, name, c.script)
		}
		if bashErr != nil {
			continue
		}
		allowedSomewhere := rd.Decision == Allow || rl.Decision == Allow
		if c.kind == "attack" || allowedSomewhere {
			// Run it: a live attack must create pwn (else the table
			// holds a dead case); one the checker let through shows what
			// it did.
			ran := runBash(t, c.script)
			switch {
			case allowedSomewhere && ran:
				t.Errorf("%s (%s): the checker allows a script that ran touch under bash", at, name)
			case c.kind == "attack" && !ran:
				t.Errorf("%s (%s): not a live attack: bash did not create pwn (mark it attack-dead or fix it)", at, name)
			}
		}
	}
}

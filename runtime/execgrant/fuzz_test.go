package execgrant

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference is the grammar spelled as a regular expression over argv joined
// by NUL: a slow, obviously right matcher to hold the fast one against.
func reference(p Pattern, argv []string) bool {
	var b strings.Builder
	b.WriteString(`^`)
	for _, t := range p.toks {
		switch t.kind {
		case tokLit:
			b.WriteString(regexp.QuoteMeta(string(t.r)))
		case tokSep:
			b.WriteString(`\x00`)
		case tokOne:
			b.WriteString(`[^\x00]`)
		case tokStar:
			b.WriteString(`(?s:.*)`)
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String()).MatchString(strings.Join(argv, "\x00"))
}

func FuzzMatch(f *testing.F) {
	f.Add("git status*", "git\nstatus\n--porcelain")
	f.Add("git status*", "git\n-c\nalias.x=!sh\nx")
	f.Add("a *b?c* d", "a\nxbyc\nd")
	f.Add("echo a\\ b", "echo\na b")
	f.Add("* *", "x\ny z")
	f.Fuzz(func(t *testing.T, pattern, joined string) {
		p, err := Parse(pattern)
		if err != nil || !p.HasArgs() {
			return
		}
		argv := strings.Split(joined, "\n")
		if !utf8.ValidString(joined) || strings.ContainsRune(joined, 0) || argv[0] == "" {
			return
		}
		if got, want := p.Match(argv), reference(p, argv); got != want {
			t.Fatalf("%q.Match(%q) = %v, reference says %v", pattern, argv, got, want)
		}
	})
}

package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	for _, c := range []struct{ server, tool, want string }{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"gh", "repos.get/content", "mcp__gh__repos_get_content"},
		{"x", "héllo wörld", "mcp__x__h_llo_w_rld"},
		{"x", "", "mcp__x__"},
	} {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	long1 := ToolName("server", strings.Repeat("a", 80)+"1")
	long2 := ToolName("server", strings.Repeat("a", 80)+"2")
	if len(long1) != 64 || len(long2) != 64 || long1 == long2 || !validName.MatchString(long1) {
		t.Errorf("long names: %q %q", long1, long2)
	}
	if again := ToolName("server", strings.Repeat("a", 80)+"1"); again != long1 {
		t.Errorf("not stable: %q then %q", long1, again)
	}
	if n := ToolName(strings.Repeat("s", 70), "t"); len(n) != 64 || !validName.MatchString(n) {
		t.Errorf("long server name: %q", n)
	}
	// Exactly 64 is kept as it is.
	tool64 := strings.Repeat("b", 64-len("mcp__s__"))
	if n := ToolName("s", tool64); n != "mcp__s__"+tool64 {
		t.Errorf("64 characters cut: %q", n)
	}
}

func FuzzToolName(f *testing.F) {
	f.Add("fs", "read_file")
	f.Add("s", strings.Repeat("é", 50))
	f.Fuzz(func(t *testing.T, server, tool string) {
		n := ToolName(server, tool)
		if !validName.MatchString(n) {
			t.Fatalf("ToolName(%q, %q) = %q is not a valid tool name", server, tool, n)
		}
		if ToolName(server, tool) != n {
			t.Fatal("not stable")
		}
	})
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"Reads a file. Then more.":       "Reads a file.",
		"Reads a file\nsecond line":      "Reads a file",
		"  v1.2 is fine. Next.":          "v1.2 is fine.",
		"No period":                      "No period",
		"":                               "",
		strings.Repeat("w", 300) + ". x": strings.Repeat("w", 199) + "…",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

package extspec

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// The regular expressions the rules were written as before this package
// owned them (in runtime/config and extensions). The byte loops must accept
// exactly what they accepted: the fuzz targets below check it.
var (
	oldNameRE     = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	oldToolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	oldEnvNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	oldSHA256RE   = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

// tricky are inputs that try the corners of every name rule.
var tricky = []string{
	"", "a", "z", "A", "0", "_", "-", "loc", "my-ext_2", "a-", "-a", "_a", "1x",
	"Loc", "lOc", "a b", "a\n", "a\x00", "a\x00b", "\na", "a.b", "a/b", "a:b", "a=b",
	"é", "aé", "a\u0131", "ａ", "a\u200b", "\xff", "a\xff", strings.Repeat("a", 64),
	strings.Repeat("a", 65), strings.Repeat("A", 64) + "\n", "PATH", "_X1", "X-1",
	"HOME", "9LIVES", "A=B", "A B", strings.Repeat("f", 64), strings.Repeat("F", 64),
	strings.Repeat("g", 64), strings.Repeat("f", 63), strings.Repeat("f", 64) + "\n",
}

func TestNameRulesMatchTheirOldRegexps(t *testing.T) {
	for _, s := range tricky {
		checkAgainstOld(t, s)
	}
}

func FuzzNameRules(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(checkAgainstOld)
}

func checkAgainstOld(t *testing.T, s string) {
	if got, want := ValidName(s), oldNameRE.MatchString(s); got != want {
		t.Errorf("ValidName(%q) = %v, the old rule says %v", s, got, want)
	}
	if got, want := ValidToolName(s), oldToolNameRE.MatchString(s); got != want {
		t.Errorf("ValidToolName(%q) = %v, the old rule says %v", s, got, want)
	}
	if got, want := ValidEnvName(s), oldEnvNameRE.MatchString(s); got != want {
		t.Errorf("ValidEnvName(%q) = %v, the old rule says %v", s, got, want)
	}
	if got, want := CheckSHA256(s) == nil, oldSHA256RE.MatchString(s); got != want {
		t.Errorf("CheckSHA256(%q) ok = %v, the old rule says %v", s, got, want)
	}
	// The Check functions agree with the Valid ones.
	if (CheckName(s) == nil) != ValidName(s) || (CheckToolName(s) == nil) != ValidToolName(s) || (CheckEnvName(s) == nil) != ValidEnvName(s) {
		t.Errorf("a Check function disagrees with its Valid function on %q", s)
	}
}

func TestCheckMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{CheckName("Loc"), `"Loc" is not an extension name (want [a-z][a-z0-9_-]*)`},
		{CheckToolName(strings.Repeat("x", 65)), `"` + strings.Repeat("x", 65) + `" is not a tool name (want 1 to 64 of A-Z a-z 0-9 _ -)`},
		{CheckEnvName("A-B"), `"A-B" is not an environment variable name`},
		{CheckSHA256("abc"), `must be 64 hex digits, got "abc"`},
		{CheckFSGrant("./src"), `bad fs grant "./src": want "ro:PATH" or "rw:PATH"`},
		{CheckFSGrant("rw:"), `bad fs grant "rw:": empty PATH`},
		{CheckFSGrant("ro:~/notes"), `bad fs grant "ro:~/notes": ~ is not expanded; write PATH relative to the project root or absolute`},
		{CheckGrant("net", "x"), `unknown grant kind "net" (fs, exec, env, http, tool, llm or model)`},
		{CheckGrant(KindExec, " git"), `bad exec pattern " git": it starts with a space; start with the command`},
		{CheckMemoryMB(0), `must be positive, got 0 (leave it out for the default)`},
		{CheckMemoryMB(4097), `must be at most 4096 MiB, got 4097`},
		{CheckTimeoutMS(-1), `must be positive, got -1 (leave it out for the default)`},
		{CheckTimeoutMS(86_400_001), `must be at most 86400000 ms, got 86400001`},
		{Limits{MemoryMB: -64}.Check(), `limits.memory_mb must be positive, got -64 (leave it out for the default)`},
		{Limits{TimeoutMS: 1 << 40}.Check(), `limits.timeout_ms must be at most 86400000 ms, got 1099511627776`},
		{Grants{FS: []string{"ro:."}, Env: []string{"OK", "A=B"}}.Check(), `grants.env[1]: "A=B" is not an environment variable name`},
		{Grants{Exec: []string{"git", "git log \\"}}.Check(), `grants.exec[1]: bad exec pattern "git log \\": it ends in a lone \ (write \\ for a backslash)`},
		{Grants{FS: []string{"rx:."}}.Check(), `grants.fs[0]: bad fs grant "rx:.": want "ro:PATH" or "rw:PATH"`},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("error %v, want %s", tt.err, tt.want)
		}
	}
}

func TestLimits(t *testing.T) {
	for _, ok := range []Limits{{}, {MemoryMB: 1}, {MemoryMB: MaxMemoryMB}, {TimeoutMS: 1}, {TimeoutMS: MaxTimeoutMS}, {MemoryMB: 8, TimeoutMS: 500}} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v refused: %v", ok, err)
		}
	}
	for _, bad := range []Limits{{MemoryMB: -1}, {MemoryMB: MaxMemoryMB + 1}, {MemoryMB: -1 << 62}, {TimeoutMS: -1}, {TimeoutMS: MaxTimeoutMS + 1}, {MemoryMB: 64, TimeoutMS: -5}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if p := (Limits{}).MemoryPages(); p != DefaultMemoryMB*16 {
		t.Errorf("default pages %d", p)
	}
	if p := (Limits{MemoryMB: MaxMemoryMB}).MemoryPages(); p != 65536 {
		t.Errorf("max pages %d, want 65536 (all of wasm32)", p)
	}
	if d := (Limits{}).ExecuteTimeout(); d != 30*time.Second {
		t.Errorf("default timeout %v", d)
	}
	if d := (Limits{TimeoutMS: 250}).ExecuteTimeout(); d != 250*time.Millisecond {
		t.Errorf("timeout %v", d)
	}
}

func TestAddFlag(t *testing.T) {
	var g Grants
	for _, kv := range []string{"fs=ro:.", "fs=rw:build", "exec=git status*", "exec=wc", "env=HOME", "fs=ro:a=b"} {
		if err := g.AddFlag(kv); err != nil {
			t.Fatalf("AddFlag(%q): %v", kv, err)
		}
	}
	want := Grants{FS: []string{"ro:.", "rw:build", "ro:a=b"}, Exec: []string{"git status*", "wc"}, Env: []string{"HOME"}}
	if strings.Join(g.FS, "|") != strings.Join(want.FS, "|") || strings.Join(g.Exec, "|") != strings.Join(want.Exec, "|") || strings.Join(g.Env, "|") != strings.Join(want.Env, "|") {
		t.Errorf("got %+v, want %+v", g, want)
	}
	if err := g.Check(); err != nil {
		t.Errorf("a grant AddFlag took fails Check: %v", err)
	}
	// Every way to slip a bad value past the flag parser: each is refused
	// and leaves g as it was.
	for _, tt := range []struct{ kv, want string }{
		{"fs", "want KIND=VALUE"},
		{"fs=", "want KIND=VALUE"},
		{"=ro:.", `unknown grant kind ""`},
		{"FS=ro:.", `unknown grant kind "FS"`},
		{" fs=ro:.", `unknown grant kind " fs"`},
		{"net=all", `unknown grant kind "net"`},
		{"fs=.", `bad fs grant "."`},
		{"fs=ro:", "empty PATH"},
		{"fs=RO:.", `want "ro:PATH" or "rw:PATH"`},
		{"fs=ro:~", "~ is not expanded"},
		{"exec= git", "starts with a space"},
		{"exec=git\x00", "control character"},
		{"exec=[", "syntax error in pattern"},
		{"env=A=B", `"A=B" is not an environment variable name`},
		{"env=A-B", "not an environment variable name"},
		{"env=1A", "not an environment variable name"},
		{"env=A\x00", "not an environment variable name"},
	} {
		before := g
		err := g.AddFlag(tt.kv)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("AddFlag(%q) = %v, want an error with %q", tt.kv, err, tt.want)
		}
		if len(g.FS) != len(before.FS) || len(g.Exec) != len(before.Exec) || len(g.Env) != len(before.Env) {
			t.Errorf("AddFlag(%q) changed the grants on error: %+v", tt.kv, g)
		}
	}
}

func TestValidCommandName(t *testing.T) {
	for s, want := range map[string]bool{
		"deploy": true, "a": true, "a1-b2": true, "x-": true,
		"": false, "1a": false, "-a": false, "Deploy": false, "a_b": false, "a b": false, "/a": false, "é": false,
	} {
		if got := ValidCommandName(s); got != want {
			t.Errorf("ValidCommandName(%q) = %v, want %v", s, got, want)
		}
	}
}

// The boolean grants of ABI 1.2 take true or false.
func TestRun12BoolGrants(t *testing.T) {
	var g Grants
	if err := g.AddFlag("llm=true"); err != nil || !g.LLM {
		t.Errorf("llm=true: %v %+v", err, g)
	}
	if err := g.AddFlag("model=true"); err != nil || !g.Model || g.Empty() {
		t.Errorf("model=true: %v %+v", err, g)
	}
	if err := g.AddFlag("llm=yes"); err == nil || err.Error() != `grant llm must be true or false, got "yes"` {
		t.Errorf("llm=yes: %v", err)
	}
	if err := g.AddFlag("model=false"); err != nil || g.Model {
		t.Errorf("model=false: %v %+v", err, g)
	}
}

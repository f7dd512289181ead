package extensions_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/pi-go/pi/extensions"
	"github.com/pi-go/pi/runtime/tool"
)

const spyKey = "sk-spy-test-KEY-0123456789"

// spyGuest is the hostile test extension examples/plugins/internal/spy.
func spyGuest(t *testing.T) string { return goGuest(t, "examples/plugins/internal/spy") }

// A bash_spawn hook is shown only the variables its extension was granted;
// it cannot drop the others by leaving them out; a granted one it leaves
// out is removed; it may add and override any name.
func TestSpawnHookSeesOnlyGrantedEnv(t *testing.T) {
	h := newHost(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: spyGuest(t), Grants: extensions.Grants{Env: []string{"GRANTED_A", "GRANTED_B", "NOT_SET"}}})
	sh := h.SpawnHooks()
	if len(sh) != 1 {
		t.Fatalf("spawn hooks: %+v", sh)
	}
	in := tool.BashSpawn{Command: "ls", Cwd: "/", Env: map[string]string{
		"OPENAI_API_KEY": spyKey, "MY_TOKEN": spyKey + "-2", "HOME": "/home/u", "PATH": "/usr/bin",
		"GRANTED_A": "a", "GRANTED_B": "b",
	}}
	out, err := sh[0].Func(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Env["SPY_SAW"]; got != "GRANTED_A,GRANTED_B" {
		t.Errorf("the hook saw %q, want only the granted names that are set", got)
	}
	seen, err := base64.StdEncoding.DecodeString(out.Env["SPY_SEEN"])
	if err != nil || strings.Contains(string(seen), "sk-spy") || strings.Contains(string(seen), "/home/u") {
		t.Errorf("what the hook saw leaks ungranted values: %s (%v)", seen, err)
	}
	for _, k := range []string{"OPENAI_API_KEY", "MY_TOKEN", "HOME", "PATH"} {
		if out.Env[k] != in.Env[k] {
			t.Errorf("ungranted %s = %q after the hook left it out, want it kept (%q)", k, out.Env[k], in.Env[k])
		}
	}
	for _, k := range []string{"GRANTED_A", "GRANTED_B"} {
		if _, ok := out.Env[k]; ok {
			t.Errorf("granted %s left out by the hook is still set", k)
		}
	}
	if in.Env["GRANTED_A"] != "a" || len(in.Env) != 6 {
		t.Errorf("the hook changed the caller's map: %v", in.Env)
	}
}

// A hook may override a variable it was not shown (it sets a name; it
// learns nothing), and a hook whose answer leaves env out changes nothing.
func TestSpawnHookOverridesUngranted(t *testing.T) {
	h := newHost(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: wat(t, "good")})
	sh := h.SpawnHooks()
	in := tool.BashSpawn{Command: "make SPAWNME", Cwd: "/", Env: map[string]string{"GOOD": "0", "OPENAI_API_KEY": spyKey}}
	out, err := sh[0].Func(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Env["GOOD"] != "1" || out.Env["OPENAI_API_KEY"] != spyKey || len(out.Env) != 2 {
		t.Fatalf("env = %v", out.Env)
	}
	in.Command = "ls" // good answers {} to this one
	if out, err := sh[0].Func(context.Background(), in); err != nil || len(out.Env) != 2 || out.Env["GOOD"] != "0" {
		t.Fatalf("env = %v, %v", out.Env, err)
	}
}

// Two chained hooks: the second is shown only its own grants, including a
// variable the first one added.
func TestSpawnHookChainGrants(t *testing.T) {
	h := newHost(t, extensions.Options{})
	load(t, h, extensions.Spec{Path: wat(t, "good")})
	load(t, h, extensions.Spec{Path: spyGuest(t), Grants: extensions.Grants{Env: []string{"GOOD"}}})
	sh := h.SpawnHooks()
	s := tool.BashSpawn{Command: "make SPAWNME", Cwd: "/", Env: map[string]string{"OPENAI_API_KEY": spyKey}}
	for _, hk := range sh {
		var err error
		if s, err = hk.Func(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	if s.Env["SPY_SAW"] != "GOOD" || s.Env["OPENAI_API_KEY"] != spyKey {
		t.Fatalf("env = %v", s.Env)
	}
}

// An extension never gets a hidden variable (the model key's), even when
// granted it: not in its own environment, not in the commands it runs with
// exec; other granted variables still reach both.
func TestExecChildLacksHiddenEnv(t *testing.T) {
	t.Setenv("PI_SPY_SECRET", spyKey)
	t.Setenv("PI_SPY_OK", "visible-value")
	for _, c := range []struct {
		name   string
		hide   []string
		grants []string
		want   []string
		absent []string
	}{
		{"granted but hidden", []string{"PI_SPY_SECRET"}, []string{"PI_SPY_SECRET", "PI_SPY_OK"}, []string{"PI_SPY_OK=visible-value"}, []string{spyKey}},
		{"not granted", nil, []string{"PI_SPY_OK"}, []string{"PI_SPY_OK=visible-value"}, []string{spyKey}},
		{"granted, not hidden", nil, []string{"PI_SPY_SECRET"}, []string{"PI_SPY_SECRET=" + spyKey}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, extensions.Options{HideEnv: c.hide})
			e := load(t, h, extensions.Spec{Path: spyGuest(t), Grants: extensions.Grants{FS: []string{"ro:."}, Exec: []string{"env"}, Env: c.grants}})
			for _, tl := range []string{"spy_exec", "spy_environ"} {
				r := run(context.Background(), tools(t, e), nil, tl, `{}`)
				if r.IsError {
					t.Fatalf("%s: %s", tl, r.Text())
				}
				for _, w := range c.want {
					if !strings.Contains(r.Text(), w) {
						t.Errorf("%s: env lacks %q:\n%s", tl, w, r.Text())
					}
				}
				for _, a := range c.absent {
					if strings.Contains(r.Text(), a) {
						t.Errorf("%s: env has %q:\n%s", tl, a, r.Text())
					}
				}
			}
		})
	}
}

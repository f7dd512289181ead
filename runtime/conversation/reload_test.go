package conversation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/app"
)

// Reload reads pi.toml again: a grant added applies, the flags given at
// start are handed to the new instance, the old one gets session_shutdown
// and the new session_start (reload); a reload that fails leaves the old
// instance running, its memory intact.
func TestReloadGrantsFlagsAndFailure(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "four"})
	rt, c, log := run12Project(t, srv, "", "", app.Options{})
	if err := rt.SetExtensionFlags(map[string]string{"greeting": "hello"}); err != nil {
		t.Fatal(err)
	}
	if got, isErr := tool12(t, rt, "complete", `{"prompt":"2+2?"}`); !isErr || !strings.Contains(got, "llm") {
		t.Fatalf("complete without the llm grant = %q (error %v), want a refusal naming the grant", got, isErr)
	}
	for _, want := range []string{"1", "2"} {
		if got, _ := tool12(t, rt, "count", `{}`); got != want {
			t.Fatalf("count = %q, want %s", got, want)
		}
	}
	toml := filepath.Join(rt.Cwd(), "pi.toml")
	wasm := plugin.BuildGo(t, "extensions/testdata/guests/run12")

	// A broken pi.toml: the error names the file and line; the old
	// instance goes on (its count is not reset).
	project.Write(t, toml, project.Extension(t, "run12", wasm)+"[extensions.grants]\nllm = \"yes\"\n")
	err := c.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), toml+":6") || !strings.Contains(err.Error(), "the extensions loaded before stay") {
		t.Fatalf("reload of a broken pi.toml: %v", err)
	}
	if got, _ := tool12(t, rt, "count", `{}`); got != "3" {
		t.Fatalf("count after a failed reload = %q, want 3 (the same instance)", got)
	}

	// The grant added applies after the reload, in a fresh instance with
	// the start's flags.
	project.Write(t, toml, project.Extension(t, "run12", wasm)+"[extensions.grants]\nllm = true\n")
	if err := c.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	log.wait(t, "ext.run12", `"type":"session_shutdown"`)
	log.wait(t, "ext.run12", `"type":"session_start"`, `"reason":"reload"`)
	if got, isErr := tool12(t, rt, "complete", `{"prompt":"2+2?"}`); isErr || got != "four" {
		t.Errorf("complete with the llm grant after reload = %q (error %v)", got, isErr)
	}
	if got, _ := tool12(t, rt, "count", `{}`); got != "1" {
		t.Errorf("count after reload = %q, want 1 (a fresh instance)", got)
	}
	if got, _ := tool12(t, rt, "flags", `{}`); !strings.Contains(got, `"greeting":"hello"`) {
		t.Errorf("flags after reload = %s, want the start's greeting", got)
	}

	// Two extensions with one tool name: refused before anything changes.
	project.Write(t, toml, project.Extension(t, "run12", wasm)+project.Extension(t, "dup", plugin.ScaffoldWATTool(t, "dup", "count", "dup", `[]`)))
	if err := c.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("reload with a tool twice: %v", err)
	}
	if got, _ := tool12(t, rt, "count", `{}`); got != "2" {
		t.Errorf("count after a refused reload = %q, want 2", got)
	}
	if _, err := os.Stat(toml); err != nil {
		t.Fatal(err)
	}
}

// TestReloadFindsSkillsAndTemplates: as the reference's /reload, a reload
// finds the skills and prompt templates written since the start: the
// template expands, the skill is a command and the next request's system
// prompt lists it.
func TestReloadFindsSkillsAndTemplates(t *testing.T) {
	srv := openai.NewServer(t, openai.Reply{Text: "ok"})
	rt, c, _ := run12Project(t, srv, "", "", app.Options{})
	has := func(name string) bool {
		for _, ci := range c.Commands() {
			if ci.Name == name {
				return true
			}
		}
		return false
	}
	if has("review") || has("skill:deploy") {
		t.Fatal("the template and the skill are there before they were written")
	}
	for _, d := range []string{".pi/prompts", ".pi/skills/deploy"} {
		if err := os.MkdirAll(filepath.Join(rt.Cwd(), d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	project.Write(t, filepath.Join(rt.Cwd(), ".pi", "prompts", "review.md"), "---\ndescription: review a file\n---\nReview $1 with care.\n")
	project.Write(t, filepath.Join(rt.Cwd(), ".pi", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: ships the build to staging\n---\nsteps\n")
	if err := c.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !has("review") || !has("skill:deploy") {
		t.Fatalf("after reload the commands are %+v", c.Commands())
	}
	if _, err := submit(t, c, "/review main.go"); err != nil {
		t.Fatal(err)
	}
	got := wireTexts(srv.Requests()[0])
	if len(got) < 2 || got[len(got)-1] != "user: Review main.go with care." || !strings.Contains(got[0], "ships the build to staging") {
		t.Fatalf("request after reload %q", got)
	}
}

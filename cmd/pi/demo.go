package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pi-go/pi/cmd/pi/internal/textmode"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
)

//go:embed demo/script.json
var demoScript []byte

// The sample project's Go files carry a .txt suffix so that they are not
// part of this module's build; demoProject strips it.
//
//go:embed demo/project
var demoProject embed.FS

const demoTask = "The greeting is wrong. Make it match the README and add a test so it stays right."

const demoUsage = `
Usage: pi demo [--keep] [--mode json]

Shows pi working with no model and no network: a scripted model (the same
provider 'pi --script FILE' uses) fixes a bug in a copy of a small Go project
in a temporary folder, using the built-in read, bash, edit and write tools for
real, and prints the transcript. The folder is removed afterwards unless
--keep is given.
`

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	var keep bool
	var mode string
	fs := newFlagSet("pi demo", demoUsage, stdout, stderr)
	fs.BoolVar(&keep, "keep", false, "keep the demo project folder and print its path")
	fs.StringVar(&mode, "mode", "text", "output `MODE`: text, or json (events as JSON lines)")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "demo", "unexpected argument %q", pos[0])
	}
	if mode != "text" && mode != "json" {
		return usageError(stderr, "demo", "--mode must be text or json, not %q", mode)
	}
	dir, err := os.MkdirTemp("", "pi-demo-")
	if err != nil {
		fmt.Fprintf(stderr, "pi demo: %v\n", err)
		return exitError
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	if err := writeDemoProject(dir); err != nil {
		fmt.Fprintf(stderr, "pi demo: %v\n", err)
		return exitError
	}
	script, err := llm.ParseScript(demoScript)
	if err != nil {
		fmt.Fprintf(stderr, "pi demo: embedded script: %v\n", err)
		return exitError
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A PI_HOME of its own: the demo runs the same with any global
	// pi.toml, and no extension of the user's joins it.
	home, err := os.MkdirTemp("", "pi-demo-home-")
	if err != nil {
		fmt.Fprintf(stderr, "pi demo: %v\n", err)
		return exitError
	}
	defer os.RemoveAll(home)
	rt, err := app.Open(ctx, app.Options{Cwd: dir, PIHome: home, LogOutput: stderr, HostVersion: version})
	if err != nil {
		fmt.Fprintf(stderr, "pi demo: %v\n", err)
		return exitError
	}
	defer rt.Close()
	conv, err := conversation.New(rt, conversation.Options{Provider: llm.NewScripted(script), ModelName: "demo"})
	if err != nil {
		fmt.Fprintf(stderr, "pi demo: %v\n", err)
		return exitError
	}
	defer conv.Close()
	defer conv.Subscribe(textmode.EventSink(mode == "json", mode == "text", rt.Redactor(), stdout, stderr))()
	if mode == "text" {
		fmt.Fprintf(stdout, "pi demo: a scripted model (offline, no API key) works on a copy of a small Go project in %s\n\n> %s\n", dir, demoTask)
	}
	sub, err := conv.Submit(ctx, conversation.Prompt{Text: demoTask}, conversation.SubmitOptions{})
	res := sub.Result
	if err != nil {
		fmt.Fprintf(stderr, "pi demo: %v\n", err)
		return exitError
	}
	if res.StopReason == llm.StopAborted {
		fmt.Fprintln(stderr, "pi demo: interrupted")
		return 130
	}
	if mode == "text" {
		fmt.Fprintf(stdout, "\n%s, %s.", plural.Count(res.Turns, "model turn"), plural.Count(len(res.Messages), "message"))
		if keep {
			fmt.Fprintf(stdout, " The project is in %s.\n", dir)
		} else {
			fmt.Fprintln(stdout, " (pi demo --keep keeps the project folder.)")
		}
		fmt.Fprintln(stdout, "With a model: export OPENAI_API_KEY=...; pi -p \"your request\" (see pi --help).")
	}
	return exitOK
}

func writeDemoProject(dir string) error {
	return fs.WalkDir(demoProject, "demo/project", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "demo/project"), "/")
		if rel == "" {
			return nil
		}
		target := filepath.Join(dir, strings.TrimSuffix(rel, ".txt"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := demoProject.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// Command embed runs pi as a library: it opens a runtime for a project
// folder (its pi.toml, trust and extensions apply, plus one given with -e),
// plays a scripted model, and prints each tool call and the answer.
//
//	go run ./examples/embed -C DIR [-e EXT.wasm] [-script FILE] [PROMPT]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
)

// defaultScript lists the project folder with bash, then answers.
const defaultScript = `{"turns":[{"toolCalls":[{"name":"bash","arguments":{"command":"ls"}}]},{"text":"I looked."}]}`

func main() {
	dir := flag.String("C", ".", "the project `DIR`: its pi.toml applies")
	ext := flag.String("e", "", "also load the extension `FILE.wasm`")
	scriptFile := flag.String("script", "", "the scripted model's turns (JSON `FILE`)")
	flag.Parse()
	app.ProtectProcess()  // once per program: nothing pi starts can read this process's environment (the key)
	app.BecomeSubreaper() // once per program: orphans of bash calls come back to it
	ctx := context.Background()
	opts := app.Options{Cwd: *dir, LogOutput: os.Stderr}
	if *ext != "" {
		opts.Extensions = []string{*ext}
	}
	rt, err := app.Open(ctx, opts) // pi.toml, trust, extensions, tools, hooks
	check(err)
	defer rt.Close()
	script, err := llm.ParseScript([]byte(defaultScript))
	if *scriptFile != "" {
		script, err = llm.LoadScript(*scriptFile)
	}
	check(err)
	// The conversation: session, model, input hooks and slash commands.
	conv, err := conversation.New(rt, conversation.Options{
		Provider: llm.NewScripted(script),
		OnEvent: func(ev agent.Event) {
			switch ev.Type {
			case agent.EventToolExecutionStart:
				fmt.Printf("call %s %s\n", ev.ToolName, ev.Args)
			case agent.EventToolExecutionEnd: // results may hold the API key
				fmt.Printf("result %s\n", rt.Redactor().String(ev.Result.Text()))
			}
		},
	})
	check(err)
	defer conv.Close()
	sub, err := conv.Submit(ctx, conversation.Prompt{Text: strings.Join(flag.Args(), " ")}, conversation.SubmitOptions{
		Show: func(text string) { fmt.Println(text) }, // what an input hook or a /command shows
	})
	check(err)
	if sub.Result != nil {
		fmt.Println("answer:", sub.Result.Text)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1) // a deferred Close does not run: the process ends here
	}
}

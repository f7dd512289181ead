package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pi-go/pi/cmd/pi/internal/rpcmode"
	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/app"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/llm"
)

// cmdRPC runs RPC mode (package rpcmode) until stdin ends (exit 0) or
// SIGTERM/SIGHUP (143, 129).
func cmdRPC(f *agentFlags, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(pos) > 0 && len(f.ext.flags) == 0:
		return usageError(stderr, "", "--mode rpc reads its commands from stdin and takes no prompt (got %q); send {\"type\":\"prompt\",\"message\":\"...\"}", pos[0])
	case f.print || f.interactive:
		return usageError(stderr, "", "--mode rpc cannot be combined with -p or --interactive")
	}
	out := rpcmode.NewOutput(termtext.NewJSONWriter(stdout)) // JSON lines: exact text, what a terminal acts on escaped
	ui := rpcmode.NewUI(out)
	mo, err := f.modelOptions()
	if err != nil {
		return usageError(stderr, "", "%v", err)
	}
	opts := f.commonFlags.appOptions(stderr, mo)
	if f.yes {
		opts.Approver = app.YesApprover{}
	}
	opts.Mode, opts.UI = app.ModeRPC, ui
	opts.ReservedFlags = f.ext.piFlags
	rt, err := app.Open(context.Background(), opts)
	if err != nil {
		return openFailed(stderr, err, f.apiKey)
	}
	defer rt.Close()
	if pos, err = resolveExtFlags(rt, &f.ext, pos); err != nil {
		return usageError(stderr, "", "%v", err)
	}
	if len(pos) > 0 {
		return usageError(stderr, "", "--mode rpc reads its commands from stdin and takes no prompt (got %q); send {\"type\":\"prompt\",\"message\":\"...\"}", pos[0])
	}
	out.SetRedactor(rt.Redactor())
	errOut := rt.Redactor().Writer(stderr)
	srv := rpcmode.NewServer(out, ui)
	co := conversation.Options{
		Session: f.sess.options(), SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendPrompt, MaxTurns: f.maxTurns,
		OnEvent: srv.OnEvent,
	}
	if f.script != "" {
		sc, err := llm.LoadScript(f.script)
		if err != nil {
			fmt.Fprintf(errOut, "pi: %v\n", err)
			return exitError
		}
		co.Provider, co.ModelName = llm.NewScripted(sc), "scripted"
	}
	conv, err := conversation.New(rt, co)
	if err != nil {
		fmt.Fprintf(errOut, "pi: %v\n", err)
		return exitError
	}
	defer conv.Close()
	return srv.Serve(conv, stdin)
}

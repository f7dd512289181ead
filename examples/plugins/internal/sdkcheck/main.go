//go:build wasip1

// Command sdkcheck is a test extension that exercises every part of the sdk
// through the real host: host calls (exec, with answers larger than the
// host_call buffer), emit and cancellation, configuration, grants, logs,
// panics, image blocks, input replacement and events. It is not an example to
// copy; see the folders next to internal/.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pi-go/pi/sdk"
)

type execIn struct {
	Argv      []string `json:"argv"`
	Stdin     string   `json:"stdin,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	TimeoutMS int      `json:"timeoutMs,omitempty"`
}

type countIn struct {
	N int `json:"n"`
}

type echoIn struct {
	Text string `json:"text"`
}

var events []string

func init() {
	sdk.Extension("sdkcheck", "0.0.1", "Exercises the sdk")
	sdk.Wants(sdk.Grants{Exec: []string{"sh"}})
	sdk.Tool(sdk.ToolSpec{Name: "exec", Description: "Run a command on the host", ExecutionMode: sdk.Sequential}, func(ctx *sdk.Context, in execIn) (sdk.Result, error) {
		res, err := sdk.Exec(in.Argv, sdk.ExecOptions{Stdin: in.Stdin, Cwd: in.Cwd, Timeout: time.Duration(in.TimeoutMS) * time.Millisecond})
		if err != nil {
			var he *sdk.HostError
			return sdk.Result{}, fmt.Errorf("exec failed (host error: %v): %w", errors.As(err, &he), err)
		}
		return sdk.Result{Content: []sdk.Block{sdk.TextBlock(res.Stdout)}, Details: res}, nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "count", Description: "Emit n updates, stopping when cancelled"}, func(ctx *sdk.Context, in countIn) (sdk.Result, error) {
		for i := 1; i <= in.N; i++ {
			if ctx.Emit(sdk.Result{Content: []sdk.Block{sdk.TextBlock(fmt.Sprint(i))}, Details: map[string]int{"i": i}}) {
				return sdk.Text(fmt.Sprintf("cancelled after %d", i)), nil
			}
		}
		return sdk.Text(fmt.Sprintf("counted to %d", in.N)), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "panic", Description: "Panic", Parameters: `{"type":"object"}`}, func(ctx *sdk.Context, in map[string]any) (sdk.Result, error) {
		var p *countIn
		return sdk.Text(fmt.Sprint(p.N)), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "state", Description: "Report what init told the extension", Parameters: map[string]any{"type": "object"}}, func(ctx *sdk.Context, in json.RawMessage) (sdk.Result, error) {
		var cfg map[string]any
		if err := sdk.Config(&cfg); err != nil {
			return sdk.Result{}, err
		}
		name, version := sdk.HostInfo()
		return sdk.Result{Content: []sdk.Block{sdk.TextBlock("ok")}, Details: map[string]any{
			"config": cfg, "cwd": sdk.Cwd(), "callCwd": ctx.Cwd, "grants": sdk.Granted(), "host": name + "/" + version,
			"toolCallId": ctx.ToolCallID, "env": os.Getenv("SDKCHECK_VAR"),
		}}, nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "host_call", Description: "Call a host method by name", Parameters: map[string]any{"type": "object"}}, func(ctx *sdk.Context, in struct {
		Method string `json:"method"`
	}) (sdk.Result, error) {
		var out json.RawMessage
		if err := sdk.HostCall(in.Method, map[string]any{}, &out); err != nil {
			var he *sdk.HostError
			if errors.As(err, &he) {
				return sdk.ErrorText("host error: " + he.Message), nil
			}
			return sdk.Result{}, err
		}
		return sdk.Text(string(out)), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "image", Description: "Return an image and end the run"}, func(ctx *sdk.Context, in struct{}) (sdk.Result, error) {
		sdk.Log(sdk.LevelDebug, "debug line")
		sdk.Logf(sdk.LevelWarn, "warn line %d", 7)
		fmt.Println("stdout line")
		return sdk.Result{Content: []sdk.Block{sdk.TextBlock("a pixel"), sdk.ImageBlock("iVBORw0KGgo=", "image/png")}, Terminate: true}, nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "echo", Description: "Echo text"}, func(ctx *sdk.Context, in echoIn) (sdk.Result, error) {
		return sdk.Text(in.Text), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "events", Description: "List the events seen"}, func(ctx *sdk.Context, in struct{}) (sdk.Result, error) {
		return sdk.Text(strings.Join(events, ",")), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "crash", Description: "Crash the instance"}, func(ctx *sdk.Context, in struct {
		How string `json:"how"`
	}) (sdk.Result, error) {
		switch in.How {
		case "goroutine":
			done := make(chan struct{})
			go func() {
				defer close(done)
				var m map[string]int
				m["boom"]++ // not recovered: a panic outside the handler's goroutine kills the instance
			}()
			<-done
		case "exit":
			os.Exit(3)
		}
		return sdk.Text("no crash"), nil
	})
	sdk.OnToolCall(func(c sdk.ToolCall) sdk.ToolCallDecision {
		if c.ToolName != "echo" {
			return sdk.ToolCallDecision{}
		}
		var in echoIn
		if err := c.DecodeInput(&in); err != nil {
			return sdk.Deny("bad echo input: " + err.Error())
		}
		switch in.Text {
		case "block me":
			return sdk.Deny("echo of \"block me\" is not allowed")
		case "invalid":
			return sdk.ToolCallDecision{Input: map[string]any{"text": 42}}
		}
		return sdk.ToolCallDecision{Input: echoIn{Text: "hooked: " + in.Text}}
	})
	sdk.OnEvent(func(e sdk.Event) { events = append(events, e.Type) })
}

func main() {}

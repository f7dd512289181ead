//go:build wasip1

// Command run12 is a test guest of ABI 1.2's running extension, built
// with the Go SDK: flags, timers, watches, the bus, the tool set, the
// model, llm.complete, before_provider_request, shutdown and reload. Its
// tools answer what the host said; what arrives later (timer, watch and
// bus calls) it writes to its log, where the tests wait for it.
package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/pi-go/pi/sdk"
)

func main() {}

// calls is what the count tool counted: it lives in the instance's
// memory, so pi.reload (a fresh instance) starts it again.
var calls int

type timerIn struct {
	MS     int  `json:"ms"`
	Repeat bool `json:"repeat,omitempty"`
	SlowMS int  `json:"slowMs,omitempty"`
}

type idIn struct {
	ID string `json:"id"`
}

type watchIn struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive,omitempty"`
}

type emitIn struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
	Pad     int    `json:"pad,omitempty"`
	Times   int    `json:"times,omitempty"`
}

type promptIn struct {
	Prompt string `json:"prompt"`
	System string `json:"system,omitempty"`
	Max    int    `json:"max,omitempty"`
}

type namesIn struct {
	Names []string `json:"names"`
}

type modelIn struct {
	ID    string `json:"id,omitempty"`
	Level string `json:"level,omitempty"`
}

type empty struct{}

func jsonText(v any, err error) (sdk.Result, error) {
	if err != nil {
		return sdk.Result{}, err
	}
	b, _ := json.Marshal(v)
	return sdk.Text(string(b)), nil
}

func init() {
	sdk.Extension("run12", "1.0.0", "ABI 1.2 running-extension test guest")
	sdk.Flag(sdk.FlagSpec{Name: "greeting", Description: "what to say", Default: "hi"})
	sdk.Flag(sdk.FlagSpec{Name: "loud", Description: "say it loudly", Boolean: true})
	sdk.Flag(sdk.FlagSpec{Name: "who", Description: "whom to greet"})

	sdk.Tool(sdk.ToolSpec{Name: "flags", Description: "Answers the flags."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return jsonText(sdk.FlagValues())
	})
	fires := map[string]int{}
	sdk.Tool(sdk.ToolSpec{Name: "timer", Description: "Sets a timer."}, func(_ *sdk.Context, in timerIn) (sdk.Result, error) {
		var t sdk.Timer
		t, err := sdk.SetTimer(in.MS, in.Repeat, func() {
			fires[t.ID]++
			sdk.Logf(sdk.LevelInfo, "timer %s fire %d", t.ID, fires[t.ID])
			if in.SlowMS > 0 {
				end := time.Now().Add(time.Duration(in.SlowMS) * time.Millisecond)
				for time.Now().Before(end) {
				}
			}
		})
		if err != nil {
			return sdk.Result{}, err
		}
		return sdk.Text(t.ID), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "cleartimer", Description: "Clears a timer."}, func(_ *sdk.Context, in idIn) (sdk.Result, error) {
		return sdk.Text("cleared"), sdk.Timer{ID: in.ID}.Clear()
	})
	sdk.Tool(sdk.ToolSpec{Name: "watch", Description: "Watches a path."}, func(_ *sdk.Context, in watchIn) (sdk.Result, error) {
		var w sdk.Watch
		w, err := sdk.WatchPath(in.Path, in.Recursive, func(paths []string) {
			sdk.Logf(sdk.LevelInfo, "watch %s: %s", w.ID, strings.Join(paths, ","))
		})
		if err != nil {
			return sdk.Result{}, err
		}
		return sdk.Text(w.ID), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "unwatch", Description: "Removes a watch."}, func(_ *sdk.Context, in idIn) (sdk.Result, error) {
		return sdk.Text("removed"), sdk.Watch{ID: in.ID}.Remove()
	})
	sdk.Tool(sdk.ToolSpec{Name: "emit", Description: "Emits on the bus."}, func(_ *sdk.Context, in emitIn) (sdk.Result, error) {
		for i := 0; i < max(in.Times, 1); i++ {
			if err := sdk.BusEmit(in.Channel, map[string]any{"text": in.Text, "n": i, "pad": strings.Repeat("x", in.Pad)}); err != nil {
				return sdk.Result{}, err
			}
		}
		return sdk.Text("emitted"), nil
	})
	sdk.OnBus("news", func(m sdk.BusMessage) {
		var d struct {
			Text string `json:"text"`
			N    int    `json:"n"`
		}
		_ = json.Unmarshal(m.Data, &d)
		sdk.Logf(sdk.LevelInfo, "bus %s from %s: %s %d", m.Channel, m.From, d.Text, d.N)
	})
	sdk.Tool(sdk.ToolSpec{Name: "complete", Description: "Asks the model."}, func(_ *sdk.Context, in promptIn) (sdk.Result, error) {
		res, err := sdk.Complete(sdk.CompleteRequest{SystemPrompt: in.System, MaxTokens: in.Max, Messages: []sdk.CompleteMessage{sdk.UserMessage(in.Prompt)}})
		if err != nil {
			return sdk.Result{}, err
		}
		return sdk.Text(res.Text()), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "model", Description: "Answers the model."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return jsonText(sdk.CurrentModel())
	})
	sdk.Tool(sdk.ToolSpec{Name: "setmodel", Description: "Sets the model or the thinking level."}, func(_ *sdk.Context, in modelIn) (sdk.Result, error) {
		if in.Level != "" {
			lv, err := sdk.SetThinkingLevel(in.Level)
			return sdk.Text(lv), err
		}
		return sdk.Text("set"), sdk.SetModel("", in.ID)
	})
	sdk.Tool(sdk.ToolSpec{Name: "tools", Description: "Lists the tools."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return jsonText(sdk.ListTools())
	})
	sdk.Tool(sdk.ToolSpec{Name: "activate", Description: "Sets the active tools."}, func(_ *sdk.Context, in namesIn) (sdk.Result, error) {
		return sdk.Text("activated"), sdk.SetActiveTools(in.Names...)
	})
	sdk.LateTool(sdk.ToolSpec{Name: "late", Description: "A tool registered after init."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return sdk.Text("late tool ran"), nil
	})
	sdk.Tool(sdk.ToolSpec{Name: "register", Description: "Registers the late tool."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return sdk.Text("registered"), sdk.RegisterTools("late")
	})
	sdk.Tool(sdk.ToolSpec{Name: "unregister", Description: "Unregisters the late tool."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return sdk.Text("unregistered"), sdk.UnregisterTools("late")
	})
	sdk.Tool(sdk.ToolSpec{Name: "shutdown", Description: "Asks pi to end (refused outside a command)."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		return sdk.Text("asked"), sdk.Shutdown()
	})
	sdk.Command(sdk.CommandSpec{Name: "bye", Description: "Ends pi."}, func(string) (sdk.CommandResult, error) {
		return sdk.CommandResult{Text: "bye"}, sdk.Shutdown()
	})
	sdk.Command(sdk.CommandSpec{Name: "reload-all", Description: "Reloads pi."}, func(string) (sdk.CommandResult, error) {
		return sdk.CommandResult{Text: "reloading"}, sdk.Reload()
	})
	sdk.Tool(sdk.ToolSpec{Name: "count", Description: "Counts its calls in this instance's memory."}, func(_ *sdk.Context, _ empty) (sdk.Result, error) {
		calls++
		return sdk.Text(strconv.Itoa(calls)), nil
	})
	sdk.Events("model_select", "session_start", "session_shutdown")
	sdk.OnEvent(func(ev sdk.Event) { sdk.Logf(sdk.LevelInfo, "event %s", ev.Raw) })
	sdk.OnBeforeProviderRequest(func(payload json.RawMessage) json.RawMessage {
		var body map[string]any
		if json.Unmarshal(payload, &body) != nil {
			return nil
		}
		body["x_run12"] = true
		body["stream"] = "changed"
		out, _ := json.Marshal(body)
		return out
	})
}

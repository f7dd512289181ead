//go:build wasip1

// Command ui12 is a test guest for ABI 1.2's extension UI, built with the
// Go SDK: dialogs, statuses, widgets, the title, the working message, the
// editor's text, components (an overlay counter, and hostile ones: a
// render that never returns, a rerender flood, a huge render, escape
// sequences everywhere), a tool and message renderer and a shortcut.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o ui12.wasm .
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pi-go/pi/sdk"
)

func main() {}

// esc is a hostile text: an OSC title change, a CSI clear, a C1 CSI, BEL,
// a carriage return and a newline.
const esc = "\x1b]0;pwned\x07\x1b[2J\u009b31mred\rX\ny"

type dialogIn struct {
	Kind    string   `json:"kind"`
	Title   string   `json:"title"`
	Options []string `json:"options"`
	Timeout int      `json:"timeoutMs"`
}

var count int

// lastID is the id of the component opened last.
var lastID string

func init() {
	sdk.Extension("ui12", "1.0.0", "ABI 1.2 UI test guest")
	sdk.Tool(sdk.ToolSpec{Name: "dialog", Description: "Asks the person with a dialog.", Parameters: map[string]any{"type": "object"}},
		func(ctx *sdk.Context, in dialogIn) (sdk.Result, error) {
			var r sdk.DialogResult
			var err error
			to := time.Duration(in.Timeout) * time.Millisecond
			switch in.Kind {
			case "select":
				r, err = sdk.Select(in.Title, in.Options, to)
			case "input":
				r, err = sdk.InputDialog(in.Title, "type here", to)
			default:
				r, err = sdk.EditorDialog(in.Title, "prefilled", to)
			}
			if err != nil {
				return sdk.Result{}, err
			}
			b, _ := json.Marshal(r)
			return sdk.Text(string(b)), nil
		})
	sdk.Tool(sdk.ToolSpec{Name: "fancy", Description: "A tool the TUI draws with tool.render.", Parameters: map[string]any{"type": "object"}},
		func(ctx *sdk.Context, in map[string]any) (sdk.Result, error) {
			return sdk.Text("fancy done"), nil
		})
	sdk.RenderTool("fancy", func(r sdk.ToolRender) []sdk.Line {
		if r.Result == nil {
			return []sdk.Line{sdk.Styled("fancy is working"+esc, "warning")}
		}
		return []sdk.Line{sdk.Styled("FANCY RESULT "+r.Result.Content[0].Text, "success bold"), sdk.PlainLine("second" + esc)}
	})
	sdk.RenderMessage("note", func(m sdk.MessageRender) []sdk.Line {
		var s string
		_ = json.Unmarshal(m.Content, &s)
		return []sdk.Line{sdk.Styled("NOTE: "+s+esc, "accent")}
	})
	sdk.Shortcut("f5", "count a press", func() error {
		count++
		return sdk.SetStatus("presses", sdk.PlainLine(fmt.Sprintf("pressed %d", count)))
	})
	sdk.Shortcut("ctrl+c", "a key pi binds", func() error { return nil })
	// A run started while the TUI is idle, from a shortcut.
	sdk.Shortcut("f6", "starts a run", func() error { return sdk.SendUserMessage("from the shortcut", nil, "") })
	// pi.reload from a shortcut.
	sdk.Shortcut("f7", "reloads pi", func() error { return sdk.Reload() })
	sdk.Command(sdk.CommandSpec{Name: "later", Description: "sends ARGS as a user message (a run once the command returned)"}, func(args string) (sdk.CommandResult, error) {
		return sdk.CommandResult{}, sdk.SendUserMessage(args, nil, "")
	})
	// Custom messages shown: "note" has a renderer, "plain" has none.
	sdk.Command(sdk.CommandSpec{Name: "note", Description: "sends ARGS as a displayed note (drawn by the guest)"}, func(args string) (sdk.CommandResult, error) {
		return sdk.CommandResult{}, sdk.SendMessage(sdk.Message{CustomType: "note", Text: args, Display: true})
	})
	sdk.Command(sdk.CommandSpec{Name: "plain", Description: "sends ARGS as a displayed custom message pi draws"}, func(args string) (sdk.CommandResult, error) {
		return sdk.CommandResult{}, sdk.SendMessage(sdk.Message{CustomType: "plain", Text: args + esc, Display: true})
	})
	sdk.Command(sdk.CommandSpec{Name: "show", Description: "sets statuses, widgets, the title, the working message and the editor text"}, show)
	sdk.Command(sdk.CommandSpec{Name: "clear", Description: "clears the status and the widget"}, func(string) (sdk.CommandResult, error) {
		if err := sdk.SetStatus("st", nil); err != nil {
			return sdk.CommandResult{}, err
		}
		return sdk.CommandResult{Text: "cleared"}, sdk.SetWidget("wd", nil, "")
	})
	sdk.Command(sdk.CommandSpec{Name: "ask", Description: "asks with a select dialog"}, func(args string) (sdk.CommandResult, error) {
		r, err := sdk.Select("Pick one"+esc, []string{"alpha" + esc, "beta", "gamma"}, 0)
		if err != nil {
			return sdk.CommandResult{}, err
		}
		if !r.OK {
			return sdk.CommandResult{Text: "no answer: " + r.Reason}, nil
		}
		in, err := sdk.InputDialog("Your name", "name", 0)
		if err != nil {
			return sdk.CommandResult{}, err
		}
		ed, err := sdk.EditorDialog("Your story", "once upon", 0)
		if err != nil {
			return sdk.CommandResult{}, err
		}
		return sdk.CommandResult{Text: fmt.Sprintf("picked %q, name %q/%s, story %q/%s", r.Value, in.Value, in.Reason, ed.Value, ed.Reason)}, nil
	})
	sdk.Command(sdk.CommandSpec{Name: "counter", Description: "an overlay counter: up/down count, q closes"}, counter)
	sdk.Command(sdk.CommandSpec{Name: "hang", Description: "an overlay whose render never returns"}, func(string) (sdk.CommandResult, error) {
		return openText(sdk.ComponentHandler{Render: func(int, *sdk.EditorState) []sdk.Line {
			for {
			}
		}})
	})
	sdk.Command(sdk.CommandSpec{Name: "flood", Description: "an overlay asking for 500 rerenders"}, func(string) (sdk.CommandResult, error) {
		renders := 0
		id, ok, err := sdk.OpenComponent(sdk.ComponentOptions{Slot: sdk.SlotOverlay}, sdk.ComponentHandler{
			Render: func(int, *sdk.EditorState) []sdk.Line {
				renders++
				return []sdk.Line{sdk.PlainLine(fmt.Sprintf("flood render %d", renders))}
			},
		})
		if err != nil || !ok {
			return sdk.CommandResult{Text: "no component"}, err
		}
		for range 500 {
			if err := sdk.Rerender(id); err != nil {
				return sdk.CommandResult{}, err
			}
		}
		return sdk.CommandResult{Text: "flooded " + id}, nil
	})
	sdk.Command(sdk.CommandSpec{Name: "huge", Description: "an overlay of 5000 lines"}, func(string) (sdk.CommandResult, error) {
		return openText(sdk.ComponentHandler{Render: func(int, *sdk.EditorState) []sdk.Line {
			out := make([]sdk.Line, 5000)
			for i := range out {
				out[i] = sdk.PlainLine(fmt.Sprintf("huge line %d", i))
			}
			return out
		}})
	})
	sdk.Command(sdk.CommandSpec{Name: "slots", Description: "a header, a footer, a widget component and an editor component"}, slots)
	sdk.Command(sdk.CommandSpec{Name: "many", Description: "opens overlays until the host refuses"}, func(string) (sdk.CommandResult, error) {
		for i := 0; ; i++ {
			_, ok, err := sdk.OpenComponent(sdk.ComponentOptions{Slot: sdk.SlotOverlay}, sdk.ComponentHandler{})
			if err != nil {
				return sdk.CommandResult{Text: fmt.Sprintf("opened %d, then: %v", i, err)}, nil
			}
			if !ok {
				return sdk.CommandResult{Text: "no component (no-tui)"}, nil
			}
		}
	})
	sdk.Command(sdk.CommandSpec{Name: "say", Description: "shows ARGS as a status, split over two spans"}, func(args string) (sdk.CommandResult, error) {
		half := len(args) / 2
		return sdk.CommandResult{Text: "said"}, sdk.SetStatus("say", sdk.Line{{Text: "said " + args[:half], Style: "accent"}, {Text: args[half:]}})
	})
	// With config header = true, a header opens in session_start, before
	// the TUI starts.
	sdk.Events("session_start")
	sdk.OnEvent(func(ev sdk.Event) {
		var cfg struct {
			Header bool `json:"header"`
		}
		if sdk.Config(&cfg) == nil && cfg.Header && ev.Type == "session_start" {
			headers++
			n := headers
			_, _, _ = sdk.OpenComponent(sdk.ComponentOptions{Slot: sdk.SlotHeader}, sdk.ComponentHandler{
				Render: func(int, *sdk.EditorState) []sdk.Line {
					return []sdk.Line{sdk.Styled(fmt.Sprintf("ARCADE HEADER%s #%d", esc, n), "accent")}
				},
				Dispose: func(reason string) { seen = append(seen, fmt.Sprintf("header %d:%s", n, reason)) },
			})
		}
	})
	sdk.Command(sdk.CommandSpec{Name: "state", Description: "tells what the guest saw"}, func(string) (sdk.CommandResult, error) {
		return sdk.CommandResult{Text: strings.Join(seen, ";")}, nil
	})
}

// headers counts the header components opened.
var headers int

// seen records component events (keys, disposals) for the tests.
var seen []string

func openText(h sdk.ComponentHandler) (sdk.CommandResult, error) {
	h.Dispose = func(reason string) { seen = append(seen, "dispose:"+reason) }
	id, ok, err := sdk.OpenComponent(sdk.ComponentOptions{Slot: sdk.SlotOverlay}, h)
	if err != nil {
		return sdk.CommandResult{}, err
	}
	if !ok {
		return sdk.CommandResult{Text: "no component (no-tui)"}, nil
	}
	lastID = id
	return sdk.CommandResult{Text: "opened " + id}, nil
}

func counter(string) (sdk.CommandResult, error) {
	n := 0
	return openText(sdk.ComponentHandler{
		Render: func(width int, _ *sdk.EditorState) []sdk.Line {
			return []sdk.Line{
				{{Text: "Counter" + esc, Style: "accent bold"}},
				sdk.PlainLine(fmt.Sprintf("count=%d width=%d", n, width)),
				sdk.Styled("up/down, q quits", "dim"),
			}
		},
		Input: func(key, text string) sdk.KeyAnswer {
			seen = append(seen, "key:"+key)
			switch key {
			case "up":
				n++
				return sdk.KeyAnswer{Consumed: true, Rerender: true}
			case "down":
				n--
				return sdk.KeyAnswer{Consumed: true, Rerender: true}
			case "q":
				return sdk.KeyAnswer{Consumed: true, Close: true}
			case "x":
				_ = sdk.CloseComponent(lastID)
				return sdk.KeyAnswer{Consumed: true}
			}
			return sdk.KeyAnswer{Consumed: true}
		},
	})
}

func show(args string) (sdk.CommandResult, error) {
	steps := []func() error{
		func() error { return sdk.SetStatus("st", sdk.Line{{Text: "status" + esc, Style: "warning"}}) },
		func() error {
			return sdk.SetWidget("wd", []sdk.Line{sdk.PlainLine("widget one" + esc), sdk.Styled("widget two", "success")}, sdk.AboveEditor)
		},
		func() error { return sdk.SetTitle("title" + esc) },
		func() error { return sdk.SetWorkingMessage("grinding" + esc) },
		func() error { return sdk.SetEditorText("from the extension") },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return sdk.CommandResult{}, err
		}
	}
	text, err := sdk.EditorText()
	if err != nil {
		return sdk.CommandResult{}, err
	}
	return sdk.CommandResult{Text: fmt.Sprintf("shown; editor=%q tui=%v", text, sdk.TUI())}, nil
}

// slots opens a component in the header, footer, widget and editor slots.
// The editor component swallows "!", closes on ctrl+x, and hands every
// other key to pi's editor.
func slots(string) (sdk.CommandResult, error) {
	fixed := func(text string) sdk.ComponentHandler {
		return sdk.ComponentHandler{Render: func(int, *sdk.EditorState) []sdk.Line { return []sdk.Line{sdk.Styled(text+esc, "accent")} }}
	}
	opens := []struct {
		o sdk.ComponentOptions
		h sdk.ComponentHandler
	}{
		{sdk.ComponentOptions{Slot: sdk.SlotHeader}, fixed("HEADER line")},
		{sdk.ComponentOptions{Slot: sdk.SlotFooter}, fixed("FOOTER line")},
		{sdk.ComponentOptions{Slot: sdk.SlotWidget, Key: "w", Placement: sdk.BelowEditor}, fixed("WIDGET comp")},
		{sdk.ComponentOptions{Slot: sdk.SlotEditor}, sdk.ComponentHandler{
			Render: func(width int, ed *sdk.EditorState) []sdk.Line {
				if ed == nil {
					return []sdk.Line{sdk.PlainLine("EDITOR without state")}
				}
				return []sdk.Line{sdk.PlainLine(fmt.Sprintf("EDITOR[%s] cursor=%d", ed.Text, ed.Cursor))}
			},
			Input: func(key, text string) sdk.KeyAnswer {
				switch key {
				case "!":
					return sdk.KeyAnswer{Consumed: true}
				case "ctrl+x":
					return sdk.KeyAnswer{Consumed: true, Close: true}
				}
				return sdk.KeyAnswer{}
			},
			Dispose: func(reason string) { seen = append(seen, "editor-dispose:"+reason) },
		}},
	}
	var ids []string
	for _, o := range opens {
		id, ok, err := sdk.OpenComponent(o.o, o.h)
		if err != nil {
			return sdk.CommandResult{}, err
		}
		if !ok {
			return sdk.CommandResult{Text: "no component (no-tui)"}, nil
		}
		ids = append(ids, id)
	}
	return sdk.CommandResult{Text: "slots " + strings.Join(ids, ",")}, nil
}

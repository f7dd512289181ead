//go:build wasip1

// Command todo is a pi extension (ABI 1.1) with a todo list the model and
// the person share: the tool "todo" adds, lists and completes items, the
// command /todo shows the list or adds to it. The list lives in the
// extension's kv store for the project, so it survives restarts. It needs
// no grants.
package main

import (
	"fmt"
	"strings"

	"github.com/pi-go/pi/sdk"
)

// item is one entry of the list.
type item struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
	Done bool   `json:"done"`
}

// key is the kv key of the list (in the project's store).
const key = "items"

func init() {
	sdk.Extension("todo", "1.0.0", "A todo list for the project, kept across sessions")
	sdk.Tool(sdk.ToolSpec{
		Name:          "todo",
		Description:   "Keep the project's todo list: action \"add\" with text, \"done\" with id, or \"list\".",
		PromptSnippet: "todo: keep the project's todo list (add, done, list)",
	}, run)
	sdk.Command(sdk.CommandSpec{Name: "todo", Description: "show the todo list, or add ITEM to it", ArgumentHint: "[ITEM]"}, command)
}

func main() {}

type input struct {
	Action string `json:"action" description:"add, done or list"`
	Text   string `json:"text,omitempty" description:"the item to add"`
	ID     int    `json:"id,omitempty" description:"the item to mark done"`
}

func load() ([]item, error) {
	var items []item
	_, err := sdk.ProjectKV.Get(key, &items)
	return items, err
}

func run(ctx *sdk.Context, in input) (sdk.Result, error) {
	items, err := load()
	if err != nil {
		return sdk.Result{}, err
	}
	switch in.Action {
	case "add":
		if strings.TrimSpace(in.Text) == "" {
			return sdk.ErrorText("add needs a text"), nil
		}
		items = add(items, in.Text)
	case "done":
		found := false
		for i := range items {
			if items[i].ID == in.ID {
				items[i].Done, found = true, true
			}
		}
		if !found {
			return sdk.ErrorText(fmt.Sprintf("no item %d; the list is:\n%s", in.ID, render(items))), nil
		}
	case "list":
		return sdk.Text(render(items)), nil
	default:
		return sdk.ErrorText(fmt.Sprintf("unknown action %q: use add, done or list", in.Action)), nil
	}
	if err := sdk.ProjectKV.Set(key, items); err != nil {
		return sdk.Result{}, err
	}
	return sdk.Text(render(items)), nil
}

func add(items []item, text string) []item {
	next := 1
	for _, it := range items {
		next = max(next, it.ID+1)
	}
	return append(items, item{ID: next, Text: strings.TrimSpace(text)})
}

func command(args string) (sdk.CommandResult, error) {
	items, err := load()
	if err != nil {
		return sdk.CommandResult{}, err
	}
	if args != "" {
		items = add(items, args)
		if err := sdk.ProjectKV.Set(key, items); err != nil {
			return sdk.CommandResult{}, err
		}
	}
	return sdk.CommandResult{Text: render(items)}, nil
}

func render(items []item) string {
	if len(items) == 0 {
		return "The todo list is empty."
	}
	var b strings.Builder
	for _, it := range items {
		mark := " "
		if it.Done {
			mark = "x"
		}
		fmt.Fprintf(&b, "[%s] %d. %s\n", mark, it.ID, it.Text)
	}
	return strings.TrimRight(b.String(), "\n")
}

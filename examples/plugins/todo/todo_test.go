//go:build !wasip1

package main

import (
	"os"
	"testing"

	"github.com/pi-go/pi/internal/testkit/plugin"
	"github.com/pi-go/pi/runtime/app/pitest"
)

func TestMain(m *testing.M) { os.Exit(plugin.Main(m)) }

// TestTodoSurvivesRestarts: the tool and /todo share one list in the
// project's kv store, which a new pi (a restart) reads back. It uses the
// public test kit, as an extension author's test would.
func TestTodoSurvivesRestarts(t *testing.T) {
	ext := pitest.Extension{Path: pitest.BuildGo(t, ".")}
	pi := pitest.Load(t, ext)
	call := func(pi *pitest.Pi, args map[string]any) (string, bool) {
		t.Helper()
		r := pi.Call("todo", args)
		return r.Text, r.IsError
	}
	if got, _ := call(pi, map[string]any{"action": "list"}); got != "The todo list is empty." {
		t.Errorf("empty list = %q", got)
	}
	call(pi, map[string]any{"action": "add", "text": "write the README"})
	if got, _ := call(pi, map[string]any{"action": "add", "text": "tag the release"}); got != "[ ] 1. write the README\n[ ] 2. tag the release" {
		t.Errorf("after two adds = %q", got)
	}
	if got, isErr := call(pi, map[string]any{"action": "done", "id": 7}); !isErr || got != "no item 7; the list is:\n[ ] 1. write the README\n[ ] 2. tag the release" {
		t.Errorf("done 7 = %q", got)
	}
	call(pi, map[string]any{"action": "done", "id": 1})
	// /todo ITEM adds and shows the list; it sends nothing to the model.
	res, err := pi.Command("todo", " buy milk ")
	if err != nil || res.Prompt != "" || res.Text != "[x] 1. write the README\n[ ] 2. tag the release\n[ ] 3. buy milk" {
		t.Errorf("/todo buy milk: %+v, %v", res, err)
	}
	pi.Close()

	// A restart: a new pi, the same PI_HOME and project.
	again := pitest.New(t, pitest.Options{Home: pi.Home(), Dir: pi.Dir()}, ext)
	if res, err := again.Command("todo", ""); err != nil || res.Text != "[x] 1. write the README\n[ ] 2. tag the release\n[ ] 3. buy milk" {
		t.Errorf("/todo after a restart: %+v, %v", res, err)
	}
	// Another project, the same PI_HOME, has its own list.
	other := pitest.New(t, pitest.Options{Home: pi.Home()}, ext)
	if got, _ := call(other, map[string]any{"action": "list"}); got != "The todo list is empty." {
		t.Errorf("another project's list = %q", got)
	}
}

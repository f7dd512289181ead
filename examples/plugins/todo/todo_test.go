//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/pi-go/pi/examples/plugins/internal/apptest"
	"github.com/pi-go/pi/internal/plugintest"
	"github.com/pi-go/pi/runtime/app"
)

func TestMain(m *testing.M) { os.Exit(plugintest.Main(m)) }

// TestTodoSurvivesRestarts: the tool and /todo share one list in the
// project's kv store, which a new pi (a restart) reads back.
func TestTodoSurvivesRestarts(t *testing.T) {
	p := apptest.New(t, "todo", plugintest.BuildGo(t, "examples/plugins/todo"), "")
	rt := p.Open(t, app.Options{})
	call := func(rt *app.Runtime, args string) (string, bool) {
		t.Helper()
		res, err := rt.CallTool(context.Background(), "todo", "c", json.RawMessage(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text(), res.IsError
	}
	if got, _ := call(rt, `{"action":"list"}`); got != "The todo list is empty." {
		t.Errorf("empty list = %q", got)
	}
	call(rt, `{"action":"add","text":"write the README"}`)
	if got, _ := call(rt, `{"action":"add","text":"tag the release"}`); got != "[ ] 1. write the README\n[ ] 2. tag the release" {
		t.Errorf("after two adds = %q", got)
	}
	if got, isErr := call(rt, `{"action":"done","id":7}`); !isErr || got != "no item 7; the list is:\n[ ] 1. write the README\n[ ] 2. tag the release" {
		t.Errorf("done 7 = %q", got)
	}
	call(rt, `{"action":"done","id":1}`)
	// /todo ITEM adds, /todo shows; nothing reaches the model.
	model := apptest.Model(t, `{"turns":[]}`)
	shown, s, err := apptest.Submit(t, rt, model, "/todo  buy milk ")
	if err != nil || s.Command != "todo" || s.Result != nil || len(shown) != 1 || shown[0] != "[x] 1. write the README\n[ ] 2. tag the release\n[ ] 3. buy milk" {
		t.Errorf("/todo buy milk: %q, %+v, %v", shown, s, err)
	}
	rt.Close()

	// A restart: a new pi, the same PI_HOME and project.
	rt = p.Open(t, app.Options{})
	shown, _, err = apptest.Submit(t, rt, model, "/todo")
	if err != nil || len(shown) != 1 || shown[0] != "[x] 1. write the README\n[ ] 2. tag the release\n[ ] 3. buy milk" {
		t.Errorf("/todo after a restart: %q, %v", shown, err)
	}
	if len(model.Requests()) != 0 {
		t.Errorf("a command reached the model")
	}
	// Another project has its own list.
	q := apptest.New(t, "todo", plugintest.BuildGo(t, "examples/plugins/todo"), "")
	q.Home = p.Home
	rt2 := q.Open(t, app.Options{})
	if got, _ := call(rt2, `{"action":"list"}`); got != "The todo list is empty." {
		t.Errorf("another project's list = %q", got)
	}
}

//go:build linux

package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/proc"
	"github.com/pi-go/pi/runtime/tool"
)

// waitAlive waits until n processes named name are alive.
func waitAlive(t *testing.T, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(proc.Alive(name)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes named %s alive, want %d", len(proc.Alive(name)), name, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// bashCall runs one bash call through the runtime.
func bashCall(t *testing.T, rt *Runtime, command string) tool.Result {
	t.Helper()
	input, _ := json.Marshal(map[string]any{"command": command})
	res, err := rt.CallTool(context.Background(), "bash", "c", input, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCloseEndsOnlyItsOwnProcesses: two runtimes in one program, each with
// a bash call still running and calls that left processes in the
// background (a plain job, setsid, a double fork into a new session).
// Closing runtime A ends A's processes, its running call with them, and
// refuses A's later calls; B's processes and its running call are
// untouched and B still runs calls; closing B then ends B's.
func TestCloseEndsOnlyItsOwnProcesses(t *testing.T) {
	dir, home := project(t)
	open := func() *Runtime {
		rt, err := Open(context.Background(), Options{Cwd: dir, PIHome: home})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rt.Close)
		return rt
	}
	a, b := open(), open()
	slA, slB := proc.Sleeper(t), proc.Sleeper(t)
	nameA, nameB := filepath.Base(slA), filepath.Base(slB)

	type running struct{ done chan tool.Result }
	start := func(rt *Runtime, sl string) running {
		for _, c := range []string{
			sl + " 600 & echo job",
			"setsid " + sl + " 600 & echo session",
			"(setsid sh -c '" + sl + " 600 & true' &); echo double fork",
		} {
			if res := bashCall(t, rt, c); res.IsError {
				t.Fatalf("%q: %s", c, res.Text())
			}
		}
		r := running{done: make(chan tool.Result, 1)}
		input, _ := json.Marshal(map[string]any{"command": "echo started; " + sl + " 600"})
		go func() {
			res, err := rt.CallTool(context.Background(), "bash", "long", input, nil)
			if err != nil {
				res = tool.ErrorResult(err.Error())
			}
			r.done <- res
		}()
		return r
	}
	runA, runB := start(a, slA), start(b, slB)
	waitAlive(t, nameA, 4)
	waitAlive(t, nameB, 4)

	a.Close()
	if left := proc.Find(nameA); len(left) != 0 {
		t.Errorf("after closing A, A's processes remain: %v", left)
	}
	select {
	case res := <-runA.done:
		if !res.IsError || !strings.HasPrefix(res.Text(), "started\n") {
			t.Errorf("A's running call: %q (isError %v)", res.Text(), res.IsError)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("A's running call did not return after A closed")
	}
	if n := len(proc.Alive(nameB)); n != 4 {
		t.Errorf("closing A ended B's processes: %d of 4 alive", n)
	}
	select {
	case res := <-runB.done:
		t.Fatalf("closing A ended B's running call: %q", res.Text())
	default:
	}
	if res := bashCall(t, a, "echo still here"); !res.IsError || strings.Contains(res.Text(), "still here") {
		t.Errorf("a call of the closed runtime: %q (isError %v), want it refused", res.Text(), res.IsError)
	}
	if res := bashCall(t, b, "echo still here"); res.IsError || res.Text() != "still here\n" {
		t.Errorf("B after A closed: %q (isError %v)", res.Text(), res.IsError)
	}

	b.Close()
	if left := proc.Find(nameB); len(left) != 0 {
		t.Errorf("after closing B, B's processes remain: %v", left)
	}
	select {
	case <-runB.done:
	case <-time.After(10 * time.Second):
		t.Fatal("B's running call did not return after B closed")
	}
}

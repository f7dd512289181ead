package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-go/pi/runtime/agent"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/tool"
	"github.com/pi-go/pi/tools/builtin"
)

// builtinTools wraps the real built-in tools with dir as the working
// directory.
func builtinTools(t *testing.T, dir string, defs ...tool.ToolDefinition) []tool.AgentTool {
	t.Helper()
	tools, err := tool.WrapAll(defs, func(string) tool.Context { return tool.Context{Cwd: dir} })
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// builtinDefs picks the named built-in tools, in that order; their bash
// processes are ended when the test ends.
func builtinDefs(t testing.TB, names ...string) []tool.ToolDefinition {
	t.Helper()
	procs := builtin.NewProcesses()
	t.Cleanup(procs.Close)
	all := map[string]tool.ToolDefinition{}
	for _, d := range builtin.Definitions(builtin.Options{Bash: builtin.BashOptions{Processes: procs}}) {
		all[d.Name] = d
	}
	var defs []tool.ToolDefinition
	for _, n := range names {
		d, ok := all[n]
		if !ok {
			t.Fatalf("no built-in tool %q", n)
		}
		defs = append(defs, d)
	}
	return defs
}

// TestReadDuringEdit runs the real read and edit tools on the same file in
// one parallel batch, many times: every read sees the whole file before or
// after the edit, never a half-written one.
func TestReadDuringEdit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.txt")
	var body strings.Builder
	for i := range 800 {
		fmt.Fprintf(&body, "line %04d: the quick brown fox jumps over the lazy dog\n", i)
	}
	// The marker sits at the top, so a torn write would show the new marker
	// with a short tail (or the old one with a missing tail).
	stateA := "MARKER state-a\n" + body.String()
	stateB := "MARKER state-b with a longer replacement line\n" + body.String()
	writeFile(t, path, stateA)
	if len(stateB) > 50*1024 {
		t.Fatalf("test file too big for one read: %d bytes", len(stateB))
	}

	const rounds = 30
	var turns []llm.ScriptTurn
	for i := range rounds {
		from, to := "MARKER state-a", "MARKER state-b with a longer replacement line"
		if i%2 == 1 {
			from, to = to, from
		}
		edit, _ := json.Marshal(map[string]any{"path": "big.txt", "edits": []map[string]string{{"oldText": from, "newText": to}}})
		turns = append(turns, llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{
			call("read", `{"path":"big.txt"}`),
			{Name: "edit", Arguments: edit},
			call("read", `{"path":"big.txt"}`),
		}})
	}
	turns = append(turns, llm.ScriptTurn{Text: "done"})
	p := script(turns...)
	a := agent.New(agent.Config{Provider: p, Tools: builtinTools(t, dir, builtinDefs(t, "read", "edit")...)})
	res, err := a.Run(context.Background(), "flip the marker")
	if err != nil {
		t.Fatal(err)
	}
	rs := toolResults(res.Messages)
	if len(rs) != 3*rounds {
		t.Fatalf("%d results, want %d", len(rs), 3*rounds)
	}
	seen := map[string]int{}
	for i, r := range rs {
		if r.IsError {
			t.Fatalf("result %d (%s) failed: %s", i, r.ToolName, text(r))
		}
		if r.ToolName != "read" {
			continue
		}
		switch text(r) {
		case stateA:
			seen["a"]++
		case stateB:
			seen["b"]++
		default:
			got := text(r)
			t.Fatalf("read %d saw neither state: %d bytes, starts %q", i, len(got), got[:min(len(got), 80)])
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != stateA { // an even number of flips
		t.Fatalf("final file is not state a")
	}
	t.Logf("reads saw state a %d times, state b %d times", seen["a"], seen["b"])
}

// TestCancelRealBash cancels a run while the real bash tool runs a long
// command next to a real read: bash answers "Command aborted" with the output
// so far, the read's result is kept, and the run ends as aborted.
func TestCancelRealBash(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.txt"), "hello\n")
	p := script(
		llm.ScriptTurn{ToolCalls: []llm.ScriptToolCall{
			call("bash", `{"command":"echo started; sleep 30; echo never"}`),
			call("read", `{"path":"notes.txt"}`),
		}},
		llm.ScriptTurn{Text: "never played"},
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var running, readDone bool
	a := agent.New(agent.Config{
		Provider: p,
		Tools:    builtinTools(t, dir, builtinDefs(t, "bash", "read")...),
		// Ctrl-C once the command is visibly running and the read is done
		// (so the read's result does not depend on timing). Events are
		// delivered one at a time, so no lock is needed.
		OnEvent: func(e agent.Event) {
			switch {
			case e.Type == agent.EventToolExecutionUpdate && e.PartialResult != nil && strings.Contains(e.PartialResult.Text(), "started"):
				running = true
			case e.Type == agent.EventToolExecutionEnd && e.ToolName == "read":
				readDone = true
			}
			if running && readDone {
				cancel()
			}
		},
	})
	res, err := a.Run(ctx, "run it")
	if err != nil {
		t.Fatalf("a cancelled run is not an error: %v", err)
	}
	if res.StopReason != llm.StopAborted || p.Remaining() != 1 {
		t.Fatalf("stop %q, %d turns left", res.StopReason, p.Remaining())
	}
	rs := toolResults(res.Messages)
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	if got := text(rs[0]); !rs[0].IsError || !strings.HasPrefix(got, "started\n") || !strings.HasSuffix(got, "\n\nCommand aborted") || strings.Contains(got, "never") {
		t.Fatalf("bash result %q (error %v)", text(rs[0]), rs[0].IsError)
	}
	if rs[1].IsError || text(rs[1]) != "hello\n" {
		t.Fatalf("read result %q (error %v)", text(rs[1]), rs[1].IsError)
	}
}

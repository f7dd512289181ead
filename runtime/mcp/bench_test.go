package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/runtime/mcp/internal/testserver"
	"github.com/pi-go/pi/runtime/tool"
)

// percentiles reports p50 and p99 of the per-op times as metrics.
func percentiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkCallStdio is the overhead of one MCP tool call over stdio: the
// whole pipeline (validation, Execute, tools/call to the test server's
// echo over its pipes, the answer mapped to pi's result), with the server
// already running.
func BenchmarkCallStdio(b *testing.B) {
	m, err := New(Options{Cwd: b.TempDir()}, []Server{{Name: "t", Command: []string{mcpserver.Server(b)}}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	m.Start(context.Background())
	benchCalls(b, m.Definitions())
}

// BenchmarkCallInMemory is the same call to the same server in process
// (the SDK's in-memory transport): the SDK's own share, without pipes,
// JSON framing over them and another process.
func BenchmarkCallInMemory(b *testing.B) {
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := testserver.New().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	args := json.RawMessage(`{"text":"hello"}`)
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

func benchCalls(b *testing.B, defs []tool.ToolDefinition) {
	tools, err := tool.WrapAll(defs, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hello"}`)
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		res := tool.Run(ctx, tools, nil, "mcp__t__echo", "c", args, nil)
		if res.IsError || res.Text() != "echo: hello" {
			b.Fatal(res)
		}
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

// BenchmarkStartStdio is starting the stdio test server, initialize,
// tools/list and ending it again (what a run without a cached tool list
// waits for, and what Close costs).
func BenchmarkStartStdio(b *testing.B) {
	server := mcpserver.Server(b)
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		m, err := New(Options{Cwd: b.TempDir()}, []Server{{Name: "t", Command: []string{server}}})
		if err != nil {
			b.Fatal(err)
		}
		m.Start(context.Background())
		if st := m.Status()[0]; st.State != StateRunning {
			b.Fatal(st)
		}
		m.Close()
		ds = append(ds, time.Since(t0))
	}
	percentiles(b, ds)
}

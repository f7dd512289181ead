package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/runtime/mcp/internal/testserver"
	"github.com/pi-go/pi/runtime/tool"
)

func TestMain(m *testing.M) { os.Exit(mcpserver.Main(m)) }

// fixture is a Manager over the stdio test server, with its warnings and
// change notifications recorded.
type fixture struct {
	m        *Manager
	markers  string
	changes  chan struct{}
	mu       sync.Mutex
	warnings []string
	logMu    sync.Mutex
	logs     *bytes.Buffer
}

// logged is what was logged so far.
func (f *fixture) logged() string {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	return f.logs.String()
}

func (f *fixture) warned() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.warnings, "\n")
}

// newFixture makes a Manager for one server named "t" running the test
// server; edit may change the server and the options.
func newFixture(t *testing.T, edit func(*Server, *Options)) *fixture {
	t.Helper()
	f := &fixture{markers: t.TempDir(), changes: make(chan struct{}, 100), logs: &bytes.Buffer{}}
	s := Server{Name: "t", Command: []string{mcpserver.Server(t)}, Env: map[string]string{testserver.EnvMarkerDir: f.markers}}
	opts := Options{
		Cwd: t.TempDir(), Logger: hclog.New(&hclog.LoggerOptions{Output: lockedWriter{&f.logMu, f.logs}, Level: hclog.Debug}),
		OnChange: func() { f.changes <- struct{}{} },
		OnWarning: func(w string) {
			f.mu.Lock()
			f.warnings = append(f.warnings, w)
			f.mu.Unlock()
		},
		StartTimeout: 30 * time.Second,
	}
	if edit != nil {
		edit(&s, &opts)
	}
	m, err := New(opts, []Server{s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	f.m = m
	return f
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// start starts the server and waits until it listed its tools.
func (f *fixture) start() *fixture {
	f.m.Start(context.Background())
	return f
}

// call runs one call through the whole pipeline (validation included).
func (f *fixture) call(t *testing.T, ctx context.Context, name, args string) tool.Result {
	t.Helper()
	tools, err := tool.WrapAll(f.m.Definitions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(ctx, tools, nil, name, "c1", json.RawMessage(args), nil)
}

func names(defs []tool.ToolDefinition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

func TestToolsOfARealServer(t *testing.T) {
	f := newFixture(t, nil)
	if st := f.m.Status()[0]; st.State != StateIdle || len(st.Tools) != 0 {
		t.Fatalf("before Start: %+v", st)
	}
	f.m.Start(context.Background())
	defs := f.m.Definitions()
	got := names(defs)
	for _, want := range []string{"mcp__t__echo", "mcp__t__image", "mcp__t__fail", "mcp__t__slow", "mcp__t__crash", "mcp__t__dotted_name_x"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %s in %v", want, got)
		}
	}
	echo := defs[slices.Index(got, "mcp__t__echo")]
	if echo.Source.Kind != tool.SourceMCP || echo.Source.Name != "t" || echo.Source.Version != "mcp-testserver 1.0.0" || echo.Source.Path != mcpserver.Server(t) {
		t.Errorf("source = %+v", echo.Source)
	}
	if echo.PromptSnippet != "Echoes its text." || echo.Description != "Echoes its text. Useful for tests." || echo.Label != "Echo" {
		t.Errorf("echo = %q / %q / %q", echo.PromptSnippet, echo.Description, echo.Label)
	}
	if !strings.Contains(string(echo.Parameters), `"required":["text"]`) {
		t.Errorf("parameters = %s", echo.Parameters)
	}
	st := f.m.Status()[0]
	if st.State != StateRunning || st.FromCache || st.Version != "mcp-testserver 1.0.0" || !slices.Equal(st.Tools, got) || !slices.Contains(st.ServerTools, "dotted.name/x") {
		t.Errorf("status = %+v", st)
	}
	if res := f.call(t, context.Background(), "mcp__t__dotted_name_x", `{}`); res.IsError || res.Text() != "dotted" {
		t.Errorf("dotted = %+v", res)
	}
	// Validation against the server's schema runs before the server is asked.
	res := f.call(t, context.Background(), "mcp__t__echo", `{"text":5}`)
	if !res.IsError || !strings.Contains(res.Text(), `Validation failed for tool "mcp__t__echo"`) {
		t.Errorf("invalid arguments = %+v", res)
	}
}

func TestResultsMapToContentBlocks(t *testing.T) {
	f := newFixture(t, nil).start()
	ctx := context.Background()
	res := f.call(t, ctx, "mcp__t__echo", `{"text":"hi"}`)
	if res.IsError || res.Text() != "echo: hi" {
		t.Errorf("echo = %+v", res)
	}
	if d, ok := res.Details.(*Details); !ok || d.Server != "t" || d.Tool != "echo" {
		t.Errorf("echo details = %#v", res.Details)
	}

	res = f.call(t, ctx, "mcp__t__image", `{}`)
	png := base64.StdEncoding.EncodeToString(testserver.PNG())
	if res.IsError || len(res.Content) != 2 || res.Content[1] != tool.Image(png, "image/png") {
		t.Errorf("image = %+v", res)
	}

	res = f.call(t, ctx, "mcp__t__fail", `{}`)
	if !res.IsError || res.Text() != "it failed on purpose" {
		t.Errorf("fail = %+v", res)
	}

	res = f.call(t, ctx, "mcp__t__structured", `{}`)
	b, _ := json.Marshal(res.Details)
	if res.IsError || res.Text() != `{"answer":42}` || !strings.Contains(string(b), `"structuredContent":{"answer":42}`) {
		t.Errorf("structured = %+v, details %s", res, b)
	}
	res = f.call(t, ctx, "mcp__t__structured_only", `{}`)
	if res.IsError || res.Text() != `{"only":true}` {
		t.Errorf("structured only = %+v", res)
	}

	res = f.call(t, ctx, "mcp__t__resource", `{}`)
	want := []tool.ContentBlock{
		tool.Text("[resource file:///notes.txt]\nthe notes"),
		tool.Image(png, "image/png"),
		tool.Text("[resource file:///data.bin (application/octet-stream, 4B) not shown]"),
		tool.Text("[resource link: file:///elsewhere.txt (elsewhere): Another file.]"),
	}
	if !slices.Equal(res.Content, want) {
		t.Errorf("resource = %+v\nwant %+v", res.Content, want)
	}
}

func TestOutputIsTruncatedLikeBuiltinTools(t *testing.T) {
	f := newFixture(t, nil).start()
	ctx := context.Background()
	for _, c := range []struct {
		name, args, notice string
		maxLen             int
	}{
		{"lines", `{"lines":3000,"width":10}`, "\n\n[Showing lines 1-2000 of 3000.]", 0},
		{"bytes", `{"lines":1000,"width":200}`, "(50.0KB limit).]", output.DefaultMaxBytes},
		{"one long line", `{"oneline":200000}`, "\n\n[Showing first 50.0KB of line 1 (line is 195.3KB).]", output.DefaultMaxBytes},
		{"blocks after the cut", `{"lines":2500,"width":5,"blocks":4}`, "[Showing lines 1-2000 of 2500.] [3 more content blocks left out.]", 0},
		{"a block after the limit", `{"lines":2000,"width":5,"blocks":3}`, "line 2000 \n\n[2 more content blocks left out: the output reached the 2000-line limit.]", 0},
	} {
		res := f.call(t, ctx, "mcp__t__big", c.args)
		text := res.Text()
		if res.IsError || len(res.Content) != 1 || !strings.HasSuffix(text, c.notice) {
			t.Errorf("%s: %d blocks, ends %q", c.name, len(res.Content), text[max(0, len(text)-120):])
			continue
		}
		if body := strings.TrimSuffix(text, c.notice); c.maxLen > 0 && len(body) > c.maxLen+100 {
			t.Errorf("%s: %d bytes kept", c.name, len(body))
		}
		if d, ok := res.Details.(*Details); !ok || d.Truncation == nil || !d.Truncation.Truncated {
			t.Errorf("%s: details = %#v", c.name, res.Details)
		}
	}
	// Under the limits nothing is cut and there is no notice.
	res := f.call(t, ctx, "mcp__t__big", `{"lines":1999,"width":5,"blocks":2}`)
	if len(res.Content) != 2 || strings.Contains(res.Text(), "[Showing") || res.Details.(*Details).Truncation != nil {
		t.Errorf("at the limit: %d blocks, truncation %+v", len(res.Content), res.Details.(*Details).Truncation)
	}
}

// waitFile waits for a file the server writes.
func waitFile(t *testing.T, path string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", filepath.Base(path), limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCancelSendsNotificationsCancelled(t *testing.T) {
	f := newFixture(t, nil)
	f.m.Start(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	go func() { done <- f.call(t, ctx, "mcp__t__slow", `{"ms":600000,"id":"c1"}`) }()
	waitFile(t, filepath.Join(f.markers, "started-c1"), 10*time.Second)
	start := time.Now()
	cancel()
	var res tool.Result
	select {
	case res = <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the cancelled call did not end within 2s")
	}
	if !res.IsError || !strings.Contains(res.Text(), "cancelled") {
		t.Errorf("cancelled call = %+v", res)
	}
	t.Logf("cancelled call returned in %v", time.Since(start))
	// The server's handler saw the cancellation: the client sent
	// notifications/cancelled for the request.
	waitFile(t, filepath.Join(f.markers, "cancelled-c1"), 10*time.Second)
	t.Logf("the server saw the cancellation %v after it", time.Since(start))
	// The server is still usable.
	if res := f.call(t, context.Background(), "mcp__t__echo", `{"text":"after"}`); res.Text() != "echo: after" {
		t.Errorf("after cancel: %+v", res)
	}
}

func TestTimeoutCancelsTheCall(t *testing.T) {
	f := newFixture(t, func(s *Server, _ *Options) { s.Timeout = 300 * time.Millisecond }).start()
	res := f.call(t, context.Background(), "mcp__t__slow", `{"ms":600000,"id":"t1"}`)
	if !res.IsError || !strings.Contains(res.Text(), `mcp server "t": call slow got no answer within 300ms (timeout_ms)`) {
		t.Errorf("timed out call = %+v", res)
	}
	waitFile(t, filepath.Join(f.markers, "cancelled-t1"), 10*time.Second)
}

func TestCrashIsAnErrorNotACrash(t *testing.T) {
	f := newFixture(t, nil)
	f.m.Start(context.Background())
	<-f.changes // the first listing
	gen := f.m.Generation()
	res := f.call(t, context.Background(), "mcp__t__crash", `{}`)
	if !res.IsError || !strings.Contains(res.Text(), `mcp server "t"`) || !strings.Contains(res.Text(), "crashing on demand") {
		t.Errorf("crash = %+v", res)
	}
	<-f.changes
	if f.m.Generation() == gen {
		t.Error("generation unchanged after the server died")
	}
	st := f.m.Status()[0]
	if st.State != StateFailed || !strings.Contains(st.Error, "exited") || !strings.Contains(st.Error, "about to crash | mcp-testserver: crashing on demand") {
		t.Errorf("status = %+v", st)
	}
	if defs := f.m.Definitions(); len(defs) != 0 {
		t.Errorf("a dead server's tools are still there: %v", names(defs))
	}
	if !strings.Contains(f.warned(), "pi goes on without its tools") {
		t.Errorf("warnings = %q", f.warned())
	}
	// A call through a definition taken before it died fails with the same
	// error, without restarting it.
	c := f.m.conns[0]
	if _, err := f.m.call(context.Background(), c, "echo", json.RawMessage(`{"text":"x"}`)); err == nil || !strings.Contains(err.Error(), "crashing on demand") {
		t.Errorf("call after death: %v", err)
	}
}

func TestFailedStartNamesServerAndStderr(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Server, *Options)
		want []string
	}{
		{"exits at start", func(s *Server, _ *Options) { s.Env[testserver.EnvFailStart] = "fatal: no API token configured" },
			[]string{`mcp server "t" (`, "failed to start", "stderr: fatal: no API token configured"}},
		{"no such program", func(s *Server, _ *Options) { s.Command = []string{"/nonexistent/mcp-server", "--x"} },
			[]string{`mcp server "t" (/nonexistent/mcp-server --x) failed to start`, "no such file"}},
		{"not an MCP server", func(s *Server, _ *Options) {
			s.Command = []string{"sh", "-c", "echo not json; echo oops >&2; sleep 600"}
		},
			[]string{`mcp server "t" (sh -c`, "failed to start", "stderr: oops"}},
		{"missing variable", func(s *Server, _ *Options) { s.Env["TOKEN"] = "${PI_MCP_TEST_UNSET_VAR}" },
			[]string{`failed to start: env TOKEN: ${PI_MCP_TEST_UNSET_VAR} is not set`}},
		// A flood on stderr without a newline is read and dropped: the tail
		// stays small and still ends with the last words.
		{"stderr flood", func(s *Server, _ *Options) {
			s.Command = []string{"sh", "-c", `head -c 3000000 /dev/zero | tr '\0' x >&2; echo >&2; echo last words >&2; exit 1`}
		}, []string{"failed to start", "| last words"}},
		// A line on stdout over the SDK's 16 MB frame limit ends the
		// connection instead of growing pi's memory.
		{"giant frame", func(s *Server, _ *Options) {
			s.Command = []string{"sh", "-c", `head -c 20000000 /dev/zero | tr '\0' x; echo; sleep 600`}
		}, []string{"failed to start"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, func(s *Server, o *Options) { o.StartTimeout = 5 * time.Second; c.edit(s, o) })
			start := time.Now()
			f.m.Start(context.Background())
			st := f.m.Status()[0]
			for _, w := range c.want {
				if !strings.Contains(st.Error, w) {
					t.Errorf("error %q lacks %q", st.Error, w)
				}
			}
			if len(st.Error) > 4096 {
				t.Errorf("error of %d bytes", len(st.Error))
			}
			if st.State != StateFailed || len(f.m.Definitions()) != 0 || !strings.Contains(f.warned(), st.Error) {
				t.Errorf("status = %+v, warnings %q", st, f.warned())
			}
			t.Logf("failed in %v: %s", time.Since(start), st.Error)
		})
	}
}

func TestCacheRegistersToolsWithoutStarting(t *testing.T) {
	cache, cwd := t.TempDir(), t.TempDir()
	withCache := func(s *Server, o *Options) { o.CacheDir, o.Cwd = cache, cwd }
	f := newFixture(t, withCache)
	f.m.Start(context.Background())
	want := names(f.m.Definitions())
	f.m.Close()

	g := newFixture(t, func(s *Server, o *Options) {
		withCache(s, o)
		s.Env = f.m.conns[0].cfg.Env // the same configuration, so the same key
	})
	st := g.m.Status()[0]
	if st.State != StateIdle || !st.FromCache || !slices.Equal(st.Tools, want) {
		t.Fatalf("from the cache: %+v\nwant tools %v", st, want)
	}
	// A cached tool starts its server on first use.
	if res := g.call(t, context.Background(), "mcp__t__echo", `{"text":"lazy"}`); res.Text() != "echo: lazy" {
		t.Errorf("lazy call = %+v", res)
	}
	if st := g.m.Status()[0]; st.State != StateRunning || st.FromCache {
		t.Errorf("after the call: %+v", st)
	}

	// Another configuration (a different environment) is another key.
	h := newFixture(t, func(s *Server, o *Options) { withCache(s, o); s.Env["OTHER"] = "1" })
	if st := h.m.Status()[0]; st.FromCache || len(st.Tools) != 0 {
		t.Errorf("a changed configuration used the old cache: %+v", st)
	}
	// Prepare waits for a server without a cache...
	h.m.Prepare(context.Background())
	if st := h.m.Status()[0]; st.State != StateRunning {
		t.Errorf("Prepare without a cache: %+v", st)
	}
	// ...and does not wait for one with a cache: its tools are there at once
	// and the refresh runs in the background.
	k := newFixture(t, func(s *Server, o *Options) { withCache(s, o); s.Env = h.m.conns[0].cfg.Env })
	k.m.Prepare(context.Background())
	if st := k.m.Status()[0]; !slices.Equal(st.Tools, want) {
		t.Errorf("Prepare with a cache: %+v", st)
	}
	<-k.changes
	if st := k.m.Status()[0]; st.State != StateRunning || st.FromCache {
		t.Errorf("after the background refresh: %+v", st)
	}
	// A corrupt cache file is a warning and a fresh listing.
	matches, _ := filepath.Glob(filepath.Join(cache, "mcp", "t-*.json"))
	if len(matches) != 2 {
		t.Fatalf("cache files: %v", matches)
	}
	for _, p := range matches {
		os.WriteFile(p, []byte("{not json"), 0o600)
	}
	l := newFixture(t, func(s *Server, o *Options) { withCache(s, o); s.Env = f.m.conns[0].cfg.Env })
	if st := l.m.Status()[0]; st.FromCache || !strings.Contains(l.logged(), "cache not read") {
		t.Errorf("corrupt cache: %+v\n%s", st, l.logged())
	}
}

func TestListChangedRefreshesTheTools(t *testing.T) {
	f := newFixture(t, nil)
	f.m.Start(context.Background())
	<-f.changes
	gen := f.m.Generation()
	if res := f.call(t, context.Background(), "mcp__t__add_tool", `{"name":"late"}`); res.Text() != "added late" {
		t.Fatalf("add_tool = %+v", res)
	}
	select {
	case <-f.changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no change after tools/list_changed")
	}
	if f.m.Generation() == gen || !slices.Contains(names(f.m.Definitions()), "mcp__t__late") {
		t.Fatalf("tools after list_changed: %v", names(f.m.Definitions()))
	}
	if res := f.call(t, context.Background(), "mcp__t__late", `{}`); res.Text() != "added" {
		t.Errorf("late = %+v", res)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCloseEndsTheServerAndItsProcessGroup(t *testing.T) {
	f := newFixture(t, nil).start()
	res := f.call(t, context.Background(), "mcp__t__spawn", `{}`)
	child, err := strconv.Atoi(res.Text())
	if err != nil {
		t.Fatalf("spawn = %+v", res)
	}
	c := f.m.conns[0]
	c.mu.Lock()
	server := c.proc.pid
	c.mu.Unlock()
	if !alive(child) || !alive(server) {
		t.Fatal("child or server not running before Close")
	}
	start := time.Now()
	f.m.Close()
	t.Logf("Close took %v", time.Since(start))
	waitGone(t, "the server", server)
	waitGone(t, "the server's child", child)
	if st := f.m.Status()[0]; st.State != StateClosed {
		t.Errorf("state after Close = %s", st.State)
	}
	// A call after Close fails instead of starting the server again.
	if _, err := f.m.call(context.Background(), c, "echo", json.RawMessage(`{"text":"x"}`)); err == nil {
		t.Error("a call after Close succeeded")
	}
}

func TestCloseWhileStarting(t *testing.T) {
	f := newFixture(t, func(s *Server, _ *Options) {
		// The pid file appears whole (renamed in), or the test could read
		// it empty.
		s.Command = []string{"sh", "-c", `echo $$ > "$MCPTEST_MARKER_DIR/pid.tmp" && mv "$MCPTEST_MARKER_DIR/pid.tmp" "$MCPTEST_MARKER_DIR/pid"; exec sleep 600`}
	})
	done := f.m.conns[0].start()
	pid, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(f.markers, "pid"), 10*time.Second)))
	f.m.Close()
	<-done
	waitGone(t, "a server that never answered", pid)
}

func TestAllowlists(t *testing.T) {
	f := newFixture(t, func(s *Server, _ *Options) {
		s.Tools = []string{"echo", "fail", "nope"}
		s.DisabledTools = []string{"fail"}
	})
	f.m.Start(context.Background())
	if got := names(f.m.Definitions()); !slices.Equal(got, []string{"mcp__t__echo"}) {
		t.Errorf("allowed = %v", got)
	}
	if st := f.m.Status()[0]; !slices.Contains(st.Problems, `tools lists "nope", which the server does not have`) {
		t.Errorf("problems = %q", st.Problems)
	}
}

func TestSchemaThatLeavesTheDocumentIsRefused(t *testing.T) {
	f := newFixture(t, func(s *Server, _ *Options) { s.Env[testserver.EnvHostileSchema] = "1" })
	f.m.Start(context.Background())
	got := names(f.m.Definitions())
	if slices.Contains(got, "mcp__t__hostile") || !slices.Contains(got, "mcp__t__echo") {
		t.Errorf("tools = %v", got)
	}
	st := f.m.Status()[0]
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], `tool "hostile" left out`) || !strings.Contains(st.Problems[0], "file:///dev/zero") {
		t.Errorf("problems = %q", st.Problems)
	}
	for _, bad := range []string{
		`{"type":"object","properties":{"a":{"$ref":"http://example.com/s.json"}}}`,
		`{"type":"object","$defs":{"x":{"$dynamicRef":"file:///etc/passwd#x"}}}`,
		`{"type":"object","allOf":[{"$ref":"/etc/passwd"}]}`,
		`{"$schema":"file:///dev/zero","type":"object"}`,
		`{"type":"string"}`,
		`[]`,
		`{"type":"object","properties":{"a":{"$ref":5}}}`,
	} {
		if _, err := inputSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	for _, good := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"properties":{}}`,
	} {
		if _, err := inputSchema(json.RawMessage(good)); err != nil {
			t.Errorf("refused %s: %v", good, err)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("PI_MCP_TEST_KEY", "sk-the-model-key-0123456789")
	t.Setenv("PI_MCP_TEST_OTHER", "visible")
	t.Setenv("PI_MCP_TEST_SRC", "from the environment")
	f := newFixture(t, func(s *Server, o *Options) {
		o.HideEnv = []string{"PI_MCP_TEST_KEY"}
		s.Env["EXPANDED"] = "x ${PI_MCP_TEST_SRC} y"
	}).start()
	for name, want := range map[string]string{
		"PI_MCP_TEST_KEY": "(unset)", "PI_MCP_TEST_OTHER": "visible", "EXPANDED": "x from the environment y",
	} {
		if res := f.call(t, context.Background(), "mcp__t__env", `{"name":"`+name+`"}`); res.Text() != want {
			t.Errorf("%s = %q, want %q", name, res.Text(), want)
		}
	}
	// A server's env may hand it a hidden variable on purpose.
	g := newFixture(t, func(s *Server, o *Options) {
		o.HideEnv = []string{"PI_MCP_TEST_KEY"}
		s.Env["PI_MCP_TEST_KEY"] = "${PI_MCP_TEST_KEY}"
	}).start()
	if res := g.call(t, context.Background(), "mcp__t__env", `{"name":"PI_MCP_TEST_KEY"}`); res.Text() != "sk-the-model-key-0123456789" {
		t.Errorf("explicit env = %q", res.Text())
	}
}

func TestStderrIsLogged(t *testing.T) {
	f := newFixture(t, func(s *Server, _ *Options) { s.Env[testserver.EnvStderr] = "hello from stderr;second line" })
	f.m.Start(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(f.logged(), "second line") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if logs := f.logged(); !strings.Contains(logs, `line="hello from stderr"`) || !strings.Contains(logs, "server=t") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestHTTPServerWithHeaders(t *testing.T) {
	t.Setenv("PI_MCP_TEST_TOKEN", "tok-123")
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testserver.New() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "missing or wrong token", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the managers' Close (cleanups run last first)
	f := newFixture(t, func(s *Server, _ *Options) {
		s.Command, s.Env = nil, nil
		s.URL = srv.URL + "/mcp?key=secret"
		s.Headers = map[string]string{"Authorization": "Bearer ${PI_MCP_TEST_TOKEN}"}
	}).start()
	if res := f.call(t, context.Background(), "mcp__t__echo", `{"text":"over http"}`); res.Text() != "echo: over http" {
		t.Fatalf("echo over http = %+v", res)
	}
	st := f.m.Status()[0]
	if st.Transport != "http" || st.Target != srv.URL+"/mcp" || strings.Contains(st.Target, "secret") {
		t.Errorf("status = %+v", st)
	}
	g := newFixture(t, func(s *Server, o *Options) {
		s.Command, s.Env = nil, nil
		s.URL = srv.URL + "/mcp"
		o.StartTimeout = 5 * time.Second
	})
	g.m.Start(context.Background())
	if st := g.m.Status()[0]; st.State != StateFailed || !strings.Contains(st.Error, `mcp server "t" (`+srv.URL+`/mcp) failed to start`) {
		t.Errorf("without the header: %+v", st)
	}
}

// TestHeadersStayWithTheirHost: a server that redirects elsewhere does not
// get its headers (a bearer token) sent on to the other host.
func TestHeadersStayWithTheirHost(t *testing.T) {
	t.Setenv("PI_MCP_TEST_TOKEN", "tok-456")
	var mu sync.Mutex
	var sawA, sawB []string
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testserver.New() }, nil)
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawB = append(sawB, r.Header.Get("Authorization"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(b.Close)
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawA = append(sawA, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Redirect(w, r, b.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(a.Close)
	f := newFixture(t, func(s *Server, o *Options) {
		s.Command, s.Env = nil, nil
		s.URL = a.URL + "/mcp"
		s.Headers = map[string]string{"Authorization": "Bearer ${PI_MCP_TEST_TOKEN}"}
		o.StartTimeout = 10 * time.Second
	})
	f.m.Start(context.Background())
	f.m.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(sawA) == 0 || sawA[0] != "Bearer tok-456" {
		t.Errorf("the configured host got %q", sawA)
	}
	if len(sawB) == 0 {
		t.Fatal("the redirect was not followed: the test proves nothing")
	}
	for _, h := range sawB {
		if h != "" {
			t.Errorf("the other host got Authorization %q", h)
		}
	}
}

func TestNewRefusesBadServers(t *testing.T) {
	for _, c := range []struct {
		servers []Server
		want    string
	}{
		{[]Server{{Command: []string{"x"}}}, "empty name"},
		{[]Server{{Name: "a"}}, "want a command or a url"},
		{[]Server{{Name: "a", Command: []string{"x"}, URL: "http://h"}}, "want a command or a url"},
		{[]Server{{Name: "a", Command: []string{"x"}}, {Name: "a", URL: "http://h"}}, "configured twice"},
		{[]Server{{Name: "a__b", Command: []string{"x"}}}, "not a server name"},
		{[]Server{{Name: "a_", Command: []string{"x"}}}, "not a server name"},
		{[]Server{{Name: "A", Command: []string{"x"}}}, "not a server name"},
	} {
		if _, err := New(Options{}, c.servers); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.servers, err)
		}
	}
}

package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/mcpserver"
	"github.com/pi-go/pi/internal/testkit/plugin"
	testproject "github.com/pi-go/pi/internal/testkit/project"
	"github.com/pi-go/pi/runtime/tool"
)

// mcpServer is a [[mcp]] block running the test server as name, with its
// markers in markers.
var mcpServer = testproject.MCPServer

// goodExtension is a [[extensions]] block loading extensions/testdata/good.wat, whose
// tool_call hook blocks calls that mention BLOCKME and whose tool_result
// hook replaces results that mention PATCHME.
func goodExtension(t *testing.T) string {
	wasm := plugin.BuildWAT(t, "extensions/testdata/good.wat")
	return testproject.Extension(t, "good", wasm)
}

type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, s)
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.list, "\n")
}

func openMCP(t *testing.T, dir, home string, o Options) (*Runtime, *warnings) {
	t.Helper()
	w := &warnings{}
	o.Cwd, o.PIHome, o.OnWarning = dir, home, w.add
	rt, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt, w
}

func TestMCPToolsAreRegisteredLikeExtensionTools(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), mcpServer(t, "t", t.TempDir(), ""))
	rt, _ := openMCP(t, dir, home, Options{})
	active := rt.Registry().ActiveNames()
	if !slices.Equal(active[:4], []string{"read", "bash", "edit", "write"}) || !slices.Contains(active, "mcp__t__echo") || !slices.Contains(active, "mcp__t__slow") {
		t.Errorf("active = %v", active)
	}
	def, _ := rt.Registry().Lookup("mcp__t__echo")
	if def.Source.Kind != tool.SourceMCP || def.Source.Name != "t" || def.Source.String() != "mcp server t ("+mcpserver.Server(t)+")" {
		t.Errorf("source = %+v", def.Source)
	}
	res, err := rt.CallTool(context.Background(), "mcp__t__echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	if err != nil || res.IsError || res.Text() != "echo: hi" {
		t.Errorf("echo = %+v, %v", res, err)
	}
	if st := rt.MCPServers(); len(st) != 1 || st[0].State != "running" {
		t.Errorf("servers = %+v", st)
	}
	// --tools and [tools] active name MCP tools.
	rt2, _ := openMCP(t, dir, home, Options{Tools: []string{"read", "mcp__t__echo"}})
	if got := rt2.Registry().ActiveNames(); !slices.Equal(got, []string{"read", "mcp__t__echo"}) {
		t.Errorf("--tools: %v", got)
	}
	write(t, filepath.Join(dir, "pi.toml"), "[tools]\nactive = [\"mcp__t__fail\", \"ls\"]\n")
	rt3, _ := openMCP(t, dir, home, Options{})
	if got := rt3.Registry().ActiveNames(); !slices.Equal(got, []string{"mcp__t__fail", "ls"}) {
		t.Errorf("[tools] active: %v", got)
	}
	// A name no server lists is a warning (the server may list it later);
	// any other unknown name is still an error.
	rt4, w := openMCP(t, dir, home, Options{Tools: []string{"read", "mcp__t__nope"}})
	if got := rt4.Registry().ActiveNames(); !slices.Equal(got, []string{"read"}) || !strings.Contains(w.String(), `active tool "mcp__t__nope" is not there`) {
		t.Errorf("unknown MCP name: %v, %q", got, w)
	}
	rt5, w := openMCP(t, dir, home, Options{Tools: []string{"mcp__other__x", "ls"}})
	if got := rt5.Registry().ActiveNames(); !slices.Equal(got, []string{"ls"}) || !strings.Contains(w.String(), `active tool "mcp__other__x" (--tools) is not loaded`) {
		t.Errorf("a name of no configured server: %v, %q", got, w)
	}
}

// TestMCPHooksAndPermissionsApply: an MCP tool call goes through the
// extensions' tool_call hooks (a WASM hook blocks it before the server sees
// it), their tool_result hooks (a WASM hook rewrites its result), and the
// permission check (a rule on mcp__* denies it). The rules package is
// being built in parallel, so the rule here is a PermissionFunc on the
// runtime's hooks: the seam the rules plug into.
func TestMCPHooksAndPermissionsApply(t *testing.T) {
	dir, home := project(t)
	markers := t.TempDir()
	write(t, filepath.Join(home, "pi.toml"), goodExtension(t)+"\n"+mcpServer(t, "t", markers, ""))
	rt, _ := openMCP(t, dir, home, Options{})
	ctx := context.Background()

	res, _ := rt.CallTool(ctx, "mcp__t__slow", "c1", json.RawMessage(`{"ms":1,"id":"BLOCKME"}`), nil)
	if !res.IsError || res.Text() != "blocked by good: BLOCKME" {
		t.Errorf("blocked call = %+v", res)
	}
	// The server never saw it; the same call without the word runs.
	if _, err := os.Stat(filepath.Join(markers, "started-BLOCKME")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a blocked call reached the server: %v", err)
	}
	res, _ = rt.CallTool(ctx, "mcp__t__slow", "c2", json.RawMessage(`{"ms":1,"id":"ok"}`), nil)
	if res.IsError || res.Text() != "slept" {
		t.Errorf("allowed call = %+v", res)
	}
	res, _ = rt.CallTool(ctx, "mcp__t__echo", "c3", json.RawMessage(`{"text":"PATCHME"}`), nil)
	if res.IsError || res.Text() != "patched by good" {
		t.Errorf("rewritten result = %+v", res)
	}

	var asked []string
	rt.Hooks().Permission = func(_ context.Context, c tool.CallInfo) (tool.PermissionDecision, error) {
		asked = append(asked, c.Name)
		if ok, _ := path.Match("mcp__*", c.Name); ok {
			return tool.PermissionDecision{Verdict: tool.Deny, Rule: "pi.toml:3 deny mcp__*", Reason: "no MCP tools here"}, nil
		}
		return tool.PermissionDecision{Verdict: tool.Allow}, nil
	}
	res, _ = rt.CallTool(ctx, "mcp__t__slow", "c4", json.RawMessage(`{"ms":1,"id":"denied"}`), nil)
	if !res.IsError || res.Text() != "Blocked by permissions: pi.toml:3 deny mcp__* (no MCP tools here)" {
		t.Errorf("denied call = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(markers, "started-denied")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a denied call reached the server: %v", err)
	}
	write(t, filepath.Join(dir, "a.txt"), "x")
	if res, _ := rt.CallTool(ctx, "ls", "c5", json.RawMessage(`{}`), nil); res.IsError {
		t.Errorf("ls under the mcp__* rule = %+v", res)
	}
	if !slices.Equal(asked, []string{"mcp__t__slow", "ls"}) {
		t.Errorf("permission asked for %v", asked)
	}
	// An ask needs a person: without Approve the call is blocked.
	rt.Hooks().Permission = func(context.Context, tool.CallInfo) (tool.PermissionDecision, error) {
		return tool.PermissionDecision{Verdict: tool.Ask, Rule: "ask mcp__*"}, nil
	}
	res, _ = rt.CallTool(ctx, "mcp__t__echo", "c6", json.RawMessage(`{"text":"x"}`), nil)
	if !res.IsError || !strings.HasPrefix(res.Text(), "needs approval: ask mcp__*") {
		t.Errorf("asked call = %+v", res)
	}
}

func TestMCPServerThatFailsIsAWarning(t *testing.T) {
	dir, home := project(t)
	write(t, filepath.Join(home, "pi.toml"), mcpServer(t, "bad", t.TempDir(), `, MCPTEST_FAIL_START = "fatal: the token is missing"`)+"\n"+mcpServer(t, "good", t.TempDir(), ""))
	rt, w := openMCP(t, dir, home, Options{})
	if !strings.Contains(w.String(), `mcp server "bad" (`) || !strings.Contains(w.String(), "stderr: fatal: the token is missing; pi goes on without its tools") {
		t.Errorf("warnings = %q", w)
	}
	names := rt.ToolNames()
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__bad__") }) || !slices.Contains(names, "mcp__good__echo") || !slices.Contains(names, "read") {
		t.Errorf("tools = %v", names)
	}
	_, err := rt.CallTool(context.Background(), "mcp__bad__echo", "c1", json.RawMessage(`{}`), nil)
	if !errors.Is(err, ErrUnknownTool) {
		t.Errorf("a failed server's tool: %v", err)
	}
}

func TestMCPUntrustedProjectStartsNothing(t *testing.T) {
	dir, home := project(t)
	markers := t.TempDir()
	started := filepath.Join(markers, "started")
	write(t, filepath.Join(dir, "pi.toml"), fmt.Sprintf("[[mcp]]\nname = \"p\"\ncommand = [\"sh\", \"-c\", \"touch %s; exec %s\"]\n", started, mcpserver.Server(t)))
	rt, w := openMCP(t, dir, home, Options{MCPStart: MCPWait})
	if !strings.Contains(w.String(), `were ignored: MCP server "p".`) || len(rt.MCPServers()) != 0 {
		t.Errorf("warnings = %q, servers %+v", w, rt.MCPServers())
	}
	if _, err := os.Stat(started); !errors.Is(err, os.ErrNotExist) {
		t.Error("an untrusted project's MCP server was started")
	}
	if _, err := rt.CallTool(context.Background(), "mcp__p__echo", "c1", json.RawMessage(`{}`), nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("untrusted tool call: %v", err)
	}
	// Trusted for the run, it starts.
	rt2, _ := openMCP(t, dir, home, Options{MCPStart: MCPWait, Trust: true})
	if st := rt2.MCPServers(); len(st) != 1 || st[0].State != "running" {
		t.Errorf("trusted: %+v", st)
	}
}

func TestMCPLazyStartsOnFirstCall(t *testing.T) {
	dir, home := project(t)
	markers := t.TempDir()
	write(t, filepath.Join(home, "pi.toml"), mcpServer(t, "t", markers, ""))
	rt, _ := openMCP(t, dir, home, Options{MCPStart: MCPLazy})
	if st := rt.MCPServers(); st[0].State != "not started" || slices.Contains(rt.ToolNames(), "mcp__t__echo") {
		t.Fatalf("lazy without a cache: %+v, %v", st, rt.ToolNames())
	}
	res, err := rt.CallTool(context.Background(), "mcp__t__echo", "c1", json.RawMessage(`{"text":"lazy"}`), nil)
	if err != nil || res.Text() != "echo: lazy" {
		t.Fatalf("first call = %+v, %v", res, err)
	}
	rt.Close()
	// Now the list is cached: the next lazy runtime has the tools without
	// starting the server.
	rt2, _ := openMCP(t, dir, home, Options{MCPStart: MCPLazy})
	if st := rt2.MCPServers(); st[0].State != "not started" || !st[0].FromCache || !slices.Contains(rt2.ToolNames(), "mcp__t__echo") {
		t.Errorf("lazy with a cache: %+v", st)
	}
}

func TestMCPResultsAreRedacted(t *testing.T) {
	dir, home := project(t)
	key := "sk-mcp-redact-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", key)
	write(t, filepath.Join(home, "pi.toml"), mcpServer(t, "t", t.TempDir(), ""))
	rt, _ := openMCP(t, dir, home, Options{})
	res, _ := rt.CallTool(context.Background(), "mcp__t__echo", "c1", json.RawMessage(`{"text":"`+key+`"}`), nil)
	if strings.Contains(res.Text(), key) || res.Text() != "echo: [REDACTED]" {
		t.Errorf("echo of the key = %q", res.Text())
	}
	// The server does not inherit the key.
	res, _ = rt.CallTool(context.Background(), "mcp__t__env", "c2", json.RawMessage(`{"name":"OPENAI_API_KEY"}`), nil)
	if res.Text() != "(unset)" {
		t.Errorf("the server's OPENAI_API_KEY = %q", res.Text())
	}
}

// TestMCPCloseEndsServersBeforeTheBashSweep: Close ends the MCP servers
// properly before bash's sweep of escaped processes runs (which would take
// them for orphans and SIGTERM them: a spurious "exited" warning), and
// nothing of theirs is left.
func TestMCPCloseEndsServersBeforeTheBashSweep(t *testing.T) {
	dir, home := project(t)
	markers := t.TempDir()
	write(t, filepath.Join(home, "pi.toml"), mcpServer(t, "t", markers, ""))
	rt, w := openMCP(t, dir, home, Options{})
	res, _ := rt.CallTool(context.Background(), "mcp__t__spawn", "c1", json.RawMessage(`{}`), nil)
	child := res.Text()
	if res.IsError {
		t.Fatalf("spawn = %+v", res)
	}
	// A bash call makes bash's process tracking live, as in a real run.
	if res, _ := rt.CallTool(context.Background(), "bash", "c2", json.RawMessage(`{"command":"true"}`), nil); res.IsError {
		t.Fatalf("bash = %+v", res)
	}
	rt.Close()
	if strings.Contains(w.String(), "exited") {
		t.Errorf("closing warned: %q", w)
	}
	for _, pid := range []string{child, strings.TrimSpace(string(mustRead(t, filepath.Join(markers, "server-pid"))))} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil || strings.Contains(string(b), ") Z ") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pid %s still runs after Close", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

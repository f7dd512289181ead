//go:build linux

package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/sandbox"
	"github.com/pi-go/pi/internal/sandbox/proxy"
	"github.com/pi-go/pi/runtime/tool"
)

// TestBashSandbox runs the bash tool under workspace-write (this test
// binary is the helper; the call still runs in its session and cgroup):
// a write in the project works, writes outside and to pi.toml are refused
// and named in the result, a pi.toml the command creates is removed; the
// same calls with the sandbox off are the control.
func TestBashSandbox(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, mode := range []string{sandbox.ModeOff, sandbox.ModeWorkspaceWrite} {
		root := t.TempDir()
		project, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
		for _, d := range []string{project + "/.git", outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p := &sandbox.Policy{Mode: mode, Network: sandbox.NetworkOn, Writable: []string{project},
			Protected: []string{project + "/.git", project + "/.pi", project + "/pi.toml"}}
		script := `echo in > inside.txt; echo out > ` + outside + `/x; echo hook > .git/config; echo '[tools]' > pi.toml; echo done`
		r := bashCall(t, context.Background(), BashOptions{Sandbox: func() *sandbox.Policy { return p }}, project, map[string]any{"command": script}, nil)
		text := resultText(t, r)
		if _, err := os.Stat(project + "/inside.txt"); err != nil {
			t.Fatalf("%s: the project is not writable: %s", mode, text)
		}
		_, errOut := os.Stat(outside + "/x")
		_, errCfg := os.Stat(project + "/.git/config")
		_, errToml := os.Stat(project + "/pi.toml")
		if mode == sandbox.ModeOff {
			if errOut != nil || errCfg != nil || errToml != nil || strings.Contains(text, "Sandbox refused") {
				t.Fatalf("control: the writes failed with the sandbox off: %s", text)
			}
			continue
		}
		if errOut == nil || errCfg == nil || errToml == nil {
			t.Fatalf("sandbox let a write through (outside %v, .git/config %v, pi.toml %v): %s", errOut, errCfg, errToml, text)
		}
		for _, want := range []string{
			"Sandbox refused: write outside the workspace: " + outside + "/x (sandbox workspace-write)",
			"Sandbox refused: write to a protected path: " + project + "/.git/config",
			"Sandbox refused: creating " + project + "/pi.toml (pi's configuration is protected); moved to pi.toml.sandbox-refused-",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("result lacks %q:\n%s", want, text)
			}
		}
	}
}

// TestRunCommandSandbox: a command a person types (RunCommand) runs
// unsandboxed by default (the control: it writes outside the workspace)
// and under the bash tool's sandbox with SandboxUserCommands, the refusal
// named in its output.
func TestRunCommandSandbox(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	for _, user := range []bool{false, true} {
		root := t.TempDir()
		project, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
		for _, d := range []string{project, outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		p := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{project}}
		opts := BashOptions{Sandbox: func() *sandbox.Policy { return p }, SandboxUserCommands: user}
		res, err := RunCommand(context.Background(), opts, project, `echo in > in.txt; echo out > `+outside+`/x; echo done`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(project + "/in.txt"); err != nil || !strings.Contains(res.Output, "done") {
			t.Fatalf("user_commands=%v: the command did not run in the project: %s", user, res.Output)
		}
		_, errOut := os.Stat(outside + "/x")
		if !user {
			if errOut != nil {
				t.Fatalf("control: the person's command was sandboxed without user_commands: %s", res.Output)
			}
			continue
		}
		if errOut == nil {
			t.Fatalf("user_commands: the person's command wrote outside the workspace: %s", res.Output)
		}
		if want := "Sandbox refused: write outside the workspace: " + outside + "/x (sandbox workspace-write)"; !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
}

// TestBashUnsandboxedAndRerun: a command Unsandboxed names runs without
// the sandbox (its write outside lands; another command's does not); a
// refused call is re-run outside once when AskRerun says yes (the result
// says so) and stays refused when it says no; AskRerun is not asked when
// nothing was refused.
func TestBashUnsandboxedAndRerun(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	root := t.TempDir()
	project, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
	for _, d := range []string{project, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{project}}
	write := func(name string) string { return `echo x > ` + outside + `/` + name }
	opts := BashOptions{Sandbox: func() *sandbox.Policy { return p },
		Unsandboxed: func(command string) bool { return command == write("free") }}
	for name, wantWritten := range map[string]bool{"free": true, "boxed": false} {
		r := bashCall(t, context.Background(), opts, project, map[string]any{"command": write(name)}, nil)
		_, err := os.Stat(outside + "/" + name)
		if (err == nil) != wantWritten {
			t.Errorf("%s: written %v, want %v: %s", name, err == nil, wantWritten, resultText(t, r))
		}
	}

	for _, yes := range []bool{false, true} {
		name := "rerun-" + map[bool]string{false: "no", true: "yes"}[yes]
		var asked []string
		opts := BashOptions{Sandbox: func() *sandbox.Policy { return p },
			AskRerun: func(_ context.Context, command string, refused []string) bool {
				asked = append(asked, command+" | "+strings.Join(refused, "; "))
				return yes
			}}
		r := bashCall(t, context.Background(), opts, project, map[string]any{"command": write(name)}, nil)
		text := resultText(t, r)
		_, err := os.Stat(outside + "/" + name)
		if len(asked) != 1 || !strings.Contains(asked[0], "Sandbox refused: write outside the workspace: "+outside+"/"+name) {
			t.Fatalf("%s: asked %q", name, asked)
		}
		if yes && (err != nil || !strings.HasPrefix(text, RerunNote)) {
			t.Errorf("approved re-run: written %v: %s", err == nil, text)
		}
		if !yes && (err == nil || !strings.Contains(text, "Sandbox refused:")) {
			t.Errorf("declined re-run: written %v: %s", err == nil, text)
		}
		asked = nil
		bashCall(t, context.Background(), opts, project, map[string]any{"command": "echo fine > ok"}, nil)
		if len(asked) != 0 {
			t.Errorf("asked about a call nothing was refused in: %q", asked)
		}
	}
}

// TestBashNetworkAllowTimeout: under network "allow" the helper stays the
// command's parent (it forwards to the proxy); a timeout still ends the
// call promptly with the usual status, and the background job the command
// left is killed with it.
func TestBashNetworkAllowTimeout(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	px, err := proxy.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	dir := t.TempDir()
	p := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkAllow, Writable: []string{dir}, Proxy: px.Socket}
	start := time.Now()
	r := bashCall(t, context.Background(), BashOptions{Sandbox: func() *sandbox.Policy { return p }}, dir,
		map[string]any{"command": `sleep 60 & echo "bg=$! proxy=$HTTPS_PROXY"; sleep 30`, "timeout": 1}, nil)
	text := resultText(t, r)
	if !strings.Contains(text, "proxy=http://127.0.0.1:") || !strings.Contains(text, "Command timed out after 1 seconds") {
		t.Fatalf("result: %s", text)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the timed-out call took %v", d)
	}
	i := strings.Index(text, "bg=")
	bg, err := strconv.Atoi(strings.Fields(text[i+3:])[0])
	if err != nil {
		t.Fatalf("no background pid in %s", text)
	}
	// Poll for the state the kill leads to (gone, or a zombie not yet
	// reaped), bounded.
	for deadline := time.Now().Add(10 * time.Second); ; {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(bg) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background job of a timed-out call survived it: %s", stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkBashTrueSandbox is BenchmarkBashTrue with and without the
// default sandbox, interleaved call by call; it reports the median of
// each and their ratio.
//
//	go test -run '^$' -bench BashTrueSandbox -benchtime 200x ./tools/builtin/
//
// PI_BENCH_NETWORK=off measures the sandbox with the network off (a fork
// server per call, started ahead).
func BenchmarkBashTrueSandbox(b *testing.B) {
	if s := sandbox.Probe(); s.Missing != "" {
		b.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	dir := b.TempDir()
	box := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{dir, "/tmp"},
		Protected: []string{dir + "/.git", dir + "/.pi", dir + "/pi.toml"}}
	if os.Getenv("PI_BENCH_NETWORK") == sandbox.NetworkOff {
		box.Network = sandbox.NetworkOff
	}
	// Off, through the fork server (the default), and in the per-call
	// helper, interleaved.
	defs := []tool.ToolDefinition{bashDefinition(BashOptions{}), bashDefinition(BashOptions{Sandbox: func() *sandbox.Policy { return box }}),
		bashDefinition(BashOptions{Sandbox: func() *sandbox.Policy { return box }, sandboxPerCall: true})}
	args := json.RawMessage(`{"command":"true"}`)
	times := [3][]time.Duration{}
	for i := 0; i < b.N; i++ {
		for k, def := range defs {
			start := time.Now()
			r, err := def.Execute(context.Background(), tool.NewCall("b", args, nil), tool.Context{Cwd: dir})
			times[k] = append(times[k], time.Since(start))
			if err != nil || r.IsError {
				b.Fatalf("bash: %v %s", err, r.Text())
			}
		}
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	off, on, perCall := median(times[0]), median(times[1]), median(times[2])
	b.ReportMetric(float64(off.Microseconds())/1000, "ms-off")
	b.ReportMetric(float64(on.Microseconds())/1000, "ms-sandbox")
	b.ReportMetric(float64(on)/float64(off), "x-off")
	b.ReportMetric(float64(perCall.Microseconds())/1000, "ms-percall")
	b.ReportMetric(float64(perCall)/float64(off), "x-percall")
}

// TestBashSandboxServerProcessControl: a command started through the
// sandbox's fork server is pi's own child, born in its call's cgroup
// (where cgroups can be used) while the server is not left in it, and a
// timeout ends it and the job it left in a session of its own, as for any
// call.
func TestBashSandboxServerProcessControl(t *testing.T) {
	if s := sandbox.Probe(); s.Missing != "" {
		t.Skipf("kernel sandbox unavailable: %s", s.Missing)
	}
	dir := t.TempDir()
	p := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{dir}}
	if !sandboxServers.Ready(*p, "") {
		t.Fatalf("no fork server: %v", sandboxServers.Failed(*p, ""))
	}
	procsOwner := NewProcesses()
	defer procsOwner.Close()
	opts := BashOptions{Sandbox: func() *sandbox.Policy { return p }, Processes: procsOwner}
	start := time.Now()
	r := bashCall(t, context.Background(), opts, dir, map[string]any{
		"command": `echo "ppid=$PPID"; grep '^0::' /proc/self/cgroup; setsid sleep 60 & echo "bg=$!"; sleep 30`, "timeout": 1}, nil)
	text := resultText(t, r)
	if !strings.Contains(text, "ppid="+strconv.Itoa(os.Getpid())+"\n") || !strings.Contains(text, "Command timed out after 1 seconds") {
		t.Fatalf("result: %s", text)
	}
	if on, why := procsOwner.set.Cgroups(); on {
		if !strings.Contains(text, "/call-") {
			t.Errorf("the command was not born in its call's cgroup: %s", text)
		}
	} else {
		t.Logf("no cgroups here (%v): the placement is not checked", why)
	}
	for _, pid := range serverPidsOf(os.Getpid()) {
		cg, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		if strings.Contains(string(cg), "/call-") {
			t.Errorf("the fork server %d was left in a call's cgroup: %s", pid, cg)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the timed-out call took %v", d)
	}
	i := strings.Index(text, "bg=")
	bg, err := strconv.Atoi(strings.Fields(text[i+3:])[0])
	if err != nil {
		t.Fatalf("no background pid in %s", text)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(bg) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job a timed-out call left in its own session survived it: %s", stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverPidsOf are the fork servers that are children of ppid.
func serverPidsOf(ppid int) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 || !strings.Contains(string(cmdline), "\x00"+sandbox.ServerArg+"\x00") {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// sandboxServerCPU is the CPU time the sandbox's fork servers (children of
// this process) have used (utime and stime of /proc/PID/stat, in clock ticks of
// 10 ms).
func sandboxServerCPU() time.Duration {
	var total time.Duration
	for _, pid := range serverPidsOf(os.Getpid()) {
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			total += time.Duration(u+st) * 10 * time.Millisecond
		}
	}
	return total
}

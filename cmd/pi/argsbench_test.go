package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// BenchmarkLoopWrite20MBProcess runs `pi -p go --no-session` as a child
// process whose model writes a 20 MB file (lines with the tabs and quotes
// JSON escapes), with the scripted provider (--script) and with the OpenAI
// provider against a loopback server (the arguments in 1000 chunks), and
// reports the child's peak RSS (MB) and that over the content's size
// (rss/payload). The child is this test binary as "pi" (testscript runs
// program for that name), started by GNU time, which reports the peak: a
// process Go starts itself shares the test's memory until it execs (vfork),
// and its ru_maxrss counts the test's RSS at that moment.
func BenchmarkLoopWrite20MBProcess(b *testing.B) {
	gnuTime, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		b.Skip("needs GNU time (/usr/bin/time, Debian package time)")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := b.TempDir()
	pi := filepath.Join(bin, "pi")
	if err := os.Symlink(exe, pi); err != nil {
		b.Fatal(err)
	}
	for _, provider := range []string{"scripted", "openai"} {
		b.Run("provider="+provider, func(b *testing.B) {
			dir := b.TempDir()
			out := filepath.Join(dir, "out.txt")
			var content strings.Builder
			for i := 0; content.Len() < 20_000_000; i++ {
				fmt.Fprintf(&content, "%08d\tfunc \"quoted\" %s\n", i, strings.Repeat("x", 60))
			}
			want := content.String()[:20_000_000]
			args, _ := json.Marshal(map[string]string{"path": out, "content": want})
			cmdArgs := []string{"-p", "go", "--no-session", "--cwd", dir}
			var srv *openai.Server
			switch provider {
			case "scripted":
				script, _ := json.Marshal(map[string]any{"turns": []any{
					map[string]any{"toolCalls": []any{map[string]any{"name": "write", "arguments": json.RawMessage(args)}}},
					map[string]any{"text": "done"},
				}})
				path := filepath.Join(b.TempDir(), "script.json")
				if err := os.WriteFile(path, script, 0o600); err != nil {
					b.Fatal(err)
				}
				cmdArgs = append(cmdArgs, "--script", path)
			case "openai":
				srv = openai.NewServer(b)
				srv.ForgetBodies()
				cmdArgs = append(cmdArgs, "--base-url", srv.URL, "--model", "m", "--api-key", "k")
			}
			var peak int64
			b.ResetTimer()
			for b.Loop() {
				if srv != nil {
					// The call, the answer, and what the automatic
					// compaction a 20 MB context sets off asks.
					srv.Add(openai.Reply{Chunks: 1000, ToolCalls: []openai.ToolCall{{Name: "write", Arguments: string(args)}}},
						openai.Reply{Text: "done"}, openai.Reply{Text: "summary"}, openai.Reply{Text: "summary"})
				}
				rss := filepath.Join(dir, "rss")
				cmd := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", rss, pi}, cmdArgs...)...)
				cmd.Env = append(os.Environ(), "HOME="+dir, "PI_HOME="+filepath.Join(dir, ".pi"))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("pi: %v\n%s", err, stderr.String())
				}
				data, err := os.ReadFile(rss)
				kb, perr := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
				if err != nil || perr != nil {
					b.Fatalf("GNU time wrote %q (%v, %v)", data, err, perr)
				}
				peak = max(peak, kb*1024)
			}
			b.StopTimer()
			got, err := os.ReadFile(out)
			if err != nil || string(got) != want {
				b.Fatalf("pi did not write the content (%v)", err)
			}
			b.ReportMetric(float64(peak)/1e6, "peak-RSS-MB")
			b.ReportMetric(float64(peak)/float64(len(want)), "rss/payload")
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pi-go/pi/internal/testkit/openai"
)

// BenchmarkTurnsProcess runs an n-turn conversation as `pi -p go
// --no-session` child processes — each turn the model says a sentence and
// reads a 32 KB file, the last turn answers — with the scripted provider
// (--script) and with the OpenAI provider against a loopback server (the
// text and the call in 50 chunks each), interleaved, and reports the
// median CPU (user+sys) of each and http/script, their ratio: what
// sending the history back every turn over HTTP costs. With PI_OLD set to
// another pi binary, its runs are interleaved too (old-…), before and
// after in one run; PI_NEW runs a built pi in place of the test binary.
func BenchmarkTurnsProcess(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := b.TempDir()
	pi := filepath.Join(bin, "pi")
	if err := os.Symlink(exe, pi); err != nil {
		b.Fatal(err)
	}
	if bin := os.Getenv("PI_NEW"); bin != "" {
		// A built pi rather than the test binary (whose start-up is
		// larger): like for like with PI_OLD.
		pi = bin
	}
	bins := map[string]string{"": pi}
	if old := os.Getenv("PI_OLD"); old != "" {
		bins["old-"] = old
	}
	for _, n := range []int{3, 20, 60} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			var file strings.Builder
			for i := 0; file.Len() < 32<<10; i++ {
				fmt.Fprintf(&file, "%05d\tfunc f%d() { return \"quoted\" } // a line of code\n", i, i)
			}
			path := filepath.Join(dir, "file.go")
			if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
				b.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"path": path})
			text := strings.Repeat("Let me read the file to see what it does. ", 8)
			var turns []any
			for range n - 1 {
				turns = append(turns, map[string]any{"text": text, "toolCalls": []any{map[string]any{"name": "read", "arguments": json.RawMessage(args)}}})
			}
			turns = append(turns, map[string]any{"text": "done"})
			script, _ := json.Marshal(map[string]any{"turns": turns})
			scriptPath := filepath.Join(dir, "script.json")
			if err := os.WriteFile(scriptPath, script, 0o600); err != nil {
				b.Fatal(err)
			}
			// A context large enough that no compaction sets in: the
			// runs compare the turns alone.
			if err := os.MkdirAll(filepath.Join(dir, ".pi"), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".pi", "pi.toml"), []byte("[model]\ncontext_window = 100000000\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			srv := openai.NewServer(b)
			srv.ForgetBodies()
			common := []string{"-p", "go", "--no-session", "--cwd", dir}
			cpu := map[string][]time.Duration{}
			run := func(label, bin string, args ...string) {
				cmd := exec.Command(bin, append(append([]string(nil), common...), args...)...)
				cmd.Env = append(os.Environ(), "HOME="+dir, "PI_HOME="+filepath.Join(dir, ".pi"))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("%s: %v\n%s", label, err, stderr.String())
				}
				cpu[label] = append(cpu[label], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
			for b.Loop() {
				for _, prefix := range []string{"", "old-"} {
					bin, ok := bins[prefix]
					if !ok {
						continue
					}
					run(prefix+"script", bin, "--script", scriptPath)
					for range n - 1 {
						srv.Add(openai.Reply{Chunks: 50, Text: text, ToolCalls: []openai.ToolCall{{Name: "read", Arguments: string(args)}}})
					}
					srv.Add(openai.Reply{Text: "done"})
					run(prefix+"http", bin, "--base-url", srv.URL, "--model", "m", "--api-key", "k")
				}
			}
			med := func(label string) float64 {
				d := slices.Clone(cpu[label])
				slices.Sort(d)
				return float64(d[len(d)/2]) / 1e6
			}
			for _, prefix := range []string{"", "old-"} {
				if _, ok := bins[prefix]; !ok {
					continue
				}
				b.ReportMetric(med(prefix+"script"), prefix+"script-cpu-ms")
				b.ReportMetric(med(prefix+"http"), prefix+"http-cpu-ms")
				b.ReportMetric(med(prefix+"http")/med(prefix+"script"), prefix+"http/script")
			}
		})
	}
}

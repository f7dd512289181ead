//go:build unix

package compaction_test

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/compaction"
	"github.com/pi-go/pi/runtime/session"
)

// BenchmarkPrepare prepares the compaction of a resumed session of 10k
// entries (turns of a prompt, a read call, its result and an answer,
// ~500 bytes each; the context built once, as a resume does), after a
// collection, keeping the default 20k recent tokens: the context's size,
// the cut, and the messages to summarize with the files they touched.
//
//	go test -run '^$' -bench BenchmarkPrepare -benchtime 5x ./runtime/compaction/
func BenchmarkPrepare(b *testing.B) {
	w := newSession(b)
	text := strings.Repeat("lorem ipsum ", 500/12)
	for i := range 10_000 {
		var m session.Message
		switch i % 4 {
		case 0:
			m = user(text)
		case 1:
			m = assistant("", call(fmt.Sprintf("c%d", i), "read", fmt.Sprintf(`{"path":"f%d.go"}`, i/4%50)))
		case 2:
			m = result(fmt.Sprintf("c%d", i-1), "read", text)
		case 3:
			m = assistant(text)
		}
		if m.Role == session.RoleAssistant {
			m.Usage = &session.Usage{Input: 1, Output: 2, TotalTokens: 3}
		}
		mustAppend(b, w, m)
	}
	path := w.Path()
	w.Close()
	s, err := session.Open(path, session.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if n := len(session.ToLLM(s.Context())); n != 10_000 {
		b.Fatalf("%d messages", n)
	}
	keep := compaction.DefaultSettings().KeepRecentTokens
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		cpu0 := cpuTime()
		p, err := compaction.Prepare(s.Branch(), keep)
		if err != nil || len(p.ToSummarize) < 9_000 || len(p.ReadFiles) != 50 {
			b.Fatalf("%v: %d to summarize, %d files read", err, len(p.ToSummarize), len(p.ReadFiles))
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

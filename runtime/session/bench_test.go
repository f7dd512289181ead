//go:build unix

package session

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeBenchSession writes a session of n entries (turns of a user message,
// an assistant message with a tool call, its result and an answer) of
// about entryBytes each, and returns its path and size. With compacted,
// the last 40 entries follow a compaction that keeps the 40 before it, as
// in a long session.
func writeBenchSession(b *testing.B, n, entryBytes int, compacted bool) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	h, _ := marshal(Header{Type: TypeSession, Version: Version, ID: NewSessionID(), Timestamp: isoTime(time.Now()), Cwd: "/bench"})
	w.Write(append(h, '\n'))
	text := strings.Repeat("lorem ipsum ", entryBytes/12)
	parent := ""
	for i := range n {
		if compacted && i == n-40 {
			keep := fmt.Sprintf("%08x", n-80)
			e := &Entry{Type: TypeCompaction, ID: "cccccccc", ParentID: parent, Timestamp: isoTime(time.Now()), entryFields: &entryFields{Summary: text, FirstKeptEntryID: keep, TokensBefore: 1000}}
			line, _ := e.encode()
			w.Write(append(line, '\n'))
			parent = e.ID
		}
		var m Message
		switch i % 4 {
		case 0:
			m = user(text)
		case 1:
			m = assistant("", call(fmt.Sprintf("c%d", i), "read", `{"path":"some/file.go"}`))
		case 2:
			m = result(fmt.Sprintf("c%d", i-1), "read", text)
		case 3:
			m = assistant(text)
		}
		if m.Role == RoleAssistant {
			m.Usage = &Usage{Input: 1, Output: 2, TotalTokens: 3, Cost: UsageCost{Total: 0.001}}
		}
		e := &Entry{Type: TypeMessage, ID: fmt.Sprintf("%08x", i), ParentID: parent, Timestamp: isoTime(time.Now()), entryFields: noFields, msg: &m}
		line, err := e.encode()
		if err != nil {
			b.Fatal(err)
		}
		w.Write(append(line, '\n'))
		parent = e.ID
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	return path, st.Size()
}

// BenchmarkLoad opens a session for appending and builds the context the
// model is sent, for 1k, 10k and 100k entries of about 500 bytes (100k
// entries: a 65 MB file). compacted: the session ends with a compaction,
// as any session that size does (its context is the summary and the last
// 80 entries); whole: no compaction, every message is decoded and sent.
// cpu-ms/op is the CPU the process spent opening and building (the forced
// collections between runs left out); live-heap-MB (and heap/file, its
// ratio to the file's size) is what stays reachable afterwards: the
// session and the messages the agent is given.
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 5x ./runtime/session/
func BenchmarkLoad(b *testing.B) {
	for _, c := range []struct {
		n         int
		compacted bool
	}{{1_000, true}, {10_000, true}, {100_000, true}, {1_000, false}, {10_000, false}, {100_000, false}} {
		name := "whole"
		want := c.n
		if c.compacted {
			name, want = "compacted", 81
		}
		n := c.n
		b.Run(fmt.Sprintf("%s/entries=%d", name, n), func(b *testing.B) {
			path, size := writeBenchSession(b, n, 500, c.compacted)
			b.SetBytes(size)
			b.ReportAllocs()
			var peak uint64
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				b.StartTimer()
				cpu0 := cpuTime()
				s, err := Open(path, OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				msgs := ToLLM(s.Context())
				if len(msgs) != want {
					b.Fatalf("%d messages", len(msgs))
				}
				cpu += cpuTime() - cpu0
				b.StopTimer()
				runtime.GC() // what stays live: the session and the context
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				b.StartTimer()
				if d := after.HeapAlloc - before.HeapAlloc; d > peak {
					peak = d
				}
				runtime.KeepAlive(msgs)
				runtime.KeepAlive(s)
				s.Close()
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(size)/(1<<20), "file-MB")
			b.ReportMetric(float64(peak)/(1<<20), "live-heap-MB")
			b.ReportMetric(float64(peak)/float64(size), "heap/file")
		})
	}
}

// cpuTime is the process's user and system CPU time so far: on a shared
// machine it shows the work done apart from the waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppend appends one message to sessions of 1k and 100k entries:
// the time per append does not grow with the session (one write, no
// rewrite).
//
//	go test -run '^$' -bench BenchmarkAppend ./runtime/session/
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			path, _ := writeBenchSession(b, n, 500, false)
			s, err := Open(path, OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			m := user(strings.Repeat("x", 500))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.AppendMessage(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkContextAgain is what a session of 10k entries, open already
// and resumed (its context built once, as a resume does), costs after a
// turn, after a collection:
//
//   - context: the context's messages again (Session.Context: what a
//     compaction hands back, RPC get_messages, a /tree view's context);
//   - footer: what the TUI's footer and RPC get_session_stats compute
//     after every turn: the context's size in tokens and the usage of
//     every answer of the file (Conversation.ContextTokens, Stats and the
//     footer's sums).
//
// compaction's BenchmarkPrepare is the third caller that used to build
// the context again (three times).
//
//	go test -run '^$' -bench BenchmarkContextAgain ./runtime/session/
func BenchmarkContextAgain(b *testing.B) {
	path, size := writeBenchSession(b, 10_000, 500, false)
	s, err := Open(path, OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if n := len(ToLLM(s.Context())); n != 10_000 {
		b.Fatalf("%d messages", n)
	}
	for _, c := range []struct {
		name string
		run  func(b *testing.B)
	}{
		{"context", func(b *testing.B) {
			if n := len(s.Context()); n != 10_000 {
				b.Fatalf("%d messages", n)
			}
		}},
		{"footer", func(b *testing.B) {
			tokens, usage := footerSums(s)
			if tokens != 3 || usage.Input != 5_000 {
				b.Fatalf("%d tokens, usage %+v", tokens, usage)
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				cpu0 := cpuTime()
				c.run(b)
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// footerSums is the footer's work after a turn, as its callers do it:
// the context's size (Conversation.ContextTokens) and the usage of every
// answer (the footer's and Stats' sums).
func footerSums(s *Session) (int, Usage) {
	return EstimateInfoTokens(ContextInfos(s.Branch())), s.TotalUsage()
}

//go:build linux

package procs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// FuzzParseStat: a process names itself (its command, up to 15 bytes of
// anything but NUL) to fool the scan into reading another parent, group,
// session or start time - with ") R 1 1 1", spaces, newlines, parentheses.
// The parsed fields are always the kernel's (state is one of the
// kernel's letters).
func FuzzParseStat(f *testing.F) {
	for _, comm := range []string{"bash", "x) R 1 1 1 0", "a b", ")", "((", ") Z 1 ", "\n) S 2 3 4"} {
		f.Add(comm, 1, 4242, 4242, uint64(123456), byte('S'))
	}
	f.Fuzz(func(t *testing.T, comm string, ppid, pgid, sid int, start uint64, state byte) {
		if len(comm) > 15 || strings.IndexByte(comm, 0) >= 0 || !strings.ContainsRune("RSDZTtXxIPWK", rune(state)) || ppid < 0 || pgid < 0 || sid < 0 {
			return
		}
		line := fmt.Sprintf("77 (%s) %c %d %d %d 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 %d 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
			comm, state, ppid, pgid, sid, start)
		p, ok := parseStat(77, []byte(line))
		if !ok {
			t.Fatalf("%q: not parsed", line)
		}
		want := procInfo{pid: 77, ppid: ppid, pgid: pgid, sid: sid, start: start, state: state}
		if p != want {
			t.Fatalf("%q: parsed %+v, want %+v", line, p, want)
		}
	})
}

// TestParseStatSelf reads this process's own stat line.
func TestParseStatSelf(t *testing.T) {
	var buf [1024]byte
	p, ok := readStat(os.Getpid(), buf[:])
	if !ok || p.pid != os.Getpid() || p.ppid != os.Getppid() || p.start == 0 || p.dead() {
		t.Fatalf("own stat: %+v %v", p, ok)
	}
}

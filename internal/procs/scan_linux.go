//go:build linux

package procs

import (
	"bytes"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// procInfo is one process as /proc/PID/stat shows it.
type procInfo struct {
	pid, ppid, pgid, sid int
	start                uint64 // start time, clock ticks after boot
	state                byte
}

// dead reports a zombie (or a process being torn down).
func (p procInfo) dead() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

// scanProcs lists every process.
func scanProcs() []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procInfo, 0, len(names))
	var buf [1024]byte
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readStat(pid, buf[:]); ok {
			out = append(out, p)
		}
	}
	return out
}

// fullScan makes callProcs scan all of /proc (set by a benchmark only, for
// the baseline it is compared with).
var fullScan bool

// callProcs lists what the bookkeeping after a call must look at: every
// descendant of pi when pi is a child subreaper (then every process a call
// started stays one, whatever it does with sessions, groups, its
// environment or cgroups: an orphan is re-parented to its nearest
// subreaper ancestor, at the farthest pi), found through the children
// files; else, or when the kernel has no children files, every process.
// Its cost grows with pi's own tree, not with the host's process count.
func callProcs() []procInfo {
	if fullScan {
		return scanProcs()
	}
	if procs, ok := descendants(os.Getpid()); ok {
		return procs
	}
	return scanProcs()
}

// descendants lists the processes below pid (not pid itself) through
// /proc/PID/task/TID/children; ok is false when pid is not a child
// subreaper (pid must be the calling process) or its children files cannot
// be read. A process started or re-parented while the walk reads its
// parent may be missed, as a scan of /proc may miss it: callers that need
// every process use scanProcs and repeat.
func descendants(pid int) (out []procInfo, ok bool) {
	var reaper int
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&reaper)), 0, 0, 0); err != nil || reaper == 0 {
		return nil, false
	}
	var buf [1024]byte
	kids := make([]byte, 0, 256)
	done := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		var got bool
		kids, got = childrenOf(parent, kids[:0])
		if !got {
			if parent == pid {
				return nil, false
			}
			continue // gone since its parent was read
		}
		for _, f := range bytes.Fields(kids) {
			c, err := strconv.Atoi(string(f))
			if err != nil || c <= 0 || done[c] {
				continue
			}
			done[c] = true
			if p, ok := readStat(c, buf[:]); ok {
				out = append(out, p)
				queue = append(queue, c)
			}
		}
	}
	return out, true
}

// childrenOf appends to buf the text of the children files of every thread
// of pid (space-separated pids); false when none could be read.
func childrenOf(pid int, buf []byte) ([]byte, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	d, err := os.Open(dir)
	if err != nil {
		return buf, false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	got := false
	for _, tid := range tids {
		n := len(buf)
		b, ok := readProcFile(dir+tid+"/children", buf[:cap(buf)], n, true)
		if !ok && len(b) == n {
			continue
		}
		got = true
		buf = append(b, ' ')
	}
	return buf, got
}

// readFileInto reads a small /proc file into buf from offset off on
// (growing buf, keeping buf[:off]) and returns buf[:off+n], without
// allocating a File.
func readFileInto(path string, buf []byte, off int) ([]byte, bool) {
	return readProcFile(path, buf, off, false)
}

// readProcFile is readFileInto; with toEOF it reads until the end of the
// file even after a short read (a seq_file, such as a children file,
// gives about a page per read).
func readProcFile(path string, buf []byte, off int, toEOF bool) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf[:off], false
	}
	defer unix.Close(fd)
	n := off
	for {
		if n == len(buf) {
			buf = append(buf[:cap(buf)], make([]byte, len(buf)+1)...)
			buf = buf[:cap(buf)]
		}
		m, err := unix.Read(fd, buf[n:])
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return buf[:n], n > off
		}
		if m == 0 {
			return buf[:n], true
		}
		n += m
		if n < len(buf) && !toEOF {
			// A /proc file gives all it has in one read when the buffer
			// is large enough: a short read is the end.
			return buf[:n], true
		}
	}
}

// readStat parses "pid (comm) state ppid pgrp ..." from /proc/PID/stat.
func readStat(pid int, buf []byte) (procInfo, bool) {
	b, ok := readFileInto("/proc/"+strconv.Itoa(pid)+"/stat", buf[:cap(buf)], 0)
	if !ok {
		return procInfo{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses the text of /proc/PID/stat. The command name may hold
// anything a process chooses, spaces and parentheses included, so the
// fields are read after its last ')'.
func parseStat(pid int, b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	// Fields after the command: state ppid pgrp session tty_nr tpgid flags
	// minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime ...
	var f [20][]byte
	n := 0
	for _, field := range bytes.Fields(b[i+2:]) {
		if n == len(f) {
			break
		}
		f[n] = field
		n++
	}
	if n < len(f) || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	sid, err4 := strconv.Atoi(string(f[3]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, sid: sid, start: start, state: f[0][0]}, true
}

// startTicks is the start time of a process (0 when unknown).
func startTicks(pid int) uint64 {
	var buf [1024]byte
	p, _ := readStat(pid, buf[:])
	return p.start
}

// findTargets returns the live processes (never pi itself) that match, with
// all their live descendants.
func findTargets(procs []procInfo, m *matcher) []int {
	self := os.Getpid()
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	live := map[int]bool{}
	for _, p := range procs {
		if !p.dead() && p.pid != self {
			live[p.pid] = true
		}
	}
	picked := map[int]bool{}
	var stack []int
	for _, p := range procs {
		if !live[p.pid] {
			continue
		}
		if m.match(p) {
			picked[p.pid] = true
			stack = append(stack, p.pid)
		}
	}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[pid] {
			if live[c] && !picked[c] {
				picked[c] = true
				stack = append(stack, c)
			}
		}
	}
	// Parents before children: a shell signalled after its foreground job
	// died would first report the death into the output.
	ppid := make(map[int]int, len(procs))
	for _, p := range procs {
		ppid[p.pid] = p.ppid
	}
	out := make([]int, 0, len(picked))
	for pid := range picked {
		if !picked[ppid[pid]] {
			out = append(out, pid)
		}
	}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if picked[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

//go:build linux

package procs

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/pi-go/pi/internal/cgroup"
)

// matcher picks the processes of one call (own is its shell) or of every
// call of one Set (own == 0): those in its cgroups (members, set each
// round), those in one of its sessions or process groups (each call's shell
// leads both, with its pid as the id), those with its tag in their
// environment, and orphans: children of pi (re-parented to it, the
// subreaper) outside pi's session (no process of a call can enter it: each
// call has a session of its own), started since `since`, with no other
// call's tag, that are not the shell of another call nor in its session,
// group or cgroup - when no other call is running (for a Set: no call of
// another Set). Only processes started since `since` can carry the tag, so
// the environment of older ones is not read; each environment is read once
// per matcher.
type matcher struct {
	groups map[int]bool
	env    []byte // "\x00PI_BASH_CALL=VALUE": the call's tag (with its final NUL) or the Set's prefix
	since  uint64
	set    *Set
	own    int // the call's shell; 0 for every call of set
	self   int
	sess   int // pi's session

	anyEnv []byte        // "\x00PI_BASH_CALL=INSTANCE-": any call of this process
	group  *cgroup.Group // the call's cgroup (nil: none, or every call of set)

	members      map[int]bool // processes of the cgroup being killed, set each round
	orphans      bool         // set by refresh
	others       map[int]bool // other calls' shells (and sessions, groups), set by refresh
	otherMembers map[int]bool // processes in other calls' cgroups, set by refresh

	cache map[int]int // environment classes
	buf   []byte
}

func newMatcher(s *Set, groups map[int]bool, env []byte, since uint64, own int) *matcher {
	sess, _ := unix.Getsid(0)
	return &matcher{groups: groups, env: env, anyEnv: []byte("\x00" + MarkerEnv + "=" + instance() + "-"),
		since: since, set: s, own: own, self: os.Getpid(), sess: sess}
}

// matcher is the matcher of the call's processes.
func (c *Call) matcher() *matcher {
	m := newMatcher(c.set, map[int]bool{c.pid: true}, c.marker, c.start, c.pid)
	m.group = c.group
	return m
}

// matcher is the matcher of the processes of every call of s: the
// sessions its calls led that may still have members, its tag prefix, and
// orphans started since its first call.
func (s *Set) matcher() *matcher {
	groups := map[int]bool{}
	registry.mu.Lock()
	for g, owner := range registry.groups {
		if owner == s {
			groups[g] = true
		}
	}
	since := s.since
	registry.mu.Unlock()
	return newMatcher(s, groups, s.prefix, since, 0)
}

// mine reports whether a call of set (with shell pid) is the matcher's.
func (m *matcher) mine(pid int, set *Set) bool {
	if m.own != 0 {
		return pid == m.own
	}
	return set == m.set
}

// refresh reads which other calls are running and which processes are in
// other calls' cgroups; call it with spawns paused.
func (m *matcher) refresh() {
	registry.mu.Lock()
	m.others = map[int]bool{}
	running := 0
	for pid, set := range registry.shells {
		if !m.mine(pid, set) {
			m.others[pid] = true
			running++
		}
	}
	// Sessions and groups of calls that ended but may still have
	// background processes are not this call's either.
	for g, set := range registry.groups {
		if !m.mine(g, set) {
			m.others[g] = true
		}
	}
	// The program's own children (StartOwn) lead their sessions and
	// process groups: none of them, and nothing in them, is a call's.
	for pid := range registry.own {
		m.others[pid] = true
	}
	m.orphans = running == 0
	sets := make([]*Set, 0, len(registry.sets))
	for s := range registry.sets {
		sets = append(sets, s)
	}
	registry.mu.Unlock()

	var groups []*cgroup.Group
	for _, s := range sets {
		s.cg.Lock()
		for g := range s.cg.calls {
			if g != m.group && (m.own != 0 || s != m.set) {
				groups = append(groups, g)
			}
		}
		s.cg.Unlock()
	}
	m.otherMembers = map[int]bool{}
	for _, g := range groups {
		pids, _ := g.Pids()
		for _, pid := range pids {
			m.otherMembers[pid] = true
		}
	}
}

// Environment classes of a process, as its PI_BASH_CALL tag says.
const (
	envNone  = iota // no tag of this process
	envOwn          // the tag this matcher looks for
	envOther        // the tag of another call of this process
)

func (m *matcher) match(p procInfo) bool {
	if m.groups[p.pgid] || m.groups[p.sid] || m.members[p.pid] {
		return true
	}
	if p.start < m.since || m.others[p.pid] || m.others[p.pgid] || m.others[p.sid] || m.otherMembers[p.pid] {
		return false
	}
	switch m.envClass(p.pid) {
	case envOwn:
		return true
	case envOther:
		return false
	}
	return m.orphans && p.ppid == m.self && p.sid != m.sess
}

// envClass reads (once per matcher) which tag a process carries.
func (m *matcher) envClass(pid int) int {
	if v, ok := m.cache[pid]; ok {
		return v
	}
	if m.cache == nil {
		m.cache = map[int]int{}
		m.buf = make([]byte, 16<<10)
	}
	// Read the environment after a NUL, so that the first variable is
	// found as "\x00NAME=" too.
	m.buf[0] = 0
	env, _ := readFileInto("/proc/"+strconv.Itoa(pid)+"/environ", m.buf[:cap(m.buf)], 1)
	if len(env) > 1 && env[len(env)-1] != 0 {
		env = append(env, 0)
	}
	m.buf = env[:cap(env)]
	v := envNone
	switch {
	case bytes.Contains(env, m.env):
		v = envOwn
	case bytes.Contains(env, m.anyEnv):
		v = envOther
	}
	m.cache[pid] = v
	return v
}

package sandbox

import (
	"path/filepath"
	"strings"
)

// maxRefusals caps the lines Refusals returns.
const maxRefusals = 5

// fsErrors are the texts of the errors a refused write shows (EACCES from
// Landlock, EROFS from a protected path, EBUSY from moving one away,
// EPERM).
// Matched without regard to case (Go writes "permission denied").
var fsErrors = []string{"permission denied", "read-only file system", "device or resource busy", "operation not permitted"}

// netErrors are the texts of a network that is not there.
var netErrors = []string{"network is unreachable", "could not resolve host", "temporary failure in name resolution",
	"name or service not known", "connection refused", "no address associated with hostname"}

// Refusals returns the lines the model reads about what the sandbox
// refused, found in out (the command's output as the model sees it): a
// path quoted in a line with a permission or read-only error that the
// policy covers (a protected path, or a path outside the writable roots
// that pi itself could write, so that a plain permission error is not
// blamed on the sandbox), and with the network off a network error. cwd
// resolves relative paths, home is shown as ~. Each line starts with
// "Sandbox refused: ".
func (p Policy) Refusals(out, cwd, home string) []string {
	if !p.Active() {
		return nil
	}
	var lines []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] && len(lines) < maxRefusals {
			seen[s] = true
			lines = append(lines, "Sandbox refused: "+s)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if p.Network == NetworkOff && containsAny(line, netErrors) {
			add("network access (sandbox network off)")
			continue
		}
		if p.Network == NetworkAllow {
			if why := p.proxyRefusal(line); why != "" {
				add(why)
				continue
			}
		}
		if p.Mode == ModeFull || !containsAny(line, fsErrors) {
			continue
		}
		for _, c := range pathCandidates(line) {
			path := resolve(c, cwd, home)
			if why := p.covers(realPath(path)); why != nil {
				add(why(show(path, home)))
			}
		}
	}
	return lines
}

// proxyRefusal says what a line of output shows the proxy or the network
// namespace of NetworkAllow refused ("" when nothing): the proxy's own 403
// text, a client's report of a refused CONNECT, or a network error (a
// connection that did not go through the proxy).
func (p Policy) proxyRefusal(line string) string {
	if i := strings.Index(line, "pi sandbox proxy: "); i >= 0 {
		return "network: " + strings.TrimSpace(line[i+len("pi sandbox proxy: "):])
	}
	allowed := "sandbox network allow: only " + strings.Join(p.AllowHosts, ", ") + " through pi's proxy"
	if len(p.AllowHosts) == 0 {
		allowed = "sandbox network allow: no host is allowed"
	}
	if containsAny(line, []string{"response 403", "403 forbidden"}) {
		return "network: the proxy refused a host that is not in allow_hosts (" + allowed + ")"
	}
	if containsAny(line, netErrors) {
		return "network access outside the proxy (" + allowed + ")"
	}
	return ""
}

// covers says why the policy refuses a write to path (a function of the
// path as shown), or nil when it does not.
func (p Policy) covers(path string) func(string) string {
	if path == "" {
		return nil
	}
	for _, pr := range p.Protected {
		if Within(path, pr) {
			return func(s string) string {
				return "write to a protected path: " + s + " (the sandbox keeps .git, .pi, pi.toml and pi's home read-only)"
			}
		}
	}
	if p.Mode == ModeReadOnly {
		if hostCanWrite(path) {
			return func(s string) string { return "write: " + s + " (sandbox read-only)" }
		}
		return nil
	}
	for _, w := range p.Writable {
		if Within(path, w) || Within(path, realPath(w)) {
			return nil
		}
	}
	if hostCanWrite(path) {
		return func(s string) string { return "write outside the workspace: " + s + " (sandbox " + p.Mode + ")" }
	}
	return nil
}

// pathCandidates are the strings of an error line that may be the path:
// quoted ones ('x', "x", ‘x’, `x'), and the field before the error text
// ("bash: x: Permission denied") and its last word ("sh: 1: cannot
// create x: Read-only file system").
func pathCandidates(line string) []string {
	var out []string
	for _, q := range [][2]string{{"'", "'"}, {`"`, `"`}, {"‘", "’"}, {"`", "'"}} {
		rest := line
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(q[0]):]
			j := strings.Index(rest, q[1])
			if j < 0 {
				break
			}
			out = append(out, rest[:j])
			rest = rest[j+len(q[1]):]
		}
	}
	lower := strings.ToLower(line)
	src := line
	if len(lower) != len(line) {
		src = lower // offsets must match (a rare non-ASCII case change)
	}
	for _, e := range fsErrors {
		if i := strings.Index(lower, ": "+e); i > 0 {
			field := src[:i]
			if k := strings.LastIndex(field, ": "); k >= 0 {
				field = field[k+2:]
			}
			field = strings.TrimSpace(field)
			out = append(out, field)
			if k := strings.LastIndexByte(field, ' '); k >= 0 {
				out = append(out, field[k+1:]) // "cannot create PATH: ..." (dash)
			}
		}
	}
	return out
}

// resolve makes c an absolute clean path ("" when it cannot be one).
func resolve(c, cwd, home string) string {
	if c == "" || strings.ContainsAny(c, "\x00\n") {
		return ""
	}
	if home != "" && (c == "~" || strings.HasPrefix(c, "~/")) {
		c = home + c[1:]
	}
	if !filepath.IsAbs(c) {
		if cwd == "" {
			return ""
		}
		c = filepath.Join(cwd, c)
	}
	return filepath.Clean(c)
}

// realPath is path with the symlinks of its folder resolved (a link in
// the workspace that points out is judged by where it points).
func realPath(path string) string {
	if path == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(d, filepath.Base(path))
	}
	return path
}

// show writes path with home as ~.
func show(path, home string) string {
	if home != "" && home != "/" && Within(path, home) {
		return "~" + path[len(home):]
	}
	return path
}

// containsAny reports whether s holds one of subs (lower case), whatever
// the case in s.
func containsAny(s string, subs []string) bool {
	s = strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

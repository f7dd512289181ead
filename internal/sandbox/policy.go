package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Modes of the file-system sandbox, weakest first.
const (
	// ModeOff runs commands as they are, no sandbox at all.
	ModeOff = "off"
	// ModeFull lets commands write everywhere; only the network setting
	// applies.
	ModeFull = "full"
	// ModeWorkspaceWrite (the default) lets commands write only under the
	// writable roots, and never the protected paths.
	ModeWorkspaceWrite = "workspace-write"
	// ModeReadOnly lets commands write nowhere (but the devices such as
	// /dev/null).
	ModeReadOnly = "read-only"
)

// Network settings, weakest first.
const (
	NetworkOn    = "on"
	NetworkAllow = "allow"
	NetworkOff   = "off"
)

// Modes lists the modes, weakest first.
var Modes = []string{ModeOff, ModeFull, ModeWorkspaceWrite, ModeReadOnly}

// Networks lists the network settings, weakest first.
var Networks = []string{NetworkOn, NetworkAllow, NetworkOff}

// CheckMode reports whether mode is one of Modes.
//
// # Errors
//
// An error naming the known modes.
func CheckMode(mode string) error {
	for _, m := range Modes {
		if mode == m {
			return nil
		}
	}
	return fmt.Errorf("unknown sandbox mode %q (want %s)", mode, strings.Join(Modes, ", "))
}

// CheckNetwork reports whether network is one of Networks.
//
// # Errors
//
// An error naming the known settings.
func CheckNetwork(network string) error {
	for _, n := range Networks {
		if network == n {
			return nil
		}
	}
	return fmt.Errorf("unknown sandbox network %q (want %s)", network, strings.Join(Networks, ", "))
}

// Strictness orders modes and network settings: the index in Modes or
// Networks (-1 when unknown).
func Strictness(list []string, v string) int {
	for i, m := range list {
		if m == v {
			return i
		}
	}
	return -1
}

// Policy is what a sandboxed command may do. The zero value is not
// usable; fill Mode and Network. It travels to the helper as JSON.
type Policy struct {
	// Mode is one of Modes.
	Mode string `json:"mode"`
	// Network is one of Networks; NetworkAllow needs Proxy.
	Network string `json:"network"`
	// Proxy is the Unix socket of the proxy that NetworkAllow reaches the
	// network through (internal/sandbox/proxy); AllowHosts are its allowed hosts,
	// for the refusal lines.
	Proxy      string   `json:"proxy,omitempty"`
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// Writable are the absolute folders the command may write under (with
	// ModeWorkspaceWrite): the project, /tmp, $TMPDIR and configured ones.
	// Missing ones are skipped.
	Writable []string `json:"writable,omitempty"`
	// Protected are absolute paths that stay read-only even inside a
	// writable root (.git, .pi, pi.toml, pi's home). Missing ones are
	// skipped.
	Protected []string `json:"protected,omitempty"`
	// Hide are folders covered by an empty read-only file system with the
	// network off or allow: the sockets of local name resolvers (nscd,
	// systemd-resolved, avahi), which would answer — and send out — the
	// lookups of a command that has no network. Wrap fills it with
	// ResolverDirs that exist when it is nil.
	Hide []string `json:"hide,omitempty"`
	// Private are folders whose contents a command must not see, reads
	// included (Linux): each is covered by an empty read-only file system,
	// and the writable roots inside it are bound back where they were; a
	// file is covered by an empty one.
	// pi fleet names its workspaces' folder, so that a run sees its own
	// workspace and none of the others.
	Private []string `json:"private,omitempty"`
	// UID and GID are the user and group outside, mapped to themselves
	// inside the user namespace; Wrap sets them.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Restore are the dynamic loader's variables (LD_PRELOAD, ...) that
	// Wrap kept from the helper, which puts them back for the command.
	Restore []string `json:"restore,omitempty"`
}

// ResolverDirs are the folders of local name resolvers' sockets, hidden
// from a command without network (Policy.Hide).
var ResolverDirs = []string{"/run/systemd/resolve", "/run/nscd", "/var/run/nscd", "/run/avahi-daemon", "/var/run/avahi-daemon"}

// loaderVars are the variables the dynamic loader (and glibc) act on
// before a program's first instruction: the helper, which runs before the
// sandbox, must not get them, or a library in a writable folder would run
// unsandboxed.
var loaderVars = []string{"LD_", "GCONV_PATH=", "LOCPATH=", "MALLOC_", "GLIBC_TUNABLES=", "HOSTALIASES=", "RESOLV_HOST_CONF="}

func isLoaderVar(kv string) bool {
	for _, p := range loaderVars {
		if strings.HasPrefix(kv, p) {
			return true
		}
	}
	return false
}

// Active reports whether p needs the helper at all: ModeOff never does,
// ModeFull only with the network off or allow.
func (p Policy) Active() bool {
	switch p.Mode {
	case ModeOff, "":
		return false
	case ModeFull:
		return p.Network == NetworkOff || p.Network == NetworkAllow
	}
	return true
}

// Check reports a policy the helper cannot apply.
//
// # Errors
//
// An unknown mode or network, network "allow" without a proxy, or a
// writable, protected or proxy path that is not absolute.
func (p Policy) Check() error {
	if err := CheckMode(p.Mode); err != nil {
		return err
	}
	if err := CheckNetwork(p.Network); err != nil {
		return err
	}
	if p.Network == NetworkAllow && p.Proxy == "" {
		return fmt.Errorf("sandbox network %q needs pi's proxy (internal/sandbox/proxy)", NetworkAllow)
	}
	proxy := []string{}
	if p.Proxy != "" {
		proxy = append(proxy, p.Proxy)
	}
	for _, list := range [][]string{p.Writable, p.Protected, proxy, p.Hide, p.Private} {
		for _, d := range list {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("sandbox path %q is not absolute", d)
			}
		}
	}
	return nil
}

// HelperArg is the first argument that makes a program the sandbox
// helper (see the package doc): HELPER HelperArg POLICY-JSON -- ARGV....
const HelperArg = "__pi-sandbox-exec"

// Wrap returns the command line that runs argv (argv[0] an absolute
// path) under p with the environment env, and the environment to start
// it with. On Linux that is the helper (helper, "" for SelfHelper) around
// argv, without the dynamic loader's variables, which the helper puts back
// for the command; start it with SysProcAttr(p). On macOS it is
// sandbox-exec with p's SeatbeltProfile. When p is not Active it returns
// argv and env as they are.
//
// # Errors
//
// A policy that does not check; a system with no sandbox.
func Wrap(p Policy, helper string, argv, env []string) ([]string, []string, error) {
	if !p.Active() {
		return argv, env, nil
	}
	if err := p.Check(); err != nil {
		return nil, nil, err
	}
	return wrap(p, helper, argv, env)
}

// Within reports whether path is dir or under it (both clean and
// absolute).
func Within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

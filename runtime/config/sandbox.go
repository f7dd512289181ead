package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/internal/sandbox"
)

// Sandbox is [sandbox]: how the commands the model runs are contained
// (docs/sandbox.md). A project file may make it stricter; only the global
// file, a trusted project or a flag may loosen it.
type Sandbox struct {
	// Mode is one of off, full, workspace-write, read-only; "" when no
	// file sets it (the default, workspace-write where the kernel can).
	Mode string
	// ModeAt is "FILE:LINE" of the mode that applies; "" when not set.
	ModeAt string
	// Network is on, off or allow; "" when no file sets it (on).
	Network string
	// Writable are extra writable roots: absolute, or "~/..." (the
	// caller expands ~ with the home folder); relative ones were made
	// absolute against their file's folder. Nil when no file sets it (the
	// caller's default applies), empty when a file sets it to [].
	Writable []string
	// AllowHosts are the hosts network "allow" lets through.
	AllowHosts []string
	// UserCommands runs the commands a person types (!cmd, RPC bash)
	// under the sandbox too.
	UserCommands bool
}

var sandboxKeys = []string{"mode", "writable", "network", "allow_hosts", "user_commands"}

// sandboxLayer is one file's [sandbox]; nil pointers are keys not set.
type sandboxLayer struct {
	mode, network *string
	modeAt        string
	writable      []string
	allowHosts    []string
	allowHostsSet bool
	userCommands  *bool
}

func (d *decoder) sandbox(l *layer, v any) {
	m, ok := d.table("sandbox", v, sandboxKeys)
	if !ok {
		return
	}
	if v, ok := m["mode"]; ok {
		if s, ok := d.str("sandbox.mode", v); ok {
			if err := sandbox.CheckMode(s); err != nil {
				d.errorf("sandbox.mode", "key %q: %v", "sandbox.mode", err)
			} else {
				l.sandbox.mode = &s
				l.sandbox.modeAt = fmt.Sprintf("%s:%d", d.file, d.idx.keyLine("sandbox.mode"))
			}
		}
	}
	if v, ok := m["network"]; ok {
		if s, ok := d.str("sandbox.network", v); ok {
			if err := sandbox.CheckNetwork(s); err != nil {
				d.errorf("sandbox.network", "key %q: %v", "sandbox.network", err)
			} else {
				l.sandbox.network = &s
			}
		}
	}
	if v, ok := m["writable"]; ok {
		l.sandbox.writable = []string{}
		dirs, _ := d.strings("sandbox.writable", v, func(s string) error {
			if s == "" {
				return fmt.Errorf("an empty path")
			}
			if strings.HasPrefix(s, "~") && s != "~" && !strings.HasPrefix(s, "~/") {
				return fmt.Errorf("%q: only ~/ (your home) is expanded", s)
			}
			return nil
		})
		for _, s := range dirs {
			if !strings.HasPrefix(s, "~") && !filepath.IsAbs(s) {
				s = filepath.Join(filepath.Dir(d.file), s)
			}
			l.sandbox.writable = append(l.sandbox.writable, filepath.Clean(s))
		}
	}
	if v, ok := m["user_commands"]; ok {
		if b, ok := d.boolean("sandbox.user_commands", v); ok {
			l.sandbox.userCommands = &b
		}
	}
	if v, ok := m["allow_hosts"]; ok {
		hosts, ok := d.strings("sandbox.allow_hosts", v, func(s string) error {
			if s == "" || strings.ContainsAny(s, " /:") {
				return fmt.Errorf("%q is not a host name (a pattern such as *.npmjs.org)", s)
			}
			return nil
		})
		if ok {
			l.sandbox.allowHosts, l.sandbox.allowHostsSet = hosts, true
		}
	}
}

// loosens reports whether the project's [sandbox] l would weaken what
// base (the global file and the default) sets: extra writable roots, a
// weaker mode, a more open network, or the person's commands taken out.
func (l *sandboxLayer) loosens(base Sandbox) bool {
	return len(l.writable) > 0 || l.allowHostsSet || (l.userCommands != nil && !*l.userCommands && base.UserCommands) ||
		(l.mode != nil && stricterMode(base.Mode, *l.mode)) ||
		(l.network != nil && stricterNetwork(base.Network, *l.network))
}

// dropLoosening forgets what an untrusted project may not set, and names
// it.
func (l *sandboxLayer) dropLoosening(base Sandbox) []string {
	var names []string
	if len(l.writable) > 0 {
		l.writable = nil
		names = append(names, "sandbox.writable")
	}
	if l.allowHostsSet {
		l.allowHosts, l.allowHostsSet = nil, false
		names = append(names, "sandbox.allow_hosts")
	}
	if l.userCommands != nil && !*l.userCommands && base.UserCommands {
		l.userCommands = nil
		names = append(names, "sandbox.user_commands")
	}
	if l.mode != nil && stricterMode(base.Mode, *l.mode) {
		l.mode = nil
		names = append(names, "sandbox.mode")
	}
	if l.network != nil && stricterNetwork(base.Network, *l.network) {
		l.network = nil
		names = append(names, "sandbox.network")
	}
	return names
}

// stricterMode reports whether mode a is stricter than b ("" is the
// default, workspace-write).
func stricterMode(a, b string) bool {
	return sandbox.Strictness(sandbox.Modes, cmpDefault(a, sandbox.ModeWorkspaceWrite)) >
		sandbox.Strictness(sandbox.Modes, cmpDefault(b, sandbox.ModeWorkspaceWrite))
}

// stricterNetwork reports whether network a is stricter than b ("" is
// on).
func stricterNetwork(a, b string) bool {
	return sandbox.Strictness(sandbox.Networks, cmpDefault(a, sandbox.NetworkOn)) >
		sandbox.Strictness(sandbox.Networks, cmpDefault(b, sandbox.NetworkOn))
}

func cmpDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// applySandbox lays l's [sandbox] over c.
func (l *layer) applySandbox(c *Config) {
	s := &l.sandbox
	if s.mode != nil {
		c.Sandbox.Mode, c.Sandbox.ModeAt = *s.mode, s.modeAt
	}
	if s.network != nil {
		c.Sandbox.Network = *s.network
	}
	if s.writable != nil && c.Sandbox.Writable == nil {
		c.Sandbox.Writable = []string{}
	}
	for _, w := range s.writable {
		if !slices.Contains(c.Sandbox.Writable, w) {
			c.Sandbox.Writable = append(c.Sandbox.Writable, w)
		}
	}
	if s.allowHostsSet {
		c.Sandbox.AllowHosts = slices.Clone(s.allowHosts)
	}
	if s.userCommands != nil {
		c.Sandbox.UserCommands = *s.userCommands
	}
}

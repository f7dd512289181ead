//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// SelfHelper is the default helper: the running program's own file, as
// the kernel knows it (/proc/self/exe in the child is the file pi runs
// from, even when the path now names another file: a binary the command
// rebuilt in the workspace is never the helper).
const SelfHelper = "/proc/self/exe"

// normalize fills what the helper needs to know of this side: the user
// and group to map, the resolvers' folders to hide without network, the
// proxy's folder to protect.
func normalize(p Policy) Policy {
	p.UID, p.GID = os.Getuid(), os.Getgid()
	if p.Network != NetworkOn && p.Hide == nil {
		for _, d := range ResolverDirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				p.Hide = append(p.Hide, d)
			}
		}
	}
	if p.Network == NetworkAllow && p.Proxy != "" {
		// The proxy's folder is read-only inside, so that its socket can
		// neither be removed nor replaced by one of the command's.
		p.Protected = append(slices.Clip(p.Protected), filepath.Dir(p.Proxy))
	}
	return p
}

// wrap is Wrap on Linux: the helper around argv.
func wrap(p Policy, helper string, argv, env []string) ([]string, []string, error) {
	if helper == "" {
		helper = SelfHelper
	}
	p = normalize(p)
	helperEnv := make([]string, 0, len(env))
	for _, kv := range env {
		if isLoaderVar(kv) {
			p.Restore = append(p.Restore, kv)
		} else {
			helperEnv = append(helperEnv, kv)
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox policy: %w", err)
	}
	out := make([]string, 0, len(argv)+4)
	out = append(out, helper, HelperArg, string(data), "--")
	return append(out, argv...), helperEnv, nil
}

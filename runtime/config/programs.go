package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/extspec"
)

// Repository programs. A trusted pi.toml names programs that pi starts —
// the bash shell and its command prefix, MCP servers, the commands of
// extensions' exec grants — and those programs may be files of the
// repository, which a pull can change while pi.toml stays the same. So
// trust records the sha256 of every such file, and a file that changed (or
// that is named now and was not recorded) untrusts the project.
//
// The rule, one place: every word of these settings —
//
//   - tools.bash.command_prefix and tools.bash.shell,
//   - every element of an [[mcp]] command and every value of its env,
//   - every exec grant pattern of a project [[extensions]] entry,
//
// split into words at blanks and at the shell's operator characters
// ; & | ( ) < > and `, quotes and backslashes removed, each word also cut at
// = and : (so --rcfile=./x.sh and PATH=./bin:... count), and expanded as a
// glob when it holds * ? or [ — is resolved against the project root and the
// working folder (where bash and MCP servers run), and a word without a
// slash is also looked up on PATH as exec does. Every result that is an
// existing regular file inside the project (its path or its real path, links
// followed) is pinned. Words that need the shell to compute them ($VAR,
// $(...), ~) are not resolved, and files that a pinned program itself loads
// (a script's own `source`, a server's imports) are not pinned: see
// docs/config.md.

// TrustedProgram is one repository file that a trusted pi.toml makes pi run,
// and its sha256 when the project was trusted.
type TrustedProgram struct {
	// Path is the file's absolute path (as named, links not followed).
	Path string `json:"path"`
	// Setting says which setting names it: "tools.bash.command_prefix",
	// "tools.bash.shell", `mcp "NAME" command`, `mcp "NAME" env`,
	// `extension "NAME" exec grant`.
	Setting string `json:"setting"`
	// SHA256 is the hex sha256 of the file's content (links followed).
	SHA256 string `json:"sha256"`
}

// programSetting is the text of one setting that names programs.
type programSetting struct {
	setting string
	texts   []string
}

// programSettings lists the settings of l that start processes.
func (l *layer) programSettings() []programSetting {
	var out []programSetting
	if l.bashPrefix != nil {
		out = append(out, programSetting{"tools.bash.command_prefix", []string{*l.bashPrefix}})
	}
	if l.bashShell != nil {
		out = append(out, programSetting{"tools.bash.shell", []string{*l.bashShell}})
	}
	for _, s := range l.mcp {
		if len(s.Command) > 0 {
			out = append(out, programSetting{fmt.Sprintf("mcp %q command", s.Name), s.Command})
		}
		if len(s.Env) > 0 {
			keys := make([]string, 0, len(s.Env))
			for k := range s.Env {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			vals := make([]string, len(keys))
			for i, k := range keys {
				vals[i] = s.Env[k]
			}
			out = append(out, programSetting{fmt.Sprintf("mcp %q env", s.Name), vals})
		}
	}
	for _, e := range l.extensions {
		if len(e.Grants.Exec) > 0 {
			out = append(out, programSetting{fmt.Sprintf("extension %q exec grant", e.Name), e.Grants.Exec})
		}
	}
	return out
}

// maxGlobMatches bounds what one glob word of a setting pins.
const maxGlobMatches = 256

// programFiles resolves l's program settings (the rule above) against root
// and cwd, and hashes every repository file found; in setting order, each
// path once. A file that cannot be read is recorded with an empty digest.
func programFiles(l *layer, root, cwd string) []TrustedProgram {
	out := []TrustedProgram{}
	if l == nil {
		return out
	}
	realRoot := canonicalDir(root)
	bases := []string{root}
	if cwd != "" && cwd != root {
		bases = append(bases, cwd)
	}
	seen := map[string]bool{}
	add := func(setting, path string) {
		path = filepath.Clean(path)
		if seen[path] {
			return
		}
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			return
		}
		real, err := filepath.EvalSymlinks(path)
		if !extspec.Within(root, path) && !extspec.Within(realRoot, path) && (err != nil || !extspec.Within(realRoot, real)) {
			return
		}
		seen[path] = true
		out = append(out, TrustedProgram{Path: path, Setting: setting, SHA256: fileDigest(path)})
	}
	for _, ps := range l.programSettings() {
		for _, text := range ps.texts {
			for _, w := range programWords(text) {
				if strings.ContainsAny(w, "$~") {
					continue
				}
				var paths []string
				if filepath.IsAbs(w) {
					paths = []string{w}
				} else {
					for _, b := range bases {
						paths = append(paths, filepath.Join(b, w))
					}
					if !strings.ContainsRune(w, '/') {
						if p, err := exec.LookPath(w); err == nil && filepath.IsAbs(p) {
							paths = append(paths, p)
						}
					}
				}
				for _, p := range paths {
					if !strings.ContainsAny(p, "*?[") {
						add(ps.setting, p)
						continue
					}
					matches, _ := filepath.Glob(p)
					for _, m := range matches[:min(len(matches), maxGlobMatches)] {
						add(ps.setting, m)
					}
				}
			}
		}
	}
	return out
}

// programWords splits a setting's text into the words that may name a file:
// at blanks and the shell's operator characters, quotes and backslashes
// removed; each word also cut at = and :.
func programWords(text string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		w := b.String()
		b.Reset()
		words = append(words, w)
		if strings.ContainsAny(w, "=:") {
			for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '=' || r == ':' }) {
				if part != w {
					words = append(words, part)
				}
			}
		}
	}
	var quote rune
	escaped := false
	for _, r := range text {
		switch {
		case escaped:
			b.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped = true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			b.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
		case strings.ContainsRune(" \t\n\r;&|()<>`", r):
			flush()
		default:
			b.WriteRune(r)
		}
	}
	flush()
	return words
}

// fileDigest is the hex sha256 of the file at path ("" when it cannot be
// read, which no recorded digest equals).
func fileDigest(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// programChange compares the program files found now with those recorded
// when the project was trusted; it says what changed, or "" when nothing did.
func programChange(was, now []TrustedProgram) string {
	recorded := map[string]TrustedProgram{}
	for _, p := range was {
		recorded[p.Path] = p
	}
	for _, p := range now {
		old, ok := recorded[p.Path]
		switch {
		case !ok:
			return fmt.Sprintf("file %s, which %s runs, was not recorded when it was trusted", p.Path, p.Setting)
		case p.SHA256 == "" || old.SHA256 != p.SHA256:
			return fmt.Sprintf("file %s, which %s runs, changed since it was trusted", p.Path, p.Setting)
		}
	}
	return ""
}

package extspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FSGrant is one parsed fs grant.
type FSGrant struct {
	// Writable is true for "rw:", false for "ro:".
	Writable bool
	// Path is absolute and clean.
	Path string
}

// String writes the grant back in its syntax: "ro:PATH" or "rw:PATH".
func (g FSGrant) String() string {
	if g.Writable {
		return "rw:" + g.Path
	}
	return "ro:" + g.Path
}

// CheckFSGrant checks the syntax of an fs grant: "ro:PATH" or "rw:PATH"
// with a PATH that is not empty and does not start with ~ (which is not
// expanded). Where it points is ResolveFSGrant's business.
func CheckFSGrant(grant string) error {
	if _, err := splitFSGrant(grant); err != nil {
		return fmt.Errorf("bad fs grant %q: %w", grant, err)
	}
	return nil
}

// ParseFSGrant parses "ro:PATH" or "rw:PATH"; a relative PATH is taken
// relative to root (the project root).
//
// # Errors
//
// A grant CheckFSGrant refuses, or a relative PATH with a relative root.
func ParseFSGrant(grant, root string) (FSGrant, error) {
	g, err := splitFSGrant(grant)
	if err != nil {
		return FSGrant{}, fmt.Errorf("parse fs grant %q: %w", grant, err)
	}
	if !filepath.IsAbs(g.Path) {
		if !filepath.IsAbs(root) {
			return FSGrant{}, fmt.Errorf("parse fs grant %q: project root %q is not absolute", grant, root)
		}
		g.Path = filepath.Join(root, g.Path)
	}
	g.Path = filepath.Clean(g.Path)
	return g, nil
}

// ResolvedFSGrant is an fs grant with its real location: what a mount of
// the grant really exposes after every symlink on the way is followed.
type ResolvedFSGrant struct {
	FSGrant
	// Real is the grant's directory with every symlink resolved (absolute,
	// clean). The sandbox mounts Real; trust records it.
	Real string
}

// ResolveFSGrant parses grant like ParseFSGrant and resolves its real path.
// This is the one rule for where a grant points: the extension host mounts
// the result and `pi trust` records it.
//
// # Errors
//
// Everything ParseFSGrant refuses; a PATH that does not exist or is not a
// directory; and a relative PATH (a project-relative grant) whose real path
// is not the project root or beneath it, for example because a folder of
// the project was replaced by a symlink to somewhere else, or because it
// climbs out with "..". An absolute PATH may point anywhere: whoever wrote
// it named the place. When PATH exists but is refused (not a directory,
// outside the project) the result still has FSGrant and Real set, saying
// where it points, for messages and for trust; otherwise it is zero.
func ResolveFSGrant(grant, root string) (ResolvedFSGrant, error) {
	g, err := ParseFSGrant(grant, root)
	if err != nil {
		return ResolvedFSGrant{}, err
	}
	real, err := filepath.EvalSymlinks(g.Path)
	if err != nil {
		return ResolvedFSGrant{}, fmt.Errorf("fs grant %q: %w", grant, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return ResolvedFSGrant{}, fmt.Errorf("fs grant %q: %w", grant, err)
	}
	if !st.IsDir() {
		return ResolvedFSGrant{FSGrant: g, Real: real}, fmt.Errorf("fs grant %q: %s is not a directory (grants mount directories)", grant, g.Path)
	}
	_, rel, _ := strings.Cut(grant, ":")
	if !filepath.IsAbs(filepath.FromSlash(rel)) {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			return ResolvedFSGrant{}, fmt.Errorf("fs grant %q: project root: %w", grant, err)
		}
		if !Within(realRoot, real) {
			return ResolvedFSGrant{FSGrant: g, Real: real}, fmt.Errorf("fs grant %q: resolves to %s, outside the project root %s; a project-relative grant must stay inside the project (write an absolute path to grant a folder elsewhere)", grant, real, realRoot)
		}
	}
	return ResolvedFSGrant{FSGrant: g, Real: real}, nil
}

// Within reports whether path is dir or lies beneath it; both must be
// absolute and clean.
func Within(dir, path string) bool {
	if dir == path || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// splitFSGrant is the syntax of an fs grant, the one place it is written.
func splitFSGrant(grant string) (FSGrant, error) {
	mode, path, ok := strings.Cut(grant, ":")
	if !ok || (mode != "ro" && mode != "rw") {
		return FSGrant{}, errors.New(`want "ro:PATH" or "rw:PATH"`)
	}
	if path == "" {
		return FSGrant{}, errors.New("empty PATH")
	}
	if strings.HasPrefix(path, "~") {
		return FSGrant{}, errors.New("~ is not expanded; write PATH relative to the project root or absolute")
	}
	return FSGrant{Writable: mode == "rw", Path: filepath.FromSlash(path)}, nil
}

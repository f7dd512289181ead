package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/internal/atomicfile"
)

// The folders pi loads code or decisions from without a pin of their own:
// the compilation cache (native code wazero maps and runs) and the
// lazy-load and declared records (which decide the hooks an extension has
// before its module runs). They follow the rule of pi.toml and trust.json
// (checkFileSafe: yours or root's, writable by no one else), checked on
// the whole tree when pi opens them, so a folder or an entry someone else
// could have written is never used.

// CheckPrivateTree refuses (ErrUnsafeFile, saying what to run) the folder
// dir when someone other than the current user or root could have written
// it or anything pi reads in it:
//
//   - each parent folder must be yours or root's, and writable by no one
//     else unless it has the sticky bit (as /tmp has: others then cannot
//     rename or replace what is yours in it);
//   - dir itself, and every folder and file beneath it, follow
//     checkFileSafe (yours or root's, not writable by others; a sticky bit
//     does not excuse dir, in which others could plant new entries);
//   - no entry beneath it may be a symbolic link or anything but a folder
//     or a regular file (pi and wazero make neither).
//
// Only the top-level entries for which walk returns true are looked into
// (nil: all of them): a cache shared with other programs is checked only
// where pi reads. A dir that does not exist yet is fine once its parents
// are (pi creates it mode 0700). what names the folder in messages
// ("compilation cache").
func CheckPrivateTree(dir, what string, walk func(name string) bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	real, rest, err := realExisting(abs)
	if err != nil {
		return err
	}
	if err := checkParents(real, abs, what, rest == ""); err != nil {
		return err
	}
	if rest != "" {
		return nil // created by pi, 0700, beneath checked parents
	}
	fi, err := os.Stat(real)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a folder", what, abs)
	}
	if err := checkFileSafe(abs, what, fi); err != nil {
		return err
	}
	top, err := os.ReadDir(real)
	if err != nil {
		return err
	}
	for _, d := range top {
		if walk != nil && !walk(d.Name()) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(real, d.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed meanwhile
				}
				return err
			}
			shown := filepath.Join(abs, strings.TrimPrefix(p, real))
			if !d.IsDir() && !d.Type().IsRegular() {
				return &unsafeFileError{fmt.Sprintf(
					"refuse %s %s: %s is a %s, which pi never makes there, so someone may have planted it; remove it: rm %s",
					what, abs, shown, atomicfile.Kind(d.Type()), shown)}
			}
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			return checkFileSafe(shown, what+" entry", fi)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// realExisting resolves the symbolic links of the longest existing prefix
// of abs: real is that prefix's real path, rest what does not exist yet.
func realExisting(abs string) (real, rest string, err error) {
	p := abs
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), rest, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// checkParents checks the existing folders above real (the resolved path
// of abs; real itself too when it does not exist yet, as the folder pi will
// create it in): each yours or root's, writable by others only when sticky.
func checkParents(real, abs, what string, exists bool) error {
	p := real
	if exists {
		p = filepath.Dir(real)
	}
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if err := checkParentSafe(p, abs, what, fi); err != nil {
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		up := filepath.Dir(p)
		if up == p {
			return nil
		}
		p = up
	}
}

// checkParentSafe is checkFileSafe for a folder above a private tree: a
// sticky folder (/tmp) may be writable by others.
func checkParentSafe(p, abs, what string, fi os.FileInfo) error {
	if fi.Mode()&os.ModeSticky != 0 {
		fi = stickyView{fi}
	}
	if err := checkFileSafe(p, "folder", fi); err != nil {
		return &unsafeFileError{fmt.Sprintf("refuse %s %s: its parent %s", what, abs, strings.TrimPrefix(err.Error(), "refuse "))}
	}
	return nil
}

// stickyView is a sticky folder's FileInfo without its write bits for
// others: with the sticky bit, they can add entries but not touch ours.
type stickyView struct{ os.FileInfo }

func (s stickyView) Mode() os.FileMode { return s.FileInfo.Mode() &^ 0o022 }

// TrustedCacheDir is CacheDir(piHome) when CheckPrivateTree accepts it,
// looking into what pi reads there: wazero's folders ("wazero-*", the
// native code it loads), the records of which entry holds a module's code
// ("pi-compiled") and the MCP tool lists ("mcp"); else "" (run
// without the cache) and the refusal, to show as a warning.
func TrustedCacheDir(piHome string) (string, error) {
	dir := CacheDir(piHome)
	err := CheckPrivateTree(dir, "cache folder", func(name string) bool {
		return strings.HasPrefix(name, "wazero-") || name == "mcp" || name == "pi-compiled"
	})
	if err != nil {
		return "", fmt.Errorf("%w; pi runs without the cache (extensions compile at every start)", err)
	}
	return dir, nil
}

// RecordsDir is dir (a folder of records pi takes decisions from: the
// lazy-load or declared records) when CheckPrivateTree accepts it, else ""
// (keep no records) and the refusal, to show as a warning.
func RecordsDir(dir, what string) (string, error) {
	if dir == "" {
		return "", nil
	}
	if err := CheckPrivateTree(dir, what, nil); err != nil {
		return "", fmt.Errorf("%w; pi runs without them", err)
	}
	return dir, nil
}

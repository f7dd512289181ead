package fleet

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MaxSourceBytes bounds a packed repo.
const MaxSourceBytes = 256 << 20

// putSource packs the folder dir and stores it under its content's hash
// (tasks over the same tree share it).
func (f *Fleet) putSource(ctx context.Context, dir string) (string, error) {
	b, err := packDir(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	name := "src/" + hex.EncodeToString(sum[:]) + ".tar.gz"
	if _, err := f.obs.GetInfo(ctx, name); err == nil {
		return name, nil
	}
	err = retry(ctx, 60*time.Second, func(ctx context.Context) error {
		_, err := f.obs.PutBytes(ctx, name, b)
		return err
	})
	return name, err
}

// packDir is dir as a gzipped tar: in a git work tree its tracked and
// untracked-but-not-ignored files, else every file; never .git.
func packDir(dir string) ([]byte, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("not a folder")
	}
	files, err := gitFiles(dir)
	if err != nil {
		files = nil
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if p == dir || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(files)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, rel := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted but still in the index
		}
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: rel, Mode: int64(fi.Mode().Perm()), Format: tar.FormatPAX}
		switch {
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		default:
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			fh, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(tw, fh)
			fh.Close()
			if err != nil {
				return nil, err
			}
		}
		if buf.Len() > MaxSourceBytes {
			return nil, fmt.Errorf("more than %d MiB packed", MaxSourceBytes>>20)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gitFiles lists a git work tree's files, relative to dir.
func gitFiles(dir string) ([]string, error) {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !strings.HasPrefix(f, ".git/") {
			files = append(files, f)
		}
	}
	return files, nil
}

// unpack extracts a packed repo into dir; an entry that would land
// outside dir (.., an absolute name, through a symlink) is an error.
func unpack(data []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(hdr.Name)
		if !filepath.IsLocal(name) || strings.HasPrefix(name, ".git"+string(filepath.Separator)) || name == ".git" {
			return fmt.Errorf("source entry %q is outside the workspace", hdr.Name)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(filepath.Dir(dst)); err != nil || !within(dir, real) {
			return fmt.Errorf("source entry %q goes through a symlink out of the workspace", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
			total += hdr.Size
			if total > 4*MaxSourceBytes {
				return fmt.Errorf("source unpacks to more than %d MiB", 4*MaxSourceBytes>>20)
			}
			fh, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fs.FileMode(hdr.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(fh, tr)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(hdr.Linkname, dst); err != nil {
				return err
			}
		}
	}
}

func within(root, p string) bool {
	root, _ = filepath.EvalSymlinks(root)
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

package conversation

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/imageutil"
	"github.com/pi-go/pi/runtime/content"
)

// Attach reads the files that the @PATH words of a typed line name (an @
// at the start or after white space, up to the next white space; trailing
// punctuation dropped) and returns the prompt with them as AttachFiles
// makes it: the files first, then the line. A word that names no file
// stays text (a handle, a decorator, an e-mail address).
//
// # Errors
//
// As AttachFiles: a folder, a file too large, a file neither text nor an
// image; nothing is sent then.
func Attach(cwd, line string) (Prompt, error) {
	var paths []string
	seen := map[string]bool{}
	for _, f := range strings.Fields(line) {
		tok, ok := strings.CutPrefix(f, "@")
		tok = strings.TrimRight(tok, ",;:!?)")
		if !ok || tok == "" || seen[tok] {
			continue
		}
		if _, err := os.Stat(resolve(cwd, tok)); err != nil {
			continue
		}
		seen[tok] = true
		paths = append(paths, tok)
	}
	if len(paths) == 0 {
		return Prompt{Text: line}, nil
	}
	text, images, err := AttachFiles(cwd, paths)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{Text: text + line, Images: images}, nil
}

// resolve makes a typed path absolute: ~/ is the home folder, a relative
// path is under cwd.
func resolve(cwd, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return p
}

// MaxTextAttachment bounds a text file attached with @file.
const MaxTextAttachment = 4 << 20

// AttachFiles reads the @file arguments (relative to cwd; ~ is the home
// folder) as the reference does: a text file becomes
// `<file name="PATH">\nCONTENT\n</file>\n` in the prompt, an image an image
// block (shrunk to what a model takes) with `<file name="PATH"></file>\n`;
// empty files are skipped.
//
// # Errors
//
// A file that does not exist or is a folder, a text file over 4 MiB, a
// file that is neither UTF-8 text nor an image pi can send.
func AttachFiles(cwd string, paths []string) (string, []content.Block, error) {
	var text strings.Builder
	var images []content.Block
	for _, p := range paths {
		path := resolve(cwd, p)
		st, err := os.Stat(path)
		switch {
		case err != nil:
			return "", nil, fmt.Errorf("@%s: file not found: %s", p, path)
		case st.IsDir():
			return "", nil, fmt.Errorf("@%s: %s is a folder; attach files, or ask the model to look at the folder", p, path)
		case st.Size() == 0:
			continue
		case st.Size() > imageutil.MaxFileBytes:
			return "", nil, fmt.Errorf("@%s: %s is %s, too large to attach; let the model read the part it needs", p, path, fileSize(st.Size()))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return "", nil, fmt.Errorf("@%s: %w", p, err)
		}
		if mime := imageutil.DetectMIME(data); mime != "" {
			fit := imageutil.Fit(data, mime)
			if fit.Data == nil {
				fmt.Fprintf(&text, "<file name=\"%s\">[Image omitted: %s]</file>\n", path, fit.Omitted)
				continue
			}
			images = append(images, content.Image(base64.StdEncoding.EncodeToString(fit.Data), fit.MIME))
			fmt.Fprintf(&text, "<file name=\"%s\"></file>\n", path)
			continue
		}
		switch {
		case len(data) > MaxTextAttachment:
			return "", nil, fmt.Errorf("@%s: %s is %s, more than the %s a text attachment may be; let the model read the part it needs", p, path, fileSize(int64(len(data))), fileSize(MaxTextAttachment))
		case !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0:
			return "", nil, fmt.Errorf("@%s: %s is neither text (UTF-8) nor an image pi can send (PNG, JPEG, GIF, WebP)", p, path)
		}
		fmt.Fprintf(&text, "<file name=\"%s\">\n%s\n</file>\n", path, data)
	}
	return text.String(), images, nil
}

// fileSize is n bytes as "1.5 MiB", "3.0 KiB" or "12 bytes".
func fileSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

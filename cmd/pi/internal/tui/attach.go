package tui

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/pi-go/pi/runtime/content"
)

// Limits of attached files.
const (
	// MaxAttachText bounds an attached text file; a larger one is refused
	// (ask the model to read it: read pages through it).
	MaxAttachText = 256 << 10
	// MaxAttachImage bounds an attached image file.
	MaxAttachImage = 10 << 20
	// maxCompletions bounds the names a completion lists.
	maxCompletions = 50
)

// imageTypes are the image types attached as image blocks.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// attachment is one @path of a prompt, read.
type attachment struct {
	path  string // as typed
	text  string // a text file's content
	image *content.Block
}

// atTokens finds the @path words of a prompt: an @ at the start or after
// white space, up to the next white space. "@" alone and e-mail addresses
// (an @ inside a word) are not paths.
func atTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '@' || (i > 0 && !isSpace(s[i-1])) {
			continue
		}
		j := i + 1
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if j > i+1 {
			out = append(out, s[i+1:j])
		}
		i = j
	}
	return out
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// resolvePath makes a typed path absolute: ~/ is the home folder, a
// relative path is under cwd.
func resolvePath(cwd, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// readAttachments reads the files the @path words of s name. A word that
// names no file stays text (it may be a handle or a decorator); a file
// that cannot be attached (a folder, too large, binary, unreadable) is an
// error that says so, and nothing is sent.
func readAttachments(cwd, s string) ([]attachment, error) {
	var out []attachment
	seen := map[string]bool{}
	for _, tok := range atTokens(s) {
		tok = strings.TrimRight(tok, ",;:!?)")
		if tok == "" || seen[tok] {
			continue
		}
		abs := resolvePath(cwd, tok)
		st, err := os.Stat(abs)
		if err != nil {
			continue // not a file: plain text
		}
		seen[tok] = true
		if st.IsDir() {
			return nil, fmt.Errorf("@%s is a folder; attach files, or ask the model to look at the folder", tok)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("@%s is not a regular file", tok)
		}
		if st.Size() > MaxAttachImage {
			return nil, fmt.Errorf("@%s is %d bytes, too large to attach; ask the model to read it", tok, st.Size())
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, fmt.Errorf("attach @%s: %w", tok, err)
		}
		mime := http.DetectContentType(data)
		if imageTypes[mime] {
			b := content.Image(base64.StdEncoding.EncodeToString(data), mime)
			out = append(out, attachment{path: tok, image: &b})
			continue
		}
		if len(data) > MaxAttachText {
			return nil, fmt.Errorf("@%s is %d bytes, more than the %d a text attachment may have; ask the model to read it", tok, len(data), MaxAttachText)
		}
		if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
			return nil, fmt.Errorf("@%s is a binary file (%s); only text and images (png, jpeg, gif, webp) can be attached", tok, mime)
		}
		out = append(out, attachment{path: tok, text: string(data)})
	}
	return out, nil
}

// buildPrompt is the text sent for a prompt with its attachments: the
// prompt, then each text file in a <file name="..."> element (as the
// reference inlines them); images are returned as blocks.
func buildPrompt(text string, atts []attachment) (string, []content.Block) {
	var b strings.Builder
	b.WriteString(text)
	var images []content.Block
	for _, a := range atts {
		if a.image != nil {
			images = append(images, *a.image)
			continue
		}
		fmt.Fprintf(&b, "\n\n<file name=%q>\n%s", a.path, a.text)
		if !strings.HasSuffix(a.text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("</file>")
	}
	return b.String(), images
}

// completePath completes the @path word that ends at the cursor: the
// names in its folder that start with what was typed (dot files only when
// a dot was typed; folders end in /). It returns the candidates, sorted.
func completePath(cwd, typed string) []string {
	dirPart, base := "", typed
	if i := strings.LastIndexByte(typed, '/'); i >= 0 {
		dirPart, base = typed[:i+1], typed[i+1:]
	}
	dir := cwd
	if dirPart != "" {
		dir = resolvePath(cwd, dirPart)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, base) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		full := dirPart + n
		if e.IsDir() {
			full += "/"
		} else if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.IsDir() {
				full += "/"
			}
		}
		out = append(out, full)
		if len(out) >= maxCompletions {
			break
		}
	}
	sort.Strings(out)
	return out
}

// commonPrefix is the longest prefix all of ss share.
func commonPrefix(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	for !utf8.ValidString(p) {
		p = p[:len(p)-1]
	}
	return p
}

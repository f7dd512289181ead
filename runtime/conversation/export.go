package conversation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/session/htmlexport"
)

// WriteHTML writes s as one self-contained HTML page (package
// runtime/session/htmlexport), its tree as TreeLines shows it at the top.
//
// # Errors
//
// A failed write.
func WriteHTML(w io.Writer, s *session.Session) error {
	var outline []htmlexport.OutlineLine
	for _, l := range TreeLines(s) {
		outline = append(outline, htmlexport.OutlineLine{EntryID: l.EntryID, Prefix: l.Prefix, Text: l.Text, Label: l.Label, Current: l.Current, OnPath: l.OnPath})
	}
	return htmlexport.Write(w, s, htmlexport.Options{Outline: outline})
}

// Export writes the session to path (relative to the working directory):
// the reference's JSONL format when it ends in .jsonl, else the HTML page
// (WriteHTML); "" means pi-session-ID.html in the working directory. It
// returns the file written. An existing file is replaced.
//
// # Errors
//
// The file cannot be written.
func (c *Conversation) Export(path string) (string, error) {
	return c.export(path, !strings.HasSuffix(strings.ToLower(path), ".jsonl"))
}

// ExportHTML is Export as the HTML page whatever path's extension (RPC
// export_html).
//
// # Errors
//
// As Export.
func (c *Conversation) ExportHTML(path string) (string, error) { return c.export(path, true) }

func (c *Conversation) export(path string, asHTML bool) (string, error) {
	s := c.Session()
	if path == "" {
		path = "pi-session-" + s.ID() + ".html"
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.rt.Cwd(), path)
	}
	var data []byte
	if !asHTML {
		b, err := s.JSONL()
		if err != nil {
			return "", fmt.Errorf("export: %w", err)
		}
		data = b
	} else {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, s); err != nil {
			return "", fmt.Errorf("export: %w", err)
		}
		data = buf.Bytes()
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	return path, nil
}

// Import copies the session file at path (relative to the working
// directory; the reference's JSONL format, from pi or the reference) into
// this folder's sessions and goes on in it, as the reference's /import
// does; a file that is already there is resumed.
//
// # Errors
//
// agent.ErrBusy while a run goes on; sessions are not saved in this run
// (--no-session); the file is not a session (session.ErrNotSession); a
// different file of the same name is already among the sessions.
func (c *Conversation) Import(path string) error {
	if err := c.idle("import session"); err != nil {
		return err
	}
	o := c.sessionOptions()
	if o.Disabled {
		return errors.New("import session: sessions are not saved in this run (--no-session)")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.rt.Cwd(), path)
	}
	if _, err := session.Read(path, session.OpenOptions{}); err != nil {
		return fmt.Errorf("import session: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("import session: %w", err)
	}
	dir := SessionDir(c.rt.PIHome(), c.rt.Cwd(), o)
	dest := filepath.Join(dir, filepath.Base(path))
	if !strings.HasSuffix(dest, ".jsonl") {
		dest += ".jsonl"
	}
	switch have, err := os.ReadFile(dest); {
	case err == nil && bytes.Equal(have, data):
	case err == nil || samePath(path, dest):
		return fmt.Errorf("import session: %s already holds another session of that name; rename the file to import", dest)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("import session: %w", err)
	default:
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("import session: %w", err)
		}
		if err := atomicfile.WriteFile(dest, data, 0o600); err != nil {
			return fmt.Errorf("import session: %w", err)
		}
	}
	return c.SwitchSession(dest)
}

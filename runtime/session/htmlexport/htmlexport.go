// Package htmlexport writes a session as one self-contained HTML page:
// the current branch's messages, thinking, tool calls and their results,
// edit diffs and images, and the session's tree as an outline.
//
// The page loads nothing: it has no script, its style is inline, images
// are data: URIs of the session's own image blocks, and a
// Content-Security-Policy meta element (default-src 'none'; img-src data:;
// style-src 'unsafe-inline') keeps a browser from fetching anything even
// if some text got through as markup. Text is never read as markup: every
// text the model, a tool or a person wrote is HTML-escaped and shown as
// preformatted text (a markdown image pointing to a URL stays the text
// that names it), with control characters (terminal escape sequences)
// left out.
package htmlexport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/pi-go/pi/runtime/session"
)

// CSP is the page's Content-Security-Policy.
const CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

// OutlineLine is one line of the session's tree shown at the top of the
// page (conversation.TreeLines gives them).
type OutlineLine struct {
	EntryID, Prefix, Text, Label string
	Current, OnPath              bool
}

// Options say what else the page shows.
type Options struct {
	// Outline is the session's tree; none when empty.
	Outline []OutlineLine
}

// imageTypes are the image types shown inline; another block shows as a
// note.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Write writes the page of s to w.
//
// # Errors
//
// A failed write.
func Write(w io.Writer, s *session.Session, o Options) error {
	bw := bufio.NewWriter(w)
	p := &page{w: bw, labels: s.Labels()}
	h := s.Header()
	title := s.Name()
	if title == "" {
		title = "pi session " + h.ID
	}
	p.raw(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + CSP + `">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>`)
	p.text(title)
	p.raw("</title>\n<style>" + style + "</style></head>\n<body>\n<header><h1>")
	p.text(title)
	p.raw("</h1>\n<dl>")
	p.field("session", h.ID)
	p.field("folder", h.Cwd)
	p.field("started", h.Timestamp)
	if h.ParentSession != "" {
		p.field("forked from", h.ParentSession)
	}
	p.raw("</dl></header>\n")
	if len(o.Outline) > 0 {
		p.raw(`<nav><details open><summary>Tree (` + fmt.Sprint(len(o.Outline)) + ` entries)</summary><pre class="tree">`)
		for _, l := range o.Outline {
			cls := "off"
			if l.OnPath {
				cls = "on"
			}
			if l.Current {
				cls += " current"
			}
			p.raw(`<span class="` + cls + `">`)
			p.text(l.Prefix)
			if l.OnPath {
				p.raw(`<a href="#e-` + html.EscapeString(l.EntryID) + `">`)
				p.text(l.EntryID)
				p.raw("</a>")
			} else {
				p.text(l.EntryID)
			}
			p.raw(" ")
			if l.Label != "" {
				p.raw(`<span class="label">`)
				p.text("[" + l.Label + "]")
				p.raw("</span> ")
			}
			p.text(cutLine(l.Text, 160))
			if l.Current {
				p.raw(" ← current")
			}
			p.raw("</span>\n")
		}
		p.raw("</pre></details></nav>\n")
	}
	p.raw("<main>\n")
	for _, e := range s.Branch() {
		p.entry(e)
	}
	p.raw("</main>\n<footer>Exported by pi on " + time.Now().UTC().Format(time.RFC3339) + ". This page loads nothing from the network.</footer>\n</body></html>\n")
	return p.flush()
}

type page struct {
	w      *bufio.Writer
	labels map[string]string
	err    error
}

func (p *page) raw(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

// text writes s escaped, without control characters but tab and newline.
func (p *page) text(s string) { p.raw(html.EscapeString(clean(s))) }

func (p *page) flush() error {
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

func (p *page) field(name, value string) {
	p.raw("<dt>" + name + "</dt><dd>")
	p.text(value)
	p.raw("</dd>")
}

// clean drops C0 and C1 control characters but tab and newline, DEL, and
// invalid UTF-8.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r == 0xFFFD || (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r < 0xa0) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == 0xFFFD || (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r < 0xa0) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func cutLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// open starts an entry's section.
func (p *page) open(e *session.Entry, class, heading string) {
	p.raw(`<section class="` + class + `" id="e-` + html.EscapeString(e.ID) + `"><h2>`)
	p.text(heading)
	if l := p.labels[e.ID]; l != "" {
		p.raw(` <span class="label">`)
		p.text(l)
		p.raw("</span>")
	}
	p.raw(`<span class="meta">`)
	p.text(e.ID + " · " + e.Timestamp)
	p.raw("</span></h2>\n")
}

func (p *page) close() { p.raw("</section>\n") }

func (p *page) pre(class, s string) {
	p.raw(`<pre class="` + class + `">`)
	p.text(s)
	p.raw("</pre>\n")
}

func (p *page) entry(e *session.Entry) {
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil {
			p.open(e, "note", "unreadable message")
			p.close()
			return
		}
		p.message(e, m)
	case session.TypeCompaction:
		p.open(e, "summary", fmt.Sprintf("Compaction (%d tokens summarized)", e.TokensBefore))
		p.pre("text", e.Summary)
		p.close()
	case session.TypeBranchSummary:
		p.open(e, "summary", "Summary of a branch left")
		p.pre("text", e.Summary)
		p.close()
	case session.TypeCustomMessage:
		m, _ := e.ContextMessage()
		p.open(e, "custom", "Extension message ("+e.CustomType+")")
		p.blocks(m.Content)
		p.close()
	case session.TypeModelChange:
		p.open(e, "note", "Model: "+e.Provider+"/"+e.ModelID)
		p.close()
	case session.TypeThinkingLevelChange:
		p.open(e, "note", "Thinking level: "+e.ThinkingLevel)
		p.close()
	}
}

func (p *page) message(e *session.Entry, m *session.Message) {
	switch m.Role {
	case session.RoleUser:
		p.open(e, "user", "User")
		p.blocks(m.Content)
	case session.RoleAssistant:
		head := "Assistant"
		if m.Model != "" {
			head += " (" + m.Model + ")"
		}
		p.open(e, "assistant", head)
		p.blocks(m.Content)
		if m.ErrorMessage != "" {
			p.pre("error", m.ErrorMessage)
		}
	case session.RoleToolResult:
		head := "Result of " + m.ToolName
		cls := "tool"
		if m.IsError {
			head, cls = "Error from "+m.ToolName, "tool error"
		}
		p.open(e, cls, head)
		p.blocks(m.Content)
		var d struct {
			Diff string `json:"diff"`
		}
		if len(m.Details) > 0 && json.Unmarshal(m.Details, &d) == nil && d.Diff != "" {
			p.diff(d.Diff)
		}
	case session.RoleBashExecution:
		p.open(e, "tool", "You ran")
		p.pre("command", "$ "+m.Command)
		p.pre("output", m.Output)
	default:
		p.open(e, "custom", m.Role)
		if blocks, ok := session.UserContent(*m); ok {
			p.blocks(blocks)
		}
	}
	p.close()
}

func (p *page) blocks(blocks []session.Block) {
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text != "" {
				p.pre("text", b.Text)
			}
		case "thinking":
			p.raw("<details class=\"thinking\"><summary>Thinking</summary>")
			p.pre("text", b.Thinking)
			p.raw("</details>\n")
		case "image":
			if imageTypes[b.MimeType] && isBase64(b.Data) {
				p.raw(`<img alt="image" src="data:` + b.MimeType + `;base64,` + b.Data + `">` + "\n")
			} else {
				p.pre("note", "(an image of type "+b.MimeType+" that is not shown)")
			}
		case "toolCall":
			p.call(b)
		}
	}
}

// call shows a tool call: its name and arguments, a diff for edit, the
// content for write, the command for bash.
func (p *page) call(b session.Block) {
	p.raw(`<div class="call"><div class="callname">`)
	p.text("→ " + b.Name)
	p.raw("</div>\n")
	defer p.raw("</div>\n")
	var args map[string]json.RawMessage
	_ = json.Unmarshal(b.Arguments, &args)
	str := func(k string) (string, bool) {
		var s string
		if raw, ok := args[k]; ok && json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return "", false
	}
	switch {
	case b.Name == "bash":
		if c, ok := str("command"); ok {
			p.pre("command", "$ "+c)
			return
		}
	case b.Name == "write":
		path, _ := str("path")
		if c, ok := str("content"); ok {
			p.pre("command", path)
			p.pre("output", c)
			return
		}
	case b.Name == "edit":
		path, _ := str("path")
		var edits []struct {
			OldText string `json:"oldText"`
			NewText string `json:"newText"`
		}
		if raw, ok := args["edits"]; ok && json.Unmarshal(raw, &edits) == nil && len(edits) > 0 {
			p.pre("command", path)
			var d strings.Builder
			for i, ed := range edits {
				if i > 0 {
					d.WriteString("…\n")
				}
				for _, l := range strings.Split(ed.OldText, "\n") {
					d.WriteString("-" + l + "\n")
				}
				for _, l := range strings.Split(ed.NewText, "\n") {
					d.WriteString("+" + l + "\n")
				}
			}
			p.diff(d.String())
			return
		}
	}
	var pretty strings.Builder
	if len(b.Arguments) > 0 {
		var v any
		if json.Unmarshal(b.Arguments, &v) == nil {
			enc := json.NewEncoder(&pretty)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			_ = enc.Encode(v)
		}
	}
	p.pre("args", strings.TrimRight(pretty.String(), "\n"))
}

// diff shows a unified diff, its added and removed lines colored.
func (p *page) diff(d string) {
	p.raw(`<pre class="diff">`)
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			p.raw(`<span class="add">`)
		case strings.HasPrefix(l, "-"):
			p.raw(`<span class="del">`)
		default:
			p.raw(`<span>`)
		}
		p.text(l)
		p.raw("</span>") // a block each: no newline between them
	}
	p.raw("</pre>\n")
}

func isBase64(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

const style = `
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4rem}h2{font-size:.95rem;margin:0 0 .4rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;font-size:.85rem;color:#555}dd{margin:0}
pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font:13px/1.45 ui-monospace,monospace}
section{border-left:4px solid #ccc;background:#fff;padding:.6rem .9rem;margin:.8rem 0;border-radius:4px}
section.user{border-color:#3b82f6}section.assistant{border-color:#10b981}section.tool{border-color:#a3a3a3}
section.error,pre.error{border-color:#ef4444;color:#b91c1c}section.summary{border-color:#f59e0b;background:#fffbeb}
section.note{border-color:#e5e7eb;color:#666;padding:.2rem .9rem}section.custom{border-color:#8b5cf6}
pre.text{font-family:inherit;font-size:15px}
.meta{float:right;font-weight:normal;color:#999;font-size:.75rem}
.label{background:#fde68a;border-radius:3px;padding:0 .3rem;font-weight:normal}
.call{background:#f3f4f6;border-radius:4px;padding:.3rem .6rem;margin:.4rem 0}.callname{font-weight:600}
pre.command{color:#374151;font-weight:600}pre.output,pre.args{color:#374151;max-height:40rem;overflow:auto}
pre.diff span{display:block;min-height:1.45em}pre.diff .add{background:#dcfce7}pre.diff .del{background:#fee2e2}
.thinking{color:#666}.thinking summary{cursor:pointer}
img{max-width:100%}
pre.tree{font-size:12px}pre.tree .off{color:#999}pre.tree .current{font-weight:700}
footer{color:#999;font-size:.75rem;margin-top:2rem}
`

package htmlexport_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-go/pi/runtime/session"
	"github.com/pi-go/pi/runtime/session/htmlexport"
)

// hostileSession is a session whose every text tries to run a script,
// load something, or reach the terminal; markers are what a script that
// ran would leave.
func hostileSession(t *testing.T, url string) *session.Session {
	t.Helper()
	s, err := session.Create(session.CreateOptions{Cwd: "/tmp/<b>cwd</b>", InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	var img bytes.Buffer
	m := image.NewRGBA(image.Rect(0, 0, 4, 4))
	m.Set(1, 1, color.RGBA{255, 0, 0, 255})
	png.Encode(&img, m)
	add := func(m session.Message) string {
		id, err := s.AppendMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	text := func(s string) []session.Block { return []session.Block{{Type: "text", Text: s}} }
	first := add(session.Message{Role: session.RoleUser, Content: append(text("<script>document.body.setAttribute('data-x','p'+'wned')</script> see ![chart]("+url+"/md.png) and <img src=x onerror=\"document.title='p'+'wned'\">"),
		session.Block{Type: "image", MimeType: "image/png", Data: base64.StdEncoding.EncodeToString(img.Bytes())},
		session.Block{Type: "image", MimeType: `image/png" onerror="document.title='bad'`, Data: "AAAA"})})
	add(session.Message{Role: session.RoleAssistant, StopReason: "toolUse", Model: "m</h2><script>document.title='p'+'wned'</script>",
		Content: []session.Block{
			{Type: "thinking", Thinking: "</pre></details><iframe src=\"" + url + "/frame\"></iframe>"},
			{Type: "text", Text: "[click me](javascript:document.title='p'+'wned') <a href=\"javascript:alert(1)\">x</a> <link rel=stylesheet href=\"" + url + "/s.css\">"},
			{Type: "toolCall", ID: "c1", Name: "edit", Arguments: []byte(`{"path":"a.go","edits":[{"oldText":"old <b>","newText":"new </pre><script>document.title='p'+'wned'</script>"}]}`)},
			{Type: "toolCall", ID: "c2", Name: "bash", Arguments: []byte(`{"command":"printf '\u001b]0;title\u0007\u001b[31mred'"}`)},
		}})
	add(session.Message{Role: session.RoleToolResult, ToolCallID: "c2", ToolName: "bash", Content: text("\x1b[31mred\x1b[0m \x1b]8;;" + url + "/osc\x1b\\link\x1b]8;;\x1b\\ <style>body{background:url(" + url + "/bg.png)}</style>"),
		Details: []byte(`{"diff":"-a <script>x</script>\n+b"}`)})
	add(session.Message{Role: session.RoleAssistant, StopReason: "stop", Content: text("done <svg onload=\"document.title='p'+'wned'\"></svg>")})
	if _, err := s.AppendLabel(first, "<script>document.title='p'+'wned'</script>"); err != nil {
		t.Fatal(err)
	}
	return s
}

// The page is self-contained and inert: everything escaped, the CSP
// meta, no script, no URL but data: ones in an attribute.
func TestPageIsInert(t *testing.T) {
	s := hostileSession(t, "http://127.0.0.1:9")
	var buf bytes.Buffer
	if err := htmlexport.Write(&buf, s, htmlexport.Options{Outline: []htmlexport.OutlineLine{{EntryID: "e1", Label: "<i>l</i>", Text: "<script>x</script>", OnPath: true, Current: true}}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">`) {
		t.Fatal("no CSP meta")
	}
	lower := strings.ToLower(page)
	for _, bad := range []string{"<script", "<iframe", "<svg", "<link", "\x1b", "\x07", "<style>body{background"} {
		if strings.Contains(lower, bad) {
			i := strings.Index(lower, bad)
			t.Errorf("the page holds %q: …%s…", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	// Every tag of the page: none has an event handler or a URL but a
	// data: image and the page's own anchors.
	for _, tag := range regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindAllString(page, -1) {
		if regexp.MustCompile(`(?i)\son[a-z]+=|javascript:|(src|href)="(https?:|//)`).MatchString(tag) {
			t.Errorf("tag %s", tag)
		}
	}
	if strings.Count(page, "<img ") != 1 || !strings.Contains(page, `<img alt="image" src="data:image/png;base64,`) {
		t.Error("the PNG is not the page's one image")
	}
}

// In a real browser (Debian's chromium, headless): the page renders (the
// texts, the diff, the image), no script of the session's runs (the
// title and body keep their values), and nothing is requested from the
// network — not the markdown image's URL, nor any other.
func TestPageInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium): the HTML export's browser test cannot run")
	}
	var hits atomic.Int32
	var paths atomic.Value
	paths.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		paths.Store(paths.Load().(string) + " " + r.URL.Path)
	}))
	defer srv.Close()
	s := hostileSession(t, srv.URL)
	dir := t.TempDir()
	file := filepath.Join(dir, "session.html")
	var buf bytes.Buffer
	if err := htmlexport.Write(&buf, s, htmlexport.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--virtual-time-budget=3000", "--dump-dom", "file://"+file)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, errb.String())
	}
	dom := out.String()
	if !strings.Contains(dom, "<title>pi session "+s.ID()+"</title>") {
		t.Errorf("the title changed (a script ran?):\n%s", dom[:min(len(dom), 600)])
	}
	if strings.Contains(dom, "data-x=") || strings.Contains(dom, "<iframe") || strings.Contains(dom, "<svg") {
		t.Errorf("the DOM holds what a hostile text made:\n%s", dom)
	}
	for _, want := range []string{"&lt;script&gt;document.body.setAttribute", "![chart](" + srv.URL + "/md.png)", `<span class="add">+new &lt;/pre&gt;&lt;script&gt;`, `src="data:image/png;base64,`, "[click me](javascript:"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the page made %d requests:%s", n, paths.Load())
	}
}

package builtin

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/webp"

	"github.com/pi-go/pi/internal/output"
)

// numberedLines returns "line 1\nline 2\n...line n" (no trailing newline).
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "line %d", i)
	}
	return b.String()
}

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "small.txt"), "alpha\nbeta\ngamma\n")
	mustWrite(t, filepath.Join(dir, "ten.txt"), numberedLines(10))
	mustWrite(t, filepath.Join(dir, "long.txt"), numberedLines(2500))
	// 1000 lines of 100 bytes (with the newline): the 50KB limit hits first.
	mustWrite(t, filepath.Join(dir, "wide.txt"), strings.Repeat(strings.Repeat("w", 99)+"\n", 1000))
	mustWrite(t, filepath.Join(dir, "oneline.txt"), "short\n"+strings.Repeat("x", 60*1024)+"\nafter")
	mustWrite(t, filepath.Join(dir, "empty.txt"), "")
	mustWrite(t, filepath.Join(dir, "crlf.txt"), "a\r\nb\r\n")
	mustWrite(t, filepath.Join(dir, "fake.png"), "not an image\n")
	tests := []struct {
		name    string
		args    string
		want    string // exact text, or "golden:NAME"
		isError bool
	}{
		{"whole small file", `{"path":"small.txt"}`, "alpha\nbeta\ngamma\n", false},
		{"offset", `{"path":"ten.txt","offset":9}`, "line 9\nline 10", false},
		{"offset and limit stop early", `{"path":"ten.txt","offset":3,"limit":2}`, "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]", false},
		{"limit to the end", `{"path":"ten.txt","offset":8,"limit":3}`, "line 8\nline 9\nline 10", false},
		{"limit past the end", `{"path":"ten.txt","offset":8,"limit":30}`, "line 8\nline 9\nline 10", false},
		{"offset 0 reads from the start", `{"path":"ten.txt","offset":0,"limit":1}`, "line 1\n\n[9 more lines in file. Use offset=2 to continue.]", false},
		{"line limit", `{"path":"long.txt"}`, numberedLines(2000) + "\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]", false},
		{"line limit from an offset", `{"path":"long.txt","offset":2401}`, strings.Join(strings.Split(numberedLines(2500), "\n")[2400:], "\n"), false},
		{"byte limit", `{"path":"wide.txt"}`, "golden:read_byte_limit.txt", false},
		{"first line over the byte limit", `{"path":"oneline.txt","offset":2}`, "[Line 2 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '2p' oneline.txt | head -c 51200]", false},
		{"line after a long line", `{"path":"oneline.txt","offset":3}`, "after", false},
		{"offset beyond end", `{"path":"ten.txt","offset":11}`, "Offset 11 is beyond end of file (10 lines total)", true},
		{"offset beyond end of file with trailing newline", `{"path":"small.txt","offset":5}`, "Offset 5 is beyond end of file (4 lines total)", true},
		{"empty file", `{"path":"empty.txt"}`, "", false},
		{"huge offset", `{"path":"ten.txt","offset":1e300}`, "Offset 1e+300 is beyond end of file (10 lines total)", true},
		{"huge limit", `{"path":"ten.txt","offset":10,"limit":1e300}`, "line 10", false},
		{"negative offset reads from the start", `{"path":"ten.txt","offset":-3,"limit":1}`, "line 1\n\n[9 more lines in file. Use offset=2 to continue.]", false},
		{"negative limit", `{"path":"ten.txt","limit":-1}`, "limit must be at least 1 (got -1): it is the number of lines to read from offset; leave it out to read to the end of the file", true},
		{"zero limit", `{"path":"ten.txt","offset":3,"limit":0}`, "limit must be at least 1 (got 0): it is the number of lines to read from offset; leave it out to read to the end of the file", true},
		{"limit truncated to zero", `{"path":"ten.txt","limit":0.5}`, "limit must be at least 1 (got 0.5): it is the number of lines to read from offset; leave it out to read to the end of the file", true},
		{"huge negative limit", `{"path":"ten.txt","limit":-1e300}`, "limit must be at least 1 (got -1e+300): it is the number of lines to read from offset; leave it out to read to the end of the file", true},
		{"fractional offset and limit truncate", `{"path":"ten.txt","offset":2.7,"limit":1.9}`, "line 2\n\n[8 more lines in file. Use offset=3 to continue.]", false},
		{"crlf kept", `{"path":"crlf.txt"}`, "a\r\nb\r\n", false},
		{"name says png, bytes say text", `{"path":"fake.png"}`, "not an image\n", false},
		{"extra properties are allowed", `{"path":"small.txt","file_path":"x"}`, "alpha\nbeta\ngamma\n", false},
		{"missing file", `{"path":"nope.txt"}`, "File not found: " + filepath.Join(dir, "nope.txt"), true},
		{"directory", `{"path":"."}`, "Cannot read " + dir + ": it is a directory. Use ls to list its contents.", true},
		{"parent is a file", `{"path":"small.txt/x"}`, "Not a directory: a parent of " + filepath.Join(dir, "small.txt/x") + " is a file", true},
		{"path missing", `{}`, "Validation failed for tool \"read\":\n  - path: must have required property 'path'\n\nReceived arguments:\n{}", true},
		{"offset not a number", `{"path":"ten.txt","offset":"3"}`, "Validation failed for tool \"read\":\n  - offset: must be number (got string)\n\nReceived arguments:\n{\n  \"path\": \"ten.txt\",\n  \"offset\": \"3\"\n}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callTool(t, dir, "read", tt.args)
			if r.IsError != tt.isError {
				t.Errorf("isError = %v, want %v (%s)", r.IsError, tt.isError, r.Text())
			}
			if len(r.Content) != 1 || r.Content[0].Type != "text" {
				t.Fatalf("content = %+v, want one text block", r.Content)
			}
			if name, ok := strings.CutPrefix(tt.want, "golden:"); ok {
				golden(t, name, r.Content[0].Text)
				return
			}
			if got := r.Content[0].Text; got != tt.want {
				t.Errorf("text:\n%q\nwant:\n%q", trimForLog(got), trimForLog(tt.want))
			}
		})
	}
}

func trimForLog(s string) string {
	if len(s) > 400 {
		return s[:200] + " ... " + s[len(s)-200:]
	}
	return s
}

func TestReadTruncationDetails(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "long.txt"), numberedLines(2500))
	r := callTool(t, dir, "read", `{"path":"long.txt"}`)
	d, ok := r.Details.(readDetails)
	if !ok || d.Truncation == nil {
		t.Fatalf("details = %#v", r.Details)
	}
	want := output.TruncateHead(numberedLines(2500), output.DefaultMaxLines, output.DefaultMaxBytes)
	want.Content = d.Truncation.Content
	if *d.Truncation != want {
		t.Errorf("truncation = %+v, want what output.TruncateHead says: %+v", *d.Truncation, want)
	}
}

func TestReadBinary(t *testing.T) {
	dir := t.TempDir()
	data := append([]byte("ELF"), make([]byte, 3000)...)
	if err := os.WriteFile(filepath.Join(dir, "prog"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := callTool(t, dir, "read", `{"path":"prog"}`)
	want := "[Binary file prog (2.9KB) not shown. Use bash (file, xxd, strings) to inspect it.]"
	if r.IsError || r.Text() != want || len(r.Content) != 1 {
		t.Errorf("got %+v, want text %q", r, want)
	}
}

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			copy(img.Pix[i:i+4], []uint8{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	return img
}

func encodeTestImage(t *testing.T, kind string, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch kind {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadImage(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"small.png":     encodeTestImage(t, "png", testImage(40, 30)),
		"photo.jpg":     encodeTestImage(t, "jpeg", testImage(64, 48)),
		"anim.gif":      encodeTestImage(t, "gif", testImage(20, 10)),
		"png-named.txt": encodeTestImage(t, "png", testImage(5, 5)),
		"wide.png":      encodeTestImage(t, "png", testImage(2200, 50)),
		"tall.jpg":      encodeTestImage(t, "jpeg", testImage(40, 2500)),
		"truncated.png": encodeTestImage(t, "png", testImage(40, 30))[:60], // header fine, body cut
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// WebP has no encoder in Go's standard library: these are fixtures, and
	// a missing one fails the test rather than skipping its case.
	for _, name := range []string{"small.webp", "large.webp"} {
		data, err := os.ReadFile(filepath.Join("testdata", "images", name))
		if err != nil {
			t.Fatalf("fixture: %v", err)
		}
		files[name] = data
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		file     string
		text     string
		mime     string
		w, h     int  // shown size
		original bool // the file's bytes are sent unchanged
	}{
		{"small.png", "Read image file [image/png]", "image/png", 40, 30, true},
		{"photo.jpg", "Read image file [image/jpeg]", "image/jpeg", 64, 48, true},
		{"anim.gif", "Read image file [image/gif]", "image/gif", 20, 10, true},
		{"png-named.txt", "Read image file [image/png]", "image/png", 5, 5, true},
		{"truncated.png", "Read image file [image/png]", "image/png", 0, 0, true},
		{"wide.png", "Read image file [image/png]\n[Image: original 2200x50, displayed at 2000x45. Multiply coordinates by 1.10 to map to original image.]", "", 2000, 45, false},
		{"tall.jpg", "Read image file [image/png]\n[Image: original 40x2500, displayed at 32x2000. Multiply coordinates by 1.25 to map to original image.]", "", 32, 2000, false},
		{"small.webp", "Read image file [image/webp]", "image/webp", 0, 0, true},
		{"large.webp", "Read image file [image/png]\n[Image: original 2300x40, displayed at 2000x35. Multiply coordinates by 1.15 to map to original image.]", "", 2000, 35, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if _, ok := files[tt.file]; !ok {
				t.Fatalf("no %s among the test's files", tt.file)
			}
			r := callTool(t, dir, "read", map[string]any{"path": tt.file})
			if r.IsError || len(r.Content) != 2 {
				t.Fatalf("result %+v", r)
			}
			text, img := r.Content[0], r.Content[1]
			if text.Type != "text" || img.Type != "image" {
				t.Fatalf("blocks %s, %s", text.Type, img.Type)
			}
			data, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil {
				t.Fatal(err)
			}
			wantText := tt.text
			if !tt.original && strings.Contains(tt.text, "[image/png]") && img.MimeType == "image/jpeg" {
				wantText = strings.Replace(tt.text, "[image/png]", "[image/jpeg]", 1)
			}
			if text.Text != wantText {
				t.Errorf("text %q, want %q", text.Text, wantText)
			}
			if tt.original {
				if !bytes.Equal(data, files[tt.file]) || img.MimeType != tt.mime {
					t.Errorf("image not sent as it is (mime %s)", img.MimeType)
				}
				return
			}
			var cfg image.Config
			switch img.MimeType {
			case "image/png":
				cfg, err = png.DecodeConfig(bytes.NewReader(data))
			case "image/jpeg":
				cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
			default:
				t.Fatalf("re-encoded as %s", img.MimeType)
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Width != tt.w || cfg.Height != tt.h {
				t.Errorf("shown %dx%d, want %dx%d", cfg.Width, cfg.Height, tt.w, tt.h)
			}
		})
	}
	// The checked-in WebP files must be what the table says.
	for name, want := range map[string][2]int{"small.webp": {16, 8}, "large.webp": {2300, 40}} {
		if data, ok := files[name]; ok {
			cfg, err := webp.DecodeConfig(bytes.NewReader(data))
			if err != nil || cfg.Width != want[0] || cfg.Height != want[1] {
				t.Errorf("testdata %s: %v %dx%d", name, err, cfg.Width, cfg.Height)
			}
		}
	}
}

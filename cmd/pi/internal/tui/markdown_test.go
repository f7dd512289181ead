package tui

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/yuin/goldmark/ast"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
)

var update = flag.Bool("update", false, "rewrite the markdown golden files (testdata/md/*.golden)")

// goldenWidths are the terminal widths every golden file is rendered at.
var goldenWidths = []int{40, 100}

// plainMD renders without colour; colourMD with 256 colours, whatever the
// test's terminal.
func plainMD(width int) *markdown { return newMarkdownWith(width, profileRenderer(termenv.Ascii)) }
func colourMD(width int) *markdown {
	return newMarkdownWith(width, profileRenderer(termenv.ANSI256))
}

func profileRenderer(p termenv.Profile) *lipgloss.Renderer {
	lr := lipgloss.NewRenderer(io.Discard)
	lr.SetColorProfile(p)
	return lr
}

func mdInputs(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob("testdata/md/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/md/*.md: %v", err)
	}
	in := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in[strings.TrimSuffix(filepath.Base(f), ".md")] = string(b)
	}
	return in
}

// TestMarkdownGolden renders each construct's file at two widths without
// colour and compares with testdata/md/NAME.wWIDTH.golden (go test -run
// TestMarkdownGolden -update rewrites them). The coloured rendering, its
// escape sequences stripped, must be the same text: styles never change
// the layout.
func TestMarkdownGolden(t *testing.T) {
	for name, src := range mdInputs(t) {
		for _, w := range goldenWidths {
			t.Run(name+"/"+strconv.Itoa(w), func(t *testing.T) {
				got := plainMD(w).renderText(src)
				if strings.Contains(got, "\x1b") {
					t.Fatalf("escape sequences without colour:\n%q", got)
				}
				golden := filepath.Join("testdata/md", name+".w"+strconv.Itoa(w)+".golden")
				if *update {
					if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -run TestMarkdownGolden -update)", err)
				}
				if got+"\n" != string(want) {
					t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", golden, got, want)
				}
				col := colourMD(w).renderText(src)
				if s := ansi.Strip(col); s != got {
					t.Errorf("coloured text differs from plain:\n%s\n---\n%s", s, got)
				}
				checkLines(t, src, col, plainMD(w).wrapWidth())
			})
		}
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// checkLines: every escape sequence is a whole SGR sequence, every line
// ends with its styles reset (wrapping never cuts a style or a sequence),
// and no line is wider than width unless it is a line of a code or HTML
// block of src (found with goldmark's parser) or one word that does not
// fit.
func checkLines(t *testing.T, src, out string, width int) {
	t.Helper()
	verbatim := map[string]bool{}
	source := []byte(expandTabs(src))
	ast.Walk(mdParser().Parse(textReader(source)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.(type) {
		case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock:
			for i := 0; i < n.Lines().Len(); i++ {
				verbatim[strings.TrimSpace(string(segValue(n.Lines().At(i), source)))] = true
			}
		}
		return ast.WalkContinue, nil
	})
	for _, l := range strings.Split(out, "\n") {
		rest := sgr.ReplaceAllString(l, "")
		if strings.ContainsRune(rest, 0x1b) {
			t.Errorf("line has an escape that is not SGR: %q", l)
		}
		if seqs := sgr.FindAllString(l, -1); len(seqs) > 0 && seqs[len(seqs)-1] != "\x1b[0m" {
			t.Errorf("line ends with a style open: %q", l)
		}
		plain := ansi.Strip(l)
		if ansi.StringWidth(plain) <= width {
			continue
		}
		content := strings.TrimSpace(strings.TrimLeft(plain, " │•◦▪0123456789.)[]x"))
		if verbatim[content] || !strings.Contains(content, " ") {
			continue // code, or a long word
		}
		t.Errorf("line wider than %d: %q", width, plain)
	}
}

// TestMarkdownWrapWidths lays out many shapes of text at every width from
// 10 to 90: no line is wider than the width (but for long words and code)
// and no style is cut.
func TestMarkdownWrapWidths(t *testing.T) {
	var sb strings.Builder
	ws := []string{"a", "bb", "word", "**strong words**", "*em*", "`code span`", "[link text](http://u.test/x)", "longerword", "日本語", "🎉"}
	for i := range 400 {
		sb.WriteString(ws[(i*7+i/3)%len(ws)])
		sb.WriteString(" ")
		switch i % 60 {
		case 20:
			sb.WriteString("\n\n> ")
		case 35:
			sb.WriteString("\n\n- ")
		case 40:
			sb.WriteString("\n  - ")
		case 50:
			sb.WriteString("\n\n| h1 | h2 | h3 |\n|---|:-:|--:|\n| ")
		case 55:
			sb.WriteString("\n\n")
		}
	}
	src := sb.String()
	for w := 12; w <= 92; w += 3 {
		col := colourMD(w).renderText(src)
		checkLines(t, src, col, plainMD(w).wrapWidth())
		if ansi.Strip(col) != plainMD(w).renderText(src) {
			t.Errorf("width %d: coloured layout differs from plain", w)
		}
	}
}

// sgrBefore is the parameters of the last SGR sequence before the first
// occurrence of text in out ("" when there is none).
func sgrBefore(t *testing.T, out, text string) []string {
	t.Helper()
	i := strings.Index(out, text)
	if i < 0 {
		t.Fatalf("%q not in %q", text, out)
	}
	seqs := sgr.FindAllStringIndex(out[:i], -1)
	if len(seqs) == 0 {
		return nil
	}
	last := out[seqs[len(seqs)-1][0]:seqs[len(seqs)-1][1]]
	return strings.Split(strings.TrimSuffix(strings.TrimPrefix(last, "\x1b["), "m"), ";")
}

func hasParam(ps []string, p string) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// TestMarkdownColours: with colour on, each construct gets its style:
// headings bold and coloured, strong bold, emphasis italic, code spans
// coloured, links underlined, URLs, quote bars and code labels dimmed,
// table headers bold; plain words get none.
func TestMarkdownColours(t *testing.T) {
	src := "# Head\n\nplain **strongword** *emword* `codeword` [linkword](http://url.test)\n\n" +
		"> quoted\n\n- item\n\n```go\nx := 1\n```\n\n| hdr | b |\n|---|---|\n| cellword | c |\n"
	out := colourMD(80).renderText(src)
	// The 256-colour profile writes colours 8 to 15 as SGR 90 to 97.
	dim := []string{"90"}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"# Head", []string{"1", "94"}},
		{"strongword", []string{"1"}},
		{"emword", []string{"3"}},
		{"codeword", []string{"93"}},
		{"linkword", []string{"96"}},
		{"(http://url.test)", dim},
		{"│", dim},
		{"go", dim},
		{"hdr", []string{"1"}},
		{"•", []string{"36"}},
		{"─┼─", dim},
	} {
		ps := sgrBefore(t, out, c.text)
		for _, p := range c.want {
			if !hasParam(ps, p) {
				t.Errorf("%q has SGR %v, want %v in it", c.text, ps, c.want)
				break
			}
		}
	}
	for _, plain := range []string{"plain", "quoted", "cellword"} {
		if ps := sgrBefore(t, out, plain); len(ps) > 0 && !(len(ps) == 1 && ps[0] == "0") {
			t.Errorf("%q is styled %v", plain, ps)
		}
	}
}

// TestMarkdownNoColour: a renderer for a terminal under NO_COLOR (or
// without colours) writes no escape sequence at all; the same terminal
// without NO_COLOR gets colours (so the check can fail).
func TestMarkdownNoColour(t *testing.T) {
	src := "# H\n\n**b** *i* `c` [l](http://u)\n\n| a |\n|---|\n| b |\n"
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("COLORTERM", "")
	t.Setenv("CLICOLOR_FORCE", "")
	tty := func() *lipgloss.Renderer { return lipgloss.NewRenderer(io.Discard, termenv.WithTTY(true)) }
	t.Setenv("NO_COLOR", "")
	if out := newMarkdownWith(80, tty()).renderText(src); !strings.Contains(out, "\x1b[") {
		t.Fatalf("no colours on a colour terminal: %q", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out := newMarkdownWith(80, tty()).renderText(src); strings.Contains(out, "\x1b") {
		t.Fatalf("escape sequences under NO_COLOR: %q", out)
	}
}

// checkSafe: out is UTF-8 and holds no control character but new lines
// and the SGR sequences the renderer adds (no OSC, no CSI other than SGR,
// no C1 control, no DEL, no line separator).
func checkSafe(t testing.TB, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output is not UTF-8 for %q: %q", in, out)
	}
	for _, r := range sgr.ReplaceAllString(out, "") {
		if r == '\n' {
			continue
		}
		if termtext.IsControl(r) {
			t.Fatalf("control %U in the output for %q: %q", r, in, out)
		}
	}
}

// attacks are inputs that try to get a control character through the
// renderer: raw, as character references, escaped, in every construct.
var attacks = []string{
	"answer \x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\x9b31m end",
	"&#27;]52;c;ZXZpbA==&#7; &#x1b;[2J &#x9b;31m &#155; &#127; &#x7F; &#8232; &#x2029; &#0; &#13;&#10;",
	"[&#27;]0;title&#7;](http://x/&#27;]52;c;e&#7;) ![&#x1b;[2J](&#x9b;1m)",
	"`&#27; \x1b[2J` <http://a&#27;b> <span title=\"\x1b]0;x\x07\">",
	"```&#27;[2J\ncode \x1b[2J \x9b\n```\n\n    indented \x1b]0;x\x07",
	"| &#27;[2J | \x1b]0;t\x07 |\n|---|---|\n| \x9b1m | &#x1b;c |",
	"> quote \x1b[2J &#27;[2J\n> - [x] task &#27;[1m\n\n# head &#x1b;]0;t&#x7;",
	"\\\x1b[2J \\&#27;[2J &amp;#27; \xff\xfe \xc2\x9b \xe2\x80\xa8",
	"<div>\n\x1b]52;c;eA==\x07\n</div>",
}

// TestMarkdownDropsControls: the attacks render without a control
// character, with colour on and off.
func TestMarkdownDropsControls(t *testing.T) {
	for _, a := range attacks {
		for _, m := range []*markdown{plainMD(60), colourMD(60)} {
			out := m.render(a)
			checkSafe(t, a, out)
			for _, bad := range []string{"\x1b]", "\x1b[2J", "\x9b", "\x07"} {
				if strings.Contains(out, bad) {
					t.Errorf("%q reached the output of %q", bad, a)
				}
			}
		}
	}
	// clean itself: a lone 0x9b byte (not UTF-8) is no longer passed on.
	if got := clean("a\x9b31m"); strings.Contains(got, "\x9b") || !utf8.ValidString(got) {
		t.Errorf("clean kept a raw 0x9b: %q", got)
	}
}

// TestMarkdownNestingIsLinear: deeply nested quotes and lists, and a
// table with very many columns, lay out in linear space (the nesting
// stops indenting at maxNesting).
func TestMarkdownNestingIsLinear(t *testing.T) {
	for _, src := range []string{
		strings.Repeat(">", 20000) + " deep",
		strings.Repeat("- ", 5000) + "deep",
		strings.Repeat("> - ", 3000) + "deep",
		"|" + strings.Repeat(" a |", 5000) + "\n|" + strings.Repeat("---|", 5000) + "\n|" + strings.Repeat(" b |", 5000),
		strings.Repeat("*a **b ", 5000) + strings.Repeat("** c*", 5000),
		strings.Repeat("[", 10000) + "x" + strings.Repeat("](u)", 10000),
	} {
		out := plainMD(80).renderText(src)
		for _, l := range strings.Split(out, "\n") {
			if !strings.HasPrefix(src, "|") && len(l) > 400 && strings.Count(l, " ") > 100 {
				t.Errorf("a line of %d bytes for %.20q…: nesting lengthens lines", len(l), src)
				break
			}
		}
		if len(out) > 20*len(src)+1000 {
			t.Errorf("%d bytes of output for %d bytes of input %.20q…", len(out), len(src), src)
		}
		if !strings.Contains(out, "deep") && !strings.Contains(out, "b") && !strings.Contains(out, "x") {
			t.Errorf("text lost: %.80q", out)
		}
	}
}

// FuzzMarkdown: the renderer never panics and never writes a control
// character but new lines and its own SGR sequences, with colour on or
// off, at any width; colour never changes the text.
func FuzzMarkdown(f *testing.F) {
	for _, src := range mdInputs(f) {
		f.Add(src, uint8(40))
	}
	for _, a := range attacks {
		f.Add(a, uint8(0))
	}
	f.Fuzz(func(t *testing.T, src string, width uint8) {
		plain := plainMD(int(width)).renderText(src)
		col := colourMD(int(width)).renderText(src)
		checkSafe(t, src, plain)
		checkSafe(t, src, col)
		if strings.Contains(plain, "\x1b") {
			t.Fatalf("escape without colour for %q: %q", src, plain)
		}
		if ansi.Strip(col) != plain {
			t.Fatalf("colour changed the text for %q:\n%q\n%q", src, col, plain)
		}
	})
}

// TestMarkdownLooksAsLipgloss: for every look and colour profile, a run
// painted with the sequences the renderer worked out (mdSGR) is byte for
// byte what the look's lipgloss style renders, so painting without a
// lipgloss call per run changes nothing on the screen.
func TestMarkdownLooksAsLipgloss(t *testing.T) {
	texts := []string{"x", "two words", "日本語 🎉", "@", " lead ", "[link](http://u.test)", "a@b"}
	for _, p := range []termenv.Profile{termenv.Ascii, termenv.ANSI, termenv.ANSI256, termenv.TrueColor} {
		m := newMarkdownWith(80, profileRenderer(p))
		r := &mdRenderer{md: m, prof: p}
		for a := mdAttr(0); a < mdAttrs; a++ {
			for _, s := range texts {
				want := s
				if a != 0 {
					want = mdStyle(m.lr, a).Render(s)
				}
				if got := r.paint(s, a); got != want {
					t.Errorf("profile %d, look %#x: %q, lipgloss renders %q", p, a, got, want)
				}
			}
		}
		if q := r.look(aStrong); (q.on == "") != (p == termenv.Ascii) {
			t.Errorf("profile %d: bold is %q", p, q.on)
		}
	}
}

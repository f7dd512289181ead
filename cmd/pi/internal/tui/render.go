package tui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/tool"
)

// styles are the colours of the TUI, made by one lipgloss renderer (which
// drops them where its colour profile has none).
type styles struct {
	user, dim, ok, fail, tool, add, del, hunk, status, warn, accent lipgloss.Style
}

func newStylesWith(r *lipgloss.Renderer) styles {
	c := func(colour string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(colour)) }
	return styles{
		user:   c("12").Bold(true),
		dim:    c("8"),
		ok:     c("2"),
		fail:   c("1"),
		tool:   c("13").Bold(true),
		add:    c("2"),
		del:    c("1"),
		hunk:   c("6"),
		status: c("8"),
		warn:   c("3"),
		accent: c("14"),
	}
}

// Preview sizes of a finished tool call.
const (
	previewLines = 8  // result lines shown
	diffLines    = 40 // diff lines shown
	tailLines    = 6  // live lines of a running call
	lineWidth    = 200
)

// argSummary is what a person needs to see of a call's arguments: a bash
// command as it is, a path for file tools, else compact JSON; one line,
// cut at max bytes.
func argSummary(name string, args json.RawMessage, max int) string {
	var task struct{ Agent, Description string }
	if name == "task" && json.Unmarshal(args, &task) == nil && task.Description != "" {
		// A sub-agent's call (docs/agents.md): "scout: find the tests".
		return clean(cut(cmp.Or(task.Agent, "general-purpose")+": "+strings.Join(strings.Fields(task.Description), " "), max))
	}
	return clean(argSummaryRaw(args, max))
}

func argSummaryRaw(args json.RawMessage, max int) string {
	var a map[string]any
	if json.Unmarshal(args, &a) == nil {
		if c, ok := a["command"].(string); ok {
			return cut("$ "+oneLine(c), max)
		}
		if p, ok := a["path"].(string); ok {
			extra := ""
			if off, ok := a["offset"].(float64); ok {
				extra += fmt.Sprintf(" from line %d", int(off))
			}
			if p2, ok := a["pattern"].(string); ok {
				extra = " " + p2
			}
			return cut(p+extra, max)
		}
		if p, ok := a["pattern"].(string); ok {
			return cut(p, max)
		}
	}
	return cut(oneLine(strings.Join(strings.Fields(string(args)), " ")), max)
}

func oneLine(s string) string { return termtext.OneLine(s) }

// cut shortens s to max bytes (on a rune boundary) with an ellipsis.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// lines splits text into lines without the trailing empty one.
func lines(text string) []string {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// fullOutputPath is where a truncated result's whole output is, from its
// details ("" when it was not truncated).
func fullOutputPath(details any) string {
	var d struct {
		FullOutputPath string `json:"fullOutputPath"`
	}
	if details == nil {
		return ""
	}
	if b, err := json.Marshal(details); err == nil {
		json.Unmarshal(b, &d)
	}
	return d.FullOutputPath
}

// detailsDiff is the unified diff an edit result carries, if any.
func detailsDiff(details any) string {
	var d struct {
		Diff string `json:"diff"`
	}
	if details == nil {
		return ""
	}
	if b, err := json.Marshal(details); err == nil {
		json.Unmarshal(b, &d)
	}
	return d.Diff
}

// colorDiff colours a unified diff's lines, at most max of them.
func (s styles) colorDiff(diff string, max int) []string {
	ls := lines(diff)
	var out []string
	for i, l := range ls {
		if i == max {
			out = append(out, s.dim.Render(fmt.Sprintf("… %d more diff lines", len(ls)-i)))
			break
		}
		l = cut(l, lineWidth)
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			out = append(out, s.dim.Render(l))
		case strings.HasPrefix(l, "+"):
			out = append(out, s.add.Render(l))
		case strings.HasPrefix(l, "-"):
			out = append(out, s.del.Render(l))
		case strings.HasPrefix(l, "@@"):
			out = append(out, s.hunk.Render(l))
		default:
			out = append(out, l)
		}
	}
	return out
}

// toolBlock is how a finished call is printed: a header with its state
// and arguments, a preview of its result (the head, or for bash the
// tail, where errors and the exit code are), a note of what was left out,
// where the whole output is when it was truncated, an edit's diff, and
// for bash how long it took (took > 0).
func (s styles) toolBlock(name, args string, res *tool.Result, failed bool, took time.Duration) string {
	mark := s.ok.Render("✓")
	if failed {
		mark = s.fail.Render("✗")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", mark, s.tool.Render(clean(name)), args) // the model may make up a name
	if res == nil {
		return b.String() + s.took(name, took)
	}
	text := clean(res.Text())
	ls := lines(text)
	images := 0
	for _, c := range res.Content {
		if c.Type == "image" {
			images++
		}
	}
	diff := clean(detailsDiff(res.Details))
	show := ls
	hidden := 0
	switch {
	case diff != "" && !failed:
		show = nil
	case len(ls) > previewLines && name == "bash":
		hidden = len(ls) - previewLines
		show = ls[hidden:]
	case len(ls) > previewLines:
		hidden = len(ls) - previewLines
		show = ls[:previewLines]
	}
	if hidden > 0 && name == "bash" {
		fmt.Fprintf(&b, "\n  %s", s.dim.Render("… "+plural.Count(hidden, "earlier line")))
	}
	for _, l := range show {
		line := cut(l, lineWidth)
		if failed {
			line = s.fail.Render(line)
		} else {
			line = s.dim.Render(line)
		}
		fmt.Fprintf(&b, "\n  %s", line)
	}
	if hidden > 0 && name != "bash" {
		fmt.Fprintf(&b, "\n  %s", s.dim.Render("… "+plural.Count(hidden, "more line")))
	}
	if images > 0 {
		fmt.Fprintf(&b, "\n  %s", s.dim.Render("("+plural.Count(images, "image")+")"))
	}
	if p := clean(fullOutputPath(res.Details)); p != "" {
		fmt.Fprintf(&b, "\n  %s\n    %s", s.warn.Render("Output truncated; the full output is in"), p)
	}
	if diff != "" && !failed {
		for _, l := range s.colorDiff(diff, diffLines) {
			fmt.Fprintf(&b, "\n  %s", l)
		}
	}
	return b.String() + s.took(name, took)
}

// took is the line that says how long a bash call took ("" for other
// tools, or when took is 0).
func (s styles) took(name string, took time.Duration) string {
	if name != "bash" || took <= 0 {
		return ""
	}
	return "\n  " + s.dim.Render("took "+humanDuration(took))
}

// humanDuration writes a duration short: 0.4s, 12.0s, 3m07s, 1h02m.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// maxLiveMarkdown bounds the text the live area renders as markdown while
// an answer streams: rendering costs some 0.1 ms per KiB (0.4 before the
// renderer stopped calling lipgloss per run), the live area re-renders up
// to 20 times a second and shows only the end of the answer anyway. The
// whole answer is rendered once when it is complete.
const maxLiveMarkdown = 3 << 10

// liveTail is the end of a streaming answer to render live: it starts at a
// paragraph boundary outside code fences, so the markdown of the tail
// renders as it will in the whole; skipped says whether text was left out.
func liveTail(text string) (tail string, skipped bool) {
	if len(text) <= maxLiveMarkdown {
		return text, false
	}
	start := -1
	inFence := false
	off := 0
	for off < len(text) {
		l := text[off:]
		if i := strings.IndexByte(l, '\n'); i >= 0 {
			l = l[:i+1]
		}
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		off += len(l)
		if t == "" && !inFence && len(text)-off <= maxLiveMarkdown {
			start = off
			break
		}
	}
	if start < 0 || start >= len(text) {
		// No boundary: the last lines as they are.
		i := len(text) - maxLiveMarkdown
		for i < len(text) && text[i] != '\n' {
			i++
		}
		return "```\n" + strings.TrimPrefix(text[min(i, len(text)):], "\n") + "\n```", true
	}
	return text[start:], true
}

// clean makes text that did not come from pi (the model's words, tool
// output, file names, extension messages) safe to print by termtext's one
// rule (termtext.Printable: escape and other control characters dropped,
// bytes that are not UTF-8 made U+FFFD), and turns tabs into spaces, which
// the TUI's layout counts as one column.
func clean(s string) string {
	return strings.ReplaceAll(termtext.Printable(s), "\t", " ")
}

// thinkingLines is how many lines of the thinking streaming now the live
// area shows when thinking is shown whole.
const thinkingLines = 10

// thinkingBlock is a finished thinking block as the TUI prints it: one dim
// line (its first line and how many more there are) unless whole, else
// every line dim and italic; "" for an empty one.
func (s styles) thinkingBlock(text string, whole bool) string {
	ls := lines(clean(strings.TrimSpace(text)))
	if len(ls) == 0 {
		return ""
	}
	if !whole {
		line := "∴ " + cut(ls[0], lineWidth)
		if len(ls) > 1 {
			line += fmt.Sprintf(" (+%s, Ctrl+T shows thinking)", plural.Count(len(ls)-1, "line"))
		}
		return s.dim.Render(line)
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = s.dim.Italic(true).Render(l)
	}
	return s.dim.Render("∴ thinking") + "\n" + strings.Join(out, "\n")
}

// thinkingLive is the thinking streaming now in the live area: one dim
// line with its last line, or its last lines when shown whole.
func (s styles) thinkingLive(text string, whole bool) string {
	if !whole {
		ls := tailOf(text, 1)
		last := ""
		if len(ls) > 0 {
			last = " " + cut(ls[0], 120)
		}
		return s.dim.Render("∴ thinking…"+last) + "\n"
	}
	var b strings.Builder
	b.WriteString(s.dim.Render("∴ thinking…") + "\n")
	for _, l := range tailOf(text, thinkingLines) {
		b.WriteString(s.dim.Italic(true).Render(l) + "\n")
	}
	return b.String()
}

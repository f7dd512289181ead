package tui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/pi-go/pi/runtime/conversation"
)

// Footer is what the two lines under the editor show. footerData fills it
// from the runtime (the one place that asks); the model keeps the token
// counts current while a turn runs.
type Footer struct {
	// Cwd is the working directory, Home the person's home folder (shown
	// as ~); Branch the git branch of the repository Cwd is in ("" when
	// none; the short hash of a detached HEAD).
	Cwd, Home, Branch string
	// Session is the session's name ("" when it has none).
	Session string
	// Model is the model's name.
	Model string
	// Thinking is the thinking level of a reasoning model ("" for a model
	// without reasoning).
	Thinking string
	// Cost is what the session's answers cost, in US dollars.
	Cost float64
	// Input and Output are the tokens the session's answers used, summed
	// over every answer of the session file.
	Input, Output int
	// ContextTokens is the context the conversation fills now,
	// ContextWindow the model's window (0 when unknown).
	ContextTokens, ContextWindow int
	// Mode is how bash commands are contained: "plan" in plan mode, else
	// the sandbox's mode ("workspace-write", "off", ...); "" shows nothing.
	Mode string
}

// footerData reads the footer's data from the runtime.
func footerData(conv *conversation.Conversation) Footer {
	f := Footer{
		Cwd:           conv.Runtime().Cwd(),
		Session:       clean(conv.SessionName()),
		Model:         clean(conv.ModelName()),
		ContextTokens: conv.ContextTokens(),
		ContextWindow: conv.ContextWindow(),
		Mode:          "sandbox " + conv.Runtime().Sandbox().Mode,
	}
	if conv.PlanMode() {
		f.Mode = "plan mode"
	}
	if m, err := conv.Model(); err == nil && m.Reasoning {
		f.Thinking = string(conv.ThinkingLevel())
	}
	f.Home, _ = os.UserHomeDir()
	f.Branch = gitBranch(f.Cwd)
	u := conv.Session().TotalUsage()
	f.Input, f.Output, f.Cost = u.Input, u.Output, u.Cost.Total
	return f
}

// gitBranch is the branch checked out in the git repository dir is in,
// read from its HEAD file (no git process): the branch name, the first 7
// digits of the commit when HEAD is detached, "" outside a repository. A
// .git file (a worktree, a submodule) points to the git folder.
func gitBranch(dir string) string {
	for d := dir; ; {
		gitDir := filepath.Join(d, ".git")
		if st, err := os.Stat(gitDir); err == nil {
			if !st.IsDir() {
				data, err := os.ReadFile(gitDir)
				if err != nil {
					return ""
				}
				rest, ok := bytes.CutPrefix(bytes.TrimSpace(data), []byte("gitdir:"))
				if !ok {
					return ""
				}
				gitDir = strings.TrimSpace(string(rest))
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(d, gitDir)
				}
			}
			head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
			if err != nil {
				return ""
			}
			h := strings.TrimSpace(string(head))
			if ref, ok := strings.CutPrefix(h, "ref:"); ok {
				ref = strings.TrimSpace(ref)
				return clean(strings.TrimPrefix(ref, "refs/heads/"))
			}
			return clean(h[:min(len(h), 7)])
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// homePath writes path with home as ~.
func homePath(path, home string) string {
	if home == "" || home == "/" {
		return path
	}
	if path == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return path
}

// shortenPath drops leading folders of path ("…/last/folders") until it
// is at most w columns wide, keeping the last folder at least.
func shortenPath(path string, w int) string {
	if ansi.StringWidth(path) <= w {
		return path
	}
	sep := string(filepath.Separator)
	parts := strings.Split(path, sep)
	for i := 1; i < len(parts); i++ {
		s := "…" + sep + strings.Join(parts[i:], sep)
		if ansi.StringWidth(s) <= w || i == len(parts)-1 {
			return s
		}
	}
	return path
}

// costText is a cost in US dollars: $0.123, $12.35.
func costText(c float64) string {
	if c < 1 {
		return fmt.Sprintf("$%.3f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}

// percent is the share of the window tokens take, as 12.3%.
func percent(tokens, window int) float64 { return float64(tokens) * 100 / float64(window) }

// render lays the footer out in width columns: the folder (its leading
// folders dropped when it does not fit), the branch and the session's
// name; then the session's tokens (↑ input, ↓ output), the context used
// of the window with its share (yellow over 70%, red over 90%) and state
// (what runs, "" when idle) on the left, the model on the right.
func (f Footer) render(st styles, width int, state string) string {
	width = max(width-1, 20)
	var tail string
	if f.Branch != "" {
		tail += " (" + f.Branch + ")"
	}
	if f.Session != "" {
		tail += " • " + f.Session
	}
	where := homePath(f.Cwd, f.Home)
	where = shortenPath(where, max(width-ansi.StringWidth(tail), 10)) + tail
	line1 := st.status.Render(ansi.Truncate(where, width, "…"))

	var left []string
	var tokens []string
	if f.Input > 0 {
		tokens = append(tokens, "↑"+conversation.HumanTokens(f.Input))
	}
	if f.Output > 0 {
		tokens = append(tokens, "↓"+conversation.HumanTokens(f.Output))
	}
	if f.Cost > 0 {
		tokens = append(tokens, costText(f.Cost))
	}
	if len(tokens) > 0 {
		left = append(left, st.status.Render(strings.Join(tokens, " ")))
	}
	ctx := "ctx " + conversation.HumanTokens(f.ContextTokens)
	if f.ContextWindow > 0 {
		p := percent(f.ContextTokens, f.ContextWindow)
		ctx += fmt.Sprintf("/%s (%.1f%%)", conversation.HumanTokens(f.ContextWindow), p)
		switch {
		case p > 90:
			ctx = st.fail.Render(ctx)
		case p > 70:
			ctx = st.warn.Render(ctx)
		default:
			ctx = st.status.Render(ctx)
		}
	} else {
		ctx = st.status.Render(ctx)
	}
	left = append(left, ctx)
	if state != "" {
		left = append(left, st.status.Render(state))
	}
	l := strings.Join(left, st.status.Render(" · "))
	model := f.Model
	if model == "" {
		model = "no model"
	}
	if f.Thinking != "" {
		model += " • " + f.Thinking
	}
	// The mode goes before the model, at the right edge.
	mode, modeStyle := "", st.status
	if f.Mode != "" {
		mode = f.Mode + " · "
		if f.Mode == "plan mode" {
			modeStyle = st.warn
		}
	}
	lw, mw := ansi.StringWidth(l), ansi.StringWidth(mode+model)
	var line2 string
	switch {
	case lw+2+mw <= width:
		line2 = l + strings.Repeat(" ", width-lw-mw) + modeStyle.Render(mode) + st.status.Render(model)
	case lw+2+8 <= width:
		line2 = l + "  " + st.status.Render(ansi.Truncate(mode+model, width-lw-2, "…"))
	default:
		line2 = ansi.Truncate(l, width, "…")
	}
	return line1 + "\n" + line2
}

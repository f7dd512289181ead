package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/session"
)

// sessionFlags choose the session a run keeps its conversation in.
type sessionFlags struct {
	cont, resume, none bool
	path, fork, dir    string
}

func (s *sessionFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.cont, "c", false, "continue the latest session of this directory")
	fs.BoolVar(&s.cont, "continue", false, "same as -c")
	fs.BoolVar(&s.resume, "r", false, "pick a session of this directory to resume (on a terminal)")
	fs.BoolVar(&s.resume, "resume", false, "same as -r")
	fs.StringVar(&s.path, "session", "", "resume the session `PATH|ID-PREFIX` (a new PATH starts a session there)")
	fs.StringVar(&s.fork, "fork", "", "continue the session `PATH|ID-PREFIX` in a new session file")
	fs.StringVar(&s.dir, "session-dir", "", "keep and look up session files in `DIR` (also "+session.EnvDir+")")
	fs.BoolVar(&s.none, "no-session", false, "keep the conversation in memory only")
}

// check rejects flags that contradict each other.
func (s *sessionFlags) check() error {
	n := 0
	for _, set := range []bool{s.cont, s.resume, s.path != "", s.fork != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("use only one of -c, -r, --session and --fork")
	}
	if s.none && n > 0 {
		return fmt.Errorf("--no-session cannot be combined with -c, -r, --session or --fork")
	}
	return nil
}

// options are the runtime's session options (Path filled in by the
// picker for -r).
func (s *sessionFlags) options() *conversation.SessionOptions {
	return &conversation.SessionOptions{Disabled: s.none, Dir: s.dir, Continue: s.cont, Path: s.path, Fork: s.fork}
}

const sessionsUsage = `
Usage: pi sessions list [--json] [--cost] [--cwd DIR] [--session-dir DIR]

Lists the sessions of the working directory, the most recently active first:
id, age, message count, and the name or first prompt. --cost adds what each
session's answers cost (US dollars, from the models' prices when they were
answered; every answer of the file, all branches), read from each file. Session files are the
reference agent's (pi-coding-agent) format, in $PI_HOME/sessions/--CWD--/
(PI_HOME defaults to ~/.pi/agent); resume one with 'pi --session ID-PREFIX',
or 'pi -c' for the latest.
`

func cmdSessions(args []string, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, sessionsUsage, stdout, stderr); done {
		return code
	}
	if args[0] != "list" {
		return usageError(stderr, "sessions", "unknown subcommand %q (known: list)", args[0])
	}
	fs := newFlagSet("pi sessions list", sessionsUsage, stdout, stderr)
	asJSON := fs.Bool("json", false, "print a JSON array")
	withCost := fs.Bool("cost", false, "add each session's cost (reads every session file)")
	cwd := fs.String("cwd", "", "list the sessions of `DIR` instead of the current directory")
	dir := fs.String("session-dir", "", "list the session files in `DIR` (also "+session.EnvDir+")")
	pos, code, done := parseArgs(fs, args[1:])
	if done {
		return code
	}
	if len(pos) > 0 {
		return usageError(stderr, "sessions list", "unexpected argument %q", pos[0])
	}
	infos, err := conversation.ListSessions("", *cwd, conversation.SessionOptions{Dir: *dir})
	if err != nil {
		fmt.Fprintf(stderr, "pi sessions list: %v\n", err)
		return exitError
	}
	var costs []float64
	if *withCost {
		costs = make([]float64, len(infos))
		for i, in := range infos {
			costs[i] = sessionCost(in.Path)
		}
	}
	if *asJSON {
		var v any = infos
		if *withCost {
			type withCostInfo struct {
				session.Info
				Cost float64 `json:"cost"`
			}
			rows := make([]withCostInfo, len(infos))
			for i, in := range infos {
				rows[i] = withCostInfo{in, costs[i]}
			}
			v = rows
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(termtext.NewJSONWriter(stdout), string(b)) // exact text, what a terminal acts on escaped
		return exitOK
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no sessions in this directory yet")
		return exitOK
	}
	if *withCost {
		for i, in := range infos {
			fmt.Fprintf(stdout, "%s  %-8s  %4d msgs  $%-8.4f  %s\n", shortID(in.ID), age(time.Since(in.Modified)), in.MessageCount, costs[i], sessionLabel(in))
		}
		return exitOK
	}
	writeSessionList(stdout, infos, false, time.Now())
	return exitOK
}

// sessionCost sums the cost of every assistant answer of the session file
// at path (0 when it cannot be read).
func sessionCost(path string) float64 {
	s, err := session.Read(path, session.OpenOptions{})
	if err != nil {
		return 0
	}
	total := 0.0
	for _, e := range s.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		if m, err := e.Message(); err == nil && m.Role == session.RoleAssistant && m.Usage != nil {
			total += m.Usage.Cost.Total
		}
	}
	return total
}

// sessionLabel is a session's name, else its first prompt, on one line.
func sessionLabel(in session.Info) string {
	label := in.Name
	if label == "" {
		label = in.FirstMessage
	}
	return termtext.Cut(strings.Join(strings.Fields(label), " "), 70)
}

// writeSessionList prints one line per session: number (for the picker)
// or id, age, message count, name or first prompt.
func writeSessionList(w io.Writer, infos []session.Info, numbered bool, now time.Time) {
	for i, in := range infos {
		label := sessionLabel(in)
		head := shortID(in.ID)
		if numbered {
			head = fmt.Sprintf("%3d.", i+1)
		}
		fmt.Fprintf(w, "%s  %-8s  %4d msgs  %s\n", head, age(now.Sub(in.Modified)), in.MessageCount, label)
	}
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// age says how long ago, coarsely.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
}

// pickSession lists the sessions of the directory and reads a number from
// lines. It returns the chosen file, or "" when the person chose none.
func pickSession(infos []session.Info, lines *bufio.Scanner, stdout io.Writer) string {
	fmt.Fprintln(stdout, "Sessions of this directory, the latest first:")
	writeSessionList(stdout, infos, true, time.Now())
	for {
		fmt.Fprintf(stdout, "Resume which (1-%d, Enter for none)? ", len(infos))
		if !lines.Scan() {
			fmt.Fprintln(stdout)
			return ""
		}
		answer := strings.TrimSpace(lines.Text())
		if answer == "" {
			return ""
		}
		n, err := strconv.Atoi(answer)
		if err == nil && n >= 1 && n <= len(infos) {
			return infos[n-1].Path
		}
		fmt.Fprintf(stdout, "%q is not a number from 1 to %d.\n", answer, len(infos))
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pi-go/pi/cmd/pi/internal/termtext"
	"github.com/pi-go/pi/cmd/pi/internal/textmode"
	"github.com/pi-go/pi/internal/atomicfile"
	"github.com/pi-go/pi/internal/plural"
	"github.com/pi-go/pi/runtime/conversation"
	"github.com/pi-go/pi/runtime/session"
)

// sessionFlags choose the session a run keeps its conversation in.
type sessionFlags struct {
	cont, resume, none, noCheckpoints bool
	path, fork, dir                   string
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
	fs.BoolVar(&s.noCheckpoints, "no-checkpoints", false, "record no checkpoints of the project's files for /undo")
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
	return &conversation.SessionOptions{Disabled: s.none, Dir: s.dir, Continue: s.cont, Path: s.path, Fork: s.fork, NoCheckpoints: s.noCheckpoints}
}

const sessionsUsage = `
Usage: pi sessions list [--json] [--cost] [--cwd DIR] [--session-dir DIR]
       pi sessions show ID [--cwd DIR] [--session-dir DIR]
       pi sessions export ID [--html] [-o FILE] [--cwd DIR] [--session-dir DIR]
       pi sessions delete ID [--yes] [--cwd DIR] [--session-dir DIR]

list:   the sessions of the working directory, the most recently active
        first: id, age, message count, and the name or first prompt;
        --cost adds what each session's answers cost (US dollars, from
        the models' prices when they were answered; every answer of the
        file, all branches).
show:   one session: its file, id, folder, name, parent, and its entries as
        a tree (branches, labels, compactions and branch summaries, the
        current leaf marked).
export: the session in the reference's JSONL format, or with --html as one
        self-contained HTML page (loads nothing from the network), on
        stdout, or into FILE with -o.
delete: remove the session file and its checkpoints; asks first on a
        terminal, else needs --yes.

ID is an id prefix (this directory's sessions first, then every project's)
or a file. Session files are the reference agent's (pi-coding-agent)
format, in $PI_HOME/sessions/--CWD--/ (PI_HOME defaults to ~/.pi/agent);
resume one with 'pi --session ID-PREFIX', or 'pi -c' for the latest.
`

func cmdSessions(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, done := groupHelp(args, sessionsUsage, stdout, stderr); done {
		return code
	}
	switch args[0] {
	case "list":
		return cmdSessionsList(args[1:], stdout, stderr)
	case "show", "export", "delete":
		return cmdSessionsOne(args[0], args[1:], stdin, stdout, stderr)
	}
	return usageError(stderr, "sessions", "unknown subcommand %q (known: list, show, export, delete)", args[0])
}

func cmdSessionsList(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("pi sessions list", sessionsUsage, stdout, stderr)
	asJSON := fs.Bool("json", false, "print a JSON array")
	withCost := fs.Bool("cost", false, "add each session's cost (reads every session file)")
	cwd := fs.String("cwd", "", "list the sessions of `DIR` instead of the current directory")
	dir := fs.String("session-dir", "", "list the session files in `DIR` (also "+session.EnvDir+")")
	pos, code, done := parseArgs(fs, args)
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
	return s.TotalUsage().Cost.Total
}

// sessionLabel is a session's name, else its first prompt, on one line.
func sessionLabel(in session.Info) string {
	label := in.Name
	if label == "" {
		label = in.FirstMessage
	}
	return termtext.Cut(strings.Join(strings.Fields(label), " "), 70)
}

// cmdSessionsOne runs show, export or delete on the session ID names.
func cmdSessionsOne(sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "sessions " + sub
	fs := newFlagSet("pi "+name, sessionsUsage, stdout, stderr)
	cwd := fs.String("cwd", "", "look the session up from `DIR` instead of the current directory")
	dir := fs.String("session-dir", "", "look the session up in `DIR` (also "+session.EnvDir+")")
	asHTML := fs.Bool("html", false, "export: one self-contained HTML page instead of JSONL")
	out := fs.String("o", "", "export: write to `FILE` instead of stdout")
	yes := fs.Bool("yes", false, "delete: do not ask")
	pos, code, done := parseArgs(fs, args)
	if done {
		return code
	}
	if len(pos) != 1 {
		return usageError(stderr, name, "give one session ID (or file)")
	}
	if sub != "export" && (*asHTML || *out != "") {
		return usageError(stderr, name, "--html and -o are export's flags")
	}
	if sub != "delete" && *yes {
		return usageError(stderr, name, "--yes is delete's flag")
	}
	path, err := conversation.ResolveSession("", *cwd, conversation.SessionOptions{Dir: *dir}, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "pi %s: %v\n", name, err)
		return exitError
	}
	s, err := session.Read(path, session.OpenOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "pi %s: %v\n", name, err)
		return exitError
	}
	switch sub {
	case "show":
		showSession(stdout, s)
	case "export":
		var buf bytes.Buffer
		if *asHTML {
			err = conversation.WriteHTML(&buf, s)
		} else {
			var b []byte
			b, err = s.JSONL()
			buf.Write(b)
		}
		if err == nil {
			if *out != "" {
				err = atomicfile.WriteFile(*out, buf.Bytes(), 0o600)
			} else {
				// The exact bytes into a pipe or a file; on a terminal
				// through the terminal rule, as any text pi did not write.
				w := termtext.Raw(stdout)
				if f, ok := w.(*os.File); ok && textmode.IsTerminal(f) {
					w = stdout
				}
				_, err = w.Write(buf.Bytes())
			}
		}
	case "delete":
		if !*yes {
			if !isTerminal(stdin) {
				fmt.Fprintf(stderr, "pi %s: not on a terminal: add --yes to delete %s\n", name, path)
				return exitUsage
			}
			fmt.Fprintf(stdout, "Delete the session %s (%s)? [y/N] ", s.ID(), path)
			line, _ := bufio.NewReader(stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(stdout, "not deleted")
				return exitOK
			}
		}
		if err = conversation.DeleteSession(path); err == nil {
			fmt.Fprintln(stdout, "deleted "+path)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "pi %s: %v\n", name, err)
		return exitError
	}
	return exitOK
}

// showSession prints a session's header and its tree.
func showSession(w io.Writer, s *session.Session) {
	h := s.Header()
	rows := [][2]string{{"file", s.Path()}, {"id", h.ID}, {"folder", h.Cwd}, {"started", h.Timestamp}}
	if n := s.Name(); n != "" {
		rows = append(rows, [2]string{"name", n})
	}
	if h.ParentSession != "" {
		rows = append(rows, [2]string{"forked from", h.ParentSession})
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%-12s %s\n", r[0], r[1])
	}
	lines := conversation.TreeLines(s)
	if len(lines) == 0 {
		fmt.Fprintln(w, "\n(no entries yet)")
		return
	}
	fmt.Fprintf(w, "\n%s:\n%s", plural.Count(len(lines), "entry"), conversation.FormatTree(lines, 160))
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

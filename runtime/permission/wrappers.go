package permission

import (
	"slices"
	"strings"
)

// wrapperSpec says how a program that runs another command takes its
// options, so the command behind them can be found.
type wrapperSpec struct {
	// shortFlags are single-letter options without a value, shortVals the
	// ones that take one (attached or as the next word), shortOpt the ones
	// whose value is optional and only ever attached (xargs -i{}).
	shortFlags, shortVals, shortOpt string
	// longFlags and longVals are the same for --long options; longOpt take
	// a value only after "=".
	longFlags, longVals, longOpt []string
	// noCommand are short letters after which no command runs
	// (command -v).
	noCommand string
	// positionals are the words between the options and the command
	// (timeout's duration, chroot's new root).
	positionals int
	// numeric: -N is an option (nice -10).
	numeric bool
	// envAssigns: NAME=VALUE words may stand before the command.
	envAssigns bool
	// splitString is the option whose value is split into the command's
	// first words (env -S).
	splitString string
	// transparent wrappers only change how the command runs (niceness, a
	// time limit, the environment): the command behind them is what is
	// decided, and the wrapper's own argv only matters when a rule names
	// it. Others (sudo) are decided as themselves too.
	transparent bool
	// open: the command gets more words from the wrapper's input (xargs).
	open bool
	// placeholderOpts are the options that set a replace string (xargs -I).
	placeholderOpts string
	// shellWithout says what runs when no command follows and a shell
	// option (shellLetters) was given, or always when alwaysShell.
	shellWithout string
	shellLetters string
	alwaysShell  bool
}

// wrappers are the programs looked through.
var wrappers = map[string]*wrapperSpec{
	"nohup":   {transparent: true},
	"builtin": {transparent: true},
	"nice":    {shortVals: "n", longVals: []string{"adjustment"}, numeric: true, transparent: true},
	"timeout": {shortFlags: "v", shortVals: "sk", longFlags: []string{"preserve-status", "foreground", "verbose"},
		longVals: []string{"signal", "kill-after"}, positionals: 1, transparent: true},
	"stdbuf":  {shortVals: "ioe", longVals: []string{"input", "output", "error"}, transparent: true},
	"setsid":  {shortFlags: "cfw", longFlags: []string{"ctty", "fork", "wait"}, transparent: true},
	"ionice":  {shortFlags: "t", shortVals: "cn", noCommand: "pPu", longFlags: []string{"ignore"}, longVals: []string{"class", "classdata"}, transparent: true},
	"command": {shortFlags: "p", noCommand: "vV", transparent: true},
	"exec":    {shortFlags: "cl", shortVals: "a", transparent: true},
	"time": {shortFlags: "pvqa", shortVals: "fo", longFlags: []string{"append", "verbose", "portability", "quiet"},
		longVals: []string{"format", "output"}, transparent: true},
	"env": {shortFlags: "i0v", shortVals: "uCS", longFlags: []string{"ignore-environment", "null", "debug", "list-signal-handling"},
		longVals: []string{"unset", "chdir", "split-string"}, longOpt: []string{"block-signal", "default-signal", "ignore-signal"},
		envAssigns: true, splitString: "S", transparent: true},
	"xargs": {shortFlags: "0rtpx", shortVals: "aEdILnPs", shortOpt: "ile",
		longFlags: []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"},
		longVals:  []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		longOpt:   []string{"eof", "replace", "max-lines"}, placeholderOpts: "Ii", transparent: true, open: true},
	"sudo": {shortFlags: "AbBEeHiKklnPSsVv", shortVals: "CDghpRrTtUu",
		longFlags: []string{"login", "shell", "non-interactive", "background", "askpass", "stdin", "bell", "preserve-groups",
			"set-home", "edit", "list", "reset-timestamp", "remove-timestamp", "validate", "version", "help"},
		longVals: []string{"user", "group", "host", "prompt", "chdir", "close-from", "role", "type", "other-user", "command-timeout"},
		longOpt:  []string{"preserve-env"}, envAssigns: true,
		shellWithout: "sudo -s or -i without a command starts a shell that reads its commands from its input", shellLetters: "si"},
	"doas": {shortFlags: "nsL", shortVals: "uC", noCommand: "C",
		shellWithout: "doas -s starts a shell that reads its commands from its input", shellLetters: "s"},
	"pkexec": {longFlags: []string{"disable-internal-agent", "keep-cwd"}, longVals: []string{"user"},
		shellWithout: "pkexec without a command starts a shell", alwaysShell: true},
	"chroot": {longFlags: []string{"skip-chdir"}, longVals: []string{"userspec", "groups"}, positionals: 1,
		shellWithout: "chroot without a command starts a shell that reads its commands from its input", alwaysShell: true},
	"unbuffer":         {shortFlags: "p", transparent: true},
	"strace":           {shortFlags: "cCdfFhiqrtTvVwxyzkZ", shortVals: "abeEIoOpPsSuUX", transparent: true},
	"ltrace":           {shortFlags: "bcCfhiLrStTV", shortVals: "aAeDlnopsuwxX", transparent: true},
	"taskset":          {shortFlags: "acV", noCommand: "p", positionals: 1, transparent: true},
	"chrt":             {shortFlags: "abdefiormRv", noCommand: "p", longVals: []string{"sched-runtime", "sched-deadline", "sched-period"}, positionals: 1, transparent: true},
	"numactl":          {shortFlags: "alHsS", shortVals: "CiNmMpPw", transparent: true},
	"prlimit":          {shortFlags: "ovrV", noCommand: "p", transparent: true},
	"firejail":         {transparent: true},
	"proxychains":      {shortFlags: "q", shortVals: "f", transparent: true},
	"proxychains4":     {shortFlags: "q", shortVals: "f", transparent: true},
	"torsocks":         {shortFlags: "diquh", shortVals: "aPU", transparent: true},
	"tsocks":           {transparent: true},
	"fakeroot":         {shortVals: "is", transparent: true},
	"faketime":         {shortFlags: "fm", positionals: 1, transparent: true},
	"xvfb-run":         {shortFlags: "ah", shortVals: "nlsfpe", longVals: []string{"server-num", "server-args", "auth-file", "error-file", "xauth-protocol"}, transparent: true},
	"valgrind":         {transparent: true},
	"systemd-run":      {shortFlags: "dGhqrStP", shortVals: "EMpu", longVals: []string{"unit", "property", "description", "slice", "uid", "gid", "setenv", "working-directory", "machine", "host", "nice"}, transparent: true},
	"nsenter":          {shortFlags: "aCcimnpUuFZrwS", shortVals: "tGS", transparent: true},
	"unshare":          {shortFlags: "imnpuUCTrfcR", shortVals: "SG", transparent: true},
	"catchsegv":        {transparent: true},
	"dbus-run-session": {transparent: true},
	"entr":             {shortFlags: "acdnprsz", transparent: true},
	"runuser": {shortFlags: "lmpf", shortVals: "gGuw", envAssigns: false,
		shellWithout: "runuser without a command starts a shell that reads its commands from its input", alwaysShell: true},
	"watch": {shortFlags: "bcdeftgpwx", shortVals: "nq", longFlags: []string{"beep", "color", "no-color", "differences", "errexit",
		"exec", "no-title", "no-wrap", "precise", "chgexit"}, longVals: []string{"interval", "equexit"}, transparent: true},
}

// wrapResult is where the command behind a wrapper may start.
type wrapResult struct {
	// starts are indexes into the wrapper's arguments where the command
	// may begin: more than one when an option pi does not know might or
	// might not take a value (each is checked).
	starts    []int
	noCommand bool
	// envWhy is set when the wrapper sets a variable like PATH for it.
	envWhy string
	// assigns are the NAME=VALUE words before the command.
	assigns []string
	// split is env -S's string.
	split       *string
	placeholder string
	// shellFlag: a shell option was given (sudo -s).
	shellFlag bool
}

// maxForks bounds how many unknown options are tried both ways.
const maxForks = 2

func (w *wrapperSpec) parse(rest []word) wrapResult {
	var r wrapResult
	var walk func(i, forks int)
	walk = func(i, forks int) {
		for i < len(rest) {
			x := rest[i]
			if !x.lit {
				break // a dynamic word where an option or the command may be
			}
			s := x.s
			if s == "--" {
				i++
				break
			}
			if len(s) < 2 || s[0] != '-' {
				// env and sudo take every word with "=" before the command
				// as a setting (BASH_FUNC_f%%=… too).
				if w.envAssigns && strings.Contains(s, "=") && s[0] != '=' {
					r.assigns = append(r.assigns, s)
					name, _, _ := strings.Cut(s, "=")
					if why := dangerousVar(name); why != "" && r.envWhy == "" {
						r.envWhy = "it runs with " + name + " set" + why
					}
					i++
					continue
				}
				break
			}
			if s[1] == '-' {
				name, val, hasEq := strings.Cut(s[2:], "=")
				switch {
				case slices.Contains(w.longVals, name):
					if w.splitString != "" && name == "split-string" {
						v := val
						if !hasEq {
							if i+1 >= len(rest) || !rest[i+1].lit {
								r.noCommand = true
								return
							}
							v = rest[i+1].s
							i++
						}
						r.split = &v
						r.starts = append(r.starts, i+1)
						return
					}
					if !hasEq {
						i++
					}
				case slices.Contains(w.longFlags, name), slices.Contains(w.longOpt, name):
					if name == "replace" && w.placeholderOpts != "" {
						r.placeholder = "{}"
						if hasEq {
							r.placeholder = val
						}
					}
					if name == "shell" || name == "login" {
						r.shellFlag = true
					}
				case !hasEq && forks < maxForks:
					walk(i+2, forks+1) // an unknown --option VALUE
				}
				i++
				continue
			}
			if w.numeric && isDigits(s[1:]) {
				i++
				continue
			}
			consumed := 1
		letters:
			for j := 1; j < len(s); j++ {
				ch := s[j]
				switch {
				case strings.IndexByte(w.noCommand, ch) >= 0:
					r.noCommand = true
					return
				case strings.IndexByte(w.shellLetters, ch) >= 0:
					r.shellFlag = true
				}
				switch {
				case strings.IndexByte(w.shortVals, ch) >= 0:
					val := s[j+1:]
					if val == "" {
						consumed = 2
						if i+1 < len(rest) && rest[i+1].lit {
							val = rest[i+1].s
						}
					}
					if string(ch) == w.splitString {
						if consumed == 2 && (i+1 >= len(rest) || !rest[i+1].lit) {
							if i+1 >= len(rest) {
								r.noCommand = true
							} else {
								r.starts = append(r.starts, i+1) // a dynamic string: not literal
							}
							return
						}
						r.split = &val
						r.starts = append(r.starts, i+consumed)
						return
					}
					if strings.IndexByte(w.placeholderOpts, ch) >= 0 {
						r.placeholder = val
					}
					break letters
				case strings.IndexByte(w.shortOpt, ch) >= 0:
					if strings.IndexByte(w.placeholderOpts, ch) >= 0 {
						r.placeholder = s[j+1:]
						if r.placeholder == "" {
							r.placeholder = "{}"
						}
					}
					break letters
				case strings.IndexByte(w.shortFlags, ch) >= 0:
				default:
					// An option pi does not know: also try it as one that
					// takes the next word.
					if j == len(s)-1 && forks < maxForks {
						walk(i+2, forks+1)
					}
				}
			}
			i += consumed
		}
		r.starts = append(r.starts, min(i+w.positionals, len(rest)))
	}
	walk(0, 0)
	return r
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

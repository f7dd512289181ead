package permission

import (
	"errors"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// command is one simple command a bash script can run, as the policy sees
// it.
type command struct {
	argv []word
	// open: more words may follow that the script does not show (xargs
	// adds words read from its input).
	open bool
	// unknown says why pi cannot tell what this command runs; such a
	// command gets ask (deny when the default is deny).
	unknown string
	// noAllow says why allow rules do not apply to it (it runs with PATH or
	// a variable like it changed, so its name may not be what it seems).
	noAllow string
	// counts: the default applies when no rule matches. It is false for a
	// transparent wrapper (env, nice, bash -c …), whose inner command is
	// decided instead, and for latent commands.
	counts bool
	// latent: found in text that is data unless something evaluates it (a
	// quoted "$(…)"); only deny and ask rules match it.
	latent bool
	// via names the wrappers it was found behind ("sudo", "bash -c").
	via string
}

// text is the command as messages show it.
func (c *command) text() string {
	parts := make([]string, 0, len(c.argv)+1)
	for _, w := range c.argv {
		parts = append(parts, w.display())
	}
	if c.open {
		parts = append(parts, "…")
	}
	return clip(strings.Join(parts, " "), 120)
}

// parsers are reused bash parsers (a Parser is not safe for concurrent
// use; Parse resets it).
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Limits that keep the analysis of any input small.
const (
	maxDepth      = 8    // nested bash -c, eval, wrappers
	maxCommands   = 1000 // simple commands in one call
	maxBraceWords = 256  // words one brace expansion may make
	maxArgv       = 4096 // words of one command
)

// analyzer collects the simple commands of a script.
type analyzer struct {
	cmds []command
	// taint says why allow rules apply to no command of the script: it
	// sets PATH (or a variable like it) for the commands after it.
	taint    string
	overflow bool
	// work counts commands looked at, bounding nested wrappers that
	// branch (an unknown option tried both ways).
	work int
	// stdin holds the literal text piped into a shell by echo or printf,
	// and hdocSkip the heredoc bodies that are data (not scanned for
	// latent commands).
	stdin    map[*syntax.CallExpr]string
	hdocSkip map[*syntax.Word]bool
	// redirects are the files the script's redirections name (literal
	// ones), for path rules.
	redirects []string
	evalState
}

// analyze returns every simple command of script.
func analyze(script string) []command {
	cmds, _ := analyzeAll(script)
	return cmds
}

// analyzeAll returns every simple command of script and the files its
// redirections name.
func analyzeAll(script string) ([]command, []string) {
	a := &analyzer{stdin: map[*syntax.CallExpr]string{}, hdocSkip: map[*syntax.Word]bool{}}
	a.script(script, scope{counts: true})
	a.finishEval()
	if a.taint != "" {
		for i := range a.cmds {
			if a.cmds[i].noAllow == "" {
				a.cmds[i].noAllow = a.taint
			}
		}
	}
	return a.cmds, a.redirects
}

// scope is where a command stands: how deep, behind which wrappers.
type scope struct {
	depth   int
	latent  bool
	counts  bool
	open    bool
	noAllow string
	via     string
	// placeholder is xargs' replace string or find's {}: words equal to it
	// are filled in when the command runs.
	placeholder string
}

func (s scope) inner(via string) scope {
	s.depth++
	if s.via != "" {
		via = s.via + " → " + via
	}
	s.via = via
	s.placeholder = ""
	s.counts = true
	return s
}

func (a *analyzer) add(c command) {
	if len(a.cmds) >= maxCommands {
		if !a.overflow {
			a.overflow = true
			a.cmds = append(a.cmds, command{unknown: "the script has too many commands to check", counts: true})
		}
		return
	}
	a.cmds = append(a.cmds, c)
}

func (a *analyzer) unknown(sc scope, argv []word, why string) {
	if sc.latent {
		return
	}
	a.add(command{argv: argv, unknown: why, counts: true, via: sc.via, noAllow: sc.noAllow})
}

// script parses src and adds its commands.
func (a *analyzer) script(src string, sc scope) {
	if sc.depth > maxDepth {
		a.unknown(sc, nil, "commands nested too deeply to check")
		return
	}
	if a.work++; a.work > 20*maxCommands {
		a.unknown(sc, nil, "the script has too many commands to check")
		return
	}
	parser := parsers.Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(src), "")
	parsers.Put(parser)
	if err != nil {
		if !sc.latent {
			a.unknown(sc, []word{{s: clip(strings.TrimSpace(src), 60)}}, "the command does not parse as bash ("+parseMessage(err)+")")
		}
		// What bash runs before the line it cannot parse still runs: the
		// lines before it are checked as usual, and every command-like
		// run of words is matched against deny and ask rules.
		if prefix := parsablePrefix(src, err); prefix != "" {
			a.script(prefix, sc)
		}
		a.longestPrefix(src, err, sc)
		a.tokens(src, sc)
		return
	}
	a.file(f, src, sc)
}

func parseMessage(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return err.Error()
}

// parsablePrefix is src up to the start of the line where parsing failed.
func parsablePrefix(src string, err error) string {
	var pe syntax.ParseError
	if !errors.As(err, &pe) {
		return ""
	}
	off := int(pe.Pos.Offset())
	if off <= 0 || off > len(src) {
		return ""
	}
	i := strings.LastIndexByte(src[:off], '\n')
	if i <= 0 {
		return ""
	}
	return src[:i]
}

// longestPrefix checks, as latent commands, the longest start of src up to
// where parsing failed that does parse: bash runs none of the failing
// line, but deny and ask rules still see what it holds.
func (a *analyzer) longestPrefix(src string, err error, sc scope) {
	sc.latent, sc.counts = true, false
	sc.depth++
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	for tries := 0; tries < 8; tries++ {
		var pe syntax.ParseError
		if !errors.As(err, &pe) {
			return
		}
		off := min(int(pe.Pos.Offset()), len(src))
		if off <= 0 {
			return
		}
		src = src[:off]
		f, perr := parser.Parse(strings.NewReader(src), "")
		if perr == nil {
			a.file(f, src, sc)
			return
		}
		if errors.As(perr, &pe) && int(pe.Pos.Offset()) >= off {
			// No progress: drop the last word.
			cut := strings.LastIndexAny(strings.TrimRight(src, " \t"), " \t;&|")
			if cut <= 0 {
				return
			}
			perr = syntax.ParseError{Pos: syntax.NewPos(uint(cut), 0, 0)}
		}
		err = perr
	}
}

// tokens splits text that does not parse into runs of words between shell
// operators and adds each as a latent command: a deny or ask rule that
// matches any of them still applies. A word with an unquoted $, ` or glob
// character is dynamic, as it would be when parsed.
func (a *analyzer) tokens(src string, sc scope) {
	sc.latent, sc.counts = true, false
	var argv []word
	var cur strings.Builder
	inWord, dynamic, split := false, false, false
	flushWord := func() {
		if inWord {
			w := litWord(cur.String())
			if dynamic {
				w = word{s: cur.String(), split: split}
			}
			argv = append(argv, w)
			cur.Reset()
			inWord, dynamic, split = false, false, false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(argv) > 0 {
			a.command(argv, sc)
			argv = nil
		}
	}
	var quote byte
	qstart := 0
	endQuote := func(i int) {
		// Quoted text holding a substitution: checked as a latent script.
		if q := src[qstart:i]; sc.depth < maxDepth && (strings.Contains(q, "$(") || strings.Contains(q, "`")) {
			in := sc
			in.depth++
			a.script(q, in)
		}
		quote = 0
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote == '\'':
			if c == quote {
				endQuote(i)
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				endQuote(i)
			case c == '$' || c == '`':
				dynamic = true
				cur.WriteByte(c)
			case c == '\\' && i+1 < len(src):
				i++
				cur.WriteByte(src[i])
			default:
				cur.WriteByte(c)
			}
		case c == '$' && i+1 < len(src) && src[i+1] == '\'':
			j := i + 2
			for j < len(src) && src[j] != '\'' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			cur.WriteString(ansiC(src[i+2 : min(j, len(src))]))
			inWord, i = true, j
		case c == '\'' || c == '"':
			quote, inWord, qstart = c, true, i+1
		case c == '\\' && i+1 < len(src):
			i++
			if src[i] != '\n' {
				cur.WriteByte(src[i])
				inWord = true
			}
		case c == ' ' || c == '\t':
			flushWord()
		case strings.IndexByte(";&|()<>\n`{}!", c) >= 0 || (c == '$' && i+1 < len(src) && src[i+1] == '('):
			flushCmd()
		default:
			if strings.IndexByte("$*?[", c) >= 0 {
				dynamic, split = true, true
			}
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		endQuote(len(src))
	}
	flushCmd()
}

// file adds the commands of a parsed script.
func (a *analyzer) file(f *syntax.File, src string, sc scope) { a.walk(f, src, sc) }

// walk adds the commands in the tree under root, keeping the path to the
// node it is at (a.stack) for the checks of evaluate.go.
func (a *analyzer) walk(root syntax.Node, src string, sc scope) {
	outer := a.stack
	a.stack = nil
	defer func() { a.stack = outer }()
	syntax.Walk(root, func(n syntax.Node) bool {
		if n == nil {
			a.stack = a.stack[:len(a.stack)-1]
			return true
		}
		a.stack = append(a.stack, n)
		a.evalNode(n, src, sc)
		switch x := n.(type) {
		case *syntax.Stmt:
			for _, r := range x.Redirs {
				if r.Hdoc != nil {
					a.hdocSkip[r.Hdoc] = true
				}
			}
			if call, ok := x.Cmd.(*syntax.CallExpr); ok {
				a.call(call, x.Redirs, src, sc)
			}
		case *syntax.BinaryCmd:
			if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
				a.notePipe(x, src)
			}
		case *syntax.DeclClause:
			a.decl(x, src, sc)
		case *syntax.Redirect:
			if !sc.latent {
				a.redirect(x, src)
			}
		case *syntax.Word:
			if !a.hdocSkip[x] {
				a.latentWord(x, src, sc)
			}
		}
		return true
	})
}

// redirect notes the file a redirection names; one that writes to a file
// (not /dev/null, a terminal or a descriptor) makes allow rules apply to no
// command of the script: an allowed `echo` is no licence to write
// ~/.bashrc.
func (a *analyzer) redirect(r *syntax.Redirect, src string) {
	if r.Word == nil {
		return
	}
	write := false
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		write = true
	case syntax.RdrIn:
	case syntax.DplOut:
		// >&2 duplicates a descriptor; >&FILE writes to FILE.
		if w := evalWord(r.Word, src); w.lit && (w.s == "-" || isDigits(strings.TrimSuffix(w.s, "-"))) {
			return
		}
		write = true
	default:
		return
	}
	w := evalWord(r.Word, src)
	if !w.lit {
		if write {
			a.setTaint("the script writes to a file whose name is not literal")
		}
		return
	}
	switch {
	case w.s == "/dev/null", w.s == "/dev/stdout", w.s == "/dev/stderr", w.s == "/dev/tty",
		strings.HasPrefix(w.s, "/dev/fd/"), strings.HasPrefix(w.s, "/proc/self/fd/"):
		return
	}
	if len(a.redirects) < maxCommands {
		a.redirects = append(a.redirects, w.s)
	}
	if write {
		a.setTaint("the script writes to " + clip(w.s, 60) + " with a redirection")
	}
}

// latentWord checks literal text that holds a command substitution: data
// as written, but bash evaluates it again in places (arithmetic on a
// variable holding "a[$(cmd)]", eval, PS4, a trap). Deny and ask rules
// match what it would run.
func (a *analyzer) latentWord(x *syntax.Word, src string, sc scope) {
	quoted := false
	for _, p := range x.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			if l := p.(*syntax.Lit); strings.Contains(l.Value, `\`) {
				quoted = true
			}
		}
	}
	if !quoted {
		return
	}
	w := evalWord(x, src)
	if !w.lit || !(strings.Contains(w.s, "$(") || strings.Contains(w.s, "`")) {
		return
	}
	sc.latent, sc.counts = true, false
	sc.depth++
	a.script(w.s, sc)
}

// notePipe remembers the literal output of `echo …` or `printf …` piped into
// a shell, which the shell runs as its script.
func (a *analyzer) notePipe(b *syntax.BinaryCmd, src string) {
	left, ok1 := b.X.Cmd.(*syntax.CallExpr)
	right, ok2 := b.Y.Cmd.(*syntax.CallExpr)
	if !ok1 || !ok2 || len(left.Args) == 0 {
		return
	}
	var words []string
	for _, w := range left.Args {
		ew := evalWord(w, src)
		if !ew.lit {
			return
		}
		words = append(words, ew.s)
	}
	switch path.Base(words[0]) {
	case "echo":
		args := words[1:]
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
			args = args[1:]
		}
		a.stdin[right] = strings.Join(args, " ")
	case "printf":
		if len(words) > 1 {
			a.stdin[right] = strings.Join(words[1:], " ")
		}
	}
}

// call adds one simple command, with the redirections of its statement.
func (a *analyzer) call(call *syntax.CallExpr, redirs []*syntax.Redirect, src string, sc scope) {
	for _, as := range call.Assigns {
		if as.Name == nil {
			continue
		}
		a.assign(as, src, sc, len(call.Args) > 0, false)
		if why := dangerousVar(as.Name.Value); why != "" {
			if len(call.Args) == 0 {
				a.setTaint("the script sets " + as.Name.Value + why)
			} else if sc.noAllow == "" {
				sc.noAllow = "it runs with " + as.Name.Value + " set" + why
			}
		}
	}
	if len(call.Args) == 0 {
		return
	}
	a.varRedirects(call.Args, redirs, src, sc)
	argv, open := expandArgs(call.Args, src)
	if open {
		sc.open = true
	}
	a.commandWith(argv, sc, redirs, call, src)
}

func (a *analyzer) setTaint(why string) {
	if a.taint == "" {
		a.taint = why
	}
}

// decl checks declare, export, local, readonly, typeset and nameref:
// variables that change what commands run, names and values bash
// evaluates (evaluate.go).
func (a *analyzer) decl(d *syntax.DeclClause, src string, sc scope) {
	variant := ""
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	flags := ""
	if variant == "nameref" {
		flags = "n"
	}
	argv := nodeArgv(d, src)
	for _, as := range d.Args {
		switch {
		case as.Name == nil && as.Value != nil:
			w := evalWord(as.Value, src)
			switch {
			case !w.lit:
				a.unknown(sc, argv, variant+" of a word that is not literal: bash reads it as NAME=VALUE and evaluates a subscript or (…) in it")
			case strings.HasPrefix(w.s, "-"):
				if variant != "export" { // export -n removes the export
					flags += w.s[1:]
				}
			case strings.HasPrefix(w.s, "+"):
			default:
				a.declText(w.s, flags, variant, sc, argv)
			}
		case as.Name != nil:
			name := as.Name.Value
			if strings.Contains(flags, "A") {
				if a.assoc == nil {
					a.assoc = map[syntax.Node]bool{}
				}
				a.assoc[as] = true
				if as.Array != nil {
					for _, el := range as.Array.Elems {
						a.assoc[el] = true
					}
				}
			}
			switch {
			case as.Naked:
				a.declName(name, flags, variant)
				if why := dangerousVar(name); why != "" {
					a.setTaint("the script sets " + name + why)
				}
			case strings.Contains(flags, "n"):
				target := word{}
				if as.Value != nil {
					target = evalWord(as.Value, src)
				}
				a.nameref(name, target, sc, argv)
			default:
				if strings.Contains(flags, "i") {
					a.varInfo(name).intAttr = true
				}
				a.assign(as, src, sc, false, strings.Contains(flags, "i"))
			}
		}
	}
}

// expandArgs evaluates a command's words, doing brace expansion. open
// reports that the command was cut at maxArgv words.
func expandArgs(args []*syntax.Word, src string) ([]word, bool) {
	argv := make([]word, 0, len(args))
	for _, w := range args {
		if len(argv) >= maxArgv {
			return argv, true
		}
		if !hasBraceLit(w) {
			argv = append(argv, evalWord(w, src))
			continue
		}
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
		if !syntax.SplitBraces(cp) {
			argv = append(argv, evalWord(w, src))
			continue
		}
		var words []word
		tooMany := false
		for sub, err := range expand.BracesSeq(nil, cp) {
			if err != nil || len(words) >= maxBraceWords {
				tooMany = true
				break
			}
			words = append(words, evalWord(sub, src))
		}
		if tooMany {
			argv = append(argv, word{s: source(w, src), split: true})
			continue
		}
		argv = append(argv, words...)
	}
	return argv, false
}

func hasBraceLit(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			return true
		}
	}
	return false
}

// command adds argv, looking through wrappers.
func (a *analyzer) command(argv []word, sc scope) { a.commandWith(argv, sc, nil, nil, "") }

func (a *analyzer) commandWith(argv []word, sc scope, redirs []*syntax.Redirect, call *syntax.CallExpr, src string) {
	if len(argv) == 0 {
		return
	}
	if a.work++; a.work > 20*maxCommands {
		a.unknown(sc, nil, "the script has too many commands to check")
		return
	}
	if sc.placeholder != "" {
		argv = append([]word(nil), argv...)
		for i, w := range argv {
			if w.lit && strings.Contains(w.s, sc.placeholder) {
				argv[i] = word{s: w.s}
			}
		}
	}
	c := command{argv: argv, open: sc.open, counts: sc.counts, latent: sc.latent, noAllow: sc.noAllow, via: sc.via}
	if !argv[0].lit {
		if sc.latent {
			return
		}
		c.unknown, c.counts = "the command name is not literal, so pi cannot tell what runs", true
		a.add(c)
		return
	}
	if sc.depth > maxDepth {
		a.unknown(sc, argv, "commands nested too deeply to check")
		return
	}
	name := path.Base(argv[0].s)
	rest := argv[1:]
	a.builtinEval(name, argv, sc)
	if name == "busybox" && len(rest) > 0 {
		a.add(c)
		a.commandWith(rest, sc.inner("busybox"), redirs, nil, src)
		return
	}
	if shells[name] {
		a.shell(c, rest, sc, redirs, call, src)
		return
	}
	switch name {
	case "eval":
		c.counts = false
		a.add(c)
		if text, ok := joinLiteral(rest); ok {
			a.script(text, sc.inner("eval"))
		} else {
			a.unknown(sc, argv, "eval of words that are not literal runs commands pi cannot see")
		}
		return
	case "source", ".":
		c.unknown = "it runs the commands of a file, which pi cannot see"
		c.counts = true
		a.add(c)
		return
	case "alias":
		c.counts = false
		a.add(c)
		for _, w := range rest {
			if !w.lit {
				a.unknown(sc, argv, "an alias whose text is not literal")
				continue
			}
			if name, val, ok := strings.Cut(w.s, "="); ok {
				a.alias(name, val, sc)
			}
		}
		return
	case "trap":
		c.counts = false
		a.add(c)
		a.trap(rest, argv, sc)
		return
	case "find":
		a.add(c)
		a.findExec(rest, sc)
		return
	case "su", "sg":
		a.add(c)
		a.su(rest, argv, sc)
		return
	case "runuser", "flock", "script":
		if hasWord(rest, "-c", "--command") {
			a.add(c)
			a.su(rest, argv, sc)
			return
		}
		if name == "script" {
			a.add(c)
			return
		}
		if name == "flock" {
			// flock [options] FILE COMMAND…
			a.add(c)
			r := flockSpec.parse(rest)
			for _, st := range r.starts {
				if st < len(rest) {
					a.commandWith(rest[st:], sc.inner("flock"), redirs, nil, src)
				}
			}
			return
		}
	case "ssh":
		a.add(c)
		r := sshSpec.parse(rest)
		for _, st := range r.starts {
			if st+1 < len(rest) {
				if text, ok := joinLiteral(rest[st+1:]); ok {
					a.script(text, sc.inner("ssh"))
				} else {
					a.unknown(sc, argv, "ssh runs a remote command that is not literal")
				}
			}
		}
		return
	case "parallel":
		// parallel [options] COMMAND ::: ARGS: the command gets more words.
		a.add(c)
		end := len(rest)
		for i, w := range rest {
			if w.lit && strings.HasPrefix(w.s, ":::") {
				end = i
				break
			}
		}
		r := parallelSpec.parse(rest[:end])
		in := sc.inner("parallel")
		in.open, in.placeholder = true, "{}"
		for _, st := range r.starts {
			if st < end {
				a.command(rest[st:end], in)
			}
		}
		return
	case "fd", "fdfind":
		a.add(c)
		for i, w := range rest {
			if w.lit && (w.s == "-x" || w.s == "--exec" || w.s == "-X" || w.s == "--exec-batch") {
				in := sc.inner(name + " " + w.s)
				in.placeholder = "{}"
				a.command(rest[i+1:], in)
				break
			}
		}
		return
	case "watch":
		c.counts = false
		a.add(c)
		r := wrappers["watch"].parse(rest)
		for _, st := range r.starts {
			if text, ok := joinLiteral(rest[st:]); ok && st < len(rest) {
				a.script(text, sc.inner("watch"))
			} else if st < len(rest) {
				a.unknown(sc, argv, "watch runs words that are not literal")
			}
		}
		return
	}
	w, ok := wrappers[name]
	if !ok {
		a.add(c)
		return
	}
	a.wrapper(c, name, w, rest, sc, redirs, src)
}

// wrapper adds a command like sudo, env or xargs and the command it runs.
func (a *analyzer) wrapper(c command, name string, w *wrapperSpec, rest []word, sc scope, redirs []*syntax.Redirect, src string) {
	r := w.parse(rest)
	c.counts = !w.transparent || r.noCommand
	a.add(c)
	if r.noCommand {
		return
	}
	for _, as := range r.assigns {
		n, v, _ := strings.Cut(as, "=")
		a.setVar(n, textValue(v), sc, c.argv, true)
	}
	in := sc.inner(name)
	if r.envWhy != "" && in.noAllow == "" {
		in.noAllow = r.envWhy
	}
	if w.open {
		in.open = true
		in.placeholder = r.placeholder
	}
	if r.split != nil {
		// env -S: the string is split into words and the rest follows.
		text := *r.split
		for _, x := range rest[r.starts[0]:] {
			text += " " + quoteWord(x)
		}
		a.script(text, in)
		return
	}
	seen := map[int]bool{}
	for _, st := range r.starts {
		if seen[st] {
			continue
		}
		seen[st] = true
		if st >= len(rest) {
			if w.shellWithout != "" && r.shellFlag {
				a.unknown(sc, c.argv, w.shellWithout)
			} else if w.shellWithout != "" && w.alwaysShell {
				a.unknown(sc, c.argv, w.shellWithout)
			}
			continue
		}
		a.commandWith(rest[st:], in, redirs, nil, src)
	}
}

// shell adds `bash -c SCRIPT` (the script's commands), `bash FILE` (as it
// is) or a shell reading its commands from its input (unknown, with the
// commands of a literal heredoc or echo checked too).
func (a *analyzer) shell(c command, rest []word, sc scope, redirs []*syntax.Redirect, call *syntax.CallExpr, src string) {
	i, hasC, fromStdin := 0, false, false
	for i < len(rest) {
		w := rest[i]
		if !w.lit {
			c.unknown, c.counts = "the shell's arguments are not literal", true
			a.add(c)
			return
		}
		s := w.s
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			i++
			continue
		}
		if len(s) > 1 && (s[0] == '-' || s[0] == '+') {
			takes := 0
			for _, ch := range s[1:] {
				switch ch {
				case 'c':
					hasC = true
				case 's':
					fromStdin = true
				case 'o', 'O':
					takes++
				}
			}
			i += 1 + takes
			continue
		}
		break
	}
	if i > len(rest) {
		i = len(rest)
	}
	operands := rest[i:]
	switch {
	case hasC && len(operands) == 0:
		a.add(c)
	case hasC && !operands[0].lit:
		c.unknown, c.counts = "the shell runs a script that is not literal", true
		a.add(c)
	case hasC:
		c.counts = false
		a.add(c)
		a.script(operands[0].s, sc.inner(path.Base(c.argv[0].s)+" -c"))
	case len(operands) > 0 && !fromStdin && !readsInput(operands[0]):
		a.add(c) // bash FILE: a program like any other
	default:
		c.unknown, c.counts = "the shell reads its commands from its input, which pi cannot see", true
		a.add(c)
		if text, ok := a.stdin[call]; ok && call != nil {
			a.script(text, sc.inner(path.Base(c.argv[0].s)))
		}
		for _, r := range redirs {
			switch {
			case r.Hdoc != nil && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc):
				a.script(hdocText(r.Hdoc, src), sc.inner(path.Base(c.argv[0].s)+" <<"))
			case r.Op == syntax.WordHdoc && r.Word != nil:
				if w := evalWord(r.Word, src); w.lit {
					a.script(w.s, sc.inner(path.Base(c.argv[0].s)+" <<<"))
				}
			}
		}
	}
}

// readsInput reports whether a shell's script operand is its own input
// (/dev/stdin, /dev/fd/0, /proc/self/fd/0) or a file pi cannot name.
func readsInput(w word) bool {
	if !w.lit {
		return true
	}
	switch w.s {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// hdocText is a heredoc body as written.
func hdocText(w *syntax.Word, src string) string {
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			b.WriteString(sourceText(p, src))
		}
	}
	return b.String()
}

// trap adds the command a trap runs.
func (a *analyzer) trap(rest, argv []word, sc scope) {
	for i, w := range rest {
		if !w.lit {
			a.unknown(sc, argv, "a trap whose command is not literal")
			return
		}
		if i == 0 && (w.s == "-l" || w.s == "-p" || w.s == "-P") {
			return
		}
		if w.s == "--" {
			continue
		}
		if w.s != "-" && w.s != "" && len(rest) > i+1 {
			a.script(w.s, sc.inner("trap"))
		}
		return
	}
}

// findExec adds the commands of find's -exec, -execdir, -ok and -okdir.
func (a *analyzer) findExec(rest []word, sc scope) {
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !w.lit || (w.s != "-exec" && w.s != "-execdir" && w.s != "-ok" && w.s != "-okdir") {
			continue
		}
		var inner []word
		j := i + 1
		for ; j < len(rest); j++ {
			if rest[j].lit && (rest[j].s == ";" || rest[j].s == "+") {
				break
			}
			inner = append(inner, rest[j])
		}
		in := sc.inner("find " + w.s)
		in.placeholder = "{}"
		a.command(inner, in)
		i = j
	}
}

// su adds `su -c COMMAND`; su without -c starts a shell on its input.
func (a *analyzer) su(rest, argv []word, sc scope) {
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !w.lit {
			a.unknown(sc, argv, "su's arguments are not literal")
			return
		}
		var cmd *word
		switch {
		case w.s == "-c" || w.s == "--command" || w.s == "--session-command":
			if i+1 < len(rest) {
				cmd = &rest[i+1]
			}
		case strings.HasPrefix(w.s, "--command="):
			v := litWord(strings.TrimPrefix(w.s, "--command="))
			cmd = &v
		}
		if cmd != nil {
			if !cmd.lit {
				a.unknown(sc, argv, "su runs a command that is not literal")
			} else {
				a.script(cmd.s, sc.inner("su -c"))
			}
			return
		}
	}
	a.unknown(sc, argv, "su without -c starts a shell that reads its commands from its input")
}

// flockSpec and sshSpec say how flock and ssh take their options.
var (
	flockSpec = &wrapperSpec{shortFlags: "sxunoFh", shortVals: "wE", longFlags: []string{"shared", "exclusive", "unlock", "nonblock", "close", "no-fork"},
		longVals: []string{"timeout", "conflict-exit-code"}, positionals: 1}
	parallelSpec = &wrapperSpec{shortFlags: "0kquvX", shortVals: "jJSdIaE", longFlags: []string{"keep-order", "dry-run", "verbose", "pipe", "group", "ungroup", "line-buffer", "halt-on-error"},
		longVals: []string{"jobs", "delimiter", "arg-file", "sshlogin", "joblog", "timeout", "retries", "halt"}}
	sshSpec = &wrapperSpec{shortFlags: "46AaCfGgKkMNnqsTtVvXxYy", shortVals: "BbcDEeFIiJLlmOopQRSWw"}
)

func hasWord(ws []word, vals ...string) bool {
	for _, w := range ws {
		for _, v := range vals {
			if w.lit && w.s == v {
				return true
			}
		}
	}
	return false
}

// joinLiteral joins words with spaces when all are literal.
func joinLiteral(ws []word) (string, bool) {
	parts := make([]string, len(ws))
	for i, w := range ws {
		if !w.lit {
			return "", false
		}
		parts[i] = w.s
	}
	return strings.Join(parts, " "), true
}

// quoteWord writes w back as shell text: literal words quoted, dynamic ones
// as a variable of the same kind.
func quoteWord(w word) string {
	if w.lit {
		if q, err := syntax.Quote(w.s, syntax.LangBash); err == nil {
			return q
		}
	}
	if w.split {
		return "$__pi_dynamic"
	}
	return `"$__pi_dynamic"`
}

// shells are the programs treated as a shell: -c SCRIPT is parsed.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "rbash": true, "fish": true, "csh": true, "tcsh": true,
}

// dangerousVar reports, as ", which …", whether setting name changes which
// program a command name runs or makes a program run other code.
func dangerousVar(name string) string {
	switch name {
	case "PATH":
		return ", which changes which program a command name runs"
	case "SHELLOPTS", "BASHOPTS", "SHELL", "EXECIGNORE", "BASH_LOADABLES_PATH",
		"NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "PERLLIB",
		"RUBYOPT", "RUBYLIB", "GOFLAGS", "RUSTC_WRAPPER", "RUSTC", "CC", "CXX",
		"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS",
		"LESSOPEN", "LESSCLOSE", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "IFS":
		return ", which can make a program run other code"
	}
	for _, p := range []string{"LD_", "DYLD_", "GIT_", "NPM_CONFIG_", "npm_config_"} {
		if strings.HasPrefix(name, p) {
			return ", which can make a program run other code"
		}
	}
	return ""
}

package permission

import (
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file owns the constructs that make bash evaluate a value a second
// time: text the script holds as data (a variable's value, a command's
// output, a line read from input) that bash then reads as code or expands
// again. The checker cannot see such data, so each construct is an unknown
// command (ask; deny under a default deny), the same as `eval "$x"`:
//
//   - arithmetic ($((…)), $[…], ((…)), let, for ((…)), [[ A -eq B ]],
//     array subscripts, ${s:off:len}, declare -i assignments) evaluates the
//     value of every variable it names as an expression, and an expression
//     like a[$(cmd)] runs cmd. A variable is only known when every
//     assignment of it in the whole call is a number (or arithmetic, whose
//     result is one), and an assignment of a number runs before the
//     reference on every path (an earlier statement of an enclosing list,
//     or the init of the for ((…)) it is in), so its value cannot come from
//     the environment;
//   - ${x@P} (prompt expansion runs command substitutions in the value);
//   - ${!x} (the value is a variable name, whose subscript is evaluated);
//   - builtins that take a variable name (printf -v, read, mapfile,
//     getopts, wait -p, unset, test -v, [[ -v ]], declare and its
//     family): a name that is not literal, or a subscript that is not
//     known, is evaluated;
//   - namerefs (declare -n) whose target is not a literal name;
//   - variables whose value bash runs or reads as code: PS0, PS1, PS2,
//     PS4 and PROMPT_COMMAND (a literal value is checked as the code it
//     is), BASH_ENV and ENV (a file every later bash runs), TEXTDOMAIN and
//     TEXTDOMAINDIR (the translations of $"…" are expanded), BASH_FUNC_*
//     in an environment (a function definition);
//   - compgen -W with $ or ` in its word list (expanded when it runs);
//   - MAILPATH (an interactive bash expands its messages).
//
// Builtins that rename commands (hash -p, BASH_CMDS, alias,
// BASH_ALIASES) are followed: a command called by the new name is also
// decided as what it runs.

var (
	// intLit is text that arithmetic reads as a number, never as a
	// variable name: digits, 0x…, BASE#DIGITS, with a sign.
	intLit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?[0-9][0-9A-Za-z@_#]*$`) })
	ident  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	// varRedir is {NAME[SUBSCRIPT]} as written before a redirection.
	varRedir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^\{[A-Za-z_][A-Za-z0-9_]*\[(.*)\]\}$`) })
	// promptOctal is a prompt escape that makes any character (\044 is $).
	promptOctal = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\[0-7]`) })
)

// valueKind says what an assignment stores.
type valueKind int

const (
	valInt     valueKind = iota // a number
	valText                     // literal text
	valRuntime                  // known only when it runs
)

type value struct {
	kind valueKind
	text string
}

// varInfo is what the script does to one variable.
type varInfo struct {
	ints, others int
	// unset, readonly, nameref and intAttr: the script unsets it, makes
	// it read-only, a nameref, or an integer (declare -i).
	unset, readonly, nameref, intAttr bool
}

// arithRef is a variable whose value arithmetic evaluates, decided when
// the whole call has been read.
type arithRef struct {
	name      string
	dominated bool
	sc        scope
	argv      []word
}

// evalState is the analyzer's record of variables, renames and aliases.
type evalState struct {
	vars     map[string]*varInfo
	refs     []arithRef
	namerefs bool
	// renames are command names bound to a file (hash -p, BASH_CMDS).
	renames map[string]string
	// aliases are alias texts by name (alias, BASH_ALIASES).
	aliases map[string]string
	// stack is the path from the root of the tree being walked to the
	// current node.
	stack []syntax.Node
	// assoc are assignments and array elements of a declare -A, whose
	// subscripts are strings, not arithmetic.
	assoc map[syntax.Node]bool
}

func (a *analyzer) varInfo(name string) *varInfo {
	if a.vars == nil {
		a.vars = map[string]*varInfo{}
	}
	v := a.vars[name]
	if v == nil {
		v = &varInfo{}
		a.vars[name] = v
	}
	return v
}

// nodeArgv shows node n as a command for messages.
func nodeArgv(n syntax.Node, src string) []word {
	return []word{{s: source(n, src)}}
}

// evalNode checks one node of a walked tree for a second evaluation.
func (a *analyzer) evalNode(n syntax.Node, src string, sc scope) {
	switch x := n.(type) {
	case *syntax.ParamExp:
		a.paramExp(x, src, sc)
	case *syntax.ArithmExp:
		a.arith(x.X, src, sc)
	case *syntax.ArithmCmd:
		a.arith(x.X, src, sc)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			a.arith(e, src, sc)
		}
	case *syntax.CStyleLoop:
		// The init runs before the loop sets anything: it stands on the
		// path, so that dominated does not count the loop's own init.
		a.stack = append(a.stack, x.Init)
		a.arith(x.Init, src, sc)
		a.stack = a.stack[:len(a.stack)-1]
		a.arith(x.Cond, src, sc)
		a.arith(x.Post, src, sc)
	case *syntax.Assign:
		if x.Index != nil && !a.assoc[x] {
			a.arith(x.Index, src, sc)
		}
	case *syntax.ArrayElem:
		if x.Index != nil && !a.assoc[x] {
			a.arith(x.Index, src, sc)
		}
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ A -eq B ]] evaluates both sides as arithmetic (test and
			// [ only take numbers).
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := side.(*syntax.Word); ok {
					a.arithWord(w, src, sc)
				}
			}
		}
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); ok {
				a.nameOperand(evalWord(w, src), sc, nodeArgv(x, src), "[[ -v ]]")
			}
		}
	case *syntax.Redirect:
		if x.N != nil {
			if m := varRedir().FindStringSubmatch(x.N.Value); m != nil && !isDigits(m[1]) {
				a.unknown(sc, nodeArgv(x, src), "{NAME[…]} before a redirection stores the descriptor in an array element, and bash evaluates the subscript")
			}
		}
	case *syntax.ForClause:
		if wi, ok := x.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			v := value{kind: valInt}
			if len(wi.Items) == 0 || x.Select {
				v.kind = valRuntime
			}
			items, _ := expandArgs(wi.Items, src)
			for _, it := range items {
				if !it.lit || !intLit().MatchString(it.s) {
					v.kind = valRuntime
				}
			}
			a.setVar(wi.Name.Value, v, sc, nodeArgv(wi, src), false)
			if x.Select {
				a.setVar("REPLY", value{kind: valRuntime}, sc, nodeArgv(wi, src), false)
			}
		}
	}
}

// paramExp checks ${…}: prompt expansion, indirection, subscripts,
// offsets and ${x:=…}.
func (a *analyzer) paramExp(x *syntax.ParamExp, src string, sc scope) {
	argv := nodeArgv(x, src)
	if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.Contains(x.Exp.Word.Lit(), "P") {
		a.unknown(sc, argv, "${…@P} expands the value as a prompt, which runs the command substitutions in it")
	}
	if x.Excl && x.Names == 0 && !allIndex(x.Index) && !(x.Param != nil && strings.Contains("#?$!", x.Param.Value) && len(x.Param.Value) == 1) {
		a.unknown(sc, argv, "${!…} takes a value as a variable name, and bash evaluates a subscript in it")
	}
	if x.Index != nil && !allIndex(x.Index) {
		a.arith(x.Index, src, sc)
	}
	if x.Slice != nil {
		a.arith(x.Slice.Offset, src, sc)
		a.arith(x.Slice.Length, src, sc)
	}
	if x.Exp != nil && x.Param != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
		a.setVar(x.Param.Value, wordValue(x.Exp.Word, src), sc, argv, false)
	}
}

// arithGlue reports whether literal text joined to a number in arithmetic
// cannot make a name with it: digits, operators and blanks only.
func arithGlue(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789+-*/%()<>=!&|^~?:, \t", rune(s[i])) {
			return false
		}
	}
	return true
}

func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// arith checks an arithmetic expression: every variable whose value it
// reads must be known.
func (a *analyzer) arith(x syntax.ArithmExpr, src string, sc scope) {
	switch e := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if e.Op == syntax.Assgn {
			if w, ok := e.X.(*syntax.Word); ok && assignTarget(w) {
				a.arith(e.Y, src, sc) // x=…: x's old value is not read
				return
			}
		}
		a.arith(e.X, src, sc)
		a.arith(e.Y, src, sc)
	case *syntax.UnaryArithm:
		a.arith(e.X, src, sc)
	case *syntax.ParenArithm:
		a.arith(e.X, src, sc)
	case *syntax.Word:
		a.arithWord(e, src, sc)
	default:
		a.unknown(sc, nodeArgv(x, src), "an arithmetic form pi does not know")
	}
}

// assignTarget reports whether w is a name or a[i] on the left of "=".
func assignTarget(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return ident().MatchString(p.Value)
	case *syntax.ParamExp:
		return p.Short && p.Param != nil && p.Index != nil && !p.Excl && !p.Length && p.Exp == nil && p.Repl == nil && p.Slice == nil
	}
	return false
}

// arithWord checks a word whose expanded text arithmetic evaluates.
func (a *analyzer) arithWord(w *syntax.Word, src string, sc scope) {
	argv := nodeArgv(w, src)
	if ew := evalWord(w, src); ew.lit {
		a.arithText(ew.s, sc, argv)
		return
	}
	for _, p := range w.Parts {
		a.arithPart(p, src, sc, argv, len(w.Parts) > 1)
	}
}

// arithPart checks one part of such a word; joined says other parts
// stand next to it (so a literal part must be digits, or it could make a
// name with them).
func (a *analyzer) arithPart(p syntax.WordPart, src string, sc scope, argv []word, joined bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		v, _ := unquotedLit(x.Value)
		if !joined {
			a.arithText(v, sc, argv)
		} else if !arithGlue(v) {
			a.unknown(sc, argv, "bash evaluates this text, joined with values pi cannot see, as arithmetic")
		}
	case *syntax.SglQuoted:
		if !arithGlue(x.Value) {
			a.unknown(sc, argv, "bash evaluates this text, joined with values pi cannot see, as arithmetic")
		}
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			a.arithPart(q, src, sc, argv, true)
		}
	case *syntax.ArithmExp:
		// A number; its own expression is checked where it stands.
	case *syntax.ParamExp:
		switch {
		case x.Length:
		case x.Param != nil && len(x.Param.Value) == 1 && strings.Contains("#?$!", x.Param.Value) && x.Exp == nil && !x.Excl:
		case x.Param != nil && !x.Excl && x.Names == 0 && x.Repl == nil && x.Slice == nil &&
			(x.Exp == nil || (x.Exp.Word != nil && intWord(x.Exp.Word, src) && (x.Exp.Op == syntax.DefaultUnset ||
				x.Exp.Op == syntax.DefaultUnsetOrNull || x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull))):
			a.ref(x.Param.Value, sc, argv)
		default:
			a.unknown(sc, argv, "bash evaluates the result of this expansion as arithmetic, and pi cannot see it")
		}
	case *syntax.CmdSubst:
		a.unknown(sc, argv, "bash evaluates the output of a command as arithmetic (an output like a[$(cmd)] runs cmd)")
	default:
		a.unknown(sc, argv, "bash evaluates this as arithmetic, and pi cannot see it")
	}
}

// arithText checks literal text that bash evaluates as arithmetic: a
// number, a variable, or an expression parsed and checked as such.
func (a *analyzer) arithText(s string, sc scope, argv []word) {
	t := strings.TrimSpace(s)
	switch {
	case t == "", intLit().MatchString(t):
	case ident().MatchString(t):
		a.ref(t, sc, argv)
	default:
		in := sc.inner("arithmetic")
		in.counts = true
		a.script("(("+t+"\n))", in)
	}
}

// ref records a variable whose value arithmetic evaluates.
func (a *analyzer) ref(name string, sc scope, argv []word) {
	if sc.latent {
		return
	}
	if len(a.refs) >= maxCommands {
		a.unknown(sc, argv, "the script has too many arithmetic expressions to check")
		return
	}
	a.refs = append(a.refs, arithRef{name: name, dominated: a.dominated(name), sc: sc, argv: argv})
}

// maxDominators bounds how many earlier statements of one list are looked
// at for an assignment (past it: not known).
const maxDominators = 256

// dominated reports whether, at the node being walked, name has certainly
// been set to a number: by an earlier statement of an enclosing list (in
// the same shell or a parent of it), by the left side of && or ||, or by
// the init of the enclosing for ((…)), or it is the variable of an
// enclosing for NAME in ….
func (a *analyzer) dominated(name string) bool {
	st := a.stack
	fn := -1 // where the outermost function body starts: local works below it
	for i, n := range st {
		if _, ok := n.(*syntax.FuncDecl); ok {
			fn = i
			break
		}
	}
	for k := len(st) - 1; k > 0; k-- {
		inFunc := fn >= 0 && fn < k-1
		parent, child := st[k-1], st[k]
		switch p := parent.(type) {
		case *syntax.ForClause:
			switch l := p.Loop.(type) {
			case *syntax.CStyleLoop:
				if l.Init != nil && arithAssigns(l.Init, name) {
					if child != syntax.Node(l) || k+1 >= len(st) || st[k+1] != syntax.Node(l.Init) {
						return true
					}
				}
			case *syntax.WordIter:
				if _, ok := child.(*syntax.Stmt); ok && l.Name != nil && l.Name.Value == name {
					return true
				}
			}
		case *syntax.BinaryCmd:
			if (p.Op == syntax.AndStmt || p.Op == syntax.OrStmt) && child == syntax.Node(p.Y) && stmtAssigns(p.X, name, inFunc) {
				return true
			}
		}
		cs, ok := child.(*syntax.Stmt)
		if !ok {
			continue
		}
		for _, list := range stmtLists(parent) {
			for i, s := range list {
				if s != cs {
					continue
				}
				for j := i - 1; j >= 0 && j >= i-maxDominators; j-- {
					if stmtAssigns(list[j], name, inFunc) {
						return true
					}
				}
			}
		}
	}
	return false
}

// stmtLists are the statement lists of a node that run in order.
func stmtLists(n syntax.Node) [][]*syntax.Stmt {
	switch x := n.(type) {
	case *syntax.File:
		return [][]*syntax.Stmt{x.Stmts}
	case *syntax.Block:
		return [][]*syntax.Stmt{x.Stmts}
	case *syntax.Subshell:
		return [][]*syntax.Stmt{x.Stmts}
	case *syntax.CmdSubst:
		return [][]*syntax.Stmt{x.Stmts}
	case *syntax.ProcSubst:
		return [][]*syntax.Stmt{x.Stmts}
	case *syntax.IfClause:
		return [][]*syntax.Stmt{x.Cond, x.Then}
	case *syntax.WhileClause:
		return [][]*syntax.Stmt{x.Cond, x.Do}
	case *syntax.ForClause:
		return [][]*syntax.Stmt{x.Do}
	case *syntax.CaseItem:
		return [][]*syntax.Stmt{x.Stmts}
	}
	return nil
}

// stmtAssigns reports whether statement s sets name to a number in the
// shell it runs in: name=N, ((name=…)), let name=…, declare name=N, and
// local name=N in a function (outside one, local fails and sets nothing).
func stmtAssigns(s *syntax.Stmt, name string, inFunc bool) bool {
	if s == nil || s.Background || s.Coprocess || len(s.Redirs) > 0 {
		return false
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if len(c.Args) > 0 {
			return false
		}
		for _, as := range c.Assigns {
			if as.Name != nil && as.Name.Value == name && as.Index == nil && !as.Append && as.Array == nil && (as.Value == nil || intWord(as.Value, "")) {
				return true
			}
		}
	case *syntax.ArithmCmd:
		return arithAssigns(c.X, name)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			if arithAssigns(e, name) {
				return true
			}
		}
	case *syntax.DeclClause:
		if c.Variant == nil || (c.Variant.Value != "declare" && c.Variant.Value != "typeset" && (c.Variant.Value != "local" || !inFunc)) {
			return false
		}
		for _, as := range c.Args {
			if as.Naked && as.Name == nil && as.Value != nil && strings.HasPrefix(as.Value.Lit(), "-") && strings.ContainsAny(as.Value.Lit(), "naA") {
				return false
			}
			if as.Name != nil && as.Name.Value == name && !as.Naked && as.Index == nil && !as.Append && as.Array == nil && intWord(as.Value, "") {
				return true
			}
		}
	}
	return false
}

// arithAssigns reports whether expression x always assigns name (x=…,
// or either side of a comma).
func arithAssigns(x syntax.ArithmExpr, name string) bool {
	switch e := x.(type) {
	case *syntax.BinaryArithm:
		if e.Op == syntax.Comma {
			return arithAssigns(e.X, name) || arithAssigns(e.Y, name)
		}
		if e.Op == syntax.Assgn {
			if w, ok := e.X.(*syntax.Word); ok && w.Lit() == name {
				return true
			}
		}
	case *syntax.ParenArithm:
		return arithAssigns(e.X, name)
	}
	return false
}

// intWord reports whether word w always expands to a number: digits, $((…)),
// ${#x}, $#, $?, $$, $! (nil and empty are 0 too).
func intWord(w *syntax.Word, src string) bool {
	if w == nil {
		return true
	}
	if ew := evalWord(w, src); ew.lit {
		return ew.s == "" || intLit().MatchString(ew.s)
	}
	var part func(p syntax.WordPart) bool
	part = func(p syntax.WordPart) bool {
		switch x := p.(type) {
		case *syntax.Lit:
			return x.Value == "" || isDigits(x.Value) || x.Value == "-"
		case *syntax.ArithmExp:
			return true
		case *syntax.ParamExp:
			return x.Length || (x.Param != nil && len(x.Param.Value) == 1 && strings.Contains("#?$!", x.Param.Value) && x.Exp == nil && !x.Excl)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if !part(q) {
					return false
				}
			}
			return true
		}
		return false
	}
	for _, p := range w.Parts {
		if !part(p) {
			return false
		}
	}
	return true
}

// wordValue is what assigning word w stores.
func wordValue(w *syntax.Word, src string) value {
	if w == nil {
		return value{kind: valText}
	}
	if intWord(w, src) {
		return value{kind: valInt}
	}
	if ew := evalWord(w, src); ew.lit {
		return value{kind: valText, text: ew.s}
	}
	return value{kind: valRuntime}
}

// textValue is what assigning literal text stores.
func textValue(s string) value {
	if s == "" || intLit().MatchString(s) {
		return value{kind: valInt, text: s}
	}
	return value{kind: valText, text: s}
}

func wordToValue(w word) value {
	if !w.lit {
		return value{kind: valRuntime}
	}
	return textValue(w.s)
}

// implicitVars are set by bash itself to text it reads or makes: never a
// known number.
var implicitVars = map[string]bool{
	"_": true, "REPLY": true, "MAPFILE": true, "OPTARG": true, "OPTIND": true, "BASH_REMATCH": true,
	"COPROC": true, "PWD": true, "OLDPWD": true, "BASH_COMMAND": true, "BASH_ARGV": true, "BASH_ARGC": true,
	"BASH_SOURCE": true, "FUNCNAME": true, "BASH_LINENO": true, "DIRSTACK": true, "HOSTNAME": true,
	"COMP_WORDS": true, "COMP_LINE": true, "COMP_POINT": true, "COMP_CWORD": true, "READLINE_LINE": true,
	"READLINE_POINT": true, "BASH_EXECUTION_STRING": true, "PIPESTATUS": true, "HISTCMD": true,
}

// alwaysInt are variables bash keeps a number when the script does not
// touch them.
var alwaysInt = map[string]bool{
	"RANDOM": true, "SRANDOM": true, "SECONDS": true, "LINENO": true, "BASHPID": true, "PPID": true,
	"UID": true, "EUID": true, "EPOCHSECONDS": true,
}

// knownInt reports whether arithmetic reading name reads a number.
func (a *analyzer) knownInt(name string, dominated bool) bool {
	if a.namerefs || implicitVars[name] {
		return false
	}
	v := a.vars[name]
	if alwaysInt[name] {
		return v == nil
	}
	if v != nil && (v.others > 0 || v.unset || v.readonly || v.nameref) {
		return false
	}
	return dominated
}

// setVar records an assignment of name and checks variables whose value
// bash runs. prefix: it only sets the variable for one command (FOO=1
// cmd, env FOO=1 cmd), whose own check handles PATH and the like.
func (a *analyzer) setVar(name string, v value, sc scope, argv []word, prefix bool) {
	vi := a.varInfo(name)
	if v.kind == valInt {
		vi.ints++
	} else {
		vi.others++
	}
	if !prefix {
		if why := dangerousVar(name); why != "" {
			a.setTaint("the script sets " + name + why)
		}
	}
	switch {
	case name == "PS0", name == "PS1", name == "PS2", name == "PS4":
		switch {
		case v.kind == valRuntime:
			a.unknown(sc, argv, name+" is expanded as a prompt (running the command substitutions in it), and its value is not literal")
		case promptOctal().MatchString(v.text):
			a.unknown(sc, argv, name+" is expanded as a prompt, and its escapes like \\044 make text pi cannot read")
		default:
			a.expansionText(v.text, sc.inner(name), argv)
		}
	case name == "PROMPT_COMMAND":
		if v.kind == valRuntime {
			a.unknown(sc, argv, "PROMPT_COMMAND runs as a command, and its value is not literal")
		} else {
			a.script(v.text, sc.inner("PROMPT_COMMAND"))
		}
	case name == "BASH_ENV", name == "ENV":
		if v.kind != valText || v.text != "" {
			a.unknown(sc, argv, name+" names a file that every bash started later runs, which pi cannot see")
		}
	case name == "MAILPATH":
		if v.kind != valText || v.text != "" {
			a.unknown(sc, argv, "MAILPATH's messages are expanded by an interactive bash, and pi cannot see them run")
		}
	case name == "TEXTDOMAIN", name == "TEXTDOMAINDIR":
		if v.kind != valText || v.text != "" {
			a.unknown(sc, argv, name+" chooses the translations of $\"…\" strings, which bash expands, and pi cannot see them")
		}
	case strings.HasPrefix(name, "BASH_FUNC_"):
		a.unknown(sc, argv, name+" in an environment defines a function in the bash started with it")
	case name == "BASH_CMDS", name == "BASH_ALIASES":
		a.unknown(sc, argv, name+" renames commands, and pi cannot see to what")
	}
}

// table handles an assignment to BASH_CMDS[name]=file (a rename like
// hash -p) or BASH_ALIASES[name]=text (an alias) with literal key and
// value; anything else is unknown.
func (a *analyzer) table(table string, key syntax.ArithmExpr, val *syntax.Word, src string, sc scope, argv []word) {
	a.varInfo(table).others++
	kw, ok := key.(*syntax.Word)
	if !ok || val == nil {
		a.unknown(sc, argv, table+" renames commands, and pi cannot see to what")
		return
	}
	k, v := evalWord(kw, src), evalWord(val, src)
	if !k.lit || !v.lit {
		a.unknown(sc, argv, table+" renames commands, and pi cannot see to what")
		return
	}
	if table == "BASH_CMDS" {
		a.rename(k.s, v.s)
		return
	}
	a.alias(k.s, v.s, sc)
}

func (a *analyzer) rename(name, file string) {
	if a.renames == nil {
		a.renames = map[string]string{}
	}
	a.renames[name] = file
}

func (a *analyzer) alias(name, text string, sc scope) {
	if a.aliases == nil {
		a.aliases = map[string]string{}
	}
	a.aliases[name] = text
	a.script(text, sc.inner("alias"))
}

// assigns records the assignments of a simple command or declaration.
func (a *analyzer) assign(as *syntax.Assign, src string, sc scope, prefix bool, intAttr bool) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	argv := nodeArgv(as, src)
	if name == "BASH_CMDS" || name == "BASH_ALIASES" {
		switch {
		case as.Index != nil:
			a.table(name, as.Index, as.Value, src, sc, argv)
		case as.Array != nil:
			for _, el := range as.Array.Elems {
				a.table(name, el.Index, el.Value, src, sc, argv)
			}
		case as.Naked:
		default:
			a.table(name, nil, nil, src, sc, argv)
		}
		return
	}
	v := wordValue(as.Value, src)
	switch {
	case as.Naked:
		return
	case as.Array != nil:
		v = value{kind: valInt}
		for _, el := range as.Array.Elems {
			if el.Value == nil || !intWord(el.Value, src) {
				v = value{kind: valRuntime}
			}
		}
	case as.Append && v.kind == valInt && !intAttr:
		v.kind = valRuntime // text joined to a value pi cannot see
	case as.Index != nil && v.kind == valText:
		v.kind = valRuntime
	}
	a.setVar(name, v, sc, argv, prefix)
}

// varRedirects checks the words of a command for {NAME[SUB]} right
// before a redirection: bash stores the descriptor in that array element
// and evaluates SUB (quotes and all) to find it.
func (a *analyzer) varRedirects(args []*syntax.Word, redirs []*syntax.Redirect, src string, sc scope) {
	for _, w := range args {
		m := varRedir().FindStringSubmatch(sourceText(w, src))
		if m == nil || isDigits(m[1]) {
			continue
		}
		for _, r := range redirs {
			if r.N == nil && r.OpPos.Offset() == w.End().Offset() {
				a.unknown(sc, nodeArgv(w, src), "{NAME[…]} before a redirection stores the descriptor in an array element, and bash evaluates the subscript")
			}
		}
	}
}

// nameOperand checks a word a builtin takes as a variable name (read,
// printf -v, unset, test -v …) and returns the name it sets, "" when
// none: a name that is not literal, or a subscript, is evaluated.
func (a *analyzer) nameOperand(w word, sc scope, argv []word, what string) string {
	if !w.lit {
		a.unknown(sc, argv, what+" takes a variable name that is not literal, and bash evaluates a subscript in it")
		return ""
	}
	name, sub, hasSub := strings.Cut(w.s, "[")
	if !ident().MatchString(name) || (hasSub && !strings.HasSuffix(sub, "]")) {
		if strings.ContainsAny(w.s, "[$`") {
			a.unknown(sc, argv, what+" takes a variable name bash evaluates")
		}
		return ""
	}
	if hasSub {
		if s := strings.TrimSuffix(sub, "]"); s != "@" && s != "*" {
			a.arithText(s, sc, argv)
		}
	}
	return name
}

// expansionText checks text that bash expands as if in double quotes
// (a prompt, compgen -W's word list): its command substitutions run and
// its expansions are checked.
func (a *analyzer) expansionText(text string, sc scope, argv []word) {
	if sc.depth > maxDepth {
		a.unknown(sc, argv, "commands nested too deeply to check")
		return
	}
	const end = "__PI_EXPANDED_TEXT__"
	src := ": <<" + end + "\n" + text + "\n" + end + "\n"
	parser := parsers.Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(src), "")
	parsers.Put(parser)
	if err != nil || len(f.Stmts) != 1 || len(f.Stmts[0].Redirs) != 1 || f.Stmts[0].Redirs[0].Hdoc == nil {
		a.unknown(sc, argv, "bash expands this text, and pi cannot read it")
		return
	}
	a.walk(f.Stmts[0].Redirs[0].Hdoc, src, sc)
}

// finishEval decides what needs the whole call: the variables arithmetic
// reads, declare -i and nameref variables, and commands called by a name
// that hash -p or an alias gave them.
func (a *analyzer) finishEval() {
	seen := map[string]bool{}
	for _, r := range a.refs {
		if a.knownInt(r.name, r.dominated) {
			continue
		}
		key := r.name + "\x00" + r.argv[0].s
		if seen[key] {
			continue
		}
		seen[key] = true
		a.unknown(r.sc, r.argv, "bash evaluates the value of "+r.name+" as arithmetic (a value like a[$(cmd)] runs cmd), and the script does not set it to a number before this")
	}
	for name, v := range a.vars {
		switch {
		case v.intAttr && v.others > 0:
			a.add(command{argv: []word{litWord("declare -i " + name)}, counts: true,
				unknown: "declare -i makes bash evaluate every value assigned to " + name + " as arithmetic, and one is not a number"})
		case v.nameref && v.ints+v.others > 0:
			a.add(command{argv: []word{litWord("declare -n " + name)}, counts: true,
				unknown: "assigning " + name + ", a nameref, names the variable it refers to, and bash evaluates a subscript in it"})
		}
	}
	// Commands called by a name that hash -p, BASH_CMDS or an alias gave
	// them are also decided as what they run.
	for i := 0; i < len(a.cmds) && (len(a.renames) > 0 || len(a.aliases) > 0); i++ {
		c := a.cmds[i]
		if c.latent || len(c.argv) == 0 || !c.argv[0].lit {
			continue
		}
		name := c.argv[0].s
		if file, ok := a.renames[name]; ok && !strings.Contains(c.via, "hash -p "+name) {
			nc := c
			nc.argv = append([]word{litWord(file)}, c.argv[1:]...)
			nc.via = joinVia(c.via, "hash -p "+name)
			nc.counts = true
			a.add(nc)
		}
		if text, ok := a.aliases[name]; ok && !strings.Contains(c.via, "alias "+name) && a.work < 20*maxCommands {
			for _, w := range c.argv[1:] {
				text += " " + quoteWord(w)
			}
			a.script(text, scope{depth: 1, counts: true, open: c.open, noAllow: c.noAllow, via: joinVia(c.via, "alias "+name)})
		}
	}
}

func joinVia(via, more string) string {
	if via == "" {
		return more
	}
	return via + " → " + more
}

// builtinOpts splits a builtin's arguments as getopt does: letters in
// withVal take a value (the rest of the word, or the next word). ok is
// false when a word pi cannot read stands where an option may be.
func builtinOpts(rest []word, withVal string) (opts map[byte][]word, operands []word, ok bool) {
	opts = map[byte][]word{}
	i := 0
	for ; i < len(rest); i++ {
		w := rest[i]
		if !w.lit {
			return opts, rest[i:], false
		}
		if w.s == "--" {
			i++
			break
		}
		if len(w.s) < 2 || (w.s[0] != '-' && w.s[0] != '+') {
			break
		}
		for j := 1; j < len(w.s); j++ {
			ch := w.s[j]
			if strings.IndexByte(withVal, ch) < 0 {
				opts[ch] = append(opts[ch], litWord(""))
				continue
			}
			if j+1 < len(w.s) {
				opts[ch] = append(opts[ch], litWord(w.s[j+1:]))
			} else if i+1 < len(rest) {
				i++
				opts[ch] = append(opts[ch], rest[i])
			}
			break
		}
	}
	return opts, rest[min(i, len(rest)):], true
}

// bashBuiltins are bash 5.2's builtins (enable -a): enable NAME of any
// other name loads a shared object.
var bashBuiltins = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, b := range strings.Fields(". : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare " +
		"dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile " +
		"popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset " +
		"ulimit umask unalias unset wait") {
		m[b] = true
	}
	return m
})

// builtinEval checks the builtins that take variable names, run code or
// rename commands (the command itself is decided as usual too).
func (a *analyzer) builtinEval(name string, argv []word, sc scope) {
	rest := argv[1:]
	runtime := value{kind: valRuntime}
	setName := func(w word, what string) {
		if n := a.nameOperand(w, sc, argv, what); n != "" {
			a.setVar(n, runtime, sc, argv, false)
		}
	}
	switch name {
	case "read":
		opts, ops, ok := builtinOpts(rest, "adinNptu")
		if !ok {
			a.unknown(sc, argv, "read with options pi cannot read may set any variable")
			return
		}
		for _, w := range opts['a'] {
			setName(w, "read -a")
		}
		for _, w := range ops {
			setName(w, "read")
		}
		if len(ops) == 0 && len(opts['a']) == 0 {
			a.setVar("REPLY", runtime, sc, argv, false)
		}
	case "mapfile", "readarray":
		opts, ops, ok := builtinOpts(rest, "dnOsuCc")
		if !ok {
			a.unknown(sc, argv, name+" with options pi cannot read may run any callback")
			return
		}
		for _, cb := range opts['C'] {
			if !cb.lit {
				a.unknown(sc, argv, name+" -C runs a callback that is not literal")
				continue
			}
			// bash runs "CALLBACK INDEX 'LINE'".
			a.script(cb.s+` "$__pi_index" "$__pi_line"`, sc.inner(name+" -C"))
		}
		if len(ops) == 0 {
			a.setVar("MAPFILE", runtime, sc, argv, false)
		}
		for _, w := range ops {
			setName(w, name)
		}
	case "printf":
		opts, _, ok := builtinOpts(rest, "v")
		if !ok {
			if len(rest) > 0 && !rest[0].lit {
				a.unknown(sc, argv, "printf with a first word pi cannot read may set any variable (-v)")
			}
			return
		}
		for _, w := range opts['v'] {
			setName(w, "printf -v")
		}
	case "getopts":
		if len(rest) >= 2 {
			setName(rest[1], "getopts")
		}
		a.setVar("OPTARG", runtime, sc, argv, false)
	case "wait":
		opts, _, ok := builtinOpts(rest, "p")
		if !ok {
			return
		}
		for _, w := range opts['p'] {
			setName(w, "wait -p")
		}
	case "unset":
		opts, ops, ok := builtinOpts(rest, "")
		if !ok {
			a.unknown(sc, argv, "unset of a name that is not literal, and bash evaluates a subscript in it")
			return
		}
		if _, fn := opts['f']; fn {
			return
		}
		for _, w := range ops {
			if n := a.nameOperand(w, sc, argv, "unset"); n != "" {
				a.varInfo(n).unset = true
			}
		}
	case "test", "[":
		for i, w := range rest {
			if w.lit && (w.s == "-v" || w.s == "-R") && i+1 < len(rest) {
				a.nameOperand(rest[i+1], sc, argv, "test "+w.s)
			}
		}
	case "let":
		for _, w := range rest {
			if !w.lit {
				a.unknown(sc, argv, "let evaluates words pi cannot see as arithmetic")
				continue
			}
			a.arithText(w.s, sc, argv)
		}
	case "export", "declare", "typeset", "local", "readonly":
		a.declWords(name, rest, sc, argv)
	case "hash":
		opts, ops, ok := builtinOpts(rest, "p")
		if !ok {
			a.unknown(sc, argv, "hash with words pi cannot read may bind a command name to any file")
			return
		}
		for _, file := range opts['p'] {
			for _, w := range ops {
				if !file.lit || !w.lit {
					a.unknown(sc, argv, "hash -p binds a command name to a file, and pi cannot read which")
					continue
				}
				a.rename(w.s, file.s)
			}
		}
	case "enable":
		opts, ops, ok := builtinOpts(rest, "f")
		switch _, n := opts['n']; {
		case !ok:
			a.unknown(sc, argv, "enable with words pi cannot read may load a builtin from a shared library")
		case len(opts['f']) > 0:
			a.unknown(sc, argv, "enable -f loads a builtin from a shared library")
		case n:
		default:
			for _, w := range ops {
				if _, d := opts['d']; !d && !bashBuiltins()[w.s] {
					a.unknown(sc, argv, "enable of a name that is not a bash builtin loads one from a shared library")
				}
			}
		}
	case "jobs":
		// jobs -x COMMAND ARGS runs COMMAND.
		for i, w := range rest {
			if !w.lit || !strings.HasPrefix(w.s, "-") || w.s == "--" {
				break
			}
			if strings.Contains(w.s, "x") {
				if i+1 < len(rest) {
					a.command(rest[i+1:], sc.inner("jobs -x"))
				}
				break
			}
		}
	case "fc":
		opts, _, ok := builtinOpts(rest, "e")
		if _, list := opts['l']; !ok || !list {
			a.unknown(sc, argv, "fc runs commands from the history (or an editor), which pi cannot see")
		}
	case "bind":
		opts, _, ok := builtinOpts(rest, "mqufrx")
		if _, x := opts['x']; !ok || x {
			a.unknown(sc, argv, "bind -x binds a key to a command")
		}
	case "complete", "compgen":
		opts, _, ok := builtinOpts(rest, "oAGWCFXPSV")
		if !ok {
			a.unknown(sc, argv, name+" with words pi cannot read may run any command")
			return
		}
		for _, c := range opts['C'] {
			if !c.lit {
				a.unknown(sc, argv, name+" -C runs a command that is not literal")
				continue
			}
			a.script(c.s, sc.inner(name+" -C"))
		}
		for _, w := range opts['W'] {
			switch {
			case !w.lit:
				a.unknown(sc, argv, name+" -W expands its word list again, and it is not literal")
			case strings.ContainsAny(w.s, "$`"):
				a.expansionText(w.s, sc.inner(name+" -W"), argv)
			}
		}
	case "set":
		for _, w := range rest {
			switch {
			case !w.lit:
				a.unknown(sc, argv, "set with words pi cannot read may turn on -k, which makes later NAME=VALUE words settings")
				return
			case w.s == "--" || w.s == "-":
				return
			case w.s == "keyword", strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "--") && strings.Contains(w.s, "k"):
				a.unknown(sc, argv, "set -k makes NAME=VALUE words anywhere in a command settings of its environment")
			case !strings.HasPrefix(w.s, "-") && !strings.HasPrefix(w.s, "+"):
				return
			}
		}
	}
}

// declWords checks declare, export, local, readonly and typeset run as a
// command (builtin declare …): its words are NAME=VALUE texts.
func (a *analyzer) declWords(variant string, rest []word, sc scope, argv []word) {
	flags := ""
	if variant == "readonly" {
		flags = "r"
	}
	for _, w := range rest {
		switch {
		case !w.lit:
			a.unknown(sc, argv, variant+" of a word that is not literal: bash reads it as NAME=VALUE and evaluates a subscript or (…) in it")
		case w.s == "--":
		case strings.HasPrefix(w.s, "-"):
			flags += w.s[1:]
		case strings.HasPrefix(w.s, "+"):
		default:
			a.declText(w.s, flags, variant, sc, argv)
		}
	}
}

// declText checks one literal NAME[=VALUE] word of a declaration.
func (a *analyzer) declText(s, flags, variant string, sc scope, argv []word) {
	lhs, val, hasVal := strings.Cut(s, "=")
	lhs = strings.TrimSuffix(lhs, "+")
	name := a.nameOperand(litWord(lhs), sc, argv, variant)
	if name == "" {
		return
	}
	if !hasVal {
		a.declName(name, flags, variant)
		return
	}
	if strings.HasPrefix(val, "(") {
		a.unknown(sc, argv, variant+" of a quoted NAME=(…) expands the words in it again")
		return
	}
	if strings.Contains(flags, "n") {
		a.nameref(name, litWord(val), sc, argv)
		return
	}
	if strings.Contains(flags, "i") {
		a.varInfo(name).intAttr = true
	}
	a.setVar(name, textValue(val), sc, argv, false)
}

// declName records a declaration of name without a value.
func (a *analyzer) declName(name, flags, variant string) {
	v := a.varInfo(name)
	if strings.Contains(flags, "r") || variant == "readonly" {
		v.readonly = true
	}
	if strings.Contains(flags, "i") {
		v.intAttr = true
	}
	if strings.Contains(flags, "n") || variant == "nameref" {
		v.nameref = true
		a.namerefs = true
	}
}

// nameref checks declare -n NAME=TARGET: the target must be a literal
// name (or one with a number for subscript).
func (a *analyzer) nameref(name string, target word, sc scope, argv []word) {
	a.namerefs = true
	a.varInfo(name).nameref = true
	if !target.lit {
		a.unknown(sc, argv, "a nameref to a variable whose name is not literal, and bash evaluates a subscript in it")
		return
	}
	base, sub, hasSub := strings.Cut(target.s, "[")
	if !ident().MatchString(base) || (hasSub && !isDigits(strings.TrimSuffix(sub, "]"))) {
		a.unknown(sc, argv, "a nameref to "+clip(target.s, 40)+", which bash evaluates")
		return
	}
	switch base {
	case "PS0", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "TEXTDOMAIN", "TEXTDOMAINDIR", "BASH_CMDS", "BASH_ALIASES":
		a.unknown(sc, argv, "a nameref to "+base+", whose value bash runs or reads as code")
		return
	}
	if why := dangerousVar(base); why != "" {
		a.setTaint("the script makes a reference to " + base + why)
	}
}

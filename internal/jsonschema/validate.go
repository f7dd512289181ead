package jsonschema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a failed validation: the root's Causes are what failed. A
// leaf (no Causes) is one problem at InstanceLocation (the path of
// property names and array indexes from the instance's root); inner
// errors group their causes (anyOf, a $ref, several failures of one
// schema).
type Error struct {
	InstanceLocation []string
	Kind             Kind
	Causes           []*Error
}

// Error lists the leaves, one a line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Message())
	for _, l := range e.Leaves() {
		fmt.Fprintf(&b, "\n- at %s: %s", quote(instancePointer(l.InstanceLocation)), l.Kind.Message())
	}
	return b.String()
}

// Leaves are the problems of the tree, depth first in the order found.
func (e *Error) Leaves() []*Error {
	var out []*Error
	var walk func(*Error)
	walk = func(e *Error) {
		if len(e.Causes) == 0 {
			out = append(out, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(e)
	return out
}

func instancePointer(loc []string) string {
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// failed stands for every failure where only the verdict matters (inside
// "not", "if", a oneOf branch after a match); it is never changed.
var failed = &Error{}

// MaxSteps bounds the work of one Validate: how many times a schema is
// applied to a value. A small schema can cost exponential time (anyOf
// branches that refer, through $ref, to further anyOfs, each tried on the
// same value), and the schema may come from an MCP server or an extension;
// past the bound the validation stops with a *Budget failure. Arguments a
// model writes need a few thousand steps; an array of about 150k values
// would be needed to reach it honestly. A step costs about 2 µs where
// everything fails (errors are built), so the bound is about a second.
const MaxSteps = 500_000

// stepBudget is MaxSteps; tests lower it.
var stepBudget = MaxSteps

// budgetExceeded unwinds a validation that used up its steps.
type budgetExceeded struct{}

// Validate checks an instance (a tree as Compile takes) against the
// schema. It returns nil or an *Error.
func (s *Schema) Validate(v any) (err error) {
	steps := stepBudget
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(budgetExceeded); !ok {
				panic(r)
			}
			err = &Error{Kind: &SchemaFailed{Location: s.root.loc()}, Causes: []*Error{{Kind: &Budget{Steps: stepBudget}}}}
		}
	}()
	if err := validateTop(s.root, v, &steps); err != nil {
		return &Error{Kind: &SchemaFailed{Location: s.root.loc()}, Causes: err.Causes}
	}
	return nil
}

// validateTop runs a fresh validation of v (the instance, or a property
// name) and returns nil or an error whose Causes are the failures. steps
// is what is left of the validation's budget.
func validateTop(n *node, v any, steps *int) *Error {
	vd := validator{v: v, vloc: make([]string, 0, 8), n: n, scp: &scope{n: n}, uneval: unevalFrom(v, n, false), steps: steps}
	_, err := vd.validate()
	if err == nil {
		return nil
	}
	if _, ok := err.Kind.(*Group); ok {
		return &Error{Causes: err.Causes}
	}
	return &Error{Causes: []*Error{err}}
}

type validator struct {
	v          any
	vloc       []string
	n          *node
	scp        *scope
	uneval     *uneval
	errs       []*Error
	boolResult bool // only the verdict matters
	steps      *int // left of the budget, shared by the whole validation
}

// scope is the chain of schemas applied, for reference cycles: a schema
// met again on the same value (same vid) is a cycle.
type scope struct {
	n      *node
	refKw  string
	vid    int
	parent *scope
}

func (sc *scope) cycle() *scope {
	for p := sc.parent; p != nil && p.vid == sc.vid; p = p.parent {
		if p.n == sc.n {
			return p
		}
	}
	return nil
}

// kwLoc is the keyword path from the root schema to this scope.
func (sc *scope) kwLoc() string {
	var parts []string
	for ; sc.parent != nil; sc = sc.parent {
		if sc.refKw != "" {
			parts = append(parts, "/"+escapeToken(sc.refKw))
		} else {
			cur, parent := sc.n.loc(), sc.parent.n.loc()
			parts = append(parts, cur[min(len(parent), len(cur)):])
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, "")
}

// uneval is what no keyword has evaluated yet, for unevaluated*.
type uneval struct {
	props map[string]struct{}
	items map[int]struct{}
}

func unevalFrom(v any, n *node, callerNeeds bool) *uneval {
	u := &uneval{}
	switch v := v.(type) {
	case map[string]any:
		if !n.allPropsEvaluated && (callerNeeds || n.unevalProps != nil) {
			u.props = make(map[string]struct{}, len(v))
			for k := range v {
				u.props[k] = struct{}{}
			}
		}
	case []any:
		if !n.allItemsEvaluated && (callerNeeds || n.unevalItems != nil) && n.numItemsEvaluated < len(v) {
			u.items = map[int]struct{}{}
			for i := n.numItemsEvaluated; i < len(v); i++ {
				u.items[i] = struct{}{}
			}
		}
	}
	return u
}

func (u *uneval) merge(o *uneval) {
	for k := range u.props {
		if _, ok := o.props[k]; !ok {
			delete(u.props, k)
		}
	}
	for i := range u.items {
		if _, ok := o.items[i]; !ok {
			delete(u.items, i)
		}
	}
}

func (u *uneval) isEmpty() bool { return len(u.props) == 0 && len(u.items) == 0 }

func (vd *validator) error(k Kind) *Error {
	if vd.boolResult {
		return failed
	}
	return &Error{InstanceLocation: slices.Clone(vd.vloc), Kind: k}
}

// errorWith is error(k) with causes.
func (vd *validator) errorWith(k Kind, causes []*Error) *Error {
	if vd.boolResult {
		return failed
	}
	e := vd.error(k)
	e.Causes = causes
	return e
}

func (vd *validator) add(e *Error) {
	if e != nil {
		vd.errs = append(vd.errs, e)
	}
}

func (vd *validator) addKind(k Kind) { vd.errs = append(vd.errs, vd.error(k)) }

func (vd *validator) validate() (*uneval, *Error) {
	if *vd.steps--; *vd.steps < 0 {
		panic(budgetExceeded{})
	}
	n, v := vd.n, vd.v
	if n.isBool {
		if n.boolVal {
			return vd.uneval, nil
		}
		return nil, vd.error(&FalseSchema{})
	}
	if p := vd.scp.cycle(); p != nil {
		return nil, vd.error(&RefCycle{URL: n.loc(), KeywordLocation1: vd.scp.kwLoc(), KeywordLocation2: p.kwLoc()})
	}
	t := typeOf(v)
	if t == 0 {
		return nil, vd.error(&InvalidValue{Value: v})
	}
	if n.types != 0 {
		if n.types&t == 0 && !(n.types&tInteger != 0 && t == tNumber && isInteger(v)) {
			return nil, vd.error(&Type{Got: t.String(), Want: n.types.names()})
		}
	}
	if n.hasConst && !equal(v, n.constVal) {
		return nil, vd.error(&Const{Got: v, Want: n.constVal})
	}
	if n.enum != nil {
		ok := false
		if n.enumTypes&t != 0 {
			for _, e := range n.enum {
				if equal(v, e) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return nil, vd.error(&Enum{Got: v, Want: n.enum})
		}
	}
	if n.formatFn != nil {
		if s, ok := v.(string); ok {
			if err := n.formatFn(s); err != nil {
				return nil, vd.error(&Format{Got: v, Want: n.format, Err: err})
			}
		}
	}
	if n.ref != nil {
		err := vd.validateRef(n.ref, "$ref")
		if n.draft < Draft2019 {
			return vd.uneval, err
		}
		vd.add(err)
	}
	switch t {
	case tObject:
		vd.object(v.(map[string]any))
	case tArray:
		vd.array(v.([]any))
	case tString:
		vd.str(v.(string))
	case tNumber:
		vd.number(v)
	}
	if len(vd.errs) == 0 || !vd.boolResult {
		vd.conditions()
		if n.draft >= Draft2019 {
			vd.unevaluated()
		}
	}
	switch len(vd.errs) {
	case 0:
		return vd.uneval, nil
	case 1:
		return nil, vd.errs[0]
	}
	return nil, vd.errorWith(&Group{}, vd.errs)
}

func (vd *validator) missing(obj map[string]any, names []string) []string {
	var out []string
	for _, name := range names {
		if _, ok := obj[name]; !ok {
			if vd.boolResult {
				return []string{}
			}
			out = append(out, name)
		}
	}
	return out
}

func (vd *validator) object(obj map[string]any) {
	n := vd.n
	if n.minProperties >= 0 && len(obj) < n.minProperties {
		vd.addKind(&MinProperties{Got: len(obj), Want: n.minProperties})
	}
	if n.maxProperties >= 0 && len(obj) > n.maxProperties {
		vd.addKind(&MaxProperties{Got: len(obj), Want: n.maxProperties})
	}
	if len(n.required) > 0 {
		if m := vd.missing(obj, n.required); m != nil {
			vd.addKind(&Required{Missing: m})
		}
	}
	if vd.boolResult && len(vd.errs) > 0 {
		return
	}
	for _, dep := range n.dependencies {
		if _, ok := obj[dep.prop]; !ok {
			continue
		}
		if dep.schema == nil {
			if m := vd.missing(obj, dep.required); m != nil {
				vd.addKind(&Dependency{Prop: dep.prop, Missing: m})
			}
		} else {
			vd.add(vd.validateSelf(dep.schema, "", false))
		}
	}
	names := sortedKeys(obj)
	var additional []string
	for _, name := range names {
		if vd.boolResult && len(vd.errs) > 0 {
			return
		}
		val := obj[name]
		evaluated := false
		if s, ok := n.properties[name]; ok {
			evaluated = true
			vd.add(vd.validateVal(s, val, name))
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(name) {
				evaluated = true
				vd.add(vd.validateVal(pp.n, val, name))
			}
		}
		if !evaluated && n.additionalProps != nil {
			evaluated = true
			if a := n.additionalProps; a.literalBool {
				if !a.boolVal {
					additional = append(additional, name)
				}
			} else {
				vd.add(vd.validateVal(a, val, name))
			}
		}
		if evaluated {
			delete(vd.uneval.props, name)
		}
	}
	if len(additional) > 0 {
		vd.addKind(&AdditionalProperties{Properties: additional})
	}
	if n.propertyNames != nil {
		for _, name := range names {
			if e := validateTop(n.propertyNames, name, vd.steps); e != nil {
				vd.add(vd.errorWith(&PropertyNames{Property: name}, e.Causes))
			}
		}
	}
	for _, dep := range n.dependentSchemas {
		if _, ok := obj[dep.prop]; ok {
			vd.add(vd.validateSelf(dep.schema, "", false))
		}
	}
	for _, dep := range n.dependentRequired {
		if _, ok := obj[dep.prop]; ok {
			if m := vd.missing(obj, dep.required); m != nil {
				vd.addKind(&DependentRequired{Prop: dep.prop, Missing: m})
			}
		}
	}
}

func (vd *validator) array(arr []any) {
	n := vd.n
	if n.minItems >= 0 && len(arr) < n.minItems {
		vd.addKind(&MinItems{Got: len(arr), Want: n.minItems})
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		vd.addKind(&MaxItems{Got: len(arr), Want: n.maxItems})
	}
	if n.uniqueItems && len(arr) > 1 {
		if i, j := firstDuplicate(arr); i >= 0 {
			vd.addKind(&UniqueItems{Duplicates: [2]int{i, j}})
		}
	}
	if n.draft < Draft2020 {
		evaluated := 0
		if n.items != nil {
			for i, item := range arr {
				vd.add(vd.validateVal(n.items, item, strconv.Itoa(i)))
			}
			evaluated = len(arr)
		} else if n.hasItemsList {
			evaluated = min(len(arr), len(n.itemsList))
			for i, item := range arr[:evaluated] {
				vd.add(vd.validateVal(n.itemsList[i], item, strconv.Itoa(i)))
			}
		}
		if a := n.additionalItems; a != nil {
			if a.literalBool {
				if !a.boolVal && evaluated != len(arr) {
					vd.addKind(&AdditionalItems{Count: len(arr) - evaluated})
				}
			} else {
				for i, item := range arr[evaluated:] {
					vd.add(vd.validateVal(a, item, strconv.Itoa(evaluated+i)))
				}
			}
		}
	} else {
		evaluated := min(len(n.prefixItems), len(arr))
		for i, item := range arr[:evaluated] {
			vd.add(vd.validateVal(n.prefixItems[i], item, strconv.Itoa(i)))
		}
		if n.items != nil {
			for i, item := range arr[evaluated:] {
				vd.add(vd.validateVal(n.items, item, strconv.Itoa(evaluated+i)))
			}
		}
	}
	if n.contains != nil {
		var errs []*Error
		var matched []int
		for i, item := range arr {
			if e := vd.validateVal(n.contains, item, strconv.Itoa(i)); e != nil {
				errs = append(errs, e)
			} else {
				matched = append(matched, i)
				if n.draft >= Draft2020 {
					delete(vd.uneval.items, i)
				}
			}
		}
		if n.minContains >= 0 {
			if len(matched) < n.minContains {
				vd.add(vd.errorWith(&MinContains{Got: matched, Want: n.minContains}, errs))
			}
		} else if len(matched) == 0 {
			vd.add(vd.errorWith(&Contains{}, errs))
		}
		if n.maxContains >= 0 && len(matched) > n.maxContains {
			vd.addKind(&MaxContains{Got: matched, Want: n.maxContains})
		}
	}
}

func (vd *validator) str(s string) {
	n := vd.n
	if n.minLength >= 0 || n.maxLength >= 0 {
		length := utf8.RuneCountInString(s)
		if n.minLength >= 0 && length < n.minLength {
			vd.addKind(&MinLength{Got: length, Want: n.minLength})
		}
		if n.maxLength >= 0 && length > n.maxLength {
			vd.addKind(&MaxLength{Got: length, Want: n.maxLength})
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		vd.addKind(&Pattern{Got: s, Want: n.pattern.String()})
	}
}

func (vd *validator) number(v any) {
	n := vd.n
	if n.minimum == nil && n.maximum == nil && n.exclMinimum == nil && n.exclMaximum == nil && n.multipleOf == nil {
		return
	}
	d, _ := toDecimal(v)
	if n.minimum != nil && d.cmp(*n.minimum) < 0 {
		vd.addKind(&Minimum{Got: d.float64(), Want: n.minimum.float64()})
	}
	if n.maximum != nil && d.cmp(*n.maximum) > 0 {
		vd.addKind(&Maximum{Got: d.float64(), Want: n.maximum.float64()})
	}
	if n.exclMinimum != nil && d.cmp(*n.exclMinimum) <= 0 {
		vd.addKind(&ExclusiveMinimum{Got: d.float64(), Want: n.exclMinimum.float64()})
	}
	if n.exclMaximum != nil && d.cmp(*n.exclMaximum) >= 0 {
		vd.addKind(&ExclusiveMaximum{Got: d.float64(), Want: n.exclMaximum.float64()})
	}
	if n.multipleOf != nil && !d.multipleOf(*n.multipleOf) {
		vd.addKind(&MultipleOf{Got: d.float64(), Want: n.multipleOf.float64()})
	}
}

func (vd *validator) conditions() {
	n := vd.n
	if n.not != nil && vd.validateSelf(n.not, "", true) == nil {
		vd.addKind(&Not{})
	}
	if len(n.allOf) > 0 {
		var errs []*Error
		for _, s := range n.allOf {
			if e := vd.validateSelf(s, "", false); e != nil {
				errs = append(errs, e)
				if vd.boolResult {
					break
				}
			}
		}
		if len(errs) > 0 {
			vd.add(vd.errorWith(&AllOf{}, errs))
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		var errs []*Error
		for _, s := range n.anyOf {
			if e := vd.validateSelf(s, "", false); e != nil {
				errs = append(errs, e)
			} else {
				matched = true
				if vd.uneval.isEmpty() {
					break // unevaluated* needs every branch's annotations
				}
			}
		}
		if !matched {
			vd.add(vd.errorWith(&AnyOf{}, errs))
		}
	}
	if len(n.oneOf) > 0 {
		matched := -1
		var errs []*Error
		for i, s := range n.oneOf {
			if e := vd.validateSelf(s, "", matched != -1); e != nil {
				if matched == -1 {
					errs = append(errs, e)
				}
				continue
			}
			if matched != -1 {
				vd.addKind(&OneOf{Subschemas: []int{matched, i}})
				break
			}
			matched = i
		}
		if matched == -1 {
			vd.add(vd.errorWith(&OneOf{}, errs))
		}
	}
	if n.ifS != nil {
		if vd.validateSelf(n.ifS, "", true) == nil {
			if n.then != nil {
				vd.add(vd.validateSelf(n.then, "", false))
			}
		} else if n.elsS != nil {
			vd.add(vd.validateSelf(n.elsS, "", false))
		}
	}
}

func (vd *validator) unevaluated() {
	n := vd.n
	if obj, ok := vd.v.(map[string]any); ok && n.unevalProps != nil {
		for _, name := range sortedKeys(vd.uneval.props) {
			if val, ok := obj[name]; ok {
				vd.add(vd.validateVal(n.unevalProps, val, name))
			}
		}
		vd.uneval.props = nil
	}
	if arr, ok := vd.v.([]any); ok && n.unevalItems != nil {
		idx := make([]int, 0, len(vd.uneval.items))
		for i := range vd.uneval.items {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			vd.add(vd.validateVal(n.unevalItems, arr[i], strconv.Itoa(i)))
		}
		vd.uneval.items = nil
	}
}

// validateSelf applies s to the same value (an applicator, or a reference
// when refKw is set).
func (vd *validator) validateSelf(s *node, refKw string, boolResult bool) *Error {
	sub := validator{
		v:          vd.v,
		vloc:       vd.vloc,
		n:          s,
		scp:        &scope{n: s, refKw: refKw, vid: vd.scp.vid, parent: vd.scp},
		uneval:     unevalFrom(vd.v, s, !vd.uneval.isEmpty()),
		boolResult: vd.boolResult || boolResult,
		steps:      vd.steps,
	}
	u, err := sub.validate()
	if err == nil {
		vd.uneval.merge(u)
	}
	return err
}

// validateVal applies s to a member of the value (tok: its name or index).
func (vd *validator) validateVal(s *node, v any, tok string) *Error {
	sub := validator{
		v:          v,
		vloc:       append(vd.vloc, tok),
		n:          s,
		scp:        &scope{n: s, vid: vd.scp.vid + 1, parent: vd.scp},
		uneval:     unevalFrom(v, s, false),
		boolResult: vd.boolResult,
		steps:      vd.steps,
	}
	_, err := sub.validate()
	return err
}

func (vd *validator) validateRef(s *node, kw string) *Error {
	e := vd.validateSelf(s, kw, false)
	if e == nil {
		return nil
	}
	if vd.boolResult {
		return failed
	}
	causes := []*Error{e}
	if _, ok := e.Kind.(*Group); ok {
		causes = e.Causes
	}
	return vd.errorWith(&Reference{RefKeyword: kw, URL: s.loc()}, causes)
}

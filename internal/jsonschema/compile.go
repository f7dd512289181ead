package jsonschema

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Draft is a JSON Schema draft: 4, 6, 7, 2019 (2019-09) or 2020 (2020-12).
type Draft int

// The drafts a schema may name in $schema.
const (
	Draft4    Draft = 4
	Draft6    Draft = 6
	Draft7    Draft = 7
	Draft2019 Draft = 2019
	Draft2020 Draft = 2020
)

// Options says how to compile a schema document.
type Options struct {
	// URL names the document (its base URI and the start of every
	// schema location), e.g. "pi:tool/read.json".
	URL string
	// DefaultDraft applies when the document has no $schema; 0 is 2020-12.
	DefaultDraft Draft
	// Owner words the refusal of an outside reference: "a tool's
	// schema" (the default) may refer only to itself.
	Owner string
}

// Schema is a compiled schema document, safe for concurrent Validate.
type Schema struct {
	root *node
	url  string
}

// node is one compiled schema (object or boolean) of the document.
type node struct {
	ptr   string // JSON pointer from the document root
	url   string // the document's
	draft Draft

	isBool, boolVal bool
	literalBool     bool // additionalProperties/additionalItems written as true or false

	ref     *node
	refOnly bool // draft < 2019: $ref hides the other keywords (const aside)

	types     typeSet
	enum      []any
	enumTypes typeSet
	hasConst  bool
	constVal  any
	format    string
	formatFn  formatCheck

	minimum, maximum, exclMinimum, exclMaximum, multipleOf *decimal

	minLength, maxLength         int // -1: absent
	minItems, maxItems           int
	minProperties, maxProperties int
	minContains, maxContains     int
	pattern                      *regexp.Regexp

	required          []string
	properties        map[string]*node
	patternProps      []patternProp
	additionalProps   *node // a boolean node for true/false
	dependencies      []dependency
	dependentRequired []dependency
	dependentSchemas  []dependency
	propertyNames     *node
	unevalProps       *node

	uniqueItems     bool
	itemsList       []*node // draft < 2020: items as an array
	hasItemsList    bool
	items           *node // draft < 2020: items as a schema; 2020: items
	additionalItems *node // only with itemsList
	prefixItems     []*node
	contains        *node
	unevalItems     *node

	allOf, anyOf, oneOf  []*node
	not, ifS, then, elsS *node

	allPropsEvaluated bool
	allItemsEvaluated bool
	numItemsEvaluated int
}

// loc is the node's location, URL#pointer, as errors name schemas.
func (n *node) loc() string { return n.url + "#" + encodePointer(n.ptr) }

type patternProp struct {
	re *regexp.Regexp
	n  *node
}

// dependency is a name with the properties it requires or its schema.
type dependency struct {
	prop     string
	required []string // nil with schema
	schema   *node
}

// CompileError is a schema that cannot be compiled: Location is the
// keyword's place in the document ("pi:tool/t.json#/properties/a/minLength").
type CompileError struct {
	Location string
	Reason   string
}

func (e *CompileError) Error() string {
	if e.Location == "" {
		return e.Reason
	}
	return fmt.Sprintf("%s: %s", e.Location, e.Reason)
}

// resource is a part of the document with its own base URI: the root and
// every subschema with an $id.
type resource struct {
	ptr     string
	id      string
	draft   Draft
	anchors map[string]string // name → pointer
}

type compiler struct {
	opts      Options
	doc       any
	resources []*resource
	visited   map[string]bool // pointers whose resources were collected
	checked   map[string]bool // pointers whose keywords were checked
	nodes     map[string]*node
	queue     []*node
}

// Compile compiles the schema document doc (a tree of map[string]any,
// []any, json.Number, string, bool and nil).
//
// # Errors
//
// A *CompileError for a keyword whose value the draft's meta-schema does
// not allow (naming the keyword), a pattern Go's regexp cannot compile, a
// reference that does not resolve inside the document (outside ones are
// never loaded), $dynamicRef and $recursiveRef (not supported), an
// unknown $schema.
func Compile(doc any, opts Options) (*Schema, error) {
	if opts.URL == "" {
		opts.URL = "pi:schema.json"
	}
	if opts.DefaultDraft == 0 {
		opts.DefaultDraft = Draft2020
	}
	if opts.Owner == "" {
		opts.Owner = "a tool's schema"
	}
	c := &compiler{opts: opts, doc: doc, visited: map[string]bool{}, checked: map[string]bool{}, nodes: map[string]*node{}}
	if err := c.collect(doc, "", opts.URL, opts.DefaultDraft); err != nil {
		return nil, err
	}
	if err := c.checkTree(doc, ""); err != nil {
		return nil, err
	}
	root, err := c.enqueue("")
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(c.queue); i++ {
		if err := c.compileNode(c.queue[i]); err != nil {
			return nil, err
		}
	}
	return &Schema{root: root, url: opts.URL}, nil
}

func (c *compiler) location(ptr string) string {
	return c.opts.URL + "#" + encodePointer(ptr)
}

func (c *compiler) errAt(ptr, reason string, args ...any) error {
	return &CompileError{Location: c.location(ptr), Reason: fmt.Sprintf(reason, args...)}
}

// encodePointer percent-encodes each token of a JSON pointer, as schema
// locations are written.
func encodePointer(ptr string) string {
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = url.PathEscape(t)
	}
	return strings.Join(toks, "/")
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

func appendPtr(ptr string, toks ...string) string {
	for _, t := range toks {
		ptr += "/" + escapeToken(t)
	}
	return ptr
}

// draftOf is the draft named by a $schema value, or 0.
func draftOf(s string) Draft {
	s, frag, _ := strings.Cut(s, "#")
	if frag != "" {
		return 0
	}
	if r, ok := strings.CutPrefix(s, "http://"); ok {
		s = r
	} else {
		s = strings.TrimPrefix(s, "https://")
	}
	switch s {
	case "json-schema.org/schema", "json-schema.org/draft/2020-12/schema":
		return Draft2020
	case "json-schema.org/draft/2019-09/schema":
		return Draft2019
	case "json-schema.org/draft-07/schema":
		return Draft7
	case "json-schema.org/draft-06/schema":
		return Draft6
	case "json-schema.org/draft-04/schema":
		return Draft4
	}
	return 0
}

// outside is the refusal of a reference (or $schema) outside the document.
func (c *compiler) outside(u string) error {
	return fmt.Errorf("failing loading %q: %s is outside the schema; %s may refer only to itself (#...)", u, u, c.opts.Owner)
}

// schemaDraft is the draft of an object with a $schema string.
func (c *compiler) schemaDraft(ptr, s string) (Draft, error) {
	if d := draftOf(s); d != 0 {
		return d, nil
	}
	base, _, _ := strings.Cut(s, "#")
	if _, err := url.Parse(base); err != nil {
		return 0, fmt.Errorf("invalid $schema in %q: %v", c.location(ptr), err)
	}
	if d := draftOf(base); d != 0 {
		return d, nil // the meta-schema document itself
	}
	if ptr == "" && base == c.opts.URL {
		return 0, fmt.Errorf("draft %q is not supported", base)
	}
	return 0, c.outside(base)
}

// idKeyword is the draft's name for a schema's identifier.
func idKeyword(d Draft) string {
	if d == Draft4 {
		return "id"
	}
	return "$id"
}

// idOf is an object's identifier without its fragment ("" for none;
// draft < 2019 ignores it beside $ref).
func idOf(obj map[string]any, d Draft) string {
	if d < Draft2019 {
		if _, ok := obj["$ref"]; ok {
			return ""
		}
	}
	id, _ := obj[idKeyword(d)].(string)
	id, _, _ = strings.Cut(id, "#")
	return id
}

// joinURL resolves ref against base; it returns the URL and the decoded
// fragment.
func joinURL(base, ref string) (string, string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", "", fmt.Errorf("error in parsing %q: %v", base, err)
	}
	r, frag, _ := strings.Cut(ref, "#")
	frag, err = url.PathUnescape(frag)
	if err != nil {
		return "", "", fmt.Errorf("error in parsing %q: %v", ref, err)
	}
	ru, err := url.Parse(r)
	if err != nil {
		return "", "", fmt.Errorf("error in parsing %q: %v", r, err)
	}
	res := b.ResolveReference(ru)
	if !ru.IsAbs() && b.Opaque != "" {
		res.Opaque = b.Opaque
	}
	return res.String(), frag, nil
}

// placesByDraft caches subschemaPlaces.
var placesByDraft = sync.OnceValue(func() map[Draft][]string {
	m := map[Draft][]string{}
	for _, d := range []Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		m[d] = subschemaPlaces(d)
	}
	return m
})

// subschemaPlaces lists where a draft has subschemas: "kw" (a schema),
// "kw/*" (an object of schemas), "kw/[]" (an array of schemas).
func subschemaPlaces(d Draft) []string {
	p := []string{"definitions/*", "not", "allOf/[]", "anyOf/[]", "oneOf/[]", "properties/*",
		"additionalProperties", "patternProperties/*", "items", "items/[]", "additionalItems", "dependencies/*"}
	if d >= Draft6 {
		p = append(p, "propertyNames", "contains")
	}
	if d >= Draft7 {
		p = append(p, "if", "then", "else")
	}
	if d >= Draft2019 {
		p = append(p, "$defs/*", "dependentSchemas/*", "unevaluatedProperties", "unevaluatedItems", "contentSchema")
	}
	if d >= Draft2020 {
		p = append(p, "prefixItems/[]")
	}
	return p
}

// children are the subschema values of obj with their pointers. With
// metaOnly, only those the draft's meta-schema checks (2020-12 walks
// additionalItems and items arrays for $id, but does not check them).
func children(obj map[string]any, ptr string, d Draft, metaOnly bool) [][2]any {
	var out [][2]any
	for _, place := range placesByDraft()[d] {
		if metaOnly && d >= Draft2020 && (place == "additionalItems" || place == "items/[]") {
			continue
		}
		kw, how, _ := strings.Cut(place, "/")
		v, ok := obj[kw]
		if !ok {
			continue
		}
		switch how {
		case "":
			out = append(out, [2]any{appendPtr(ptr, kw), v})
		case "*":
			if m, ok := v.(map[string]any); ok {
				for _, k := range sortedKeys(m) {
					out = append(out, [2]any{appendPtr(ptr, kw, k), m[k]})
				}
			}
		case "[]":
			if a, ok := v.([]any); ok {
				for i, x := range a {
					out = append(out, [2]any{appendPtr(ptr, kw, strconv.Itoa(i)), x})
				}
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// resourceAt is the resource a pointer belongs to: the one with the
// longest pointer that is a prefix of it.
func (c *compiler) resourceAt(ptr string) *resource {
	var best *resource
	for _, r := range c.resources {
		if (r.ptr == ptr || r.ptr == "" || strings.HasPrefix(ptr, r.ptr+"/")) && (best == nil || len(r.ptr) > len(best.ptr)) {
			best = r
		}
	}
	return best
}

func (c *compiler) resourceByID(id string) *resource {
	for _, r := range c.resources {
		if r.id == id {
			return r
		}
	}
	return nil
}

// collect walks the subschemas at ptr: resources ($id, $schema), anchors,
// and the keyword checks. Iterative, so deep documents cannot exhaust the
// stack.
func (c *compiler) collect(v any, ptr, base string, draft Draft) error {
	type item struct {
		v     any
		ptr   string
		base  string
		draft Draft
	}
	stack := []item{{v, ptr, base, draft}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.visited[it.ptr] {
			continue
		}
		c.visited[it.ptr] = true
		obj, isObj := it.v.(map[string]any)
		if !isObj {
			// A boolean schema, or a value the parent's keyword check
			// judged (an items array, a dependencies list).
			if it.ptr == "" {
				c.resources = append(c.resources, &resource{ptr: "", id: it.base, draft: it.draft, anchors: map[string]string{}})
			}
			continue
		}
		d := it.draft
		hasSchema := false
		if s, ok := obj["$schema"].(string); ok {
			sd, err := c.schemaDraft(it.ptr, s)
			if err != nil {
				return err
			}
			d, hasSchema = sd, true
		}
		id := idOf(obj, d)
		if id == "" && it.ptr != "" {
			d, hasSchema = it.draft, false
			id = idOf(obj, d)
		}
		b := it.base
		var res *resource
		if id != "" {
			u, _, err := joinURL(b, id)
			if err != nil {
				return fmt.Errorf("error in parsing id at %q", c.location(it.ptr))
			}
			b = u
			res = &resource{ptr: it.ptr, id: b, anchors: map[string]string{}}
		} else if it.ptr == "" {
			res = &resource{ptr: "", id: b, anchors: map[string]string{}}
		}
		if res != nil {
			if other := c.resourceByID(b); other != nil {
				if other.ptr != it.ptr {
					return fmt.Errorf("duplicate id %q in %q at %q and %q", b, c.opts.URL, it.ptr, other.ptr)
				}
			} else {
				res.draft = it.draft
				if hasSchema {
					res.draft = d
				}
				c.resources = append(c.resources, res)
			}
		}
		baseRes := c.resourceByID(b)
		if err := c.collectAnchors(obj, it.ptr, baseRes); err != nil {
			return err
		}
		kids := children(obj, it.ptr, d, false)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, item{kids[i][1], kids[i][0].(string), b, baseRes.draft})
		}
	}
	return nil
}

func (c *compiler) collectAnchors(obj map[string]any, ptr string, res *resource) error {
	add := func(a string) error {
		if p, ok := res.anchors[a]; ok && p != ptr {
			return fmt.Errorf("duplicate anchor %q in %q at %q and %q", a, c.opts.URL, p, ptr)
		}
		res.anchors[a] = ptr
		return nil
	}
	d := res.draft
	if d < Draft2019 {
		if _, ok := obj["$ref"]; ok {
			return nil
		}
		if id, ok := obj[idKeyword(d)].(string); ok {
			_, frag, _ := strings.Cut(id, "#")
			frag, err := url.PathUnescape(frag)
			if err != nil {
				return fmt.Errorf("error in parsing anchor at %q", c.location(ptr))
			}
			if frag != "" && !strings.HasPrefix(frag, "/") {
				if err := add(frag); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if a, ok := obj["$anchor"].(string); ok {
		if err := add(a); err != nil {
			return err
		}
	}
	if d >= Draft2020 {
		if a, ok := obj["$dynamicAnchor"].(string); ok {
			if err := add(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookup finds the value at a JSON pointer of the document.
func (c *compiler) lookup(ptr string) (any, error) {
	v := c.doc
	if ptr == "" {
		return v, nil
	}
	for _, tok := range strings.Split(ptr, "/")[1:] {
		t, ok := unescapeToken(tok)
		if !ok {
			return nil, fmt.Errorf("invalid json-pointer %q", c.location(ptr))
		}
		switch x := v.(type) {
		case map[string]any:
			if next, ok := x[t]; ok {
				v = next
				continue
			}
		case []any:
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(x) {
				v = x[i]
				continue
			}
		}
		return nil, fmt.Errorf("json-pointer in %q not found", c.location(ptr))
	}
	return v, nil
}

func unescapeToken(t string) (string, bool) {
	if !strings.Contains(t, "~") {
		return t, true
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '~' {
			b.WriteByte(t[i])
			continue
		}
		if i+1 >= len(t) || (t[i+1] != '0' && t[i+1] != '1') {
			return "", false
		}
		if t[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), true
}

// enqueue returns the node at ptr, queued for compiling when new. A
// pointer the walk did not reach (a $ref into an unknown keyword) is
// walked first, in the draft of its resource.
func (c *compiler) enqueue(ptr string) (*node, error) {
	if n, ok := c.nodes[ptr]; ok {
		return n, nil
	}
	v, err := c.lookup(ptr)
	if err != nil {
		return nil, err
	}
	if !c.visited[ptr] {
		res := c.resourceAt(ptr)
		if err := c.collect(v, ptr, res.id, res.draft); err != nil {
			return nil, err
		}
	}
	if err := c.checkTree(v, ptr); err != nil {
		return nil, err
	}
	n := &node{ptr: ptr, url: c.opts.URL, draft: c.resourceAt(ptr).draft}
	c.nodes[ptr] = n
	c.queue = append(c.queue, n)
	return n, nil
}

// resolveRef resolves a reference written in the schema at ptr.
func (c *compiler) resolveRef(ptr, ref string) (*node, error) {
	res := c.resourceAt(ptr)
	u, frag, err := joinURL(res.id, ref)
	if err != nil {
		return nil, err
	}
	var target *resource
	if u == c.opts.URL {
		target = c.resourceAt("")
	} else if target = c.resourceByID(u); target == nil {
		return nil, c.outside(u)
	}
	p := target.ptr + frag
	if frag != "" && !strings.HasPrefix(frag, "/") {
		ap, ok := target.anchors[frag]
		if !ok {
			return nil, fmt.Errorf("anchor in %q not found in schema %q", target.id+"#"+encodePointer(frag), c.opts.URL)
		}
		p = ap
	}
	return c.enqueue(p)
}

func (c *compiler) compileNode(n *node) error {
	v, err := c.lookup(n.ptr)
	if err != nil {
		return err
	}
	n.minLength, n.maxLength, n.minItems, n.maxItems = -1, -1, -1, -1
	n.minProperties, n.maxProperties, n.minContains, n.maxContains = -1, -1, -1, -1
	obj, ok := v.(map[string]any)
	if !ok || len(obj) == 0 {
		b, isBool := v.(bool)
		if !isBool && !ok {
			return c.errAt(n.ptr, "a schema must be an object or a boolean, got %s", jsonTypeName(v))
		}
		n.isBool, n.boolVal = true, b || ok
		return nil
	}
	sub := func(kw ...string) (*node, error) {
		return c.enqueue(appendPtr(n.ptr, kw...))
	}
	subIf := func(kw string) (*node, error) {
		if _, ok := obj[kw]; !ok {
			return nil, nil
		}
		return sub(kw)
	}
	subArr := func(kw string) ([]*node, error) {
		a, _ := obj[kw].([]any)
		var out []*node
		for i := range a {
			s, err := sub(kw, strconv.Itoa(i))
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	subMap := func(kw string) (map[string]*node, error) {
		m, _ := obj[kw].(map[string]any)
		if m == nil {
			return nil, nil
		}
		out := make(map[string]*node, len(m))
		for k := range m {
			s, err := sub(kw, k)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	}
	d := n.draft
	for _, kw := range []string{"$dynamicRef", "$recursiveRef"} {
		if _, ok := obj[kw]; ok && (kw == "$dynamicRef" && d >= Draft2020 || kw == "$recursiveRef" && d == Draft2019) {
			return c.errAt(appendPtr(n.ptr, kw), "%s is not supported; use $ref", kw)
		}
	}
	if ref, ok := obj["$ref"].(string); ok {
		if n.ref, err = c.resolveRef(n.ptr, ref); err != nil {
			return err
		}
		if d < Draft2019 {
			n.refOnly = true
			if d >= Draft6 {
				n.constVal, n.hasConst = obj["const"]
			}
			// The other keywords are ignored, but their subschemas
			// are compiled as the library does (they must be valid).
			return c.compileIgnored(obj, n)
		}
	}
	if n.allOf, err = subArr("allOf"); err != nil {
		return err
	}
	if n.anyOf, err = subArr("anyOf"); err != nil {
		return err
	}
	if n.oneOf, err = subArr("oneOf"); err != nil {
		return err
	}
	if n.not, err = subIf("not"); err != nil {
		return err
	}
	if d < Draft2020 {
		if items, ok := obj["items"]; ok {
			if _, isArr := items.([]any); isArr {
				n.hasItemsList = true
				if n.itemsList, err = subArr("items"); err != nil {
					return err
				}
				if n.additionalItems, err = c.additional(obj, n, "additionalItems"); err != nil {
					return err
				}
			} else if n.items, err = sub("items"); err != nil {
				return err
			}
		}
	}
	if n.properties, err = subMap("properties"); err != nil {
		return err
	}
	if m, _ := obj["patternProperties"].(map[string]any); m != nil {
		for _, k := range sortedKeys(m) {
			re, err := regexp.Compile(k)
			if err != nil {
				return fmt.Errorf("invalid regex %q at %q: %v", k, c.location(appendPtr(n.ptr, "patternProperties")), err)
			}
			s, err := sub("patternProperties", k)
			if err != nil {
				return err
			}
			n.patternProps = append(n.patternProps, patternProp{re, s})
		}
	}
	if n.additionalProps, err = c.additional(obj, n, "additionalProperties"); err != nil {
		return err
	}
	if m, _ := obj["dependencies"].(map[string]any); m != nil {
		for _, k := range sortedKeys(m) {
			if a, ok := m[k].([]any); ok {
				n.dependencies = append(n.dependencies, dependency{prop: k, required: nonNil(toStrings(a))})
				continue
			}
			s, err := sub("dependencies", k)
			if err != nil {
				return err
			}
			n.dependencies = append(n.dependencies, dependency{prop: k, schema: s})
		}
	}
	if t, ok := obj["type"]; ok {
		n.types = typesOf(t)
	}
	if a, ok := obj["enum"].([]any); ok {
		n.enum = a
		n.enumTypes = 0
		for _, x := range a {
			n.enumTypes |= typeOf(x)
		}
		if n.enum == nil {
			n.enum = []any{}
		}
	}
	n.multipleOf = numVal(obj, "multipleOf")
	n.maximum = numVal(obj, "maximum")
	if b, _ := obj["exclusiveMaximum"].(bool); b {
		n.exclMaximum, n.maximum = n.maximum, nil
	} else {
		n.exclMaximum = numVal(obj, "exclusiveMaximum")
	}
	n.minimum = numVal(obj, "minimum")
	if b, _ := obj["exclusiveMinimum"].(bool); b {
		n.exclMinimum, n.minimum = n.minimum, nil
	} else {
		n.exclMinimum = numVal(obj, "exclusiveMinimum")
	}
	n.minLength, n.maxLength = intVal(obj, "minLength"), intVal(obj, "maxLength")
	if p, ok := obj["pattern"].(string); ok {
		if n.pattern, err = regexp.Compile(p); err != nil {
			return fmt.Errorf("invalid regex %q at %q: %v", p, c.location(appendPtr(n.ptr, "pattern")), err)
		}
	}
	n.minItems, n.maxItems = intVal(obj, "minItems"), intVal(obj, "maxItems")
	n.uniqueItems, _ = obj["uniqueItems"].(bool)
	n.minProperties, n.maxProperties = intVal(obj, "minProperties"), intVal(obj, "maxProperties")
	if a, ok := obj["required"].([]any); ok {
		n.required = toStrings(a)
	}
	if d < Draft2019 {
		if f, ok := obj["format"].(string); ok {
			n.format, n.formatFn = f, formatChecks[f]
		}
	}
	if d >= Draft6 {
		if n.contains, err = subIf("contains"); err != nil {
			return err
		}
		if n.propertyNames, err = subIf("propertyNames"); err != nil {
			return err
		}
		n.constVal, n.hasConst = obj["const"]
	}
	if d >= Draft7 {
		if n.ifS, err = subIf("if"); err != nil {
			return err
		}
		if n.ifS != nil {
			b, isBool := obj["if"].(bool)
			if !isBool || b {
				if n.then, err = subIf("then"); err != nil {
					return err
				}
			}
			if !isBool || !b {
				if n.elsS, err = subIf("else"); err != nil {
					return err
				}
			}
		}
	}
	if d >= Draft2019 {
		if n.contains != nil {
			n.minContains, n.maxContains = intVal(obj, "minContains"), intVal(obj, "maxContains")
		}
		if m, _ := obj["dependentRequired"].(map[string]any); m != nil {
			for _, k := range sortedKeys(m) {
				if a, ok := m[k].([]any); ok {
					n.dependentRequired = append(n.dependentRequired, dependency{prop: k, required: nonNil(toStrings(a))})
				}
			}
		}
		if m, _ := obj["dependentSchemas"].(map[string]any); m != nil {
			for _, k := range sortedKeys(m) {
				s, err := sub("dependentSchemas", k)
				if err != nil {
					return err
				}
				n.dependentSchemas = append(n.dependentSchemas, dependency{prop: k, schema: s})
			}
		}
		if n.unevalItems, err = subIf("unevaluatedItems"); err != nil {
			return err
		}
		if n.unevalProps, err = subIf("unevaluatedProperties"); err != nil {
			return err
		}
	}
	if d >= Draft2020 {
		if n.prefixItems, err = subArr("prefixItems"); err != nil {
			return err
		}
		if n.items, err = subIf("items"); err != nil {
			return err
		}
	}
	n.allPropsEvaluated = n.additionalProps != nil
	if d < Draft2020 {
		n.allItemsEvaluated = n.additionalItems != nil || n.items != nil
		if n.hasItemsList {
			n.numItemsEvaluated = len(n.itemsList)
		}
	} else {
		n.allItemsEvaluated = n.items != nil
		n.numItemsEvaluated = len(n.prefixItems)
	}
	return nil
}

// compileIgnored compiles the subschemas a draft < 2019 $ref hides: they
// play no part, but a broken one is still an error.
func (c *compiler) compileIgnored(obj map[string]any, n *node) error {
	d := n.draft
	for _, kw := range []string{"contains", "propertyNames", "if", "then", "else"} {
		if _, ok := obj[kw]; !ok || !slices.Contains(placesByDraft()[d], kw) {
			continue // absent, or not a keyword of this draft
		}
		if _, err := c.enqueue(appendPtr(n.ptr, kw)); err != nil {
			return err
		}
	}
	return nil
}

// additional compiles additionalProperties/additionalItems: a boolean or
// a schema (a boolean node either way), or nil.
func (c *compiler) additional(obj map[string]any, n *node, kw string) (*node, error) {
	v, ok := obj[kw]
	if !ok {
		return nil, nil
	}
	if b, ok := v.(bool); ok {
		return &node{ptr: appendPtr(n.ptr, kw), url: n.url, draft: n.draft, isBool: true, boolVal: b, literalBool: true}, nil
	}
	return c.enqueue(appendPtr(n.ptr, kw))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func toStrings(a []any) []string {
	var out []string
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func numVal(obj map[string]any, kw string) *decimal {
	v, ok := obj[kw]
	if !ok {
		return nil
	}
	d, ok := toDecimal(v)
	if !ok {
		return nil
	}
	p := new(decimal)
	*p = d
	return p
}

// intVal is a non-negative integer keyword's value, -1 when absent (the
// checks refused every other value).
func intVal(obj map[string]any, kw string) int {
	d, ok := toDecimal(obj[kw])
	if !ok || !d.isInteger() || d.neg {
		return -1
	}
	if d.isZero() {
		return 0
	}
	if int64(len(d.digits))+d.exp > 18 {
		return int(^uint(0) >> 1)
	}
	n, _ := strconv.ParseInt(d.digits+strings.Repeat("0", int(d.exp)), 10, 64)
	return int(n)
}

package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/llm"
)

// File is a models file as written (the reference's format).
type File struct {
	Providers []FileProvider
}

// FileProvider is one entry of "providers".
type FileProvider struct {
	Name       string
	BaseURL    string
	API        string
	APIKey     string
	AuthHeader bool
	Headers    map[string]string
	Compat     RawJSON
	Models     []Model
	Overrides  map[string]override
}

// override is a modelOverrides entry: the fields it sets.
type override struct {
	name             *string
	reasoning        *bool
	thinkingLevelMap map[llm.ThinkingLevel]*string
	input            []string
	cost             map[string]float64
	contextWindow    int
	maxTokens        int
	headers          map[string]string
	compat           RawJSON
}

func (o override) apply(m *Model) {
	if o.name != nil {
		m.Name = *o.name
	}
	if o.reasoning != nil {
		m.Reasoning = *o.reasoning
	}
	if o.thinkingLevelMap != nil {
		m.ThinkingLevelMap = o.thinkingLevelMap
	}
	if o.input != nil {
		m.Input = o.input
	}
	for k, v := range o.cost {
		switch k {
		case "input":
			m.Cost.Input = v
		case "output":
			m.Cost.Output = v
		case "cacheRead":
			m.Cost.CacheRead = v
		case "cacheWrite":
			m.Cost.CacheWrite = v
		}
	}
	if o.contextWindow > 0 {
		m.ContextWindow = o.contextWindow
	}
	if o.maxTokens > 0 {
		m.MaxTokens = o.maxTokens
	}
	if o.headers != nil {
		m.Headers = o.headers
	}
	if o.compat != nil {
		m.Compat = o.compat
	}
}

// FileError is what is wrong with a models file and where.
type FileError struct {
	File  string
	Line  int
	Field string // "providers.ollama.models[0].id"; "" for a syntax error
	Msg   string
}

func (e *FileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// node is a JSON value with the offset it starts at.
type node struct {
	off  int64
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, '0' null
	keys []string
	obj  map[string]*node
	arr  []*node
	str  string
	num  float64
	b    bool
}

type parser struct {
	file string
	data []byte
	dec  *json.Decoder
}

func (p *parser) line(off int64) int {
	if off > int64(len(p.data)) {
		off = int64(len(p.data))
	}
	return 1 + bytes.Count(p.data[:off], []byte{'\n'})
}

func (p *parser) errAt(n *node, field, format string, args ...any) error {
	var off int64
	if n != nil {
		off = n.off
	}
	return &FileError{File: p.file, Line: p.line(off), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// value reads one value; start is the offset where it begins.
func (p *parser) value() (*node, error) {
	// InputOffset is the end of the previous token: skip the separators
	// to the value's first byte.
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) && strings.IndexByte(" \t\r\n:,", p.data[off]) >= 0 {
		off++
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	n := &node{off: off}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n.kind, n.obj = 'o', map[string]*node{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				if _, dup := n.obj[k]; dup {
					return nil, &FileError{File: p.file, Line: p.line(v.off), Msg: fmt.Sprintf("duplicate key %q", k)}
				}
				n.keys = append(n.keys, k)
				n.obj[k] = v
			}
		} else {
			n.kind = 'a'
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
		}
		if _, err := p.dec.Token(); err != nil {
			return nil, err
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind = 'n'
		n.num, err = t.Float64()
		if err != nil {
			return nil, err
		}
	case bool:
		n.kind, n.b = 'b', t
	case nil:
		n.kind = '0'
	}
	return n, nil
}

var kindNames = map[byte]string{'o': "an object", 'a': "an array", 's': "a string", 'n': "a number", 'b': "true or false", '0': "null"}

func (p *parser) want(n *node, field string, kind byte) error {
	if n.kind != kind {
		return p.errAt(n, field, "want %s, got %s", kindNames[kind], kindNames[n.kind])
	}
	return nil
}

func (p *parser) nonEmpty(n *node, field string) (string, error) {
	if err := p.want(n, field, 's'); err != nil {
		return "", err
	}
	if n.str == "" {
		return "", p.errAt(n, field, "empty")
	}
	return n.str, nil
}

func (p *parser) strMap(n *node, field string) (map[string]string, error) {
	if err := p.want(n, field, 'o'); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range n.keys {
		v := n.obj[k]
		if err := p.want(v, field+"."+k, 's'); err != nil {
			return nil, err
		}
		out[k] = v.str
	}
	return out, nil
}

func (p *parser) raw(n *node) RawJSON {
	// The value's text: decode it again from its offset.
	d := json.NewDecoder(bytes.NewReader(p.data[n.off:]))
	var r json.RawMessage
	if d.Decode(&r) != nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, r) != nil {
		return RawJSON(r)
	}
	return RawJSON(b.Bytes())
}

// ParseFile parses a models file; name is the path for errors.
//
// # Errors
//
// *FileError naming the line and the field: invalid JSON, a field of the
// wrong type, a provider or model the reference would refuse (a new
// provider with models but no baseUrl or apiKey, a model without id or
// api, a contextWindow or maxTokens not above 0, an input other than text
// and image, a cost without its four prices, an unknown thinking level).
func ParseFile(name string, data []byte) (*File, error) {
	p := &parser{file: name, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	root, err := p.value()
	if err == nil {
		if _, e := p.dec.Token(); e != io.EOF {
			err = fmt.Errorf("text after the JSON value")
		}
	}
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, fe
		}
		off := p.dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, &FileError{File: name, Line: p.line(off), Msg: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if err := p.want(root, "", 'o'); err != nil {
		return nil, err
	}
	provs, ok := root.obj["providers"]
	if !ok {
		return nil, p.errAt(root, "providers", "missing")
	}
	if err := p.want(provs, "providers", 'o'); err != nil {
		return nil, err
	}
	f := &File{}
	for _, name := range provs.keys {
		_, builtin := keyEnv[name]
		fp, err := p.provider(name, provs.obj[name], builtin)
		if err != nil {
			return nil, err
		}
		f.Providers = append(f.Providers, fp)
	}
	return f, nil
}

func (p *parser) provider(name string, n *node, isBuiltin bool) (FileProvider, error) {
	field := "providers." + name
	fp := FileProvider{Name: name}
	if err := p.want(n, field, 'o'); err != nil {
		return fp, err
	}
	var err error
	for _, k := range n.keys {
		v, f := n.obj[k], field+"."+k
		switch k {
		case "baseUrl":
			fp.BaseURL, err = p.nonEmpty(v, f)
		case "api":
			fp.API, err = p.nonEmpty(v, f)
		case "apiKey":
			fp.APIKey, err = p.nonEmpty(v, f)
		case "name":
			_, err = p.nonEmpty(v, f)
		case "authHeader":
			if err = p.want(v, f, 'b'); err == nil {
				fp.AuthHeader = v.b
			}
		case "headers":
			fp.Headers, err = p.strMap(v, f)
		case "compat":
			if err = p.want(v, f, 'o'); err == nil {
				fp.Compat = p.raw(v)
			}
		case "models":
			if err = p.want(v, f, 'a'); err != nil {
				break
			}
			for i, mn := range v.arr {
				var m Model
				if m, err = p.model(mn, fmt.Sprintf("%s[%d]", f, i), fp.API != "" || isBuiltin); err != nil {
					break
				}
				fp.Models = append(fp.Models, m)
			}
		case "modelOverrides":
			if err = p.want(v, f, 'o'); err != nil {
				break
			}
			fp.Overrides = map[string]override{}
			for _, id := range v.keys {
				var o override
				if o, err = p.override(v.obj[id], f+"."+id); err != nil {
					break
				}
				fp.Overrides[id] = o
			}
		}
		if err != nil {
			return fp, err
		}
	}
	switch {
	case len(fp.Models) == 0 && fp.BaseURL == "" && fp.Headers == nil && fp.Compat == nil && fp.Overrides == nil:
		return fp, p.errAt(n, field, `set "baseUrl", "headers", "compat", "modelOverrides" or "models"`)
	case len(fp.Models) > 0 && !isBuiltin && fp.BaseURL == "":
		return fp, p.errAt(n, field+".baseUrl", "missing: a provider pi does not know needs baseUrl for its models")
	case len(fp.Models) > 0 && !isBuiltin && fp.APIKey == "":
		return fp, p.errAt(n, field+".apiKey", `missing: a provider pi does not know needs apiKey for its models (the name of the variable holding the key, or any text for a local server that needs none, such as "none")`)
	}
	return fp, nil
}

// model reads a models[] entry; apiKnown says the provider gives an api.
func (p *parser) model(n *node, field string, apiKnown bool) (Model, error) {
	m := Model{Input: []string{"text"}, ContextWindow: DefaultContextWindow, MaxTokens: DefaultMaxTokens}
	if err := p.want(n, field, 'o'); err != nil {
		return m, err
	}
	if _, ok := n.obj["id"]; !ok {
		return m, p.errAt(n, field+".id", "missing")
	}
	o, err := p.fields(n, field, true)
	if err != nil {
		return m, err
	}
	id, err := p.nonEmpty(n.obj["id"], field+".id")
	if err != nil {
		return m, err
	}
	m.ID, m.Name = id, id
	if v, ok := n.obj["api"]; ok {
		if m.API, err = p.nonEmpty(v, field+".api"); err != nil {
			return m, err
		}
	} else if !apiKnown {
		return m, p.errAt(n, field+".api", `missing: set "api" on the provider or the model (openai-completions, openai-responses, anthropic-messages, google-generative-ai)`)
	}
	if v, ok := n.obj["baseUrl"]; ok {
		if m.BaseURL, err = p.nonEmpty(v, field+".baseUrl"); err != nil {
			return m, err
		}
	}
	if c, ok := n.obj["cost"]; ok {
		for _, k := range []string{"input", "output", "cacheRead", "cacheWrite"} {
			if _, ok := o.cost[k]; !ok {
				return m, p.errAt(c, field+".cost."+k, "missing (a cost gives input, output, cacheRead and cacheWrite, in dollars per million tokens)")
			}
		}
	}
	o.apply(&m)
	return m, nil
}

func (p *parser) override(n *node, field string) (override, error) {
	if err := p.want(n, field, 'o'); err != nil {
		return override{}, err
	}
	return p.fields(n, field, false)
}

// fields reads what a model and an override share.
func (p *parser) fields(n *node, field string, isModel bool) (override, error) {
	var o override
	var err error
	for _, k := range n.keys {
		v, f := n.obj[k], field+"."+k
		switch k {
		case "name":
			var s string
			if s, err = p.nonEmpty(v, f); err == nil {
				o.name = &s
			}
		case "reasoning":
			if err = p.want(v, f, 'b'); err == nil {
				b := v.b
				o.reasoning = &b
			}
		case "thinkingLevelMap":
			if err = p.want(v, f, 'o'); err != nil {
				break
			}
			o.thinkingLevelMap = map[llm.ThinkingLevel]*string{}
			for _, lk := range v.keys {
				lv := v.obj[lk]
				if !slices.Contains(llm.ThinkingLevels, llm.ThinkingLevel(lk)) {
					return o, p.errAt(lv, f+"."+lk, "not a thinking level (want one of %s)", LevelNames(llm.ThinkingLevels))
				}
				switch lv.kind {
				case '0':
					o.thinkingLevelMap[llm.ThinkingLevel(lk)] = nil
				case 's':
					s := lv.str
					o.thinkingLevelMap[llm.ThinkingLevel(lk)] = &s
				default:
					return o, p.errAt(lv, f+"."+lk, "want a string or null, got %s", kindNames[lv.kind])
				}
			}
		case "input":
			if err = p.want(v, f, 'a'); err != nil {
				break
			}
			o.input = []string{}
			for i, in := range v.arr {
				if in.kind != 's' || (in.str != "text" && in.str != "image") {
					return o, p.errAt(in, fmt.Sprintf("%s[%d]", f, i), `want "text" or "image"`)
				}
				o.input = append(o.input, in.str)
			}
		case "cost":
			if err = p.want(v, f, 'o'); err != nil {
				break
			}
			o.cost = map[string]float64{}
			for _, ck := range v.keys {
				cv := v.obj[ck]
				switch ck {
				case "input", "output", "cacheRead", "cacheWrite":
				default:
					return o, p.errAt(cv, f+"."+ck, "unknown price (want input, output, cacheRead or cacheWrite)")
				}
				if err = p.want(cv, f+"."+ck, 'n'); err != nil {
					return o, err
				}
				if cv.num < 0 {
					return o, p.errAt(cv, f+"."+ck, "negative price")
				}
				o.cost[ck] = cv.num
			}
		case "contextWindow", "maxTokens":
			if err = p.want(v, f, 'n'); err != nil {
				break
			}
			if v.num <= 0 || v.num != float64(int(v.num)) {
				return o, p.errAt(v, f, "want a whole number of tokens above 0, got %v", v.num)
			}
			if k == "contextWindow" {
				o.contextWindow = int(v.num)
			} else {
				o.maxTokens = int(v.num)
			}
		case "headers":
			o.headers, err = p.strMap(v, f)
		case "compat":
			if err = p.want(v, f, 'o'); err == nil {
				o.compat = p.raw(v)
			}
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

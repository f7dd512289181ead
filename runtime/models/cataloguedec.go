package models

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/pi-go/pi/internal/jsonscan"
	"github.com/pi-go/pi/runtime/llm"
)

// decodeCatalogueFile decodes catalogue.json's text into c (zero) as
// encoding/json would, without its reflection: encoding/json took 3–4 ms
// of CPU for the 499 models, which every run that resolves a model paid
// (a three-turn conversation over HTTP adds about 7 ms to the same run
// scripted). It reports false for what it does not decode the way
// encoding/json does (a string with an escape, a number that is not a
// plain integer where an int goes, a key in another letter case or given
// twice); the caller then uses encoding/json. TestCatalogueDecodedByHand
// holds its result to encoding/json's.
func decodeCatalogueFile(data []byte, c *catalogueFile) bool {
	d := catalogueDecoder{}
	d.s.Reset(data)
	ok := d.s.Object([]string{"providers"}, func(int) bool {
		isNull, ok := d.s.Array(func() bool {
			c.Providers = append(c.Providers, catalogueProvider{})
			return d.s.Peek() == '{' && d.provider(&c.Providers[len(c.Providers)-1])
		})
		if !isNull && c.Providers == nil {
			c.Providers = []catalogueProvider{}
		}
		return ok
	})
	return ok && d.s.End()
}

type catalogueDecoder struct{ s jsonscan.Scanner }

var (
	catalogueProviderKeys = []string{"name", "api", "baseUrl", "defaultModel", "models"}
	catalogueModelKeys    = []string{"id", "name", "api", "provider", "baseUrl", "reasoning", "thinkingLevelMap", "input", "cost", "contextWindow", "maxTokens", "headers", "compat"}
	catalogueCostKeys     = []string{"input", "output", "cacheRead", "cacheWrite"}
)

func (d *catalogueDecoder) provider(p *catalogueProvider) bool {
	return d.s.Object(catalogueProviderKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&p.Name)
		case 1:
			return d.str(&p.API)
		case 2:
			return d.str(&p.BaseURL)
		case 3:
			return d.str(&p.DefaultModel)
		}
		isNull, ok := d.s.Array(func() bool {
			p.Models = append(p.Models, Model{})
			return d.s.Peek() == '{' && d.model(&p.Models[len(p.Models)-1])
		})
		if !isNull && p.Models == nil {
			p.Models = []Model{}
		}
		return ok
	})
}

func (d *catalogueDecoder) model(m *Model) bool {
	return d.s.Object(catalogueModelKeys, func(k int) bool {
		switch k {
		case 0:
			return d.str(&m.ID)
		case 1:
			return d.str(&m.Name)
		case 2:
			return d.str(&m.API)
		case 3:
			return d.str(&m.Provider)
		case 4:
			return d.str(&m.BaseURL)
		case 5:
			if d.s.Null() {
				return true
			}
			v, ok := d.s.Bool()
			m.Reasoning = v
			return ok
		case 6:
			return d.levelMap(m)
		case 7:
			isNull, ok := d.s.Array(func() bool {
				var s string
				if d.s.Peek() != '"' || !d.str(&s) {
					return false
				}
				m.Input = append(m.Input, s)
				return true
			})
			if !isNull && m.Input == nil {
				m.Input = []string{}
			}
			return ok
		case 8:
			return d.s.Object(catalogueCostKeys, func(k int) bool {
				switch k {
				case 0:
					return d.float(&m.Cost.Input)
				case 1:
					return d.float(&m.Cost.Output)
				case 2:
					return d.float(&m.Cost.CacheRead)
				}
				return d.float(&m.Cost.CacheWrite)
			})
		case 9:
			return d.integer(&m.ContextWindow)
		case 10:
			return d.integer(&m.MaxTokens)
		case 11:
			return false // headers: encoding/json's
		default:
			// compat: the value as written (null too: RawJSON takes it).
			v, ok := d.s.Value()
			m.Compat = append(RawJSON{}, v...)
			return ok
		}
	})
}

// levelMap decodes thinkingLevelMap: level names to a string or null.
func (d *catalogueDecoder) levelMap(m *Model) bool {
	if d.s.Null() {
		return true
	}
	if d.s.Peek() != '{' {
		return false
	}
	d.s.I++
	if m.ThinkingLevelMap == nil {
		m.ThinkingLevelMap = map[llm.ThinkingLevel]*string{}
	}
	if d.s.Consume('}') {
		return true
	}
	for {
		var key string
		if d.s.Peek() != '"' || !d.str(&key) || !d.s.Consume(':') {
			return false
		}
		var v *string
		if !d.s.Null() {
			v = new(string)
			if d.s.Peek() != '"' || !d.str(v) {
				return false
			}
		}
		m.ThinkingLevelMap[llm.ThinkingLevel(key)] = v
		if d.s.Consume(',') {
			continue
		}
		return d.s.Consume('}')
	}
}

// str decodes a string without escapes (null leaves *s as it is).
func (d *catalogueDecoder) str(s *string) bool {
	if d.s.Null() {
		return true
	}
	lit, plain, ok := d.s.Literal()
	if !ok {
		return false
	}
	text := lit[1 : len(lit)-1]
	if !plain && (bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text)) {
		return false // escapes, or bytes encoding/json replaces
	}
	*s = string(text)
	return true
}

func (d *catalogueDecoder) integer(n *int) bool {
	if d.s.Null() {
		return true
	}
	v, ok := d.s.Integer()
	*n = v
	return ok
}

// float decodes a number as encoding/json does (strconv.ParseFloat).
func (d *catalogueDecoder) float(f *float64) bool {
	if d.s.Null() {
		return true
	}
	lit, ok := d.s.Number()
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	*f = v
	return err == nil
}

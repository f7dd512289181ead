package models

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FileName is the models file's name in PI_HOME.
const FileName = "models.json"

//go:embed catalogue.json
var catalogueJSON []byte

// catalogue is the built-in providers, decoded on first use (not at
// start-up: most runs of pi never look past the one model they use).
var catalogue = sync.OnceValue(decodeCatalogue)

// catalogueFile is catalogue.json's shape.
type catalogueFile struct {
	Providers []catalogueProvider `json:"providers"`
}

type catalogueProvider struct {
	Name         string  `json:"name"`
	API          string  `json:"api"`
	BaseURL      string  `json:"baseUrl"`
	DefaultModel string  `json:"defaultModel"`
	Models       []Model `json:"models"`
}

func decodeCatalogue() []*Provider {
	var c catalogueFile
	if !decodeCatalogueFile(catalogueJSON, &c) {
		// A shape the hand decoder leaves to encoding/json
		// (TestCatalogueDecodedByHand says the embedded one is not).
		c = catalogueFile{}
		if err := json.Unmarshal(catalogueJSON, &c); err != nil {
			panic("models: the embedded catalogue.json: " + err.Error())
		}
	}
	out := make([]*Provider, 0, len(c.Providers))
	for _, p := range c.Providers {
		bp := &Provider{Name: p.Name, API: p.API, BaseURL: p.BaseURL, KeyEnv: keyEnv[p.Name], DefaultModel: p.DefaultModel, Builtin: true}
		for _, m := range p.Models {
			m.Provider = p.Name
			if m.API == "" {
				m.API = p.API
			}
			if m.BaseURL == "" {
				m.BaseURL = p.BaseURL
			}
			bp.Models = append(bp.Models, m)
		}
		out = append(out, bp)
	}
	return out
}

// keyEnv are the variables each built-in provider reads its key from (the
// reference's names), the one owner of them: the catalogue's providers are
// these, in this order.
var keyEnv = map[string][]string{
	"anthropic": {"ANTHROPIC_API_KEY"}, "openai": {"OPENAI_API_KEY"}, "google": {"GEMINI_API_KEY"},
	"deepseek": {"DEEPSEEK_API_KEY"}, "openrouter": {"OPENROUTER_API_KEY"}, "groq": {"GROQ_API_KEY"},
	"xai": {"XAI_API_KEY"}, "mistral": {"MISTRAL_API_KEY"}, "cerebras": {"CEREBRAS_API_KEY"},
	"zai": {"ZAI_API_KEY"}, "moonshotai": {"MOONSHOT_API_KEY"}, "huggingface": {"HF_TOKEN"},
	"fireworks": {"FIREWORKS_API_KEY"}, "minimax": {"MINIMAX_API_KEY"},
}

// ReadFile reads $piHome/models.json; nil without one.
//
// # Errors
//
// As Load.
func ReadFile(piHome string) (*File, string, error) {
	path := filepath.Join(piHome, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("read models file: %w", err)
	}
	f, err := ParseFile(path, data)
	return f, path, err
}

// Secrets are the keys that every provider of the catalogue and of f
// would use now (from their variables, or literal in f) and the variables
// that hold them or would: what a run hides from commands and redacts
// from outputs, whichever model it uses. The catalogue is not decoded.
func Secrets(f *File, getenv func(string) string) (keys, vars []string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	provs := map[string]*Provider{}
	var names []string
	for name, env := range keyEnv {
		provs[name] = &Provider{Name: name, KeyEnv: env}
		names = append(names, name)
	}
	if f != nil {
		for _, fp := range f.Providers {
			p := provs[fp.Name]
			if p == nil {
				p = &Provider{Name: fp.Name}
				provs[fp.Name] = p
				names = append(names, fp.Name)
			}
			if fp.APIKey != "" {
				p.APIKey = fp.APIKey
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		p := provs[n]
		vars = append(vars, p.KeyEnv...)
		for _, e := range p.KeyEnv {
			if v := getenv(e); v != "" && !slices.Contains(keys, v) {
				keys = append(keys, v)
			}
		}
		if k, src := p.Key(getenv); k != "" {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			if src != "models.json" && !slices.Contains(vars, src) {
				vars = append(vars, src)
			}
		}
	}
	return keys, vars
}

// Registry is the catalogue merged with the models file: every provider
// pi knows, in the catalogue's order, then the file's own providers in
// the file's order.
type Registry struct {
	Providers []*Provider
	// File is the models file read ("" when there is none).
	File string
}

// Builtin is the catalogue alone.
func Builtin() *Registry { return merge(nil, "") }

// Load reads $piHome/models.json (a missing file is no error) and merges
// it over the catalogue: a provider's baseUrl, api, apiKey and headers
// replace the catalogue's, its modelOverrides change catalogue models, and
// its models replace the catalogue's models of the same id or join them.
//
// # Errors
//
// A file that cannot be read or is not a valid models file: the error
// names the file, the line and the field (*FileError).
func Load(piHome string) (*Registry, error) {
	f, path, err := ReadFile(piHome)
	if err != nil || f == nil {
		return Builtin(), err
	}
	return merge(f, path), nil
}

func merge(f *File, path string) *Registry {
	r := &Registry{File: path}
	byName := map[string]*Provider{}
	for _, bp := range catalogue() {
		p := *bp
		p.Models = append([]Model(nil), bp.Models...)
		r.Providers = append(r.Providers, &p)
		byName[p.Name] = &p
	}
	if f == nil {
		return r
	}
	for _, fp := range f.Providers {
		p := byName[fp.Name]
		if p == nil {
			p = &Provider{Name: fp.Name}
			r.Providers = append(r.Providers, p)
			byName[fp.Name] = p
		}
		if fp.BaseURL != "" {
			p.BaseURL = fp.BaseURL
			// A built-in provider routed elsewhere (a proxy) keeps its
			// models, sent there.
			for i := range p.Models {
				p.Models[i].BaseURL = fp.BaseURL
			}
		}
		if fp.API != "" {
			p.API = fp.API
		}
		if fp.APIKey != "" {
			p.APIKey = fp.APIKey
		}
		if fp.AuthHeader {
			p.AuthHeader = true
		}
		if len(fp.Headers) > 0 {
			p.Headers = fp.Headers
		}
		for id, o := range fp.Overrides {
			for i := range p.Models {
				if p.Models[i].ID == id {
					o.apply(&p.Models[i])
				}
			}
		}
		for _, m := range fp.Models {
			m.Provider = p.Name
			if m.API == "" {
				m.API = p.API
			}
			if m.BaseURL == "" {
				m.BaseURL = p.BaseURL
			}
			if len(m.Compat) == 0 {
				m.Compat = fp.Compat
			}
			replaced := false
			for i := range p.Models {
				if p.Models[i].ID == m.ID {
					p.Models[i], replaced = m, true
				}
			}
			if !replaced {
				p.Models = append(p.Models, m)
			}
		}
		if p.DefaultModel == "" && len(p.Models) > 0 {
			p.DefaultModel = p.Models[0].ID
		}
	}
	return r
}

// Provider finds a provider by name (any case).
func (r *Registry) Provider(name string) *Provider {
	for _, p := range r.Providers {
		if p.Name == name {
			return p
		}
	}
	for _, p := range r.Providers {
		if strings.EqualFold(p.Name, name) {
			return p
		}
	}
	return nil
}

// Find finds a model by "provider/id", or by a bare id that one provider
// alone has. ambiguous lists the providers that have a bare id when more
// than one has it.
func (r *Registry) Find(ref string) (m Model, ambiguous []string, ok bool) {
	if prov, id, found := strings.Cut(ref, "/"); found {
		if p := r.Provider(prov); p != nil {
			if m, ok := p.Model(id); ok {
				return m, nil, true
			}
		}
	}
	var hits []Model
	for _, p := range r.Providers {
		if m, ok := p.Model(ref); ok {
			hits = append(hits, m)
		}
	}
	switch len(hits) {
	case 0:
		return Model{}, nil, false
	case 1:
		return hits[0], nil, true
	}
	for _, h := range hits {
		ambiguous = append(ambiguous, h.Provider)
	}
	return Model{}, ambiguous, false
}

// Models are every model of every provider, in order.
func (r *Registry) Models() []Model {
	var out []Model
	for _, p := range r.Providers {
		out = append(out, p.Models...)
	}
	return out
}

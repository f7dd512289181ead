package app

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/models"
)

// ModelOptions override [model] in pi.toml for one run (the --provider,
// --model, --base-url, --api-key, --thinking and --models flags). Empty
// fields do not override.
type ModelOptions struct {
	// Provider names a provider of the catalogue or the models file.
	Provider string
	// Name is a model id, or "provider/id".
	Name    string
	BaseURL string
	APIKey  string
	// Thinking is the thinking level to start with (--thinking); "" keeps
	// the session's, else off.
	Thinking string
	// Scope are the models Ctrl+P and cycle_model go through (--models),
	// each "provider/id" or an id.
	Scope []string
}

// ModelSettings are the resolved model settings of a run.
type ModelSettings struct {
	// Model is the model with its facts (API, prices, context window,
	// reasoning); a model the catalogue and the models file do not know
	// has the defaults of runtime/models.
	Model models.Model
	// BaseURL, Name and Images repeat Model's BaseURL, ID and Images().
	BaseURL string
	Name    string
	APIKey  string
	// KeySource names where the key came from for messages: "--api-key",
	// the environment variable (also when that variable is unset), or
	// "models.json" for a literal key.
	KeySource string
	// Images says whether image blocks are sent to the model.
	Images bool
	// Headers are the provider's and the model's extra request headers,
	// their values resolved.
	Headers map[string]string
}

// ErrNoModel is returned (wrapped) by ResolveModel when no model is
// configured: no key and no endpoint other than the default.
var ErrNoModel = errors.New("no model configured")

// ResolveModel resolves the model settings of o and pi.toml with the
// catalogue and the models file (reg). The order, first match wins:
//
//  1. A provider named by --provider, by --model PROVIDER/ID, or by
//     pi.toml's [model] provider: that provider's model ID (--model, else
//     [model] name, else the provider's default model), sent to the
//     provider's endpoint with its API and key (--api-key, else pi.toml's
//     api_key_env when pi.toml names the provider, else the models file's
//     apiKey, else the catalogue's variable). An id the provider does not
//     list is taken as a new model of the provider, with default facts.
//  2. An endpoint named by --base-url, [model] base_url or
//     OPENAI_BASE_URL: the model name on that OpenAI-compatible endpoint
//     (openai-completions), the key from --api-key or api_key_env (default
//     OPENAI_API_KEY), as pi always did; the facts of a provider of reg
//     with that base URL and model id, if any.
//  3. A model name alone: the one provider that lists that id (an id
//     several list is an error naming them); an id none lists goes to
//     OpenAI's endpoint over chat completions as in 2.
//  4. Nothing: the default model of the first provider whose key is set
//     (catalogue order, then the models file's own providers).
//
// An untrusted project's base_url and api_key_env never reach cfg, so they
// cannot redirect the key.
//
// # Errors
//
// ErrNoModel when there is no key and the endpoint is the default one (a
// local endpoint needs no key), or a provider has no key; an unknown
// provider; an ambiguous id; an error when no model name is set.
func ResolveModel(cfg *config.Config, reg *models.Registry, o ModelOptions) (ModelSettings, error) {
	if reg == nil {
		reg = models.Builtin()
	}
	m := cfg.Model
	name := firstNonEmpty(o.Name, m.Name)
	provName, fromConfig := o.Provider, false
	if provName == "" && o.Name != "" {
		if prov, id, ok := strings.Cut(o.Name, "/"); ok && reg.Provider(prov) != nil {
			provName, name = prov, id
		}
	}
	if provName == "" && o.Name == "" && o.BaseURL == "" && m.Provider != "" {
		provName, fromConfig = m.Provider, true
	}
	if provName != "" {
		p := reg.Provider(provName)
		if p == nil {
			return ModelSettings{}, fmt.Errorf("unknown provider %q: %s", provName, knownProviders(reg))
		}
		if o.Provider != "" && strings.HasPrefix(strings.ToLower(name), strings.ToLower(p.Name)+"/") {
			name = name[len(p.Name)+1:]
		}
		return providerSettings(cfg, p, firstNonEmpty(name, p.DefaultModel), o.APIKey, fromConfig || strings.EqualFold(m.Provider, p.Name))
	}
	baseURL := firstNonEmpty(o.BaseURL, m.BaseURL, os.Getenv("OPENAI_BASE_URL"))
	if baseURL == "" && name != "" {
		mod, amb, ok := reg.Find(name)
		if len(amb) > 0 {
			refs := make([]string, len(amb))
			for i, p := range amb {
				refs[i] = p + "/" + name
			}
			return ModelSettings{}, fmt.Errorf("model %q is offered by %d providers: pass one of %s (or --provider)", name, len(amb), strings.Join(refs, ", "))
		}
		if ok {
			return providerSettings(cfg, reg.Provider(mod.Provider), mod.ID, o.APIKey, strings.EqualFold(m.Provider, mod.Provider))
		}
	}
	if baseURL == "" && name == "" && o.APIKey == "" {
		if key, _ := cfg.APIKey(""); key == "" {
			for _, p := range reg.Providers {
				if k, src := p.Key(nil); k != "" && src != models.CommandKey {
					return providerSettings(cfg, p, p.DefaultModel, "", false)
				}
			}
		}
	}
	return endpointSettings(cfg, reg, o, name, firstNonEmpty(baseURL, llm.DefaultBaseURL))
}

// endpointSettings are the settings of rule 2: an OpenAI-compatible
// endpoint named by its URL.
func endpointSettings(cfg *config.Config, reg *models.Registry, o ModelOptions, name, baseURL string) (ModelSettings, error) {
	m := cfg.Model
	s := ModelSettings{BaseURL: baseURL, Name: name}
	s.APIKey, s.KeySource = modelKey(cfg, o.APIKey)
	if o.APIKey != "" {
		s.KeySource = "--api-key"
	}
	s.Model = models.Model{
		ID: name, Name: name, API: models.APIOpenAICompletions, Provider: endpointName(baseURL), BaseURL: baseURL,
		Input: []string{"text", "image"}, ContextWindow: models.DefaultContextWindow, MaxTokens: models.DefaultMaxTokens,
	}
	for _, p := range reg.Providers {
		if strings.TrimRight(p.BaseURL, "/") != strings.TrimRight(baseURL, "/") {
			continue
		}
		if known, ok := p.Model(name); ok && known.API == models.APIOpenAICompletions {
			known.BaseURL = baseURL
			s.Model = known
			break
		}
	}
	if m.Images != nil {
		s.Model.Input = inputOf(*m.Images)
	}
	s.Images = s.Model.Images()
	if s.APIKey == "" && s.BaseURL == llm.DefaultBaseURL {
		if m.IgnoredBaseURL != "" {
			return s, fmt.Errorf("%w: this project's pi.toml sets model.base_url = %q, but the project is not trusted, so it was ignored (an untrusted project must not choose the model: the model decides which commands run). If you trust the project, run 'pi trust' (or pass --trust for one run); or pass --base-url %s yourself", ErrNoModel, m.IgnoredBaseURL, m.IgnoredBaseURL)
		}
		return s, fmt.Errorf("%w: set %s (and optionally [model] name in pi.toml), or the key of another provider (pi models lists them), or pass --api-key and --model, or --base-url for a local endpoint.\nTo try pi offline: pi demo, or pi --script FILE", ErrNoModel, s.KeySource)
	}
	if s.Name == "" {
		return s, errors.New("no model name: pass --model NAME or set [model] name in pi.toml")
	}
	return s, nil
}

// providerSettings are the settings of model id of provider p; keyEnv
// says pi.toml's api_key_env applies to p.
func providerSettings(cfg *config.Config, p *models.Provider, id, flagKey string, configKey bool) (ModelSettings, error) {
	if id == "" {
		return ModelSettings{}, fmt.Errorf("provider %s: no model: pass --model %s/ID (pi models --provider %s lists them)", p.Name, p.Name, p.Name)
	}
	mod, ok := p.Model(id)
	if !ok {
		if p.API == "" || p.BaseURL == "" {
			return ModelSettings{}, fmt.Errorf("provider %s: model %q is not in its list and the provider has no api and baseUrl to send it to", p.Name, id)
		}
		mod = models.Model{
			ID: id, Name: id, API: p.API, Provider: p.Name, BaseURL: p.BaseURL,
			Input: []string{"text"}, ContextWindow: models.DefaultContextWindow, MaxTokens: models.DefaultMaxTokens,
		}
	}
	if cfg.Model.Images != nil && configKey {
		mod.Input = inputOf(*cfg.Model.Images)
	}
	s := ModelSettings{Model: mod, BaseURL: mod.BaseURL, Name: mod.ID, Images: mod.Images()}
	switch {
	case flagKey != "":
		s.APIKey, s.KeySource = flagKey, "--api-key"
	case configKey && cfg.Model.APIKeyEnv != "":
		s.APIKey, s.KeySource = os.Getenv(cfg.Model.APIKeyEnv), cfg.Model.APIKeyEnv
	default:
		s.APIKey, s.KeySource = p.Key(nil)
	}
	if s.KeySource == models.CommandKey {
		return s, fmt.Errorf("%w: provider %s: models.json's apiKey is a shell command (%q); pi does not run commands from models.json: put the key in a variable and name it in apiKey", ErrNoModel, p.Name, "!…")
	}
	if s.APIKey == "" && s.KeySource != "" {
		return s, fmt.Errorf("%w: no API key for provider %s: set %s (or pass --api-key)", ErrNoModel, p.Name, s.KeySource)
	}
	h := models.ResolveHeaders(p.Headers, nil)
	for k, v := range models.ResolveHeaders(mod.Headers, nil) {
		if h == nil {
			h = map[string]string{}
		}
		h[k] = v
	}
	if p.AuthHeader && s.APIKey != "" {
		if h == nil {
			h = map[string]string{}
		}
		h["Authorization"] = "Bearer " + s.APIKey
	}
	s.Headers = h
	return s, nil
}

// inputOf is a model's input kinds as pi.toml's images says them.
func inputOf(images bool) []string {
	if images {
		return []string{"text", "image"}
	}
	return []string{"text"}
}

// endpointName names the provider of an endpoint given by its URL (the
// name sessions record): "openai" for OpenAI's, else the host.
func endpointName(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return "openai-compatible"
	}
	if u.Hostname() == "api.openai.com" {
		return "openai"
	}
	return u.Hostname()
}

func knownProviders(reg *models.Registry) string {
	names := make([]string, len(reg.Providers))
	for i, p := range reg.Providers {
		names[i] = p.Name
	}
	return "known providers are " + strings.Join(names, ", ") + " (add one in " + models.FileName + ")"
}

// Models is the catalogue merged with $PI_HOME/models.json, read again
// on each call (the file may change during a session, as the reference
// rereads it for /model).
//
// # Errors
//
// The models file cannot be read or is not valid (*models.FileError,
// naming the file, line and field); the catalogue is returned with it.
func (r *Runtime) Models() (*models.Registry, error) { return models.Load(r.piHome) }

// ResolveModel resolves o with the runtime's configuration and models (see
// the package function ResolveModel).
//
// # Errors
//
// As ResolveModel; a models file that is not valid.
func (r *Runtime) ResolveModel(o ModelOptions) (ModelSettings, error) {
	reg, err := r.Models()
	if err != nil {
		return ModelSettings{}, err
	}
	return ResolveModel(r.cfg, reg, o)
}

// ModelOptions are the model flags the runtime was opened with
// (Options.Model); a conversation starts from them and may change the
// model (/model).
func (r *Runtime) ModelOptions() ModelOptions { return r.opts.Model }

// BuiltAPIs are the model APIs this build talks to.
var BuiltAPIs = llm.APIs

// APIBuilt says whether this build talks to api, and if not why.
func APIBuilt(api string) error {
	for _, a := range BuiltAPIs {
		if a == api {
			return nil
		}
	}
	return fmt.Errorf("api %s: not built in this version", api)
}

// Provider returns the provider of the model settings that o, pi.toml and
// the models resolve to (see ResolveModel). The one place a provider is
// built from settings.
//
// # Errors
//
// As ResolveModel; an API this build does not talk to; a base URL the
// provider refuses.
func (r *Runtime) Provider(o ModelOptions) (llm.Provider, error) {
	s, err := r.ResolveModel(o)
	if err != nil {
		return nil, err
	}
	return r.ProviderFor(s)
}

// ProviderFor builds the provider of resolved settings.
//
// # Errors
//
// An API this build does not talk to; a base URL the provider refuses.
func (r *Runtime) ProviderFor(s ModelSettings) (llm.Provider, error) {
	if err := APIBuilt(s.Model.API); err != nil {
		return nil, fmt.Errorf("model %s: %w", s.Model.Ref(), err)
	}
	p, err := llm.NewProvider(llm.ProviderConfig{
		API: s.Model.API, Provider: s.Model.Provider, BaseURL: s.BaseURL, Model: s.Name,
		APIKey: s.APIKey, APIKeyEnv: s.KeySource, Headers: s.Headers,
		Caps: llm.Capabilities{
			Reasoning: s.Model.Reasoning,
			XHigh:     slices.Contains(s.Model.Levels(), llm.ThinkingXHigh),
			MaxTokens: s.Model.MaxTokens,
			Images:    s.Images,
		},
		Logger: r.logger.Named("llm"),
	})
	if err != nil {
		return nil, err
	}
	return r.withProviderHook(p), nil // extensions' before_provider_request (run12.go)
}

// ModelUsable says whether m can be used now, and if not why: its API is
// not built, or its provider's key is missing (naming the variable to
// set) or is a shell command pi does not run.
func ModelUsable(reg *models.Registry, m models.Model) error {
	if err := APIBuilt(m.API); err != nil {
		return err
	}
	p := reg.Provider(m.Provider)
	if p == nil {
		return nil
	}
	switch k, src := p.Key(nil); {
	case src == models.CommandKey:
		return errors.New("models.json's apiKey is a shell command, which pi does not run")
	case k == "" && src != "":
		return fmt.Errorf("no key: set %s", src)
	}
	return nil
}

// LoadModels is the catalogue merged with piHome's models file (the
// default PI_HOME when piHome is ""), for `pi models`.
//
// # Errors
//
// As models.Load.
func LoadModels(piHome string) (*models.Registry, error) {
	if piHome == "" {
		piHome = config.DefaultPIHome()
	}
	return models.Load(piHome)
}

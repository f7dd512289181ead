package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/pi-go/pi/runtime/config"
	"github.com/pi-go/pi/runtime/llm"
)

// ModelOptions override [model] in pi.toml for one run (the --model,
// --base-url and --api-key flags). Empty fields do not override.
type ModelOptions struct {
	Name    string
	BaseURL string
	APIKey  string
}

// ModelSettings are the resolved model settings of a run.
type ModelSettings struct {
	BaseURL string
	Name    string
	APIKey  string
	// KeySource names where the key came from for messages: "--api-key"
	// or the environment variable (also when that variable is unset).
	KeySource string
	// Images says whether image blocks are sent to the model.
	Images bool
}

// ErrNoModel is returned (wrapped) by ResolveModel when no model is
// configured: no key and no endpoint other than the default.
var ErrNoModel = errors.New("no model configured")

// ResolveModel resolves the model settings, each from the first that sets
// it: the flag (o), pi.toml's [model], the environment (OPENAI_BASE_URL; the
// key in the variable named by api_key_env, default OPENAI_API_KEY, falling
// back to OPENAI_API_KEY when that variable is unset), the default
// (llm.DefaultBaseURL). An untrusted project's base_url and api_key_env
// never reach cfg, so they cannot redirect the key.
//
// # Errors
//
// ErrNoModel when there is no key and the endpoint is the default one (a
// local endpoint needs no key); an error when no model name is set.
func ResolveModel(cfg *config.Config, o ModelOptions) (ModelSettings, error) {
	m := cfg.Model
	s := ModelSettings{
		BaseURL: firstNonEmpty(o.BaseURL, m.BaseURL, os.Getenv("OPENAI_BASE_URL"), llm.DefaultBaseURL),
		Name:    firstNonEmpty(o.Name, m.Name),
		Images:  m.Images == nil || *m.Images,
	}
	s.APIKey, s.KeySource = modelKey(cfg, o.APIKey)
	if o.APIKey != "" {
		s.KeySource = "--api-key"
	}
	if s.APIKey == "" && s.BaseURL == llm.DefaultBaseURL {
		if m.IgnoredBaseURL != "" {
			return s, fmt.Errorf("%w: this project's pi.toml sets model.base_url = %q, but the project is not trusted, so it was ignored (an untrusted project must not choose the model: the model decides which commands run). If you trust the project, run 'pi trust' (or pass --trust for one run); or pass --base-url %s yourself", ErrNoModel, m.IgnoredBaseURL, m.IgnoredBaseURL)
		}
		return s, fmt.Errorf("%w: set %s (and optionally [model] name in pi.toml), or pass --api-key and --model, or --base-url for a local endpoint.\nTo try pi offline: pi demo, or pi --script FILE", ErrNoModel, s.KeySource)
	}
	if s.Name == "" {
		return s, errors.New("no model name: pass --model NAME or set [model] name in pi.toml")
	}
	return s, nil
}

// ModelOptions are the model flags the runtime was opened with
// (Options.Model); a conversation starts from them and may change the
// model name (/model).
func (r *Runtime) ModelOptions() ModelOptions { return r.opts.Model }

// Provider returns the OpenAI-compatible provider of the model settings
// that o and pi.toml resolve to (see ResolveModel).
//
// # Errors
//
// As ResolveModel; a base URL the provider refuses.
func (r *Runtime) Provider(o ModelOptions) (llm.Provider, error) {
	s, err := ResolveModel(r.cfg, o)
	if err != nil {
		return nil, err
	}
	return llm.NewOpenAI(llm.OpenAIConfig{
		BaseURL: s.BaseURL, Model: s.Name, APIKey: s.APIKey, APIKeyEnv: s.KeySource,
		Images: s.Images, Logger: r.logger.Named("llm"),
	})
}

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pi-go/pi/runtime/llm"
	"github.com/pi-go/pi/runtime/redact"
)

// APIKey resolves the API key as the provider will use it: flagKey
// (--api-key), else the variable named by [model] api_key_env (default
// OPENAI_API_KEY), else OPENAI_API_KEY when that named variable is unset.
// keyEnv is the variable the key came from (or would come from).
func (c *Config) APIKey(flagKey string) (key, keyEnv string) {
	keyEnv = llm.DefaultAPIKeyEnv
	if c.Model.APIKeyEnv != "" {
		keyEnv = c.Model.APIKeyEnv
	}
	key = flagKey
	if key == "" {
		key = os.Getenv(keyEnv)
	}
	if key == "" && flagKey == "" && keyEnv != llm.DefaultAPIKeyEnv && os.Getenv(llm.DefaultAPIKeyEnv) != "" {
		key, keyEnv = os.Getenv(llm.DefaultAPIKeyEnv), llm.DefaultAPIKeyEnv
	}
	return key, keyEnv
}

// HiddenEnv names the variables commands (bash, extensions' exec children,
// MCP servers) must not get: the one named by [model] api_key_env,
// OPENAI_API_KEY, the names in more (the other providers' key
// variables), and any other whose value is key or one of otherKeys (a key
// given with --api-key may also sit in some variable), less those
// [tools.bash] pass_env lists.
func (c *Config) HiddenEnv(key string, otherKeys []string, more ...string) []string {
	names := []string{llm.DefaultAPIKeyEnv}
	if c.Model.APIKeyEnv != "" {
		names = append(names, c.Model.APIKeyEnv)
	}
	names = append(names, more...)
	for _, k := range append([]string{key}, otherKeys...) {
		if !redact.IsSecret(k) {
			continue
		}
		for _, kv := range os.Environ() {
			if n, v, ok := strings.Cut(kv, "="); ok && v == k {
				names = append(names, n)
			}
		}
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(c.Tools.Bash.PassEnv, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// DeclaredDir is where pi keeps what each installed or loaded module
// declared, by sha256 (extensions.RecordDeclared): piHome/cache/declared,
// "" without a piHome.
func DeclaredDir(piHome string) string {
	if piHome == "" {
		return ""
	}
	return filepath.Join(piHome, "cache", "declared")
}

// KVDir is where the extensions' kv stores live: piHome/kv, "" without a
// piHome.
func KVDir(piHome string) string {
	if piHome == "" {
		return ""
	}
	return filepath.Join(piHome, "kv")
}

// ExtensionConfigKey names an entry's config table in messages: "FILE:
// extensions[i].config", i its index among the [[extensions]] of its file
// (all is every entry, as Config.Extensions holds them).
func ExtensionConfigKey(all []Extension, e Extension) string {
	i := 0
	for _, o := range all {
		if o.File == e.File && o.Line < e.Line {
			i++
		}
	}
	key := fmt.Sprintf("extensions[%d].config", i)
	if e.File != "" {
		key = e.File + ": " + key
	}
	return key
}

// WorkingDir makes dir ("" for the process's working directory) absolute
// and checks that it is a directory.
func WorkingDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("working directory %s: not a directory", dir)
	}
	return abs, nil
}

package extensions

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-go/pi/internal/jsonschema"
)

// compileConfigSchema compiles an extension's configSchema (ABI 1.1): a
// JSON Schema object, draft 2020-12 unless it names another $schema. A
// reference outside the document is refused, never loaded.
func compileConfigSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("configSchema is not JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("configSchema must be a JSON Schema object")
	}
	s, err := jsonschema.Compile(doc, jsonschema.Options{URL: "pi:extension/config.json", DefaultDraft: jsonschema.Draft2020, Owner: "an extension's configSchema"})
	if err != nil {
		return nil, fmt.Errorf("configSchema: %s", firstLine(err))
	}
	return s, nil
}

// ValidateConfig checks an extension's [extensions.config] against the
// configSchema its init gave, as the host does at load and `pi ext install
// --ext-config` before writing. key names the table in messages
// ("extensions[0].config"; "" is "config"). With only set (install), a
// missing required key is not a problem: install checks just the values
// the user gave, and Missing lists what is still required.
//
// # Errors
//
// A schema that does not compile; a *ConfigError with one line per
// problem, each naming the pi.toml key path:
// "extensions[0].config.greeting: expected string, got number".
func ValidateConfig(schema json.RawMessage, config map[string]any, key string) error {
	_, err := validateConfig(schema, config, key, false)
	return err
}

// ValidateConfigValues is ValidateConfig for install: a required key that
// is still missing is returned in missing (as pi.toml key paths), not as
// an error.
//
// # Errors
//
// As ValidateConfig, less missing required keys.
func ValidateConfigValues(schema json.RawMessage, config map[string]any, key string) (missing []string, err error) {
	return validateConfig(schema, config, key, true)
}

// ConfigError lists what is wrong with an extension's config.
type ConfigError struct {
	// Problems are "KEY.PATH: what is wrong", sorted.
	Problems []string
}

func (e *ConfigError) Error() string {
	if len(e.Problems) == 1 {
		return "config does not match the extension's configSchema: " + e.Problems[0]
	}
	return "config does not match the extension's configSchema:\n  " + strings.Join(e.Problems, "\n  ")
}

func validateConfig(schema json.RawMessage, config map[string]any, key string, lenientRequired bool) ([]string, error) {
	if key == "" {
		key = "config"
	}
	s, err := compileConfigSchema(schema)
	if err != nil {
		return nil, err
	}
	if config == nil {
		config = map[string]any{}
	}
	// Through JSON, so the values are what init receives (int64 becomes a
	// json.Number, as the validator wants).
	b, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	inst, err := jsonschema.Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	err = s.Validate(inst)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.Error
	if !errors.As(err, &ve) {
		return nil, &ConfigError{Problems: []string{key + ": " + err.Error()}}
	}
	var problems, missing []string
	for _, leaf := range ve.Leaves() {
		configProblems(leaf, key, lenientRequired, &problems, &missing)
	}
	sort.Strings(problems)
	sort.Strings(missing)
	problems = dedupeStrings(problems)
	if len(problems) == 0 {
		return dedupeStrings(missing), nil
	}
	return dedupeStrings(missing), &ConfigError{Problems: problems}
}

// configProblems words one leaf of the error tree as pi.toml problems.
func configProblems(e *jsonschema.Error, key string, lenientRequired bool, out, missing *[]string) {
	at := configPath(key, e.InstanceLocation)
	switch k := e.Kind.(type) {
	case *jsonschema.Required:
		for _, m := range k.Missing {
			if lenientRequired {
				*missing = append(*missing, configPath(at, []string{m}))
				continue
			}
			*out = append(*out, configPath(at, []string{m})+": missing (the extension requires it)")
		}
		return
	case *jsonschema.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, configPath(at, []string{p})+": unknown key (the extension's configSchema does not allow it)")
		}
		return
	case *jsonschema.Type:
		*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", at, strings.Join(k.Want, " or "), k.Got))
		return
	}
	msg := e.Kind.Message()
	if msg == "" {
		msg = "is invalid"
	}
	*out = append(*out, at+": "+msg)
}

// configPath joins a key path: names with ".", indices as "[i]"; a name
// that is not a bare TOML key is quoted.
func configPath(key string, loc []string) string {
	var b strings.Builder
	b.WriteString(key)
	for _, p := range loc {
		if _, err := strconv.Atoi(p); err == nil && p != "" && p[0] != '-' && p[0] != '+' {
			b.WriteString("[" + p + "]")
			continue
		}
		b.WriteByte('.')
		if bareKey(p) {
			b.WriteString(p)
		} else {
			b.WriteString(strconv.Quote(p))
		}
	}
	return b.String()
}

func bareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func dedupeStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i > 0 && v == s[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

package llm

import (
	"encoding/json"
	"testing"
	"time"
)

// newNative returns a provider of api for baseURL with short backoff
// delays; mod changes the configuration first.
func newNative(t *testing.T, api, baseURL string, mod func(*ProviderConfig)) Provider {
	t.Helper()
	cfg := ProviderConfig{API: api, Provider: "test", BaseURL: baseURL, Model: "test-model", APIKey: testKey, APIKeyEnv: "TEST_API_KEY",
		Caps: Capabilities{Reasoning: true, Images: true, MaxTokens: 64000}}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewProvider(cfg)
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	var tr *transport
	switch p := p.(type) {
	case *Anthropic:
		tr = p.transport
	case *Responses:
		tr = p.transport
	case *Gemini:
		tr = p.transport
	case *OpenAI:
		tr = p.transport
	}
	tr.baseDelay = time.Millisecond
	tr.maxDelay = 10 * time.Millisecond
	return p
}

// path returns the value at a path of map keys and slice indexes in a
// decoded JSON document, or nil.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k < 0 {
				k += len(s)
			}
			if k < 0 || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

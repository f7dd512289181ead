package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxSchemaBytes caps a tool's input schema.
const maxSchemaBytes = 256 << 10

// inputSchema turns a server's input schema into the Parameters of a
// ToolDefinition: a JSON object of type "object" (an absent schema is one
// with any properties) whose references stay inside the document. A
// server's schema is compiled by pi, and a reference to a file or URL
// would make pi read it ($ref "file:///dev/zero"), so any $ref,
// $dynamicRef or $recursiveRef that is not a fragment (#...) is refused, as
// is a $schema that is not one of the JSON Schema drafts.
func inputSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("input schema is %d bytes, over the %d-byte limit", len(raw), maxSchemaBytes)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("input schema has type %v, want \"object\"", t)
	}
	if err := checkRefs(doc, "#"); err != nil {
		return nil, err
	}
	return raw, nil
}

// knownDrafts are the $schema values a tool schema may declare.
var knownDrafts = []string{
	"http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-06/schema",
	"http://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2019-09/schema",
	"https://json-schema.org/draft/2020-12/schema",
}

// checkRefs walks a schema document refusing references that leave it.
func checkRefs(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			here := at + "/" + k
			switch k {
			case "$ref", "$dynamicRef", "$recursiveRef":
				s, ok := e.(string)
				if !ok || !strings.HasPrefix(s, "#") {
					return fmt.Errorf("input schema: %s is %v; only references inside the schema (#...) are allowed", here, e)
				}
			case "$schema":
				s, _ := e.(string)
				if !isKnownDraft(s) {
					return fmt.Errorf("input schema: %s is %q, not a JSON Schema draft pi knows", here, s)
				}
			}
			if err := checkRefs(e, here); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkRefs(e, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func isKnownDraft(s string) bool {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "#"), "/")
	for _, d := range knownDrafts {
		if s == d || s == strings.Replace(d, "http://", "https://", 1) {
			return true
		}
	}
	return false
}

package sdk

import (
	"encoding/json"
	"reflect"
)

// ConfigSchema declares the JSON Schema of the extension's configuration
// ([extensions.config]); the host checks the configuration against it at
// load and at `pi ext install --ext-config`, with messages naming the
// pi.toml keys. schema is a struct value (or a pointer to one), from which
// the schema is derived as for tool inputs (fields without omitempty are
// required, a description tag describes), or a JSON Schema as a map,
// json.RawMessage, []byte or string.
func ConfigSchema(schema any) { std.setConfigSchema(schema) }

// setConfigSchema derives or takes the config schema.
func (r *registry) setConfigSchema(schema any) {
	var raw json.RawMessage
	var err error
	switch v := schema.(type) {
	case nil:
		r.fail("sdk.ConfigSchema: nil schema")
		return
	case json.RawMessage, []byte, string, map[string]any:
		raw, err = schemaJSON(v, nil)
	default:
		t := reflect.TypeOf(v)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			r.fail("sdk.ConfigSchema: want a struct or a JSON Schema, got %T", schema)
			return
		}
		raw, err = schemaJSON(nil, t)
	}
	if err != nil {
		r.fail("sdk.ConfigSchema: %v", err)
		return
	}
	r.configSchema = raw
}

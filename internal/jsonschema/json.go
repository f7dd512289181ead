package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Unmarshal decodes one JSON value into the tree Compile and Validate
// take (numbers as json.Number) with encoding/json, and nothing but white
// space may follow it. Its errors are encoding/json's (and "invalid
// character after top-level value"), the texts pi has always shown for
// arguments that are not JSON.
func Unmarshal(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

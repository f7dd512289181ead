package models

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestCatalogueDecodedByHand: the embedded catalogue is decoded by the
// hand decoder (not left to encoding/json), into exactly what
// encoding/json decodes it into.
func TestCatalogueDecodedByHand(t *testing.T) {
	var got, want catalogueFile
	if !decodeCatalogueFile(catalogueJSON, &got) {
		t.Fatal("the hand decoder declined the embedded catalogue")
	}
	if err := json.Unmarshal(catalogueJSON, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		for i := range min(len(got.Providers), len(want.Providers)) {
			if !reflect.DeepEqual(got.Providers[i], want.Providers[i]) {
				t.Fatalf("provider %d differs:\n got %+v\nwant %+v", i, got.Providers[i], want.Providers[i])
			}
		}
		t.Fatalf("%d providers, want %d", len(got.Providers), len(want.Providers))
	}
}

// FuzzCatalogueDecoder: whatever the hand decoder takes, encoding/json
// takes too, into the same values.
func FuzzCatalogueDecoder(f *testing.F) {
	f.Add(catalogueJSON[:min(len(catalogueJSON), 4000)])
	for _, s := range []string{
		`{"providers":[{"name":"p","models":[{"id":"m","input":[],"cost":{"input":0.8,"output":1e2},"thinkingLevelMap":{"off":null,"high":"h"},"compat":{"a":[1]},"contextWindow":1,"reasoning":true}]}]}`,
		`{"providers":null}`, `{"providers":[]}`, `{"providers":[{"models":null}]}`, `{"providers":[{"models":[{"compat":null}]}]}`,
		`{"providers":[{"name":"caf\u00e9"}]}`, `{"providers":[{"name":"café"}]}`, `{"providers":[{"Name":"x"}]}`, `{"providers":[{"models":[{"maxTokens":1.5}]}]}`,
		`{"providers":[{"models":[{"thinkingLevelMap":{"a":"1","a":"2"}}]}]}`, `{"providers":[{"models":[{"headers":{"a":"b"}}]}]}`, `null`, `{}`, `{"x":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got catalogueFile
		if !decodeCatalogueFile(data, &got) {
			return
		}
		var want catalogueFile
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("decoded %q, which encoding/json rejects: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decode(%q)\n got %+v\nwant %+v", strings.TrimSpace(string(data)), got, want)
		}
	})
}

package tool

import "encoding/json"

// ValidateBothDrafts validates args against schema compiled as pi compiles
// it and compiled with the library's default draft, and returns both
// errors' texts ("" when valid) and whether pi chose draft 6.
func ValidateBothDrafts(schema, args json.RawMessage) (piText, defaultText string, draft6 bool, err error) {
	a, err := compileSchemaDraft("t", schema, true)
	if err != nil {
		return "", "", false, err
	}
	b, err := compileSchemaDraft("t", schema, false)
	if err != nil {
		return "", "", false, err
	}
	text := func(e error) string {
		if e == nil {
			return ""
		}
		return e.Error()
	}
	forgetParsed(args)
	doc, _ := parseTree(schema)
	return text(a.validate(args)), text(b.validate(args)), sameInDraft6(doc), nil
}

package config

import (
	"testing"
)

func TestIndexDocument(t *testing.T) {
	const doc = "\ufeff" + `# comment [not.a.table]
top = 1 # trailing
"quoted key" = 'lit # not a comment'
[a . "b.c"]   # spaces around dots
x.y = """
[fake]
z = 1
"""
w = '''
it's ''' # after a literal block
[[arr]]
v = [
  1, # one
  [2, 3],
  { k = "}" },
]
[arr.sub]
s = 1979-05-27 07:32:00
[[arr]]
[[arr.inner]]
q = "\""
[[arr.inner]]
q = 2
t = { a = { b = 1 }, c = [ { d = 1 }, { d = 2 } ] }
`
	want := map[string]int{
		"top":                      2,
		`"quoted key"`:             3,
		`a."b.c"`:                  4,
		`a."b.c".x.y`:              5,
		`a."b.c".w`:                9,
		"arr[0]":                   11,
		"arr[0].v":                 12,
		"arr[0].v[0]":              13,
		"arr[0].v[1]":              14,
		"arr[0].v[1][1]":           14,
		"arr[0].v[2]":              15,
		"arr[0].v[2].k":            15,
		"arr[0].sub":               17,
		"arr[0].sub.s":             18,
		"arr[1]":                   19,
		"arr[1].inner[0]":          20,
		"arr[1].inner[0].q":        21,
		"arr[1].inner[1]":          22,
		"arr[1].inner[1].q":        23,
		"arr[1].inner[1].t.a":      24,
		"arr[1].t.c[1].d":          0, // not written there
		"arr[1].inner[1].t.a.b":    24,
		"arr[1].inner[1].t.c[1].d": 24,
	}
	if _, err := decodeTOML("doc", []byte(doc)); err != nil {
		t.Fatalf("test document is not TOML: %v", err)
	}
	idx := indexDocument([]byte(doc))
	for path, line := range want {
		t.Run(path, func(t *testing.T) {
			if got := idx.lines[path]; got != line {
				t.Errorf("line of %s = %d, want %d", path, got, line)
			}
		})
	}
	if _, ok := idx.lines["fake"]; ok {
		t.Error("a header inside a multi-line string was indexed")
	}
	var headers []string
	for _, h := range idx.headers {
		headers = append(headers, h.path)
	}
	wantHeaders := []string{`a."b.c"`, "arr[0]", "arr[0].sub", "arr[1]", "arr[1].inner[0]", "arr[1].inner[1]"}
	if len(headers) != len(wantHeaders) {
		t.Fatalf("headers %q, want %q", headers, wantHeaders)
	}
	for i := range headers {
		if headers[i] != wantHeaders[i] {
			t.Errorf("headers %q, want %q", headers, wantHeaders)
		}
	}
}

func TestKeyLineFallsBackToParent(t *testing.T) {
	idx := indexDocument([]byte("[tools.bash]\nshell = \"x\"\n\n[x]\ny = 1\na.b.c = 2\n"))
	tests := []struct {
		path string
		want int
	}{
		{"tools.bash.shell", 2},
		{"tools.bash.prefix", 1}, // not written: the line of its table
		{"tools", 1},             // implicit table: its first line
		{"x.a", 6},               // implicit by a dotted key
		{"x.a.b", 6},
		{"x.z", 4},
		{"model.name", 0},
	}
	for _, tt := range tests {
		if got := idx.keyLine(tt.path); got != tt.want {
			t.Errorf("keyLine(%s) = %d, want %d", tt.path, got, tt.want)
		}
	}
}

func TestParentKey(t *testing.T) {
	tests := map[string]string{
		"a.b.c":          "a.b",
		"a[1].b":         "a[1]",
		"a[1]":           "a",
		`a."x.y"`:        "a",
		`"x.y".z`:        `"x.y"`,
		`a."q\".r"`:      "a",
		"top":            "",
		"arr[0].v[1][2]": "arr[0].v[1]",
	}
	for in, want := range tests {
		if got := parentKey(in); got != want {
			t.Errorf("parentKey(%s) = %q, want %q", in, got, want)
		}
	}
}

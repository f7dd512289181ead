package frontmatter

import (
	"errors"
	"testing"
)

func TestSplitAndDecode(t *testing.T) {
	var fm struct {
		Name        string   `yaml:"name"`
		Description string   `yaml:"description"`
		Tools       []string `yaml:"tools"`
	}
	d, err := Parse("a.md", []byte("---\r\nname: x\r\ndescription: \"does: things\"\r\ntools:\r\n  - read\r\n  - grep\r\n---\r\n\r\nYou review code.\r\n"), &fm)
	if err != nil {
		t.Fatal(err)
	}
	if fm.Name != "x" || fm.Description != "does: things" || len(fm.Tools) != 2 || d.Body != "You review code." || !d.HasFrontMatter {
		t.Fatalf("got %+v, body %q", fm, d.Body)
	}
	// Without front matter (none, or a block never closed) the body is
	// the whole text as it is, as the reference's parseFrontmatter gives it.
	for _, text := range []string{"# Title\nno front matter\n", "---\nname: a\n"} {
		d, err = Parse("b.md", []byte(text), &fm)
		if err != nil || d.HasFrontMatter || d.Body != text {
			t.Fatalf("%q: got %+v, %v", text, d, err)
		}
	}
}

func TestErrorsNameTheFileLine(t *testing.T) {
	var fm struct {
		Name  string `yaml:"name"`
		Tools []int  `yaml:"tools"`
	}
	for _, tc := range []struct {
		text string
		line int
	}{
		{"---\nname: a\ndescription: b: c\n---\nbody", 3}, // syntax error on the file's line 3
		{"---\nname: a\ntools: [read]\n---\nbody", 3},     // type error
		{"---\n- a\n- b\n---\n", 2},                       // not a mapping
		{"---\nname: a\n\n\nname: [\n---\nbody", 5},       // flow sequence never closed
	} {
		_, err := Parse("x.md", []byte(tc.text), &fm)
		var fe *Error
		if !errors.As(err, &fe) || fe.File != "x.md" || fe.Line != tc.line {
			t.Errorf("%q: got %v, want x.md:%d", tc.text, err, tc.line)
		}
	}
}

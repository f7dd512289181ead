package tui

import (
	"fmt"
	"strings"
)

// mdAnswer is a realistic assistant answer of at least size bytes, the
// same every time: headings, paragraphs with strong and emphasised words,
// inline code and links, bullet, ordered, nested and task lists, fenced
// code, quotes, tables and rules, the words varied so that no two
// paragraphs are the same.
func mdAnswer(size int) string {
	words := strings.Fields(`the function returns an error when the file does not exist so the
		caller checks it before reading config values from disk and we keep a cache of parsed
		entries keyed by path which makes the second lookup cheap while the first one pays for
		parsing every line including comments blank lines and quoted strings with escapes`)
	word := func(i int) string { return words[(i*7+i/5)%len(words)] }
	sentence := func(seed, n int) string {
		var b strings.Builder
		for k := range n {
			if k > 0 {
				b.WriteByte(' ')
			}
			w := word(seed + k)
			switch (seed + k) % 23 {
			case 3:
				w = "**" + w + " " + word(seed+k+1) + "**"
			case 7:
				w = "*" + w + "*"
			case 11:
				w = "`" + w + "()`"
			case 15:
				w = fmt.Sprintf("[%s](https://pkg.go.dev/%s#L%d)", w, w, seed+k)
			case 19:
				w = "`cfg." + w + "`"
			}
			b.WriteString(w)
		}
		b.WriteByte('.')
		return b.String()
	}
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		s := i * 31
		fmt.Fprintf(&b, "## %d. %s\n\n", i+1, strings.TrimSuffix(sentence(s, 4), "."))
		fmt.Fprintf(&b, "%s %s %s\n\n", sentence(s+1, 18), sentence(s+2, 12), sentence(s+3, 22))
		fmt.Fprintf(&b, "%s\n%s\n\n", sentence(s+4, 15), sentence(s+5, 9))
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "- %s\n- %s\n  - %s\n  - %s\n- %s\n\n", sentence(s+6, 8), sentence(s+7, 14), sentence(s+8, 5), sentence(s+9, 6), sentence(s+10, 10))
		case 1:
			fmt.Fprintf(&b, "1. %s\n2. %s\n3. %s\n\n", sentence(s+6, 12), sentence(s+7, 7), sentence(s+8, 16))
		case 2:
			fmt.Fprintf(&b, "- [x] %s\n- [ ] %s\n- [ ] %s\n\n", sentence(s+6, 6), sentence(s+7, 9), sentence(s+8, 5))
		case 3:
			fmt.Fprintf(&b, "> **Note:** %s\n> %s\n\n", sentence(s+6, 16), sentence(s+7, 11))
		}
		fmt.Fprintf(&b, "```go\nfunc load%d(path string) (*Config, error) {\n\tb, err := os.ReadFile(path)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"load %%s: %%w\", path, err)\n\t}\n\tvar c Config\n\tif err := json.Unmarshal(b, &c); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &c, nil // %s\n}\n```\n\n", i, word(s))
		if i%3 == 0 {
			fmt.Fprintf(&b, "| option | default | meaning |\n| --- | :---: | --- |\n")
			for r := range 4 {
				fmt.Fprintf(&b, "| `%s` | %d | %s |\n", word(s+r), r*10, sentence(s+r, 6+r*2))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s %s\n\n", sentence(s+11, 20), sentence(s+12, 13))
		if i%5 == 4 {
			b.WriteString("---\n\n")
		}
	}
	return b.String()
}

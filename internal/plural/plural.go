// Package plural writes counts for people: "1 line", "2 lines". It is the
// one helper for every count pi prints (not the tool texts copied from the
// reference agent, which stay as the reference prints them).
package plural

import (
	"strconv"
	"strings"
)

// Count is n followed by word, in the plural unless n is 1 (and -1): "1
// file", "0 files", "3 tool results", "2 entries". word is the singular;
// of several words the last one takes the plural.
func Count(n int, word string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + word
	}
	return strconv.Itoa(n) + " " + Of(word)
}

// Of is the plural of the singular word by the regular English rules:
// -es after s, x, z, ch and sh; -ies for a consonant and y; else -s.
func Of(word string) string {
	switch {
	case word == "":
		return word
	case strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"), strings.HasSuffix(word, "z"),
		strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"):
		return word + "es"
	case len(word) >= 2 && word[len(word)-1] == 'y' && !strings.ContainsRune("aeiou", rune(word[len(word)-2])):
		return word[:len(word)-1] + "ies"
	}
	return word + "s"
}

// Package suggest finds what a mistyped name was probably meant to be: the
// closest of the known names, by edit distance, for "did you mean ...?"
// messages (commands, flags, tool names).
package suggest

// Closest returns the candidate nearest to word: at most one edit away
// (an insertion, deletion, substitution or swap of two neighbours) for
// candidates of up to five bytes, two for longer ones, with the same first
// byte; "" when none is that close or word is a candidate itself. Ties go
// to the candidate closest in length, then to the earlier one.
func Closest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if c == word {
			return ""
		}
		if word == "" || c == "" || c[0] != word[0] {
			continue
		}
		limit := 1
		if len(c) > 5 {
			limit = 2
		}
		d := Distance(word, c)
		if d > limit || d > bestD {
			continue
		}
		// On a tie, the candidate as long as word wins (a swap of
		// letters is likelier than a dropped one).
		if d < bestD || (lenDiff(c, word) < lenDiff(best, word)) {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance of a and b, in bytes:
// the fewest insertions, deletions, substitutions and swaps of neighbours
// that turn a into b.
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func lenDiff(a, b string) int {
	if len(a) > len(b) {
		return len(a) - len(b)
	}
	return len(b) - len(a)
}

package main

import (
	"slices"
	"strings"
)

// closest is the name of names a mistyped word most likely meant, or ""
// when none is near enough to suggest: the same name with '-' for '_' or
// in lower case (exec_timeout → exec-timeout), else the name fewest edits
// away (invok → invoke, plugins → plugin, lst → list), at most one edit
// for a word of up to four letters and two for a longer one, so that a
// word unlike every name gets no suggestion rather than a wrong one.
// Config keys and command names share it.
func closest(word string, names []string) string {
	if norm := strings.ToLower(strings.ReplaceAll(word, "_", "-")); slices.Contains(names, norm) {
		return norm
	}
	limit := 1
	if len(word) > 4 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(word), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, bytewise (names
// are ASCII).
func editDistance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

package base

import (
	"slices"
	"strings"
)

// Closest is the name of names a mistyped word most likely meant, or ""
// when none is near enough to suggest: the same name with '-' for '_' or
// in lower case (exec_timeout → exec-timeout), else the name fewest edits
// away (invok → invoke, plugins → plugin, lst → list), at most one edit
// for a word of up to four letters and two for a longer one, so that a
// word unlike every name gets no suggestion rather than a wrong one.
// Config keys and command names share it.
func Closest(word string, names []string) string {
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

// editDistance is the number of edits (a letter inserted, deleted,
// changed, or two neighbours swapped: ecoh → echo is one) that make a
// into b, bytewise (names are ASCII): the optimal string alignment
// distance.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

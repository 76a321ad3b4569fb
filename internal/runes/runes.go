// Package runes cuts text by characters (runes), never inside a UTF-8 sequence: the one place
// the service's length limits, previews and model inputs are cut.
package runes

import (
	"strings"
	"unicode/utf8"
)

// Cut returns the first n runes of s (s itself when it is shorter). It stops scanning at the
// cut, so a megabyte-long s costs no more than n runes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Truncate cuts s to at most n runes, the last one "…" when anything was cut (white space
// before the "…" dropped).
func Truncate(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	return strings.TrimRight(Cut(s, n-1), " \t\n") + "…"
}

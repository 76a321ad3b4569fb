package search

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowmind/knowmind/bm25"
)

// WordLevels tells how common a lowercase word is in general language: its level (a lower level
// is a more common word) and whether it has one, and whether the language knows it chiefly as a
// name (english.Levels).
type WordLevels interface {
	Level(word string) (int, bool)
	Name(word string) bool
}

// maxSubjectWords bounds the words of one question that CommonMatches looks up.
const maxSubjectWords = 64

// CommonMatches returns the query terms that stand only for words more common in general
// language than a word of the question the tenant never wrote: a hit that holds one query term,
// and that one of these, holds an everyday word of a question whose subject the tenant never
// wrote ("How many moons does Neptune have?" against "I'm over the moon about it": "moon" is
// common English, "Neptune" rarer and unknown to the tenant). Nil when no term is.
//
// A word the tenant never wrote is one whose analysed terms no text side that holds text knows
// (sides as NewTextSide made them); a word the levels do not hold (a German word, a rare name, a
// term of art) has no place in the comparison, on either side of it, so the rule speaks for
// English words only. A name (LeveledWord.Name) may be the rarer unknown word, never the common
// one: how common it is as a word says nothing of what it names, and every German noun is
// written like one. Equal levels do not count as rarer. A term that stands for several words of
// the question counts with the rarest. The caller leaves out the time the question names
// (WithoutTime), which the time signal matches, not the words.
func CommonMatches(query string, sides [2]TextSide, levels WordLevels) map[string]bool {
	words := LeveledWords(query, sides, levels)
	rarestUnknown := 0
	for _, w := range words {
		if !w.Known {
			rarestUnknown = max(rarestUnknown, w.Level)
		}
	}
	if rarestUnknown == 0 {
		return nil
	}
	// A term's level is its rarest word's: it stands for the common word only when every word
	// it stands for is more common than the unknown one. A name is never the common word.
	termLevel := map[string]int{}
	for _, w := range words {
		level := w.Level
		if w.Name {
			level = math.MaxInt
		}
		for _, t := range w.Terms {
			termLevel[t] = max(termLevel[t], level)
		}
	}
	var common map[string]bool
	for t, l := range termLevel {
		if l < rarestUnknown {
			if common == nil {
				common = map[string]bool{}
			}
			common[t] = true
		}
	}
	return common
}

// LeveledWord is a word of a question that the levels hold and that analyses to query terms.
type LeveledWord struct {
	Word  string
	Level int
	Terms []string // its query terms on the sides that hold text
	Known bool     // the tenant's text holds one of Terms
	// Name: the question writes it capitalised where a sentence does not start ("John",
	// "Neptune", and every German noun), or where one starts and the levels know it chiefly as
	// a name ("John told …", not "Sign …").
	Name bool
}

// LeveledWords are the words of query (at most maxSubjectWords) that levels hold and that
// analyse to query terms on a side holding text, in question order.
func LeveledWords(query string, sides [2]TextSide, levels WordLevels) []LeveledWord {
	if levels == nil {
		return nil
	}
	var out []LeveledWord
	for _, sw := range surfaceWords(query, maxSubjectWords) {
		w := strings.ToLower(sw.text)
		level, ok := levels.Level(w)
		if !ok {
			continue
		}
		lw := LeveledWord{Word: w, Level: level, Name: sw.capital && (!sw.starts || levels.Name(w))}
		for _, side := range sides {
			if len(side.Terms) == 0 || side.Stats.Docs == 0 {
				continue
			}
			for _, t := range bm25.Terms(side.Lang, w) {
				if !slices.Contains(side.Terms, t) {
					continue // a stop or question word
				}
				lw.Terms = append(lw.Terms, t)
				lw.Known = lw.Known || side.Stats.DF[t] > 0
			}
		}
		if len(lw.Terms) > 0 {
			out = append(out, lw)
		}
	}
	return out
}

// surfaceWord is a word of a question as written: capital when its first letter is upper case,
// starts when it begins a sentence (the question's first word, or the first after . ! ? or :).
type surfaceWord struct {
	text            string
	capital, starts bool
}

// surfaceWords are the query's words as written (letter runs: "half-life" and "Neptune's" are
// two words each, "carbon-14" the one word "carbon"), at most max of them.
func surfaceWords(query string, max int) []surfaceWord {
	var out []surfaceWord
	starts := true
	in := -1 // start of the word being read
	for i, r := range query + " " {
		if unicode.IsLetter(r) {
			if in < 0 {
				in = i
			}
			continue
		}
		if in >= 0 {
			if len(out) == max {
				return out
			}
			first, _ := utf8.DecodeRuneInString(query[in:])
			out = append(out, surfaceWord{query[in:i], unicode.IsUpper(first), starts})
			in, starts = -1, false
		}
		if strings.ContainsRune(".!?:", r) {
			starts = true
		}
	}
	return out
}

// commonOnly tells whether a text (its analysed terms, repeats allowed) holds exactly one of the
// query's terms, and that one common.
func commonOnly(query, text []string, common map[string]bool) bool {
	held := ""
	for _, t := range query {
		if slices.Contains(text, t) {
			if held != "" {
				return false
			}
			held = t
		}
	}
	return held != "" && common[held]
}

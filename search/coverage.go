package search

import (
	"slices"
	"strings"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/timeq"
)

// maxCoverageSplits bounds the words of one question that WordCoverage analyses again with the
// German rules (bm25.Analysis: each split asks the vocabulary about a word's substrings).
const maxCoverageSplits = 16

// WordCoverage is the share of a question's information (the IDF of its words' terms, a term
// the tenant never saw counting as seen once, as in bm25.Ideal) that lies in words the tenant's
// text index knows, word by word, for the floor (Floor). ok is false when the question has no
// term to measure.
//
// A word counts as known when one of the terms it stands for is: its own analysed term, or,
// analysed alone with the German rules a, one they add for it — the parts of a compound, its
// spelling with umlauts (bm25.Coverage over the question's terms would count
// "Reisekostenabrechnung" as unknown beside its known parts, and the question as known in part).
// The time the question names (timeq.Locate) is left out: the time signal matches it against
// the memories' times, not their words ("in July 2022" is no word a turn says).
func WordCoverage(ix *bm25.Index, tenant, lang, query string, a bm25.Analysis) (coverage float64, ok bool) {
	if _, start, end, named := timeq.Locate(query); named {
		query = query[:start] + " " + query[end:]
	}
	german := bm25.AnalysisLang(lang) == "de"
	var stop map[string]bool
	if !a.KeepQuestionWords {
		stop = questionTerms(lang)
	}
	type word struct {
		text  string
		terms []string
	}
	var words []word
	var all []string
	for _, w := range strings.Fields(query) {
		terms := slices.DeleteFunc(bm25.Terms(lang, w), func(t string) bool { return stop[t] || slices.Contains(all, t) })
		if len(terms) > 0 {
			words = append(words, word{w, terms})
			all = append(all, terms...)
		}
	}
	if len(all) == 0 {
		return 0, false
	}
	st := ix.Stats(tenant, lang, all...)
	n := max(st.Docs, 1)
	var total, known float64
	splits := 0
	for _, w := range words {
		var weight float64
		held := false
		for _, t := range w.terms {
			weight += bm25.IDF(n, min(max(st.DF[t], 1), n))
			held = held || st.DF[t] > 0
		}
		if !held && german && splits < maxCoverageSplits {
			splits++
			extra := slices.DeleteFunc(a.Analyze(lang, w.text, func(t string) bool { return ix.Has(tenant, lang, t) }),
				func(t string) bool { return slices.Contains(w.terms, t) })
			if len(extra) > 0 {
				xs := ix.Stats(tenant, lang, extra...)
				held = slices.ContainsFunc(extra, func(t string) bool { return xs.DF[t] > 0 })
			}
		}
		total += weight
		if held {
			known += weight
		}
	}
	if total <= 0 {
		return 0, false
	}
	return known / total, true
}

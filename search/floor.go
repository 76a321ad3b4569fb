package search

import (
	"math"

	"github.com/knowmind/knowmind/bm25"
)

// Floor is the score a hit of one recall must reach when the caller asks for minScore
// (knowmind.RecallMinScore unless it gives min_score), with coverage the share of the question
// the tenant's words hold (Known): minScore / coverage.
//
// Every score is a share of the whole question, but a question the tenant's vocabulary holds
// only in part cannot be answered beyond that part: a memory that holds the one known word of
// "How many moons does Neptune have?" ("I'm over the moon") holds all that the tenant can
// match of it, and its share of the question (0.39) looks like an answer's. What the part the
// tenant knows cannot carry is the question's own subject, so a hit must answer minScore of
// the question per share the tenant knows: a question the tenant knows fully keeps minScore
// itself, one it knows a third of needs three times that, one it knows nothing of gets no hit.
// Without terms to measure coverage by (ok false) minScore stands; minScore 0 keeps every hit.
//
// Only for lexical evidence: a model embedder or a cross-encoder may know a word the tenant
// never wrote (a synonym, another language), and recall then passes minScore as it is.
func Floor(minScore, coverage float64, ok bool) float64 {
	switch {
	case !ok || minScore <= 0:
		return minScore
	case coverage <= 0:
		return math.Inf(1)
	}
	return minScore / coverage
}

// Known is the share of the question in words the tenant's text knows (WordCoverage), the best
// of the language sides that hold text and analysed the question into terms; ok is false when
// none did.
func Known(ix *bm25.Index, tenant, query string, a bm25.Analysis, sides [2]TextSide) (coverage float64, ok bool) {
	for i, lang := range [2]string{"de", ""} {
		if len(sides[i].Terms) == 0 || sides[i].Stats.Docs == 0 {
			continue
		}
		if c, measured := WordCoverage(ix, tenant, lang, query, a); measured {
			coverage, ok = max(coverage, c), true
		}
	}
	return coverage, ok
}

// Package prf expands a query by pseudo-relevance feedback (RM3-style): the words that the
// best first-pass hits share, weighted by how strongly those hits matched and by how rare the
// words are, become extra query terms of lower weight. It is pure: the caller supplies the
// feedback documents' analysed tokens, their scores and document frequencies.
package prf

import (
	"cmp"
	"slices"

	"github.com/knowmind/knowmind/bm25"
)

// Params bound an expansion.
type Params struct {
	Terms  int     // at most this many expansion terms
	Weight float64 // the best expansion term's weight (a query term weighs 1); others in proportion
	// MinDocs: a term must occur in at least this many feedback documents (1 = any), so that
	// one document's odd words do not steer the second pass.
	MinDocs int
}

// Feedback is one first-pass hit: its analysed tokens and its score (its weight as evidence).
type Feedback struct {
	Tokens []string
	Score  float64
}

// Expand returns the expansion terms for query from the feedback documents, best first, with
// weights in (0, p.Weight]. A term's value is Σ over feedback documents of score·tf/len (the
// relevance model P(t|R)), times its IDF under st (common words say little). Query terms and
// terms shorter than two characters are never added.
func Expand(query []string, feedback []Feedback, st bm25.Stats, p Params) []bm25.Weighted {
	if p.Terms <= 0 || p.Weight <= 0 || len(feedback) == 0 {
		return nil
	}
	inQuery := make(map[string]bool, len(query))
	for _, t := range query {
		inQuery[t] = true
	}
	value := map[string]float64{}
	docs := map[string]int{}
	for _, f := range feedback {
		if len(f.Tokens) == 0 || f.Score <= 0 {
			continue
		}
		tf := map[string]int{}
		for _, t := range f.Tokens {
			if !inQuery[t] && len(t) >= 2 {
				tf[t]++
			}
		}
		for t, c := range tf {
			value[t] += f.Score * float64(c) / float64(len(f.Tokens))
			docs[t]++
		}
	}
	n := max(st.Docs, 1)
	var out []bm25.Weighted
	for t, v := range value {
		if docs[t] < max(p.MinDocs, 1) {
			continue
		}
		out = append(out, bm25.Weighted{Term: t, Weight: v * bm25.IDF(n, min(max(st.DF[t], 1), n))})
	}
	slices.SortFunc(out, func(a, b bm25.Weighted) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Term, b.Term)
	})
	out = out[:min(len(out), p.Terms)]
	if len(out) > 0 {
		top := out[0].Weight
		for i := range out {
			out[i].Weight = p.Weight * out[i].Weight / top
		}
	}
	return out
}

// Candidates returns the terms Expand may choose from (every non-query token of the feedback
// documents), for the caller to look up their document frequencies first.
func Candidates(query []string, feedback []Feedback) []string {
	inQuery := make(map[string]bool, len(query))
	for _, t := range query {
		inQuery[t] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range feedback {
		for _, t := range f.Tokens {
			if !inQuery[t] && !seen[t] && len(t) >= 2 {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

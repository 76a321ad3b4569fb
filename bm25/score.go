package bm25

import (
	"math"
	"sort"
)

// Stats are the corpus statistics BM25 needs, for one tenant and one language: the number of
// documents, the sum of their lengths in tokens, and each term's document frequency. DF may hold
// only the query's terms.
type Stats struct {
	Docs     int64
	TotalLen int64
	DF       map[string]int64
}

// Doc is one candidate to score: its id and its analysed text (Analyze's output, repeats kept).
type Doc struct {
	ID     string
	Tokens []string
	// Length is the document's length for BM25 when it is not len(Tokens) (0): the count of
	// Analyze's tokens for the output of Analysis.AnalyzeDoc.
	Length int
}

// length is the document's length for BM25.
func (d Doc) length() int {
	if d.Length > 0 {
		return d.Length
	}
	return len(d.Tokens)
}

// Scored is a candidate's id with its BM25 score.
type Scored struct {
	ID    string
	Score float64
}

// Params are BM25's free parameters. The zero value means the usual defaults (K1 1.2, B 0.75),
// so a caller that does not tune gets Lucene's behaviour.
type Params struct {
	K1 float64 // term-frequency saturation
	B  float64 // length normalisation, 0 (none) … 1 (full)
}

// DefaultParams are Lucene's and Elasticsearch's defaults.
var DefaultParams = Params{K1: 1.2, B: 0.75}

// IDF is Lucene's BM25 inverse document frequency, ln(1 + (N − df + 0.5)/(df + 0.5)): the +1
// keeps it positive even for a term in every document, so a matching term never lowers a score.
func IDF(docs, df int64) float64 {
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// Score returns every doc with its BM25 score for query (analysed tokens), best first, ties by
// id. A query term counts once however often it is repeated (anyoftext matches a set of terms,
// too). Statistics that lag behind the candidates (a doc holds a term whose DF is 0, or the
// corpus looks smaller than the candidate list) are clamped so that scores stay finite and
// positive for matching terms.
func Score(query []string, docs []Doc, st Stats, p Params) []Scored {
	var terms []Weighted
	seen := make(map[string]bool, len(query))
	for _, t := range query {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, Weighted{Term: t, Weight: 1})
		}
	}
	return ScoreWeighted(terms, docs, st, p)
}

// Weighted is a query term with its weight (Score gives every term 1; an expanded query gives
// the added terms less).
type Weighted struct {
	Term   string
	Weight float64
}

// ScoreWeighted is Score with a weight per (distinct) term: each term's BM25 contribution is
// multiplied by its weight.
func ScoreWeighted(terms []Weighted, docs []Doc, st Stats, p Params) []Scored {
	if p == (Params{}) {
		p = DefaultParams
	}
	column := make(map[string]int, len(terms))
	for i, t := range terms {
		column[t.Term] = i
	}

	n := max(st.Docs, int64(len(docs)), 1)
	avgLen := float64(st.TotalLen) / float64(n)
	if avgLen <= 0 {
		avgLen = 1
	}

	tf := make([]int, len(terms))
	out := make([]Scored, len(docs))
	for i, d := range docs {
		clear(tf)
		for _, t := range d.Tokens {
			if c, ok := column[t]; ok {
				tf[c]++
			}
		}
		norm := p.K1 * (1 - p.B + p.B*float64(d.length())/avgLen)
		var s float64
		for c, f := range tf {
			if f == 0 {
				continue
			}
			df := min(max(st.DF[terms[c].Term], 1), n)
			s += terms[c].Weight * IDF(n, df) * float64(f) * (p.K1 + 1) / (float64(f) + norm)
		}
		out[i] = Scored{ID: d.ID, Score: s}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Ideal is the BM25 score of the ideal answer to query under st: a document of average length
// that holds every distinct query term once. A query term the corpus does not hold counts as a
// term seen once (the same clamp Score applies), so a query about something the corpus never
// mentions has a high ideal that its candidates fall far short of. Score divided by Ideal is
// the share of the query's information a document holds (about 0..1; a short document or a
// repeated term can pass 1 a little): an absolute measure, comparable across queries, where
// the best candidate's score is not.
func Ideal(query []string, st Stats) float64 {
	n := max(st.Docs, 1)
	seen := make(map[string]bool, len(query))
	var s float64
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		// tf 1 at average length: (k1+1)·1/(1+k1) = 1 for any k1, so the term adds its IDF.
		s += IDF(n, min(max(st.DF[t], 1), n))
	}
	return s
}

// Coverage is the share of Ideal that the query terms the corpus holds make up: 1 when the
// corpus knows every query word, low when the question is mostly about words it never saw.
func Coverage(query []string, st Stats) float64 {
	ideal := Ideal(query, st)
	if ideal <= 0 {
		return 0
	}
	n := max(st.Docs, 1)
	seen := make(map[string]bool, len(query))
	var known float64
	for _, t := range query {
		if !seen[t] && st.DF[t] > 0 {
			seen[t] = true
			known += IDF(n, min(st.DF[t], n))
		}
	}
	return known / ideal
}

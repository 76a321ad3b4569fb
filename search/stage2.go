package search

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
)

// The second stage re-scores the fused list's first StagePool hits with evidence the first stage
// does not use: how close together the query's terms stand in the memory's text, and how much of
// the query's IDF mass the text covers (all of its rare words rather than one lucky rare word).
const (
	// StagePool is how many fused hits the second stage reads: the largest k, so that the top n
	// of a recall does not depend on k.
	StagePool = knowmind.RecallMaxK
	// StageText bounds the bytes of one hit's title and content the stage analyses.
	StageText = 4 << 10
	// stageWindow: two query terms count as near when at most this many tokens apart.
	stageWindow = 3
)

// Evidence scores an analysed text against a query's analysed terms (query order): cov, the
// share of the query's IDF mass the text holds, and near, the share of the query's neighbouring
// term pairs the text holds within stageWindow tokens of each other (0 for a one-term query).
// ordered are the text's tokens in text order; extra further tokens the analysis added (a German
// compound's parts), which count for coverage only.
func Evidence(terms []string, st bm25.Stats, ordered, extra []string) (cov, near float64) {
	if len(terms) == 0 {
		return 0, 0
	}
	pos := map[string][]int{}
	for i, t := range ordered {
		pos[t] = append(pos[t], i)
	}
	n := max(st.Docs, 1)
	var mass, held float64
	for _, t := range terms {
		idf := bm25.IDF(n, min(max(st.DF[t], 1), n))
		mass += idf
		if len(pos[t]) > 0 || slices.Contains(extra, t) {
			held += idf
		}
	}
	if mass > 0 {
		cov = held / mass
	}
	if len(terms) < 2 {
		return cov, 0
	}
	pairs := 0
	for i := 1; i < len(terms); i++ {
		if within(pos[terms[i-1]], pos[terms[i]]) {
			pairs++
		}
	}
	return cov, float64(pairs) / float64(len(terms)-1)
}

// within tells whether some position of a and some of b lie within stageWindow (both sorted).
func within(a, b []int) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		d := a[i] - b[j]
		if d <= stageWindow && d >= -stageWindow {
			return true
		}
		if a[i] < b[j] {
			i++
		} else {
			j++
		}
	}
	return false
}

// StageWeights are the second stage's weights; the zero value turns it off.
type StageWeights struct {
	// Coverage lowers a hit by the share of the query's IDF mass its text lacks: score ×
	// (1 − Coverage × (1 − cov)).
	Coverage float64
	// Proximity raises a hit by the share of the query's neighbouring term pairs its text holds
	// close together: + Proximity × near × (1 − score), so the score stays within 0..1.
	Proximity float64
	// WordHits re-scores only the hits whose evidence is the question's words (WordHit); the
	// others (found by the context, the graph, the semantic or vector signals) keep their
	// fused score and take their place among the re-scored.
	WordHits bool
}

// On tells whether the stage does anything.
func (w StageWeights) On() bool { return w.Coverage > 0 || w.Proximity > 0 }

// WordHit tells whether a fused hit's evidence is the question's words: a direct hit the text
// signal found at least as strongly as the memory before it in its sequence (the context
// signal). A memory reached through the graph, or found by the semantic, vector or context
// signals alone, is not.
func WordHit(h rank.Hit) bool { return h.Via == "" && h.Text > 0 && h.Text >= h.Context }

// HitEvidence is what the second stage reads of one hit's text (Evidence on the text side that
// gives the most), with the hit's fused entry.
type HitEvidence struct {
	Cov, Near float64
	// Found: some text side had terms to compare (else Cov and Near are 0 and mean nothing).
	Found bool
	// Holds are the query terms the text holds, on any side (Explain only).
	Holds []string
}

// Explain returns the second stage's evidence of each hit (from[i] its fused entry); analyze
// as for Stage2. The benchmark's per-question dump reads it.
func Explain(hits []knowmind.RecallHit, sides [2]TextSide, analyze func(lang, text string) ([]string, int)) []HitEvidence {
	out := make([]HitEvidence, len(hits))
	for i, h := range hits {
		out[i] = hitEvidence(h, sides, analyze)
		text := bounded(strings.TrimSpace(h.Title+"\n"+h.Content), StageText)
		for _, side := range sides {
			if len(side.Terms) == 0 || side.Stats.Docs == 0 {
				continue
			}
			tokens, _ := analyze(side.Lang, text)
			for _, t := range side.Terms {
				if slices.Contains(tokens, t) && !slices.Contains(out[i].Holds, t) {
					out[i].Holds = append(out[i].Holds, t)
				}
			}
		}
	}
	return out
}

// hitEvidence is Evidence of h's title and content (at most StageText bytes), the best over
// the text sides that have terms.
func hitEvidence(h knowmind.RecallHit, sides [2]TextSide, analyze func(lang, text string) ([]string, int)) HitEvidence {
	text := bounded(strings.TrimSpace(h.Title+"\n"+h.Content), StageText)
	var e HitEvidence
	for _, side := range sides {
		if len(side.Terms) == 0 || side.Stats.Docs == 0 {
			continue // a language the tenant holds no text in tells nothing of a hit's words
		}
		tokens, length := analyze(side.Lang, text)
		length = min(length, len(tokens))
		c, p := Evidence(side.Terms, side.Stats, tokens[:length], tokens[length:])
		e.Cov, e.Near, e.Found = max(e.Cov, c), max(e.Near, p), true
	}
	return e
}

// Stage2 re-scores the first StagePool hits (from[i] the fused entry of hits[i]) by their
// Evidence on the text sides that have terms (the best side's) and returns them ordered again
// (hits beyond the pool are dropped: they were not re-scored, so they would not compare). A
// caller must pass the pool whatever the floor: Proximity raises scores. analyze returns a
// text's tokens for a language side and how many of them are in text order
// (bm25.Analysis.AnalyzeDoc); it reads at most StageText bytes per hit.
func Stage2(hits []knowmind.RecallHit, from []rank.Hit, sides [2]TextSide, w StageWeights,
	analyze func(lang, text string) ([]string, int)) ([]knowmind.RecallHit, []rank.Hit) {
	if !w.On() || len(hits) == 0 || len(hits) != len(from) {
		return hits, from
	}
	n := min(len(hits), StagePool)
	type scored struct {
		hit  knowmind.RecallHit
		from rank.Hit
	}
	pool := make([]scored, n)
	for i := range n {
		h, fr := hits[i], from[i]
		if !w.WordHits || WordHit(fr) {
			if e := hitEvidence(h, sides, analyze); e.Found {
				s := fr.Score * (1 - w.Coverage*(1-e.Cov))
				fr.Score = min(s+w.Proximity*e.Near*(1-s), 1)
				h.Score = RoundScore(fr.Score)
			}
		}
		pool[i] = scored{h, fr}
	}
	slices.SortStableFunc(pool, func(a, b scored) int {
		switch {
		case a.from.Score > b.from.Score:
			return -1
		case a.from.Score < b.from.Score:
			return 1
		}
		return 0
	})
	outH, outF := make([]knowmind.RecallHit, n), make([]rank.Hit, n)
	for i, s := range pool {
		outH[i], outF[i] = s.hit, s.from
	}
	return outH, outF
}

// bounded cuts s to at most n bytes at a rune boundary.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

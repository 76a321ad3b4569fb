package search

import "github.com/knowmind/knowmind/bm25"

// Ahead is what recall scores from the service's own indexes while its request to the store is
// in flight: for each side the service searched (served), the semantic similarity of every text
// candidate it proposed and the title field's scores of every text and vector candidate. The
// store's answer keeps a subset of them (the memory filter); a chunk's score does not depend on
// the others scored with it, so Fuse takes them as if computed after the answer.
type Ahead struct {
	sims    [2]map[uint64]float64
	title   [2]map[uint64]float64 // nil: not scored ahead
	titleSt [2]bm25.Stats
	covered map[uint64]bool // the chunks the title scores cover
}

// ScoreAhead computes Ahead for the candidates the service proposed: the text sides' scores,
// the vector candidates (vector) and the semantic pool (pool). Nil when no side was served:
// Dgraph's full-text step finds the candidates, whose terms come with its answer.
func (in Input) ScoreAhead(vector, pool map[uint64]float64) *Ahead {
	served := false
	for _, side := range in.Text {
		served = served || side.Served
	}
	if !served {
		return nil
	}
	var a Ahead
	a.covered = map[uint64]bool{}
	for _, side := range in.Text {
		for u := range side.Scores {
			a.covered[u] = true
		}
	}
	for u := range vector {
		a.covered[u] = true
	}
	for u := range pool { // the semantic pool's chunks are text candidates too
		a.covered[u] = true
	}
	all := make([]uint64, 0, len(a.covered))
	for u := range a.covered {
		all = append(all, u)
	}
	for i, side := range in.Text {
		if !side.Served {
			continue
		}
		if in.Words != nil && in.RefTerms != nil {
			var refs []uint64
			for u, s := range side.Scores {
				if s > 0 {
					refs = append(refs, u)
				}
			}
			if len(refs) > 0 {
				sims := in.Words.SimilarityKeyed(side.Terms, refs, in.RefTerms(refs))
				a.sims[i] = make(map[uint64]float64, len(refs))
				for j, u := range refs {
					a.sims[i][u] = sims[j]
				}
			}
		}
		if in.Titles != nil && in.TitleWeight > 0 && len(all) > 0 {
			a.title[i], a.titleSt[i] = in.Titles(side.Lang, side.Terms, all)
		}
	}
	return &a
}

// semantic returns the similarities of refs for side i, or nil when they were not computed
// ahead (or a ref is missing).
func (a *Ahead) semantic(i int, refs []uint64) []float64 {
	if a == nil || a.sims[i] == nil {
		return nil
	}
	out := make([]float64, len(refs))
	for j, u := range refs {
		s, ok := a.sims[i][u]
		if !ok {
			return nil
		}
		out[j] = s
	}
	return out
}

// titles returns side i's title scoring: from the scores computed ahead when they cover the
// chunks asked for, else compute.
func (a *Ahead) titles(i int, compute func(string, []string, []uint64) (map[uint64]float64, bm25.Stats)) func(string, []string, []uint64) (map[uint64]float64, bm25.Stats) {
	if a == nil || a.title[i] == nil {
		return compute
	}
	return func(lang string, terms []string, refs []uint64) (map[uint64]float64, bm25.Stats) {
		out := make(map[uint64]float64, len(refs))
		for _, u := range refs {
			if !a.covered[u] {
				return compute(lang, terms, refs)
			}
			if s, ok := a.title[i][u]; ok {
				out[u] = s
			}
		}
		return out, a.titleSt[i]
	}
}

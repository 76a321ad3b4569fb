package rank

import (
	"cmp"
	"math"
	"slices"
)

// Chunk is a candidate chunk of one signal: its raw score (BM25, cosine) and the memory it
// belongs to ("" = no eligible memory; the chunk is dropped).
type Chunk struct {
	ID     string
	Memory string
	Score  float64
}

// Signals is what one recall gathered, for Fuse.
type Signals struct {
	// Text holds the full-text candidates scored by BM25 (only those with a positive score
	// count), Vector the vector candidates scored by their exact cosine; any order.
	Text, Vector []Chunk
	// VectorWeight is the vector signal's weight in the fusion; the text signal weighs 1.
	VectorWeight float64
	// Adjacent lists each memory's graph neighbours (both edge directions); Hops is how far
	// Fuse follows them.
	Adjacent map[string][]string
	Hops     int
}

// Fuse ranks the memories of one recall:
//
//  1. Each signal's chunks are ordered by score (ties by chunk id for text, input order for
//     vectors) and folded to memories: a memory takes its best chunk's score (Fold).
//  2. Relative score fusion (Relative): each list scaled to 0..1 — BM25 by the best BM25
//     score, cosine between the weakest and the best candidate — and combined as the weighted
//     mean, so 1.0 means best in both.
//  3. Graph (Expand): a neighbour reached over h edges from a hit scored s scores s·HopDecay^h,
//     strictly below the hit; a memory keeps the best of its own and its graph score.
//
// A direct hit is represented by its best chunk (Hit.Chunk) in the signal that ranks it
// higher; a memory reached through the graph has none.
func Fuse(s Signals) []Hit {
	text := slices.Clone(s.Text)
	slices.SortStableFunc(text, func(a, b Chunk) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	vec := slices.Clone(s.Vector)
	slices.SortStableFunc(vec, func(a, b Chunk) int { return cmp.Compare(b.Score, a.Score) })

	textMems, textBest, textScore := foldChunks(text)
	vecMems, vecBest, vecScore := foldChunks(vec)

	lists := make([]Scored, 0, 2)
	if len(textMems) > 0 {
		l := Scored{Weight: 1, IDs: textMems}
		for _, m := range textMems {
			l.Scores = append(l.Scores, textScore[textBest[m]])
		}
		lists = append(lists, l)
	}
	if len(vecMems) > 0 {
		l := Scored{Weight: s.VectorWeight, IDs: vecMems}
		for _, m := range vecMems {
			l.Scores = append(l.Scores, vecScore[vecBest[m]])
		}
		l.Floor = l.Scores[len(l.Scores)-1]
		lists = append(lists, l)
	}
	hits := Expand(Relative(lists...), s.Adjacent, s.Hops)

	textRank, vecRank := indexOf(textMems), indexOf(vecMems)
	for i, h := range hits {
		if h.Via != "" {
			continue
		}
		tr, tok := textRank[h.ID]
		vr, vok := vecRank[h.ID]
		switch {
		case tok && (!vok || tr <= vr):
			hits[i].Chunk = textBest[h.ID]
		case vok:
			hits[i].Chunk = vecBest[h.ID]
		}
	}
	return hits
}

// foldChunks folds chunks (best first) to memories, with each memory's best chunk and the
// chunks' scores.
func foldChunks(chunks []Chunk) (memories []string, best map[string]string, score map[string]float64) {
	ids := make([]string, len(chunks))
	memoryOf := make(map[string]string, len(chunks))
	score = make(map[string]float64, len(chunks))
	for i, c := range chunks {
		ids[i] = c.ID
		if _, seen := score[c.ID]; !seen {
			memoryOf[c.ID], score[c.ID] = c.Memory, c.Score
		}
	}
	memories, best = Fold(ids, func(c string) string { return memoryOf[c] })
	return memories, best, score
}

func indexOf(ids []string) map[string]int {
	m := make(map[string]int, len(ids))
	for i, id := range ids {
		m[id] = i
	}
	return m
}

// Rerank orders hits by a cross-encoder's scores (scores[i] for hits[i], clamped to 0..1),
// which become their scores. A memory reached through the graph stays strictly below the hit
// that reached it: its score is at most that hit's reranked score × HopDecay per hop (when the
// origin is among hits, as it is whenever hits is a prefix of Fuse's order). It returns the
// new order as indexes into hits and the final score of each hit (indexed like hits).
func Rerank(hits []Hit, scores []float64) (order []int, final []float64) {
	byID := map[string]float64{} // direct hits' reranked scores
	for i, h := range hits {
		if h.Via == "" {
			byID[h.ID] = min(max(scores[i], 0), 1)
		}
	}
	final = make([]float64, len(hits))
	for i, h := range hits {
		s := min(max(scores[i], 0), 1)
		if h.Via != "" {
			if origin, ok := byID[h.Via]; ok {
				s = min(s, origin*math.Pow(HopDecay, float64(h.Hops)))
			}
		}
		final[i] = s
	}
	order = make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(final[b], final[a]) })
	return order, final
}

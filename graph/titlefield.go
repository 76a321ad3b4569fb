package graph

import "github.com/knowmind/knowmind/bm25"

// The title field of recall (docs/recall.md "Title field"): textIndex.titles holds each chunk's
// memory title as a document of its own; fuse scores the candidates on it (titleMatch) and
// rank.Fuse applies the match as a factor of weight titleWeight.

// titleWeight is the title field's weight (rank.Signals.Title): a direct hit whose title
// matches the query fully scores 1 + titleWeight times its fused score. Measured on LoCoMo
// (docs/recall.md).
const titleWeight = 0.25

// titleMatch scores the memories of the text and vector candidates on their title for one
// language side: the title field's BM25 of the chunk found as a share of the ideal score of the
// query terms some title holds (a query word no title holds does not count against a title),
// the best chunk's per memory, into match.
func titleMatch(out *recallResponse, side textSide, titles func(string, []string, []uint64) (map[uint64]float64, bm25.Stats), match map[string]float64) {
	memoryOf := map[uint64]string{}
	var refs []uint64
	add := func(uid string, m []dgMem) {
		if u, err := parseUID(uid); err == nil && len(m) > 0 {
			if _, ok := memoryOf[u]; !ok {
				memoryOf[u] = m[0].UID
				refs = append(refs, u)
			}
		}
	}
	for _, c := range out.Txt {
		add(c.UID, c.M)
	}
	for _, c := range out.Vec {
		add(c.UID, c.M)
	}
	if len(refs) == 0 {
		return
	}
	scores, st := titles(side.lang, side.terms, refs)
	if len(scores) == 0 {
		return
	}
	var held []string
	for _, term := range side.terms {
		if st.DF[term] > 0 {
			held = append(held, term)
		}
	}
	ideal := bm25.Ideal(held, st)
	if ideal <= 0 {
		return
	}
	for u, s := range scores {
		m := memoryOf[u]
		match[m] = max(match[m], min(s/ideal, 1))
	}
}

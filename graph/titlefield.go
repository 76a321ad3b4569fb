package graph

import (
	"slices"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
)

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

// partShares raises each text candidate's share (found[i], chunk uid refs[i]) to its best share
// of a part of the query (parts), scored on that part's terms (scoreRefs) against its ideal.
func partShares(found []rank.Chunk, refs []uint64, side textSide, parts func(string, []string) [][]string,
	scoreRefs func(string, []string, []uint64) map[uint64]float64) {
	for _, part := range parts(side.lang, side.terms) {
		ideal := bm25.Ideal(part, side.stats)
		if ideal <= 0 {
			continue
		}
		scores := scoreRefs(side.lang, part, refs)
		for i, u := range refs {
			found[i].Score = max(found[i].Score, scores[u]/ideal)
		}
	}
}

// maxQueryParts bounds the parts a query is split into (queryParts).
const maxQueryParts = 3

// queryParts splits a query's terms by the titles it names: when two to maxQueryParts of its
// distinct terms are held by some memory title (titleDF > 0: on LoCoMo the speakers), each
// part is the query without the other titles' terms ("What do Caroline and Melanie both like"
// asks what Caroline likes and what Melanie likes). Otherwise none.
func queryParts(terms []string, titleDF map[string]int64) [][]string {
	var named []string
	for _, t := range terms {
		if titleDF[t] > 0 && !slices.Contains(named, t) {
			named = append(named, t)
		}
	}
	if len(named) < 2 || len(named) > maxQueryParts {
		return nil
	}
	parts := make([][]string, 0, len(named))
	for _, keep := range named {
		var part []string
		for _, t := range terms {
			if t == keep || !slices.Contains(named, t) {
				part = append(part, t)
			}
		}
		parts = append(parts, part)
	}
	return parts
}

// namesByTitle scores again the text candidates (found[i], chunk uid refs[i]) whose title lacks
// some of the query's words that titles hold (a speaker's name): on their text without those
// words, as a share of the whole query's ideal, so that a text mentioning a name does not count
// as if said by it. Chunks whose title holds every such word keep their share.
func namesByTitle(found []rank.Chunk, refs []uint64, side textSide,
	titles func(string, []string, []uint64) (map[uint64]float64, bm25.Stats),
	scoreRefs func(string, []string, []uint64) map[uint64]float64) {
	ideal := bm25.Ideal(side.terms, side.stats)
	if ideal <= 0 {
		return
	}
	_, st := titles(side.lang, side.terms, nil)
	var named []string
	for _, t := range side.terms {
		if st.DF[t] > 0 && !slices.Contains(named, t) {
			named = append(named, t)
		}
	}
	if len(named) == 0 || len(named) > maxQueryParts {
		return
	}
	// lacks[i]: the named words chunk i's title does not hold, as a bit set.
	lacks := make([]int, len(refs))
	for b, name := range named {
		holds, _ := titles(side.lang, []string{name}, refs)
		for i, u := range refs {
			if holds[u] <= 0 {
				lacks[i] |= 1 << b
			}
		}
	}
	groups := map[int][]int{}
	for i, l := range lacks {
		if l != 0 {
			groups[l] = append(groups[l], i)
		}
	}
	for l, idx := range groups {
		var terms []string
		for _, t := range side.terms {
			if b := slices.Index(named, t); b < 0 || l&(1<<b) == 0 {
				terms = append(terms, t)
			}
		}
		sub := make([]uint64, len(idx))
		for j, i := range idx {
			sub[j] = refs[i]
		}
		var scores map[uint64]float64
		if len(terms) > 0 {
			scores = scoreRefs(side.lang, terms, sub)
		}
		for _, i := range idx {
			found[i].Score = scores[refs[i]] / ideal
		}
	}
}

package bm25

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"
)

// Hit is a document Search found: the caller's id and reference, and its BM25 score.
type Hit struct {
	ID    string
	Ref   uint64
	Score float64
}

// accumulator is Search's per-slot score array and the list of slots it touched.
type accumulator struct {
	acc     []float64
	touched []uint32
}

// accumulators are reused across queries: a query that touches most of a 100k-document corpus
// would otherwise allocate and clear 800 kB, and grow a touched list of 100k slots.
var accumulators = sync.Pool{New: func() any { return new(accumulator) }}

// scoringQuery is a query prepared for one corpus: its terms' ids and IDFs, the corpus' average
// length and the parameters (defaults filled in).
type scoringQuery struct {
	ids    []uint32
	idf    []float64
	avgLen float64
	p      Params
}

// scoring finds tenant's corpus lang and prepares query for it; q is nil when there is nothing
// to score (no such tenant or corpus, or no query term in it). The caller holds ix.mu.
func (ix *Index) scoring(tenant, lang string, query []string, p Params) (*tenantIndex, *corpus, *scoringQuery) {
	if p == (Params{}) {
		p = DefaultParams
	}
	t := ix.tenants[tenant]
	if t == nil {
		return nil, nil, nil
	}
	c := t.corpora[lang]
	if c == nil {
		return t, nil, nil
	}
	docs := max(c.docs, 1)
	ids, idf := c.queryTerms(query, docs)
	if len(ids) == 0 {
		return t, c, nil
	}
	return t, c, &scoringQuery{ids: ids, idf: idf, avgLen: max(float64(c.totalLen)/float64(docs), 1), p: p}
}

// queryTerms are a query's distinct terms as they score in corpus c: their term ids and IDFs
// (terms the corpus does not hold are dropped: they match nothing).
func (c *corpus) queryTerms(query []string, n int64) (ids []uint32, idf []float64) {
	seen := make(map[string]bool, len(query))
	for _, term := range query {
		if seen[term] {
			continue
		}
		seen[term] = true
		if tid, ok := c.ids[term]; ok {
			ids = append(ids, tid)
			idf = append(idf, IDF(n, min(max(c.df[tid], 1), n)))
		}
	}
	return ids, idf
}

// Search returns the n documents of tenant's corpus lang with the highest BM25 score for query
// (analysed tokens; a repeated term counts once, as in Score), best first, ties by id. It
// scores exactly the documents Score would score positive, from the postings: the work is the
// summed document frequency of the query's terms, the memory one float per document of the
// tenant.
func (ix *Index) Search(tenant, lang string, query []string, n int, p Params) []Hit {
	if n <= 0 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t, c, q := ix.scoring(tenant, lang, query, p)
	if q == nil {
		return nil
	}
	ids, idf, avgLen := q.ids, q.idf, q.avgLen
	p = q.p

	ap := accumulators.Get().(*accumulator)
	defer accumulators.Put(ap)
	if cap(ap.acc) < len(t.slots) {
		ap.acc = make([]float64, len(t.slots))
	}
	acc := ap.acc[:len(t.slots)]
	touched := ap.touched[:0]
	defer func() { ap.touched = touched[:0] }()
	for i, tid := range ids {
		for _, po := range c.post[tid] {
			if acc[po.slot] == 0 {
				touched = append(touched, po.slot)
			}
			acc[po.slot] += idf[i] * termWeight(po.tf, t.slots[po.slot].length, avgLen, p)
		}
	}

	best := &hitHeap{}
	for _, slot := range touched {
		score := acc[slot]
		acc[slot] = 0
		if best.Len() == n && score < (*best)[0].Score {
			continue // below the n-th best: most of a common word's documents (ties go to better)
		}
		h := Hit{ID: t.slots[slot].id, Ref: t.slots[slot].ref, Score: score}
		if best.Len() < n {
			heap.Push(best, h)
		} else if better(h, (*best)[0]) {
			(*best)[0] = h
			heap.Fix(best, 0)
		}
	}
	out := []Hit(*best)
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// ScoreRefs returns the BM25 score for query of the documents of tenant's corpus lang with these
// references (those the corpus holds and that hold a query term; others are absent): what
// Search would have given them. The work is the query's terms times the references.
func (ix *Index) ScoreRefs(tenant, lang string, query []string, refs []uint64, p Params) map[uint64]float64 {
	out := make(map[uint64]float64, len(refs))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t, c, q := ix.scoring(tenant, lang, query, p)
	if q == nil {
		return out
	}
	ids, idf, avgLen := q.ids, q.idf, q.avgLen
	p = q.p
	want := make(map[uint32]float64, len(ids))
	for i, tid := range ids {
		want[tid] = idf[i]
	}
	for _, ref := range refs {
		slot, ok := t.byRef.get(ref)
		if !ok {
			continue
		}
		e := &t.slots[slot]
		if e.corpus != c {
			continue
		}
		var s float64
		for _, term := range e.terms {
			if w, ok := want[term.id]; ok {
				s += w * termWeight(term.tf, e.length, avgLen, p)
			}
		}
		if s > 0 {
			out[ref] = s
		}
	}
	return out
}

// termWeight is BM25's term-frequency part for a document of length docLen: the factor of a
// term's IDF, as in ScoreWeighted.
func termWeight(tf, docLen uint32, avgLen float64, p Params) float64 {
	f := float64(tf)
	norm := p.K1 * (1 - p.B + p.B*float64(docLen)/avgLen)
	return f * (p.K1 + 1) / (f + norm)
}

// better orders hits: higher score first, ties by id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return cmp.Less(a.ID, b.ID)
}

// hitHeap is a min-heap under better: its root is the worst hit kept.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Holding returns the references of the first n documents (lowest references first) of tenant's
// corpus lang that hold any of terms (analysed): what Dgraph's anyoftext with first: n returns,
// documents without a reference left out. The work is the terms' summed document frequency.
func (ix *Index) Holding(tenant, lang string, terms []string, n int) []uint64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	t := ix.tenants[tenant]
	if t == nil || n <= 0 {
		return nil
	}
	c := t.corpora[lang]
	if c == nil {
		return nil
	}
	// Sorted and compacted rather than deduplicated through a set: the rarest term may still be
	// held by thousands of documents, and a set's growth cost more than the sort.
	var refs []uint64
	for _, term := range terms {
		tid, ok := c.ids[term]
		if !ok {
			continue
		}
		for _, po := range c.post[tid] {
			if ref := t.slots[po.slot].ref; ref != 0 {
				refs = append(refs, ref)
			}
		}
	}
	slices.Sort(refs)
	refs = slices.Compact(refs)
	return refs[:min(n, len(refs))]
}

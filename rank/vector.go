package rank

import (
	"container/heap"
	"slices"
)

// Slot is one vector of a flat set with its score against a query.
type Slot struct {
	Index int // the vector's position in the set
	Score float32
}

// minParallelScan: below this many vectors one goroutine scans (starting more costs more than
// it saves).
const minParallelScan = 8192

// merged is the best n of the parts' best n, best first, equal scores by the lower index.
func merged(tops []topN, n int) []Slot {
	all := tops[0]
	for _, t := range tops[1:] {
		for _, h := range t.hits {
			all.offer(n, h)
		}
	}
	slices.SortFunc(all.hits, func(a, b Slot) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.Index - b.Index
	})
	return all.hits
}

// Dot is the dot product of two vectors of one length, four lanes at a time.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	// The conversions forbid fused multiply-adds (Go may fuse x*y+z otherwise, on some
	// architectures): every product is rounded, as Blocks.TopN rounds it.
	for ; i+4 <= len(a); i += 4 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return s0 + s1 + s2 + s3
}

// topN is a min-heap of the best hits so far: hits[0] is the weakest kept.
type topN struct{ hits []Slot }

func (t *topN) Len() int { return len(t.hits) }
func (t *topN) Less(i, j int) bool {
	if t.hits[i].Score != t.hits[j].Score {
		return t.hits[i].Score < t.hits[j].Score
	}
	return t.hits[i].Index > t.hits[j].Index // of equals, the later index is the weaker
}
func (t *topN) Swap(i, j int) { t.hits[i], t.hits[j] = t.hits[j], t.hits[i] }
func (t *topN) Push(x any)    { t.hits = append(t.hits, x.(Slot)) }
func (t *topN) Pop() any {
	last := t.hits[len(t.hits)-1]
	t.hits = t.hits[:len(t.hits)-1]
	return last
}

func (t *topN) offer(n int, h Slot) {
	if len(t.hits) < n {
		heap.Push(t, h)
		return
	}
	if h.Score > t.hits[0].Score {
		t.hits[0] = h
		heap.Fix(t, 0)
	}
}

package rank

import (
	"container/heap"
	"runtime"
	"slices"
	"sync"
)

// Slot is one vector of a flat set with its score against a query.
type Slot struct {
	Index int // the vector's position in the set
	Score float32
}

// minParallelScan: below this many vectors one goroutine scans (starting more costs more than
// it saves).
const minParallelScan = 8192

// TopN returns the n vectors of data (len(data)/dim vectors of dim float32 each, laid end to
// end) with the largest dot product with q, best first; equal scores keep the lower index
// first. For unit-length vectors the dot product is the cosine. Large sets are scanned by
// GOMAXPROCS goroutines, each keeping its own best n. nil when q's length is not dim.
func TopN(q, data []float32, dim, n int) []Slot {
	if dim <= 0 || len(q) != dim || n <= 0 {
		return nil
	}
	total := len(data) / dim
	parts := 1
	if total >= minParallelScan {
		parts = min(runtime.GOMAXPROCS(0), total/(minParallelScan/2))
	}
	tops := make([]topN, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from, to := p*total/parts, (p+1)*total/parts
		wg.Go(func() { tops[p] = scan(q, data, dim, n, from, to) })
	}
	wg.Wait()
	return merged(tops, n)
}

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

// scan scores vectors [from, to) and keeps the best n.
func scan(q, data []float32, dim, n, from, to int) topN {
	var t topN
	for i := from; i < to; i++ {
		score := Dot(q, data[i*dim:(i+1)*dim])
		if len(t.hits) == n && score <= t.hits[0].Score {
			continue
		}
		t.offer(n, Slot{Index: i, Score: score})
	}
	return t
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

package rank

import (
	"math/bits"
	"slices"
)

// Sign-bit pre-selection for large vector sets. A full scan multiplies every dimension of every
// vector (100k chunks × 384 dimensions: tens of milliseconds on 2 cores, more under load); the
// sign bits of a vector (one bit per dimension, 48 bytes at 384) tell how far apart two vectors
// point — the Hamming distance of their sign bits estimates the angle between them, as in
// SimHash — for a popcount over six words. TopNSigns keeps the vectors whose signs differ least
// from the query's and scores only those exactly, so the answer's scores are exact dot products
// and only its candidate set is approximate; its recall against TopN is measured in
// TestTopNSignsRecall and the speed benchmark.

// SignWords is how many uint64 words the sign bits of a dim-dimensional vector take.
func SignWords(dim int) int { return (dim + 63) / 64 }

// AppendSigns appends the sign bits of v (bit i set when v[i] > 0) to dst.
func AppendSigns(dst []uint64, v []float32) []uint64 {
	words := SignWords(len(v))
	start := len(dst)
	dst = append(dst, make([]uint64, words)...)
	for i, x := range v {
		if x > 0 {
			dst[start+i/64] |= 1 << (i % 64)
		}
	}
	return dst
}

// TopNSigns returns the n vectors of data with the largest dot product with q, like TopN, but
// scores exactly only the (at least) r vectors whose sign bits (signs: SignWords(dim) words per
// vector, in data's order) differ least from q's; ties at the cut-off distance are all scored.
// With r at or above the set's size it is TopN.
func TopNSigns(q, data []float32, signs []uint64, dim, n, r int) []Slot {
	total := len(data) / dim
	words := SignWords(dim)
	if dim <= 0 || len(q) != dim || n <= 0 || len(signs) != total*words {
		return nil
	}
	if r >= total {
		return TopN(q, data, dim, n)
	}
	qs := AppendSigns(nil, q)
	dist := make([]uint16, total)
	count := make([]int, dim+1)
	for i := range total {
		var d int
		for w, x := range signs[i*words : (i+1)*words] {
			d += bits.OnesCount64(x ^ qs[w])
		}
		dist[i] = uint16(d)
		count[d]++
	}
	// The smallest cut-off distance that keeps at least r vectors.
	cut, kept := 0, 0
	for cut = range count {
		kept += count[cut]
		if kept >= r {
			break
		}
	}
	var t topN
	for i, d := range dist {
		if int(d) > cut {
			continue
		}
		score := Dot(q, data[i*dim:(i+1)*dim])
		if len(t.hits) == n && score <= t.hits[0].Score {
			continue
		}
		t.offer(n, Slot{Index: i, Score: score})
	}
	slices.SortFunc(t.hits, func(a, b Slot) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.Index - b.Index
	})
	return t.hits
}

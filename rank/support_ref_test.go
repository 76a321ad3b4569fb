package rank

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// supportReference is Support in its plain form, against which the one that keeps only the
// hits' neighbourhoods is checked: the neighbourhoods of every node of the adjacency, in both
// directions.
func supportReference(hits, direct []Hit, adjacent map[string][]string, weight float64) []Hit {
	own := make(map[string]float64, len(direct))
	for _, h := range direct {
		own[h.ID] = h.Score
	}
	// Undirected one-edge neighbourhoods among the memories at hand.
	near := make(map[string][]string, 2*len(adjacent))
	for from, tos := range adjacent {
		for _, to := range tos {
			near[from] = append(near[from], to)
			near[to] = append(near[to], from)
		}
	}
	score := make(map[string]float64, len(hits))
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	out := slices.Clone(hits)
	// seen[o] == i+1: o already counted for hit i (one map for all hits, not one per hit).
	seen := make(map[string]int, len(near))
	for i, h := range out {
		miss, stamp := 1.0, i+1
		seen[h.ID], seen[h.Via] = stamp, stamp
		for _, o := range near[h.ID] {
			if seen[o] == stamp {
				continue
			}
			seen[o] = stamp
			if s, ok := own[o]; ok {
				miss *= 1 - s*HopDecay
			}
		}
		e := weight * (1 - miss)
		if e <= 0 {
			continue
		}
		v := 1 - (1-h.Score)*(1-e)
		if h.Via != "" {
			// Strictly below the hit that reached it.
			v = min(v, math.Nextafter(score[h.Via], 0))
		}
		out[i].Score = max(h.Score, v)
	}
	slices.SortStableFunc(out, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// TestSupportMatchesReference compares Support with the version that built every node's
// neighbourhood, on random graphs: the same hits with the same scores (to rounding: a hit's
// neighbours are multiplied in the adjacency map's order, random in both).
func TestSupportMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		nodes := 5 + r.IntN(60)
		id := func() string { return fmt.Sprintf("m%d", r.IntN(nodes)) }
		adjacent := map[string][]string{}
		for range r.IntN(3 * nodes) {
			from := id()
			adjacent[from] = append(adjacent[from], id())
		}
		var direct, hits []Hit
		seen := map[string]bool{}
		for range r.IntN(nodes) {
			h := Hit{ID: id(), Score: r.Float64()}
			if seen[h.ID] {
				continue
			}
			seen[h.ID] = true
			if r.IntN(3) > 0 {
				direct = append(direct, h)
			} else if len(hits) > 0 {
				h.Via = hits[r.IntN(len(hits))].ID
			}
			hits = append(hits, h)
		}
		slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
		weight := r.Float64()
		got := Support(hits, direct, adjacent, weight)
		want := supportReference(hits, direct, adjacent, weight)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d hits, reference %d", trial, len(got), len(want))
		}
		byID := map[string]float64{}
		for _, h := range want {
			byID[h.ID] = h.Score
		}
		for _, h := range got {
			if w, ok := byID[h.ID]; !ok || math.Abs(h.Score-w) > 1e-12 {
				t.Fatalf("trial %d: %s scored %v, reference %v", trial, h.ID, h.Score, w)
			}
		}
	}
}

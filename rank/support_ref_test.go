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
// directions, and each hit's evidence multiplied over direct in its order.
func supportReference(hits, direct []Hit, adjacent map[string][]string, weight float64) []Hit {
	// Undirected one-edge neighbourhoods among the memories at hand.
	near := make(map[string]map[string]bool, 2*len(adjacent))
	add := func(a, b string) {
		if near[a] == nil {
			near[a] = map[string]bool{}
		}
		near[a][b] = true
	}
	for from, tos := range adjacent {
		for _, to := range tos {
			add(from, to)
			add(to, from)
		}
	}
	score := make(map[string]float64, len(hits))
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	out := slices.Clone(hits)
	for i, h := range out {
		miss, counted := 1.0, map[string]bool{h.ID: true, h.Via: true}
		for _, d := range direct {
			if near[h.ID][d.ID] && !counted[d.ID] {
				counted[d.ID] = true
				miss *= 1 - d.Score*HopDecay
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
// neighbourhood, on random graphs: the same hits in the same order with the same scores, bit
// for bit (both multiply a hit's neighbours in direct's order).
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
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
				t.Fatalf("trial %d: hit %d is %s scored %v, reference %s scored %v", trial, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
			}
		}
	}
}

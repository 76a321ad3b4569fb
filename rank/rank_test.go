package rank

import (
	"math"
	"slices"
	"testing"
)

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestFoldKeepsBestChunkPerMemory(t *testing.T) {
	memOf := map[string]string{"c1": "A", "c2": "B", "c3": "A", "c4": "", "c5": "C"}
	mems, best := Fold([]string{"c1", "c2", "c3", "c4", "c5"}, func(c string) string { return memOf[c] })
	if !slices.Equal(mems, []string{"A", "B", "C"}) {
		t.Fatalf("memories = %v", mems)
	}
	if best["A"] != "c1" || best["B"] != "c2" || best["C"] != "c5" {
		t.Fatalf("best chunks = %v", best)
	}
}

func TestRelative(t *testing.T) {
	text := Scored{Weight: 1, IDs: []string{"A", "B", "C"}, Scores: []float64{10, 5, 1}}
	vec := Scored{Weight: 1, IDs: []string{"B", "D", "A"}, Scores: []float64{0.9, 0.7, 0.5}, Floor: 0.5}
	hits := Relative(text, vec)
	// A: (1 + 0)/2, B: (0.5 + 1)/2, D: (0 + 0.5)/2, C: (0.1 + 0)/2.
	want := map[string]float64{"B": 0.75, "A": 0.5, "D": 0.25, "C": 0.05}
	if got := ids(hits); !slices.Equal(got, []string{"B", "A", "D", "C"}) {
		t.Fatalf("order = %v", got)
	}
	for _, h := range hits {
		if math.Abs(h.Score-want[h.ID]) > 1e-12 {
			t.Fatalf("%s = %v, want %v", h.ID, h.Score, want[h.ID])
		}
	}
	// Best in every signal scores exactly 1; a single signal's best too.
	if top := Relative(Scored{Weight: 1, IDs: []string{"X"}, Scores: []float64{3}}, Scored{Weight: 1, IDs: []string{"X"}, Scores: []float64{0.2}, Floor: 0.2}); top[0].Score != 1 {
		t.Fatalf("top = %+v", top)
	}
	// Weights: a weak second signal moves little.
	w := Relative(Scored{Weight: 1, IDs: []string{"A", "B"}, Scores: []float64{2, 1.9}},
		Scored{Weight: 0.25, IDs: []string{"B", "A"}, Scores: []float64{0.9, 0.1}, Floor: 0.1})
	if got := ids(w); !slices.Equal(got, []string{"B", "A"}) || math.Abs(w[1].Score-0.8) > 1e-12 {
		t.Fatalf("weighted = %+v", w)
	}
	// A zero-weight or empty list is ignored.
	if got := Relative(Scored{Weight: 1, IDs: []string{"P"}, Scores: []float64{1}}, Scored{Weight: 0, IDs: []string{"Z"}, Scores: []float64{1}}); len(got) != 1 || got[0].Score != 1 {
		t.Fatalf("zero weight list leaked: %+v", got)
	}
}

func TestRelativeTiesAreDeterministic(t *testing.T) {
	for range 20 {
		got := ids(Relative(Scored{Weight: 1, IDs: []string{"A"}, Scores: []float64{1}}, Scored{Weight: 1, IDs: []string{"B"}, Scores: []float64{1}}))
		if !slices.Equal(got, []string{"A", "B"}) {
			t.Fatalf("tie order = %v", got)
		}
	}
}

func TestExpandScoresNeighboursBelowTheirHit(t *testing.T) {
	direct := []Hit{{ID: "A", Score: 0.9}, {ID: "B", Score: 0.8}, {ID: "E", Score: 0.1}}
	adj := map[string][]string{
		"A":  {"N1"},      // N1 one hop from A
		"N1": {"A", "N2"}, // N2 two hops from A
		"N2": {"N1", "N3"},
		"B":  {"E"}, // E is a direct hit, but B's neighbour scores higher than E's own score
	}
	for _, tc := range []struct {
		hops int
		want []string
	}{
		{0, []string{"A", "B", "E"}},
		{1, []string{"A", "B", "N1", "E"}},
		{2, []string{"A", "B", "N1", "E", "N2"}},
		{3, []string{"A", "B", "N1", "E", "N2", "N3"}},
	} {
		hits := Expand(direct, adj, tc.hops)
		if got := ids(hits); !slices.Equal(got, tc.want) {
			t.Fatalf("hops=%d: order %v, want %v", tc.hops, got, tc.want)
		}
		score := map[string]Hit{}
		for i, h := range hits {
			score[h.ID] = h
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("hops=%d: scores not monotone: %v", tc.hops, hits)
			}
		}
		if h, ok := score["N1"]; ok && (h.Score != 0.45 || h.Via != "A" || h.Hops != 1) {
			t.Fatalf("N1 = %+v", h)
		}
		if h, ok := score["N2"]; ok && (h.Score != 0.225 || h.Via != "A" || h.Hops != 2) {
			t.Fatalf("N2 = %+v", h)
		}
		if tc.hops >= 1 && (score["E"].Score != 0.4 || score["E"].Via != "B") {
			t.Fatalf("E = %+v, want raised to 0.4 via B", score["E"])
		}
	}
}

func TestExpandHopsBoundPathsNotRounds(t *testing.T) {
	// A reaches B (a weak direct hit) in round 1; B must not pass A's score on to C in the same
	// round: with hops=1, C is two edges from A and one from B, so C gets B's original score/2.
	direct := []Hit{{ID: "A", Score: 1}, {ID: "B", Score: 0.1}}
	adj := map[string][]string{"A": {"B"}, "B": {"C"}}
	hits := Expand(direct, adj, 1)
	for _, h := range hits {
		if h.ID == "C" && h.Score != 0.05 {
			t.Fatalf("C = %+v, want 0.05 (from B's own score)", h)
		}
	}
}

// An added signal raises the memories it holds without lowering the others: the mean of the
// other signals stays what it was, whatever their weights.
func TestRelativeAddedSignal(t *testing.T) {
	vec := Scored{Weight: 0.25, IDs: []string{"a", "b"}, Scores: []float64{0.8, 0.4}, Top: 1}
	ctx := Scored{Weight: 0.5, IDs: []string{"b"}, Scores: []float64{0.5}, Top: 1, Added: true}
	alone := Relative(vec)
	both := Relative(vec, ctx)
	score := func(hits []Hit) map[string]float64 {
		out := map[string]float64{}
		for _, h := range hits {
			out[h.ID] = h.Score
		}
		return out
	}
	a, b := score(alone), score(both)
	if a["a"] != 0.8 || b["a"] != 0.8 {
		t.Fatalf("the memory the added signal does not hold: %v alone, %v with it; want 0.8", a["a"], b["a"])
	}
	if want := 0.4 + 0.5*0.5/0.25; b["b"] != min(want, 1) {
		t.Fatalf("the memory it holds: %v, want %v", b["b"], min(want, 1))
	}
}

package rank

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Fuse folds chunks to memories, fuses text and vector, adds graph neighbours below their hit,
// and represents each direct hit by the chunk of the signal that ranks it higher.
func TestFuse(t *testing.T) {
	hits := Fuse(Signals{
		// BM25: memory A's chunks a1 (4) and a2 (8), B's b1 (2); an orphan chunk is dropped.
		Text: []Chunk{{"a1", "A", 4}, {"b1", "B", 2}, {"a2", "A", 8}, {"x", "", 9}},
		// Cosine: B best, then A; the weakest candidate (C) is the floor.
		Vector:       []Chunk{{"c1", "C", 0.2}, {"b2", "B", 0.8}, {"a1", "A", 0.5}},
		VectorWeight: 1,
		Adjacent:     map[string][]string{"B": {"N"}, "N": {"M"}},
		Hops:         1,
	})
	// A: text 8/8=1, vector (0.5-0.2)/0.6=0.5 → 0.75; B: text 2/8=0.25, vector 1 → 0.625;
	// C: 0; N: B's 0.625·0.5; M is two hops away.
	want := []struct {
		id, chunk, via string
		score          float64
	}{{"A", "a2", "", 0.75}, {"B", "b2", "", 0.625}, {"N", "", "B", 0.3125}, {"C", "c1", "", 0}}
	if len(hits) != len(want) {
		t.Fatalf("hits = %+v", hits)
	}
	for i, w := range want {
		h := hits[i]
		if h.ID != w.id || h.Chunk != w.chunk || h.Via != w.via || math.Abs(h.Score-w.score) > 1e-12 {
			t.Fatalf("hit %d = %+v, want %+v", i, h, w)
		}
	}
	// The inputs are not reordered (callers keep using them).
	in := []Chunk{{"b", "B", 1}, {"a", "A", 2}}
	Fuse(Signals{Text: in})
	if in[0].ID != "b" {
		t.Fatal("Fuse reordered its input")
	}
	// Text ties break by chunk id, whatever the input order.
	for range 10 {
		tie := []Chunk{{"z", "Z", 1}, {"y", "Y", 1}, {"x", "X", 1}}
		rand.Shuffle(len(tie), func(i, j int) { tie[i], tie[j] = tie[j], tie[i] })
		if got := ids(Fuse(Signals{Text: tie})); !slices.Equal(got, []string{"X", "Y", "Z"}) {
			t.Fatalf("tie order = %v", got)
		}
	}
}

// A direct hit that scores higher through the graph is shown as a neighbour: it loses its chunk.
func TestFuseGraphOverridesWeakDirectHit(t *testing.T) {
	hits := Fuse(Signals{
		Text:     []Chunk{{"a", "A", 10}, {"b", "B", 1}},
		Adjacent: map[string][]string{"A": {"B"}},
		Hops:     1,
	})
	if hits[1].ID != "B" || hits[1].Via != "A" || hits[1].Chunk != "" || hits[1].Score != 0.5 {
		t.Fatalf("B = %+v, want reached from A at 0.5 without a chunk", hits[1])
	}
}

func TestRerank(t *testing.T) {
	hits := []Hit{{ID: "A", Score: 1}, {ID: "B", Score: 0.8}, {ID: "N", Score: 0.4, Via: "B", Hops: 1}, {ID: "M", Score: 0.2, Via: "B", Hops: 2}}
	order, final := Rerank(hits, []float64{0.3, 0.6, 0.99, 1.5})
	// N and M stay below B (0.6·0.5, 0.6·0.25) whatever the cross-encoder says.
	if !slices.Equal(order, []int{1, 0, 2, 3}) {
		t.Fatalf("order = %v (final %v)", order, final)
	}
	if final[0] != 0.3 || final[1] != 0.6 || final[2] != 0.3 || final[3] != 0.15 {
		t.Fatalf("final = %v", final)
	}
	// Scores are clamped to 0..1; a neighbour whose origin is not among hits keeps its own.
	_, final = Rerank([]Hit{{ID: "X", Via: "gone", Hops: 1}, {ID: "Y"}}, []float64{0.7, -2})
	if final[0] != 0.7 || final[1] != 0 {
		t.Fatalf("final = %v", final)
	}
}

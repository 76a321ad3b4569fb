package graph

import (
	"math"
	"slices"
	"testing"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
)

// A query naming two or three titles splits into one part per title, the others' terms left
// out; one title, none or more than maxQueryParts leave it whole.
func TestQueryParts(t *testing.T) {
	df := map[string]int64{"caroline": 3, "melanie": 2, "jon": 1, "gina": 1}
	got := queryParts([]string{"subject", "caroline", "melanie", "paint", "caroline"}, df)
	want := [][]string{{"subject", "caroline", "paint", "caroline"}, {"subject", "melanie", "paint"}}
	if len(got) != len(want) || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("parts = %q, want %q", got, want)
	}
	for _, q := range [][]string{{"caroline", "paint"}, {"paint"}, {"caroline", "melanie", "jon", "gina", "paint"}} {
		if got := queryParts(q, df); got != nil {
			t.Fatalf("parts of %q = %q, want none", q, got)
		}
	}
}

// partShares raises a candidate to its best part's share of that part's ideal, never lowers one.
func TestPartShares(t *testing.T) {
	st := bm25.Stats{Docs: 100, TotalLen: 1000, DF: map[string]int64{"caroline": 10, "melanie": 10, "paint": 10}}
	side := textSide{terms: []string{"caroline", "melanie", "paint"}, stats: st}
	found := []rank.Chunk{{ID: "c", Score: 0.5}, {ID: "m", Score: 0.5}, {ID: "both", Score: 0.9}}
	refs := []uint64{1, 2, 3}
	parts := func(string, []string) [][]string { return [][]string{{"caroline", "paint"}, {"melanie", "paint"}} }
	half := bm25.Ideal([]string{"caroline", "paint"}, st)
	scoreRefs := func(_ string, terms []string, refs []uint64) map[uint64]float64 {
		// Chunk 1 holds caroline and paint, chunk 2 melanie and paint, chunk 3 all three.
		if terms[0] == "caroline" {
			return map[uint64]float64{1: half, 3: half * 0.8}
		}
		return map[uint64]float64{2: half * 0.9, 3: half * 0.8}
	}
	partShares(found, refs, side, parts, scoreRefs)
	if math.Abs(found[0].Score-1) > 1e-12 || math.Abs(found[1].Score-0.9) > 1e-12 || found[2].Score != 0.9 {
		t.Fatalf("shares = %+v", found)
	}
}

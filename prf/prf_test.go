package prf

import (
	"math"
	"slices"
	"testing"

	"github.com/knowmind/knowmind/bm25"
)

// Expansion takes the words the best hits share, rare words before common ones, never a query
// word or a word only one hit has (MinDocs 2), the best at Weight and the rest in proportion.
func TestExpand(t *testing.T) {
	fb := []Feedback{
		{Tokens: []string{"caroline", "adoption", "agency", "the", "kids"}, Score: 0.9},
		{Tokens: []string{"adoption", "agency", "interview", "the"}, Score: 0.6},
		{Tokens: []string{"caroline", "adoption", "the", "painting"}, Score: 0.3},
	}
	st := bm25.Stats{Docs: 100, DF: map[string]int64{"adoption": 3, "agency": 2, "the": 90, "kids": 10, "interview": 4, "painting": 5}}
	got := Expand([]string{"caroline"}, fb, st, Params{Terms: 2, Weight: 0.5, MinDocs: 2})
	if len(got) != 2 || got[0].Term != "agency" && got[0].Term != "adoption" || got[0].Weight != 0.5 {
		t.Fatalf("expansion = %+v", got)
	}
	terms := []string{got[0].Term, got[1].Term}
	slices.Sort(terms)
	if !slices.Equal(terms, []string{"adoption", "agency"}) || got[1].Weight <= 0 || got[1].Weight > 0.5 {
		t.Fatalf("expansion = %+v, want adoption and agency (shared, rare), not 'the' (common) or one hit's words", got)
	}
	all := Expand([]string{"caroline"}, fb, st, Params{Terms: 10, Weight: 1, MinDocs: 1})
	for _, w := range all {
		if w.Term == "caroline" || math.IsNaN(w.Weight) {
			t.Fatalf("query term or NaN in %+v", all)
		}
	}
	if Expand(nil, nil, st, Params{Terms: 3, Weight: 1}) != nil {
		t.Fatal("no feedback, no expansion")
	}
	if c := Candidates([]string{"caroline"}, fb); slices.Contains(c, "caroline") || !slices.Contains(c, "painting") {
		t.Fatalf("candidates = %v", c)
	}
}

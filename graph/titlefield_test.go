package graph

import (
	"slices"
	"testing"
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

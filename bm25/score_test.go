package bm25

import (
	"math"
	"testing"
)

// A 3-doc corpus small enough to score by hand.
//
//	d1 = a b c        (len 3)
//	d2 = a a d        (len 3)
//	d3 = b e e f g h  (len 6)
//
// N = 3, total length 12, average 4; df(a) = 2, df(c) = 1.
// idf(a) = ln(1 + (3−2+0.5)/(2+0.5)) = ln 1.6 = 0.470004
// idf(c) = ln(1 + (3−1+0.5)/(1+0.5)) = ln 8/3 = 0.980829
// K1 = 1.2, B = 0.75: for len 3, K1·(1−B+B·3/4) = 0.975
// d1, query "a c": tf 1 each: (1·2.2/(1+0.975))·(idf(a)+idf(c)) = 1.113924·1.450833 = 1.616118
// d2, query "a c": tf(a) = 2: (2·2.2/(2+0.975))·idf(a) = 1.478992·0.470004 = 0.695131
// d3 holds neither: 0.
func threeDocs() ([]Doc, Stats) {
	docs := []Doc{
		{ID: "d1", Tokens: []string{"a", "b", "c"}},
		{ID: "d2", Tokens: []string{"a", "a", "d"}},
		{ID: "d3", Tokens: []string{"b", "e", "e", "f", "g", "h"}},
	}
	st := Stats{Docs: 3, TotalLen: 12, DF: map[string]int64{"a": 2, "b": 2, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1}}
	return docs, st
}

func TestScoreByHand(t *testing.T) {
	docs, st := threeDocs()
	tests := []struct {
		name  string
		query []string
		p     Params
		want  []Scored
	}{
		{"defaults", []string{"a", "c"}, Params{}, []Scored{{"d1", 1.6161176409956537}, {"d2", 0.6951314180441133}, {"d3", 0}}},
		{"repeated query term counts once", []string{"a", "c", "a"}, DefaultParams, []Scored{{"d1", 1.6161176409956537}, {"d2", 0.6951314180441133}, {"d3", 0}}},
		// B = 0: no length normalisation, tf·(K1+1)/(tf+K1).
		{"no length normalisation", []string{"a", "c"}, Params{K1: 1.2, B: 0}, []Scored{{"d1", 1.4508328822574619}, {"d2", 0.6462549902128865}, {"d3", 0}}},
		{"no match ties by id", []string{"zzz"}, Params{}, []Scored{{"d1", 0}, {"d2", 0}, {"d3", 0}}},
	}
	for _, tt := range tests {
		got := Score(tt.query, docs, st, tt.p)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: got %d results, want %d", tt.name, len(got), len(tt.want))
		}
		for i := range got {
			if got[i].ID != tt.want[i].ID || math.Abs(got[i].Score-tt.want[i].Score) > 1e-12 {
				t.Errorf("%s: result %d = %+v, want %+v", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

func TestIDFNeverNegative(t *testing.T) {
	// A term in every document still adds a little, never subtracts.
	if idf := IDF(10, 10); idf <= 0 {
		t.Errorf("IDF(10, 10) = %v, want > 0", idf)
	}
	if IDF(1000, 1) <= IDF(1000, 500) {
		t.Error("a rare term must weigh more than a common one")
	}
}

func TestScoreRareTermBeatsCommonTerm(t *testing.T) {
	// "meeting" is in every doc, "einarbeitung" in one; each candidate holds one query term once
	// and has the same length, so only idf can separate them.
	var docs []Doc
	st := Stats{DF: map[string]int64{}}
	add := func(id string, tokens ...string) {
		docs = append(docs, Doc{ID: id, Tokens: tokens})
		st.Docs++
		st.TotalLen += int64(len(tokens))
		seen := map[string]bool{}
		for _, tok := range tokens {
			if !seen[tok] {
				seen[tok] = true
				st.DF[tok]++
			}
		}
	}
	add("common", "meeting", "team", "montag")
	add("rare", "einarbeitung", "team", "dienstag")
	for i := range 8 {
		add(string(rune('a'+i)), "meeting", "plan", "notiz")
	}
	got := Score([]string{"meeting", "einarbeitung"}, docs[:2], st, Params{})
	if got[0].ID != "rare" || !(got[0].Score > got[1].Score) || got[1].Score <= 0 {
		t.Errorf("got %+v, want rare first, both positive", got)
	}
}

func TestScoreStaleStatsStayFinite(t *testing.T) {
	// Stats that lag behind the candidates (DF 0 for a term a candidate holds, an empty corpus)
	// must not produce NaN, Inf or negative scores.
	docs, _ := threeDocs()
	for _, st := range []Stats{{}, {Docs: 1, TotalLen: 3, DF: map[string]int64{"a": 7}}} {
		for _, s := range Score([]string{"a", "c"}, docs, st, Params{}) {
			if math.IsNaN(s.Score) || math.IsInf(s.Score, 0) || s.Score < 0 {
				t.Errorf("stats %+v: %+v", st, s)
			}
		}
	}
}

// Ideal is the score of a document of average length holding each query term once: such a
// document scores exactly Ideal, one with half the terms (by IDF) half of it, and a term the
// corpus lacks still counts (as a term seen once).
func TestIdeal(t *testing.T) {
	st := Stats{Docs: 10, TotalLen: 40, DF: map[string]int64{"a": 1, "b": 5}}
	ideal := Ideal([]string{"a", "b", "a"}, st)
	if want := IDF(10, 1) + IDF(10, 5); math.Abs(ideal-want) > 1e-12 {
		t.Fatalf("Ideal = %v, want %v", ideal, want)
	}
	got := Score([]string{"a", "b"}, []Doc{{ID: "full", Tokens: []string{"a", "b", "x", "y"}}}, st, Params{})
	if math.Abs(got[0].Score-ideal) > 1e-12 {
		t.Fatalf("average-length doc with every term once = %v, want Ideal %v", got[0].Score, ideal)
	}
	if withMissing := Ideal([]string{"a", "b", "zzz"}, st); math.Abs(withMissing-ideal-IDF(10, 1)) > 1e-12 {
		t.Fatalf("a term the corpus lacks must count as seen once: %v", withMissing)
	}
	if Ideal(nil, st) != 0 {
		t.Fatal("empty query")
	}
}

func TestCoverage(t *testing.T) {
	st := Stats{Docs: 100, DF: map[string]int64{"viele": 2, "kunde": 50}}
	if c := Coverage([]string{"viele", "kunde"}, st); c != 1 {
		t.Fatalf("every word known: coverage %v, want 1", c)
	}
	c := Coverage([]string{"viele", "bein", "spinn"}, st)
	want := IDF(100, 2) / (IDF(100, 2) + 2*IDF(100, 1))
	if c != want || c >= 0.5 {
		t.Fatalf("one known word of three: coverage %v, want %v", c, want)
	}
	if c := Coverage(nil, st); c != 0 {
		t.Fatalf("no words: %v", c)
	}
}

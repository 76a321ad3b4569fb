package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSearchEqualsScore checks the inverted index against Score over every live document of a
// corpus built by random adds, replaces and removes (freed slots and term ids reused): the same
// documents, the same scores, the same order; and ScoreRefs against the same scores.
func TestSearchEqualsScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	vocab := make([]string, 40)
	for i := range vocab {
		vocab[i] = fmt.Sprint("w", i)
	}
	live := map[string][]string{}
	lang := map[string]string{}
	var ix Index
	for range 8000 {
		n := rng.IntN(300)
		id := fmt.Sprint(n)
		if rng.IntN(4) == 0 {
			ix.Remove("t", id)
			delete(live, id)
			continue
		}
		tokens := make([]string, 1+rng.IntN(12))
		for i := range tokens {
			tokens[i] = vocab[int(math.Sqrt(float64(rng.IntN(len(vocab)*len(vocab)))))] // skewed: some terms common
		}
		l := []string{"de", ""}[rng.IntN(2)]
		ix.AddRef("t", id, l, uint64(1000+n), tokens)
		ix.Add("other", id, l, tokens[:1]) // another tenant's documents never show up
		live[id], lang[id] = tokens, l
	}
	for _, l := range []string{"de", ""} {
		var docs []Doc
		var refs []uint64
		for id, tokens := range live {
			if lang[id] == l {
				docs = append(docs, Doc{ID: id, Tokens: tokens})
				var n uint64
				fmt.Sscan(id, &n)
				refs = append(refs, 1000+n)
			}
		}
		st := ix.Stats("t", l)
		for _, query := range [][]string{{"w39"}, {"w1", "w39", "w39"}, {"w20", "w30", "nope"}, {"nope"}} {
			var want []Scored
			for _, s := range Score(query, docs, st, Params{}) {
				if s.Score > 0 {
					want = append(want, s)
				}
			}
			got := ix.Search("t", l, query, 10_000, Params{})
			if len(got) != len(want) {
				t.Fatalf("lang %q query %v: %d hits, Score finds %d", l, query, len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
					t.Fatalf("lang %q query %v hit %d: %+v, want %+v", l, query, i, got[i], want[i])
				}
				var n uint64
				fmt.Sscan(got[i].ID, &n)
				if got[i].Ref != 1000+n {
					t.Fatalf("hit %s has ref %d", got[i].ID, got[i].Ref)
				}
			}
			if top := ix.Search("t", l, query, 3, Params{}); len(want) >= 3 && (len(top) != 3 || top[2].ID != want[2].ID) {
				t.Errorf("lang %q query %v: top 3 %+v, want the first three of %+v", l, query, top, want[:3])
			}
			byRef := ix.ScoreRefs("t", l, query, append(refs, 1, 999_999), Params{})
			if len(byRef) != len(want) {
				t.Errorf("lang %q query %v: ScoreRefs scored %d, want %d", l, query, len(byRef), len(want))
			}
			for _, h := range got {
				if math.Abs(byRef[h.Ref]-h.Score) > 1e-9 {
					t.Errorf("ScoreRefs(%d) = %v, Search %v", h.Ref, byRef[h.Ref], h.Score)
				}
			}
		}
	}
	if got := ix.Search("none", "de", []string{"w1"}, 5, Params{}); got != nil {
		t.Errorf("unknown tenant: %+v", got)
	}
}

// BenchmarkSearch100k: 100k documents of 40 tokens (Zipf-distributed over a 50k vocabulary, like
// the speed benchmark's workload), a 4-word query of one common and three rarer words, top 100.
func BenchmarkSearch100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(11, 12)), 1.07, 1, 49_999)
	var ix Index
	tokens := make([]string, 40)
	for d := range 100_000 {
		for i := range tokens {
			tokens[i] = fmt.Sprint("t", zipf.Uint64())
		}
		ix.AddRef("t", fmt.Sprint(d), "", uint64(d+1), tokens)
	}
	query := []string{"t3", fmt.Sprint("t", 100+rng.IntN(100)), fmt.Sprint("t", 1000+rng.IntN(1000)), fmt.Sprint("t", 5000+rng.IntN(5000))}
	b.ResetTimer()
	for b.Loop() {
		ix.Search("t", "", query, 100, Params{})
	}
}

package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/search"
)

// recallExact is recallWith's hits with their fused scores as computed, unrounded and before the
// second stage.
func (f *recallFixture) recallExact(q knowmind.RecallQuery, o search.Options) (ids []string, exact []float64) {
	f.t.Helper()
	tr := &graph.RecallTrace{Explain: true}
	res, err := f.ten.RecallTraced(f.ctx, q, o, tr)
	if err != nil {
		f.t.Fatalf("recall %+v: %v", q, err)
	}
	for _, h := range tr.From {
		exact = append(exact, h.Score)
	}
	return hitIDs(res), exact
}

// TestRecallTopNStableInK: asking for more hits never reorders the top — the first n hits of
// k=25 are the answer for k=n, for every n, on a generated corpus with links (graph seeds) and
// words shared across many memories (candidate budgets); with the second stage too, which
// re-scores a pool of fixed size. The fused scores agree to the last bit as well: a score that
// differs by rounding from one call to the next (a sum or product in map order) decides a
// near-tie differently in some call, which the order alone shows only once in many runs.
func TestRecallTopNStableInK(t *testing.T) {
	f := newRecallFixture(t)
	rng := rand.New(rand.NewPCG(7, 35))
	words := []string{"Lieferung", "Rampe", "Kunde", "Rechnung", "Lager", "Montag", "Spedition", "Palette",
		"Zahlung", "Vertrag", "Frist", "Termin", "Werkstatt", "Ersatzteil", "Angebot", "Mahnung"}
	var ids []string
	for i := range 80 {
		var b strings.Builder
		for range 6 + rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		fmt.Fprintf(&b, "Vorgang %d.", i)
		ids = append(ids, f.store(fmt.Sprintf("Vorgang %d %s", i, words[i%len(words)]), b.String()))
		if i > 0 && rng.IntN(3) == 0 {
			f.link(ids[i], ids[rng.IntN(i)], "RELATES_TO")
		}
	}
	staged := search.Default()
	staged.Weights.Stage2 = search.StageWeights{Coverage: 0.25, Proximity: 0.5}
	for _, query := range []string{"Lieferung an die Rampe am Montag", "Mahnung wegen Zahlung", "Ersatzteil für die Werkstatt"} {
		for _, hops := range []int{0, 2} {
			for _, o := range []search.Options{search.Default(), staged} {
				q := knowmind.RecallQuery{Query: query, K: knowmind.RecallMaxK, Hops: hops}
				all, allExact := f.recallExact(q, o)
				if len(all) < 20 {
					t.Fatalf("%q: %d hits, the test needs more", query, len(all))
				}
				for n := 1; n < knowmind.RecallMaxK; n++ {
					q.K = n
					got, exact := f.recallExact(q, o)
					if !slices.Equal(got, all[:min(n, len(all))]) {
						t.Fatalf("%q hops %d stage %+v: k=%d gives %v, the first %d of k=25 are %v", query, hops, o.Weights.Stage2, n, got, n, all[:n])
					}
					if m := min(n, len(exact), len(allExact)); !slices.Equal(exact[:m], allExact[:m]) {
						t.Fatalf("%q hops %d stage %+v: k=%d's fused scores %v, the first %d of k=25's %v", query, hops, o.Weights.Stage2, n, exact[:m], m, allExact[:m])
					}
				}
			}
		}
	}
}

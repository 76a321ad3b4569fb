package graph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

// TestRecallTopNStableInK: asking for more hits never reorders the top — the first n hits of
// k=25 are the answer for k=n, for every n, on a generated corpus with links (graph seeds) and
// words shared across many memories (candidate budgets).
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
	for _, query := range []string{"Lieferung an die Rampe am Montag", "Mahnung wegen Zahlung", "Ersatzteil für die Werkstatt"} {
		for _, hops := range []int{0, 2} {
			q := knowmind.RecallQuery{Query: query, K: knowmind.RecallMaxK, Hops: hops}
			all := hitIDs(f.recall(q))
			if len(all) < 20 {
				t.Fatalf("%q: %d hits, the test needs more", query, len(all))
			}
			for n := 1; n < knowmind.RecallMaxK; n++ {
				q.K = n
				if got := hitIDs(f.recall(q)); !slices.Equal(got, all[:min(n, len(all))]) {
					t.Fatalf("%q hops %d: k=%d gives %v, the first %d of k=25 are %v", query, hops, n, got, n, all[:n])
				}
			}
		}
	}
}

package rank

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// Fuse folds chunks to memories, fuses text and vector, adds graph neighbours below their hit,
// and represents each direct hit by the chunk of the signal that ranks it higher.
func TestFuse(t *testing.T) {
	hits := Fuse(Signals{
		// BM25 shares of the ideal: memory A's chunks a1 (0.4) and a2 (0.8), B's b1 (0.2); an
		// orphan chunk is dropped.
		Text: []Chunk{{"a1", "A", 0.4}, {"b1", "B", 0.2}, {"a2", "A", 0.8}, {"x", "", 0.9}},
		// Cosine: B best, then A; an unrelated text scores 0.2 (C is one).
		Vector:          []Chunk{{"c1", "C", 0.2}, {"b2", "B", 0.8}, {"a1", "A", 0.5}},
		VectorWeight:    1,
		VectorUnrelated: 0.2,
		Adjacent:        map[string][]string{"B": {"N"}, "N": {"M"}},
		Hops:            1,
	})
	// A: text 0.8, vector (0.5-0.2)/0.8=0.375 → 0.5875; B: text 0.2, vector 0.75 → 0.475;
	// C: 0; N: B's 0.475·0.5; M is two hops away.
	want := []struct {
		id, chunk, via string
		score          float64
	}{{"A", "a2", "", 0.5875}, {"B", "b2", "", 0.475}, {"N", "", "B", 0.2375}, {"C", "c1", "", 0}}
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

// A direct hit carries the text and context scores it was found with (what tells a hit the
// question's words found from one other evidence found); a neighbour carries none.
func TestFuseKeepsTheWordEvidence(t *testing.T) {
	hits := Fuse(Signals{
		Text:          []Chunk{{"a1", "A", 0.3}, {"a2", "A", 0.6}, {"b1", "B", 0.2}},
		Context:       []Chunk{{"b1", "B", 0.5}, {"c1", "C", 0.4}},
		ContextWeight: 0.5, ContextAdded: true,
		Adjacent: map[string][]string{"A": {"N"}},
		Hops:     1,
	})
	want := map[string][2]float64{"A": {0.6, 0}, "B": {0.2, 0.5}, "C": {0, 0.4}, "N": {0, 0}}
	if len(hits) != len(want) {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		if w := want[h.ID]; h.Text != w[0] || h.Context != w[1] {
			t.Errorf("%s: text %v context %v, want %v", h.ID, h.Text, h.Context, w)
		}
	}
}

// CommonOnly leaves out a hit the question's words found by its best text chunk, and the
// neighbour only it reached, CommonBefore one the context signal found; a hit the context
// signal found by a memory before it that holds more, and a hit whose best chunk holds more,
// stay.
func TestFuseLeavesOutCommonOnlyHits(t *testing.T) {
	hits := Fuse(Signals{
		Text:          []Chunk{{"a1", "A", 0.4}, {"b1", "B", 0.2}, {"c1", "C", 0.3}, {"c2", "C", 0.5}},
		Context:       []Chunk{{"b1", "B", 0.5}, {"d1", "D", 0.4}, {"e1", "E", 0.4}},
		ContextWeight: 0.5, ContextAdded: true,
		Adjacent:     map[string][]string{"A": {"N"}, "N": {"A"}},
		Hops:         1,
		CommonOnly:   map[string]bool{"a1": true, "b1": true, "c1": true},
		CommonBefore: map[string]bool{"d1": true},
	})
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"B", "C", "E"}) {
		t.Fatalf("hits %v, want B (context above text, the one before it holding more), C (its best chunk holds more) and E", ids)
	}
}

// A direct hit that scores higher through the graph is shown as a neighbour: it loses its chunk.
func TestFuseGraphOverridesWeakDirectHit(t *testing.T) {
	hits := Fuse(Signals{
		Text:     []Chunk{{"a", "A", 1}, {"b", "B", 0.1}},
		Adjacent: map[string][]string{"A": {"B"}},
		Hops:     1,
	})
	if hits[1].ID != "B" || hits[1].Via != "A" || hits[1].Chunk != "" || hits[1].Score != 0.5 {
		t.Fatalf("B = %+v, want reached from A at 0.5 without a chunk", hits[1])
	}
}

// Scores are absolute: nothing rescales the best hit to 1. A query the corpus barely answers
// (a little of its text, cosines near an unrelated text's) scores low at the top, a full match
// high; a text share above 1 counts as 1; with VectorUnrelated unknown the weakest candidate
// stands in.
func TestFuseScoresAreAbsolute(t *testing.T) {
	weak := Fuse(Signals{
		Text:            []Chunk{{"a", "A", 0.12}, {"b", "B", 0.05}},
		Vector:          []Chunk{{"a", "A", 0.16}, {"c", "C", 0.12}},
		VectorWeight:    0.25,
		VectorUnrelated: 0.1,
	})
	if weak[0].ID != "A" || weak[0].Score > 0.15 {
		t.Fatalf("off-topic top hit = %+v, want A far below 1", weak[0])
	}
	full := Fuse(Signals{Text: []Chunk{{"a", "A", 1.4}}, Vector: []Chunk{{"a", "A", 1}}, VectorWeight: 0.25, VectorUnrelated: 0.1})
	if full[0].Score != 1 {
		t.Fatalf("full match = %+v, want 1", full[0])
	}
	rel := Fuse(Signals{Vector: []Chunk{{"a", "A", 0.3}, {"b", "B", 0.2}}, VectorWeight: 1, VectorUnrelated: -1})
	if rel[0].Score != 1 || rel[1].Score != 0 {
		t.Fatalf("relative vector scale = %+v", rel)
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

// Support: a hit next to other hits rises (noisy-or of their evidence, HopDecay each); a memory
// reached only through the graph and supported by several hits stays below its origin.
func TestSupport(t *testing.T) {
	base := Signals{
		Text:     []Chunk{{"a", "A", 0.6}, {"b", "B", 0.5}, {"c", "C", 0.4}, {"d", "D", 0.45}},
		Adjacent: map[string][]string{"A": {"C", "N"}, "B": {"C", "N"}, "D": {"N"}},
		Hops:     1,
	}
	off := Fuse(base)
	base.Support = 1
	on := Fuse(base)
	if got := ids(off); !slices.Equal(got[:4], []string{"A", "B", "D", "C"}) {
		t.Fatalf("without support: %v", got)
	}
	// C: 1-(1-0.4)(1-0.3)(1-0.25) = 0.685 > A's 0.6 + A's support from C? A's neighbours: C
	// (0.2) and N (not a direct hit): 1-(0.4)(0.8) = 0.68. C's support comes from A and B.
	score := map[string]float64{}
	for _, h := range on {
		score[h.ID] = h.Score
	}
	if math.Abs(score["C"]-0.685) > 1e-9 || math.Abs(score["A"]-0.68) > 1e-9 {
		t.Fatalf("supported scores = %v", score)
	}
	// N is reached from A (0.3) and supported by B and D, but stays strictly below A.
	if score["N"] >= score["A"] || score["N"] <= 0.3 {
		t.Fatalf("N = %v, want above its path score 0.3 and below A %v", score["N"], score["A"])
	}
	for i := 1; i < len(on); i++ {
		if on[i].Score > on[i-1].Score {
			t.Fatalf("not sorted: %+v", on)
		}
	}
}

// Two memories with the same evidence tie in Support, bit for bit and in every call, however
// their edges are listed: a product of the same factors in another order rounds differently
// (here 0.76350682 against 0.7635068199999999), and a near-tie decided by map order made the
// first n of a recall differ between calls.
func TestSupportTiesWhateverTheEdgeOrder(t *testing.T) {
	direct := []Hit{{ID: "D1", Score: 0.87}, {ID: "D2", Score: 0.74}, {ID: "D3", Score: 0.49},
		{ID: "B", Score: 0.12}, {ID: "A", Score: 0.12}}
	layouts := map[string]map[string][]string{
		// The edges listed on A's and B's side, in opposite orders.
		"own": {"A": {"D3", "D2", "D1"}, "B": {"D1", "D2", "D3"}},
		// The edges listed on the other side: met in the adjacency map's order.
		"other": {"D1": {"A", "B"}, "D2": {"B", "A"}, "D3": {"A", "B"}},
	}
	for name, adjacent := range layouts {
		var first []Hit
		for call := range 50 {
			got := Support(slices.Clone(direct), direct, adjacent, 1)
			score := map[string]float64{}
			for _, h := range got {
				score[h.ID] = h.Score
			}
			if score["A"] != score["B"] {
				t.Fatalf("%s, call %d: A %v, B %v: the same evidence must tie", name, call, score["A"], score["B"])
			}
			if order := ids(got); slices.Index(order, "A") != slices.Index(order, "B")+1 {
				t.Fatalf("%s, call %d: %v, want the tie in its input order (B, A)", name, call, order)
			}
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Fatalf("%s, call %d: %+v, first call %+v", name, call, got, first)
			}
		}
	}
}

// The semantic signal is one more list of the weighted mean: it lifts a text candidate whose
// words mean what the query means above one that only matches as well lexically.
func TestFuseSemantic(t *testing.T) {
	sig := Signals{Text: []Chunk{{"a", "A", 0.5}, {"b", "B", 0.5}}}
	if got := ids(Fuse(sig)); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("without semantic = %v", got)
	}
	sig.Semantic, sig.SemanticWeight = []Chunk{{"a", "A", 0.1}, {"b", "B", 0.9}}, 0.5
	hits := Fuse(sig)
	// A: (0.5 + 0.5·0.1)/1.5, B: (0.5 + 0.5·0.9)/1.5
	if hits[0].ID != "B" || math.Abs(hits[0].Score-0.95/1.5) > 1e-12 || math.Abs(hits[1].Score-0.55/1.5) > 1e-12 {
		t.Fatalf("with semantic = %+v", hits)
	}
	// Weight 0 turns it off.
	sig.SemanticWeight = 0
	if got := ids(Fuse(sig)); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("semantic weight 0 = %v", got)
	}
}

// The concept signal is one more list beside the semantic one: a candidate only it found (the
// semantic pool's) becomes a hit at its weighted share; with both, each counts.
func TestFuseConcept(t *testing.T) {
	sig := Signals{Text: []Chunk{{"a", "A", 0.5}}, Semantic: []Chunk{{"a", "A", 0.4}}, SemanticWeight: 0.5}
	sig.Concept, sig.ConceptWeight = []Chunk{{"a", "A", 0.2}, {"p", "P", 0.8}}, 0.25
	hits := Fuse(sig)
	// A: (0.5 + 0.5·0.4 + 0.25·0.2)/1.75, P: 0.25·0.8/1.75
	if len(hits) != 2 || hits[0].ID != "A" || math.Abs(hits[0].Score-0.75/1.75) > 1e-12 ||
		hits[1].ID != "P" || math.Abs(hits[1].Score-0.2/1.75) > 1e-12 || hits[1].Chunk != "" {
		t.Fatalf("with concept = %+v", hits)
	}
	sig.ConceptWeight = 0
	if got := ids(Fuse(sig)); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("concept weight 0 = %v", got)
	}
}

// The title signal lifts the memories whose title matches, among those text or vector found;
// a title alone makes no hit, and a memory outside the candidates gains nothing from it.
func TestFuseTitle(t *testing.T) {
	base := Signals{Text: []Chunk{{"a1", "A", 0.6}, {"b1", "B", 0.5}}}
	if hits := Fuse(base); hits[0].ID != "A" {
		t.Fatalf("without titles: %+v", hits)
	}
	sig := base
	sig.Title, sig.TitleWeight = map[string]float64{"B": 1, "Z": 1}, 0.5
	hits := Fuse(sig)
	// A keeps 0.6; B: 0.5·(1 + 0.5·1) = 0.75; Z is no candidate.
	if len(hits) != 2 || hits[0].ID != "B" || hits[1].ID != "A" ||
		math.Abs(hits[0].Score-0.75) > 1e-12 || math.Abs(hits[1].Score-0.6) > 1e-12 {
		t.Fatalf("with B's title matching: %+v", hits)
	}
	// A factor, capped at 1; a partial match counts in part.
	sig.Title, sig.TitleWeight = map[string]float64{"A": 0.25, "B": 1}, 2
	if hits := Fuse(sig); hits[0].ID != "B" || hits[0].Score != 1 || math.Abs(hits[1].Score-0.9) > 1e-12 {
		t.Fatalf("title weight 2: %+v", hits)
	}
	if hits[0].Chunk != "b1" {
		t.Fatalf("B is represented by %q, want its text chunk", hits[0].Chunk)
	}
	sig.TitleWeight = 0
	if hits := Fuse(sig); hits[0].ID != "A" || math.Abs(hits[0].Score-0.6) > 1e-12 {
		t.Fatalf("title weight 0 must leave the ranking alone: %+v", hits)
	}
}

// TitleNeighbours: a neighbour whose own title matches gains the title factor on top of the
// share of its hit's (boosted) score it inherits, strictly below that hit; off, the neighbours of
// one hit score alike.
func TestFuseTitleNeighbours(t *testing.T) {
	sig := Signals{
		Text:        []Chunk{{"a", "A", 0.6}, {"m", "M", 0.05}, {"z", "Z", 0.34}},
		Adjacent:    map[string][]string{"A": {"M", "O"}, "Z": {"Y"}},
		Hops:        1,
		Title:       map[string]float64{"M": 1, "Y": 1, "Z": 0.5},
		TitleWeight: 1,
	}
	scores := func() map[string]float64 {
		out := map[string]float64{}
		hits := Fuse(sig)
		for i, h := range hits {
			out[h.ID] = h.Score
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("not sorted: %+v", hits)
			}
		}
		return out
	}
	off := scores()
	// A 0.6 reaches M and O at 0.3 (M's own 0.05·2 is less); Z 0.34·1.5 = 0.51 reaches Y at 0.255.
	if off["M"] != 0.3 || off["O"] != 0.3 || math.Abs(off["Z"]-0.51) > 1e-12 || math.Abs(off["Y"]-0.255) > 1e-12 {
		t.Fatalf("direct hits only: %v", off)
	}
	sig.TitleNeighbours = true
	on := scores()
	// M: 0.3·2 = 0.6, kept strictly below A's 0.6; O without a title match keeps 0.3; Y 0.51.
	if !(on["M"] < 0.6 && on["M"] > 0.5999) || on["O"] != 0.3 || on["A"] != 0.6 ||
		!(on["Y"] < 0.51 && on["Y"] > 0.5099) {
		t.Fatalf("neighbours too: %v", on)
	}
}

// BenchmarkFuse: one recall's fusion at LoCoMo's scale (k 10: 100 text and 100 vector
// candidates, as many semantic scores, titles, 2 hops from 20 seeds of fan-out 4);
// go test -run '^$' -bench Fuse ./rank.
func BenchmarkFuse(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var s Signals
	mem := func(i int) string { return "m" + strconv.Itoa(i) }
	s.Title, s.TitleWeight = map[string]float64{}, 0.25
	for i := range 100 {
		m := mem(r.IntN(600))
		s.Text = append(s.Text, Chunk{"t" + strconv.Itoa(i), m, r.Float64()})
		s.Semantic = append(s.Semantic, Chunk{"t" + strconv.Itoa(i), m, r.Float64()})
		s.Vector = append(s.Vector, Chunk{"v" + strconv.Itoa(i), mem(r.IntN(600)), r.Float64()})
		if r.IntN(2) == 0 {
			s.Title[m] = 1
		}
	}
	s.VectorWeight, s.SemanticWeight, s.VectorUnrelated = 0.25, 0.5, 0.1
	s.Adjacent, s.Hops, s.Support = map[string][]string{}, 2, 1
	for range 20 {
		seed := r.IntN(600)
		for d := range 4 {
			s.Adjacent[mem(seed)] = append(s.Adjacent[mem(seed)], mem(seed+d+1))
			s.Adjacent[mem(seed+d+1)] = append(s.Adjacent[mem(seed+d+1)], mem(seed+d+2))
			if d%2 == 0 {
				s.Title[mem(seed+d+1)] = 0.5 // neighbours whose own title matches
			}
		}
	}
	b.Run("title-direct-only", func(b *testing.B) {
		for b.Loop() {
			Fuse(s)
		}
	})
	s.TitleNeighbours = true
	b.Run("title-neighbours", func(b *testing.B) {
		for b.Loop() {
			Fuse(s)
		}
	})
}

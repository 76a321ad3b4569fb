package search_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/search"
)

// A small index of one tenant: chunk refs 1..n in English.
func index(texts ...string) *bm25.Index {
	var ix bm25.Index
	for i, text := range texts {
		ix.AddRef("t", text, "", uint64(i+1), bm25.Analyze("", text))
	}
	return &ix
}

func TestTextSideServedFindsTheBestChunks(t *testing.T) {
	ix := index("the kiln fired the clay bowls", "a hike to the lake", "glazed bowls from the kiln", "lake and forest")
	side := search.NewTextSide(ix, "t", "", "kiln bowls", bm25.Analysis{}, true)
	if !side.Served || !side.On() || side.Match != "" {
		t.Fatalf("served side: %+v", side)
	}
	if len(side.Scores) != 2 || side.Scores[1] <= 0 || side.Scores[3] <= 0 {
		t.Fatalf("scores %v, want chunks 1 and 3", side.Scores)
	}
	if none := search.NewTextSide(ix, "t", "de", "kiln", bm25.Analysis{}, true); none.On() {
		t.Fatalf("no German text stored, yet a side: %+v", none)
	}
}

func TestMatchTermsTakesTheRarestWithinBudget(t *testing.T) {
	st := bm25.Stats{Docs: 100, DF: map[string]int64{"kiln": 2, "bowl": 30, "the": 90}}
	if got := search.MatchTerms("", "the kiln bowls", st, 10); got != "kiln" {
		t.Errorf("budget 10: %q, want the rarest word only", got)
	}
	if got := search.MatchTerms("", "the kiln bowls", st, 40); got != "kiln bowls" {
		t.Errorf("budget 40: %q", got)
	}
	// The rarest always, even above the budget.
	if got := search.RarestTerms("", "bowls", st, 1); !slices.Equal(got, []string{"bowl"}) {
		t.Errorf("rarest above budget: %v", got)
	}
}

// Fuse scores what the store returned: an ineligible chunk (no memory) never becomes a hit,
// and the text match outranks a weak vector neighbour.
func TestFuseKeepsEligibleCandidates(t *testing.T) {
	ix := index("the kiln fired the clay bowls", "a hike to the lake", "glazed bowls from the kiln")
	side := search.NewTextSide(ix, "t", "", "kiln bowls", bm25.Analysis{}, true)
	cands := &search.Candidates{
		Text: []search.Candidate{
			{Chunk: "0x1", Ref: 1, Memory: "0xa"},
			{Chunk: "0x3", Ref: 3}, // its memory did not pass the filter
		},
		Vector: []search.Candidate{{Chunk: "0x2", Ref: 2, Memory: "0xb", Score: 0.3}},
	}
	hits := search.Fuse(cands, search.Input{Text: [2]search.TextSide{{}, side},
		Signals: rank.Signals{VectorWeight: 0.25, VectorUnrelated: 0.1}})
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if len(ids) != 2 || ids[0] != "0xa" || ids[1] != "0xb" {
		t.Fatalf("fused %v, want 0xa then 0xb", ids)
	}
}

func TestAboveFloorKeepsThePrefix(t *testing.T) {
	hits := []knowmind.RecallHit{{Score: 0.8}, {Score: 0.3}, {Score: 0.05}}
	if got := search.AboveFloor(hits, 0.1); len(got) != 2 {
		t.Errorf("floor 0.1: %d hits", len(got))
	}
	if got := search.AboveFloor(hits, 0.9); got == nil || len(got) != 0 {
		t.Errorf("floor 0.9: %v, want an empty, non-nil list", got)
	}
}

type fixedReranker []float64

func (f fixedReranker) Name() string { return "fixed" }
func (f fixedReranker) Score(context.Context, string, []string) ([]float64, error) {
	return f, nil
}

func TestRerankOrdersByTheCrossEncoder(t *testing.T) {
	hits := []knowmind.RecallHit{{MemoryID: "a"}, {MemoryID: "b"}}
	from := []rank.Hit{{ID: "a", Score: 0.9}, {ID: "b", Score: 0.5}}
	out, err := search.Rerank(context.Background(), fixedReranker{0.2, 0.7}, "q", hits, from)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].MemoryID != "b" || out[0].Score != 0.7 {
		t.Fatalf("reranked %+v", out)
	}
}

func TestQueryTermsLeaveOutQuestionWords(t *testing.T) {
	var ix bm25.Index
	got := search.QueryTerms(&ix, "t", "de", "Wer hat wie viele Beine, und wann?", bm25.Analysis{NoWordList: true})
	for _, stop := range []string{"wer", "viel", "wann"} {
		if slices.Contains(got, stop) {
			t.Fatalf("query terms %v hold the question word %q", got, stop)
		}
	}
	if !slices.Contains(got, "bein") {
		t.Fatalf("query terms %v lost the content word", got)
	}
	// English: the stop list takes "how", the question words list "many" and "much".
	got = search.QueryTerms(&ix, "t", "", "How many moons, and how much water?", bm25.Analysis{})
	if want := []string{"moon", "water"}; !slices.Equal(got, want) {
		t.Fatalf("English query terms %v, want %v", got, want)
	}
	if kept := search.QueryTerms(&ix, "t", "", "How many moons?", bm25.Analysis{KeepQuestionWords: true}); !slices.Contains(kept, "mani") {
		t.Fatalf("KeepQuestionWords: %v lost the question word", kept)
	}
}

// A conversation: the question turn (chunk 1) holds the words, the reply (chunk 2) only the
// answer. With the context signal the reply is scored by the turn before it and ranks above
// an unrelated turn that shares a weak word; without it, the reply is no hit at all. A turn
// that holds the question's words itself (chunk 4, after chunk 3) gains nothing from the turn
// before it holding them too: context counts only the words a memory lacks.
func TestFuseContextScoresAReplyByItsQuestion(t *testing.T) {
	ix := index("how long have you been doing pottery", "three years now, since college", "the weather was long and grey",
		"pottery takes long, as long as you want", "pottery: how long does a glaze take")
	side := search.NewTextSide(ix, "t", "", "how long pottery", bm25.Analysis{}, true)
	cands := &search.Candidates{Text: []search.Candidate{
		{Chunk: "0x1", Ref: 1, Memory: "0xq"},
		{Chunk: "0x2", Ref: 2, Memory: "0xa"}, // a follower: no text score of its own
		{Chunk: "0x3", Ref: 3, Memory: "0xw"},
		{Chunk: "0x4", Ref: 4, Memory: "0xp"},
		{Chunk: "0x5", Ref: 5, Memory: "0xg"},
	}}
	prev := map[uint64][]uint64{2: {1}, 5: {4}}
	before := func(refs []uint64) map[uint64][]uint64 {
		out := map[uint64][]uint64{}
		for _, r := range refs {
			if p, ok := prev[r]; ok {
				out[r] = p
			}
		}
		return out
	}
	in := search.Input{Text: [2]search.TextSide{{}, side}, Before: before, ContextWeight: 0.5,
		RefScores: func(lang string, terms []string, refs []uint64) map[uint64]float64 {
			return ix.ScoreRefs("t", lang, terms, refs, bm25.Params{})
		},
		RefTerms: func(refs []uint64) [][]string { return ix.RefTerms("t", refs) }}
	scores := func(in search.Input) map[string]float64 {
		out := map[string]float64{}
		for _, h := range search.Fuse(cands, in) {
			out[h.ID] = h.Score
		}
		return out
	}
	on := scores(in)
	if on["0xa"] <= on["0xw"] || on["0xa"] >= on["0xq"] {
		t.Fatalf("with context: %v, want the reply between its question and the weak match", on)
	}
	in.ContextWeight = 0
	off := scores(in)
	if _, ok := off["0xa"]; ok {
		t.Fatalf("without the context signal the reply is a hit: %v", off)
	}
	// Relative to the question's own score, the section after a matching one keeps its place.
	if math.Abs(on["0xg"]/on["0xq"]-off["0xg"]/off["0xq"]) > 1e-9 {
		t.Fatalf("a follower holding every query word gained context: on %v, off %v", on, off)
	}
}

// A lexical embedder's cosine counts only as far as the tenant knows the query's words
// (Input.VectorCoverage): a word it never wrote finds nothing, however well its hash collides
// with a short text; a word it knows keeps its vector score; a model embedder's is kept.
func TestFuseScalesLexicalVectorsByCoverage(t *testing.T) {
	ix := index("the kiln fired the clay bowls", "treffen war am montag", "glazed bowls from the kiln")
	signals := rank.Signals{VectorWeight: 0.25, VectorUnrelated: 0.1}
	fuse := func(query string, lexical bool) []rank.Hit {
		side := search.NewTextSide(ix, "t", "", query, bm25.Analysis{}, true)
		cands := &search.Candidates{Vector: []search.Candidate{{Chunk: "0x2", Ref: 2, Memory: "0xb", Score: 0.9}}}
		return search.Fuse(cands, search.Input{Text: [2]search.TextSide{{}, side}, Signals: signals,
			Coverage: true, VectorCoverage: lexical})
	}
	if hits := fuse("spaceship", true); len(hits) != 0 {
		t.Errorf("an unknown word under a lexical embedder: %+v, want no hit", hits)
	}
	known, unscaled := fuse("montag", true), fuse("montag", false)
	if len(known) != 1 || len(unscaled) != 1 || known[0].Score != unscaled[0].Score || known[0].Score <= 0 {
		t.Errorf("a known word: %+v, want the vector score unscaled, %+v", known, unscaled)
	}
	// Half the query's information known: half the vector's contribution.
	half := fuse("montag spaceship", true)
	if len(half) != 1 || half[0].Score >= known[0].Score || half[0].Score <= 0 {
		t.Errorf("a half-known question: %+v, want less than %v", half, known[0].Score)
	}
	if model := fuse("spaceship", false); len(model) != 1 || model[0].Score != known[0].Score {
		t.Errorf("a model embedder: %+v, want its cosine as it is", model)
	}
}

package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
)

func stageStats() bm25.Stats {
	return bm25.Stats{Docs: 100, DF: map[string]int64{"pottery": 2, "class": 20, "weekend": 30}}
}

func TestEvidenceProximityAndCoverage(t *testing.T) {
	terms := []string{"pottery", "class"}
	st := stageStats()
	cov, near := Evidence(terms, st, strings.Fields("i took a pottery class"), nil)
	if cov != 1 || near != 1 {
		t.Errorf("both terms adjacent: %v %v, want 1 1", cov, near)
	}
	cov, near = Evidence(terms, st, strings.Fields("pottery is fun and some day i will teach a class on it"), nil)
	if cov != 1 || near != 0 {
		t.Errorf("both terms apart: %v %v, want 1 0", cov, near)
	}
	// The rare word holds more of the query's IDF mass than the common one.
	rare, _ := Evidence(terms, st, []string{"pottery"}, nil)
	common, _ := Evidence(terms, st, []string{"class"}, nil)
	if !(rare > 0.5 && rare < 1 && common < 0.5 && common > 0) {
		t.Errorf("rare word %v, common word %v", rare, common)
	}
	if cov, near := Evidence(terms, st, strings.Fields("nothing here"), nil); cov != 0 || near != 0 {
		t.Errorf("no query term: %v %v", cov, near)
	}
	// A compound's part added by the analysis counts for coverage, not for proximity.
	if cov, near := Evidence([]string{"pottery"}, st, []string{"potterykurs"}, []string{"pottery"}); cov != 1 || near != 0 {
		t.Errorf("extra token: %v %v, want 1 0", cov, near)
	}
}

func stageHits() ([]knowmind.RecallHit, []rank.Hit) {
	hits := []knowmind.RecallHit{
		{Title: "a", Content: "pottery, and the next class", Score: 0.6},
		{Title: "b", Content: "took a pottery class", Score: 0.5},
		{Title: "c", Content: "weekend", Score: 0.4},
	}
	from := []rank.Hit{{Score: 0.6}, {Score: 0.5}, {Score: 0.4}}
	return hits, from
}

func TestStage2Reorders(t *testing.T) {
	sides := [2]TextSide{{Lang: "", Terms: []string{"pottery", "class"}, Stats: stageStats()}}
	analyze := func(lang, text string) ([]string, int) {
		f := strings.Fields(strings.ToLower(strings.ReplaceAll(text, ",", "")))
		return f, len(f)
	}
	hits, from := stageHits()
	got, gotFrom := Stage2(hits, from, sides, StageWeights{Proximity: 0.5}, analyze)
	if len(got) != 3 || got[0].Title != "b" || gotFrom[0].Score != got[0].Score {
		t.Fatalf("order %v, want b (its terms adjacent) first", got)
	}
	if want := 0.5 + 0.5*0.5; got[0].Score != want {
		t.Errorf("b scores %v, want %v", got[0].Score, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("scores rise down the list: %v", got)
		}
	}
	// Coverage only lowers: c holds none of the query's words.
	got, _ = Stage2(hits, from, sides, StageWeights{Coverage: 0.5}, analyze)
	if got[2].Title != "c" || got[2].Score != 0.2 || got[0].Score != 0.6 {
		t.Errorf("coverage: %v, want a 0.6 first and c at 0.4 × 0.5 last", got)
	}
	// The zero weights leave the list as it is.
	if same, _ := Stage2(hits, from, sides, StageWeights{}, analyze); same[0].Title != "a" || same[0].Score != 0.6 {
		t.Errorf("zero weights changed the list: %v", same)
	}
}

func TestStage2PoolBounded(t *testing.T) {
	var hits []knowmind.RecallHit
	var from []rank.Hit
	for i := range StagePool + 10 {
		hits = append(hits, knowmind.RecallHit{Content: strings.Repeat("pottery ", StageText), Score: 1 - float64(i)/100})
		from = append(from, rank.Hit{Score: 1 - float64(i)/100})
	}
	var read int
	analyze := func(lang, text string) ([]string, int) {
		read += len(text)
		f := strings.Fields(text)
		return f, len(f)
	}
	got, _ := Stage2(hits, from, [2]TextSide{{Terms: []string{"pottery"}, Stats: stageStats()}}, StageWeights{Coverage: 0.5}, analyze)
	if len(got) != StagePool {
		t.Errorf("%d hits, want the pool of %d", len(got), StagePool)
	}
	if read > StagePool*StageText {
		t.Errorf("read %d bytes, want at most %d", read, StagePool*StageText)
	}
}

// With WordHits only the hits the question's words found are re-scored: a graph neighbour and
// a hit found by the memory before it keep their fused score, however few of the words they
// hold, and the re-scored hits take their places among them.
func TestStage2WordHitsLeavesOtherEvidenceAlone(t *testing.T) {
	sides := [2]TextSide{{Lang: "", Terms: []string{"pottery", "class"}, Stats: stageStats()}}
	analyze := func(lang, text string) ([]string, int) {
		f := strings.Fields(strings.ToLower(text))
		return f, len(f)
	}
	hits := []knowmind.RecallHit{
		{Title: "word", Content: "weekend class", Score: 0.6},
		{Title: "neighbour", Content: "three years now", Score: 0.5},
		{Title: "reply", Content: "since college", Score: 0.4},
		{Title: "both", Content: "pottery class", Score: 0.3},
	}
	from := []rank.Hit{
		{ID: "w", Score: 0.6, Text: 0.6},
		{ID: "n", Score: 0.5, Via: "w", Hops: 1},
		{ID: "r", Score: 0.4, Text: 0.1, Context: 0.5},
		{ID: "b", Score: 0.3, Text: 0.3},
	}
	w := StageWeights{Coverage: 0.5, WordHits: true}
	got, gotFrom := Stage2(hits, from, sides, w, analyze)
	var order []string
	for i, h := range got {
		order = append(order, h.Title)
		if h.Score != RoundScore(gotFrom[i].Score) {
			t.Errorf("%s: hit score %v, fused %v", h.Title, h.Score, gotFrom[i].Score)
		}
	}
	// "word" holds the common word only: 0.6 × (1 − 0.5 × (1 − cov)), cov about a quarter,
	// drops it below the two hits that kept their score.
	if want := []string{"neighbour", "reply", "word", "both"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i, title := range []string{"neighbour", "reply"} {
		idx := slices.Index(order, title)
		if want := []float64{0.5, 0.4}[i]; got[idx].Score != want {
			t.Errorf("%s scores %v, want its fused %v", title, got[idx].Score, want)
		}
	}
	// Without WordHits every hit is re-scored: the neighbour holds none of the words.
	all, _ := Stage2(hits, from, sides, StageWeights{Coverage: 0.5}, analyze)
	if i := slices.IndexFunc(all, func(h knowmind.RecallHit) bool { return h.Title == "neighbour" }); all[i].Score != 0.25 {
		t.Errorf("every hit re-scored: neighbour %v, want 0.25", all[i].Score)
	}
}

func TestWordHit(t *testing.T) {
	for _, c := range []struct {
		h    rank.Hit
		want bool
	}{
		{rank.Hit{Text: 0.3}, true},
		{rank.Hit{Text: 0.3, Context: 0.3}, true},
		{rank.Hit{Text: 0.2, Context: 0.3}, false},
		{rank.Hit{Text: 0.3, Via: "x", Hops: 1}, false},
		{rank.Hit{}, false},
	} {
		if got := WordHit(c.h); got != c.want {
			t.Errorf("WordHit(%+v) = %v, want %v", c.h, got, c.want)
		}
	}
}

// A language the tenant holds no text in (no documents on that side) gives a hit no coverage:
// its analysis of the hit's text would match the question's words by accident.
func TestStage2IgnoresEmptySides(t *testing.T) {
	hits, from := stageHits()
	analyze := func(lang, text string) ([]string, int) {
		f := strings.Fields(strings.ToLower(strings.ReplaceAll(text, ",", "")))
		return f, len(f)
	}
	sides := [2]TextSide{{Lang: "de", Terms: []string{"pottery", "class"}, Stats: bm25.Stats{}}}
	if got, _ := Stage2(hits, from, sides, StageWeights{Coverage: 0.5}, analyze); got[0].Score != 0.6 || got[2].Score != 0.4 {
		t.Errorf("a side without documents re-scored the hits: %v", got)
	}
}

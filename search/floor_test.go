package search_test

import (
	"math"
	"testing"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/german"
	"github.com/knowmind/knowmind/search"
)

func TestFloorRisesAsCoverageFalls(t *testing.T) {
	for _, tc := range []struct {
		min, coverage float64
		ok            bool
		want          float64
	}{
		{0.1, 1, true, 0.1},
		{0.1, 0.5, true, 0.2},
		{0.1, 0.25, true, 0.4},
		{0.1, 0.3, false, 0.1}, // nothing measured: min_score stands
		{0, 0.2, true, 0},      // min_score 0 keeps every hit
	} {
		if got := search.Floor(tc.min, tc.coverage, tc.ok); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Floor(%v, %v, %v) = %v, want %v", tc.min, tc.coverage, tc.ok, got, tc.want)
		}
	}
	if got := search.Floor(0.1, 0, true); !(got > 1) {
		t.Errorf("a question the tenant knows nothing of: floor %v, want above every score", got)
	}
	ix := index("I'm over the moon about the promotion", "the pottery class starts in the spring")
	q := "When does the pottery class start?"
	side := search.NewTextSide(ix, "t", "", q, bm25.Analysis{}, true)
	if c, ok := search.Known(ix, "t", q, bm25.Analysis{}, [2]search.TextSide{{}, side}); !ok || c != 1 {
		t.Errorf("Known = %v %v, want the English side's 1", c, ok)
	}
	if _, ok := search.Known(ix, "t", q, bm25.Analysis{}, [2]search.TextSide{}); ok {
		t.Error("Known without a side that analysed the question says measured")
	}
}

// WordCoverage measures the question word by word: a word the tenant never wrote counts
// against it, the time the question names does not.
func TestWordCoverage(t *testing.T) {
	ix := index("I'm over the moon about the promotion", "the pottery class starts in the spring", "moon and stars tonight")
	half, ok := search.WordCoverage(ix, "t", "", "How many moons does Neptune have?", bm25.Analysis{})
	if !ok || half <= 0 || half >= 0.5 {
		t.Errorf("moons (known) and many, Neptune (unknown): coverage %v %v, want above 0, below one half", half, ok)
	}
	full, _ := search.WordCoverage(ix, "t", "", "When did the pottery class start?", bm25.Analysis{})
	dated, _ := search.WordCoverage(ix, "t", "", "What pottery class started on 25 May, 2022?", bm25.Analysis{})
	if full != 1 || dated != 1 {
		t.Errorf("known words: %v, with a date named: %v, want 1 and 1", full, dated)
	}
	if c, ok := search.WordCoverage(ix, "t", "", "the of and", bm25.Analysis{}); ok {
		t.Errorf("stop words only: %v measured", c)
	}
}

// A German compound the tenant holds only in parts counts as known.
func TestWordCoverageCountsACompoundByItsParts(t *testing.T) {
	if german.SystemWords().Len() == 0 {
		t.Skip("no German word list at /usr/share/dict/ngerman (Debian package wngerman)")
	}
	var ix bm25.Index
	for i, text := range []string{"Die Abrechnung der Reisekosten reicht man bis zum Monatsende ein.", "Der Drucker steht im Flur."} {
		tokens, _ := bm25.Analysis{}.AnalyzeDoc("de", text, nil)
		ix.AddRef("t", text, "de", uint64(i+1), tokens)
	}
	c, ok := search.WordCoverage(&ix, "t", "de", "Reisekostenabrechnung einreichen", bm25.Analysis{})
	if !ok || c < 0.5 {
		t.Errorf("coverage %v %v, want the compound known by its parts", c, ok)
	}
	if off, _ := search.WordCoverage(&ix, "t", "de", "Zugvogelwanderung", bm25.Analysis{NoWordList: true}); off != 0 {
		t.Errorf("a word the tenant holds nothing of: coverage %v", off)
	}
}

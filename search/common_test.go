package search_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/search"
)

// levels is a small fake of english.Levels.
type levels map[string]int

func (l levels) Level(w string) (int, bool) { n, ok := l[w]; return n, ok }

// Name: the fake knows John and Neptune as names only.
func (l levels) Name(w string) bool { return w == "john" || w == "neptune" }

var fakeLevels = levels{"moon": 20, "moons": 20, "neptune": 40, "sign": 10, "signed": 10, "treaty": 20,
	"westphalia": 50, "john": 10, "city": 10, "trip": 20, "pottery": 35, "class": 10, "say": 10, "mail": 10}

func commonTerms(ix *bm25.Index, query string) []string {
	side := search.NewTextSide(ix, "t", "", query, bm25.Analysis{}, true)
	return slices.Sorted(maps.Keys(search.CommonMatches(query, [2]search.TextSide{{}, side}, fakeLevels)))
}

// A term is common when the question holds a word the tenant never wrote that is rarer in
// general language: the everyday word cannot be what the question is about.
func TestCommonMatches(t *testing.T) {
	ix := index("I'm over the moon about it", "that sign looks serious", "John booked the pottery class",
		"the city trip with John was great")
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Neptune (40, unknown) is rarer than moon (20): moon is common.
		{"How many moons does Neptune have?", []string{"moon"}},
		// Westphalia (50, unknown) is rarer than signed (10) and Treaty (a name here: capitalised
		// mid-sentence, never the common word).
		{"Who signed the Treaty of Westphalia?", []string{"sign"}},
		// Every word known: nothing is common.
		{"When did John book the pottery class?", nil},
		// Westphalia (unknown) is rarer than John, say and trip, but John is a name: only the
		// lowercase words are common (as analysed: "say" is "sai").
		{"What did John say about the Westphalia trip?", []string{"sai", "trip"}},
		// The unknown word is the commonest: nothing rarer is unknown.
		{"Did the pottery class say something?", nil},
		// A word the levels do not hold (a German word, a term of art) is compared with nothing.
		{"Wann fährt der moon Zugvogel?", nil},
	} {
		if got := commonTerms(ix, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%q: common %v, want %v", tc.query, got, tc.want)
		}
	}
	side := search.NewTextSide(ix, "t", "", "How many moons does Neptune have?", bm25.Analysis{}, true)
	if got := search.CommonMatches("How many moons does Neptune have?", [2]search.TextSide{{}, side}, nil); got != nil {
		t.Errorf("without levels: %v, want nil", got)
	}
}

// The question's first word, and the first after a sentence's end, are not names for being
// capitalised.
func TestLeveledWordsKnowSentenceStarts(t *testing.T) {
	ix := index("the moon", "a sign", "the city")
	q := "Moons of Neptune? City signs of John."
	side := search.NewTextSide(ix, "t", "", q, bm25.Analysis{}, true)
	names := map[string]bool{}
	for _, w := range search.LeveledWords(q, [2]search.TextSide{{}, side}, fakeLevels) {
		names[w.Word] = w.Name
	}
	want := map[string]bool{"moons": false, "neptune": true, "city": false, "signs": false, "john": true}
	delete(want, "signs") // not in the fake levels
	if !maps.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
}

// A name that starts the question is still a name when the levels know it chiefly as one: it
// is never the common word there either, while an everyday word starting it ("Sign") is.
func TestCommonMatchesNameAtSentenceStart(t *testing.T) {
	ix := index("John booked the pottery class", "that sign looks serious", "the city trip with John was great")
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Mid-sentence and first, John is a name; only the lowercase trip is common.
		{"What did John say about the Westphalia trip?", []string{"sai", "trip"}},
		{"John told me what about the Westphalia trip?", []string{"trip"}},
		// An everyday word capitalised by the sentence start stays common.
		{"Sign the Westphalia treaty?", []string{"sign", "treati"}},
		// An all-caps question writes every word like a name: none is the common word.
		{"WHO SIGNED THE WESTPHALIA TREATY?", nil},
	} {
		if got := commonTerms(ix, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%q: common %v, want %v", tc.query, got, tc.want)
		}
	}
}

// textCandidates are text candidates of the given memories, one chunk each: chunk 0x1, ref 1
// for the first, and so on.
func textCandidates(memories ...string) *search.Candidates {
	c := &search.Candidates{}
	for i, m := range memories {
		c.Text = append(c.Text, search.Candidate{Chunk: fmt.Sprintf("0x%x", i+1), Ref: uint64(i + 1), Memory: m})
	}
	return c
}

// fusedIDs are the memories Fuse ranks, sorted.
func fusedIDs(cands *search.Candidates, in search.Input) []string {
	var out []string
	for _, h := range search.Fuse(cands, in) {
		out = append(out, h.ID)
	}
	slices.Sort(out)
	return out
}

// A direct hit found by one everyday word of a question whose subject the tenant never wrote is
// left out, with the neighbour it alone reaches; a hit holding two query words stays.
func TestFuseLeavesOutCommonWordHits(t *testing.T) {
	ix := index("I'm over the moon about it", "the moon over Neptune tonight", "we watched the moon rise")
	query := "How many moons does Neptune have?"
	side := search.NewTextSide(ix, "t", "", query, bm25.Analysis{}, true)
	cands := textCandidates("0xa", "0xb", "0xc")
	in := search.Input{Text: [2]search.TextSide{{}, side},
		RefTerms: func(refs []uint64) [][]string { return ix.RefTerms("t", refs) },
		Signals:  rank.Signals{Adjacent: map[string][]string{"0xa": {"0xn"}, "0xn": {"0xa"}}, Hops: 1}}
	ids := func(in search.Input) []string { return fusedIDs(cands, in) }
	if got := ids(in); !slices.Equal(got, []string{"0xa", "0xb", "0xc", "0xn"}) {
		t.Fatalf("without the rule: %v", got)
	}
	// Neptune is known here (0x2 holds it), so nothing is common: the rule needs a word the
	// tenant never wrote.
	if c := search.CommonMatches(query, in.Text, fakeLevels); c != nil {
		t.Fatalf("Neptune known, yet common %v", c)
	}
	in.Common = map[string]bool{"moon": true}
	if got := ids(in); !slices.Equal(got, []string{"0xb"}) {
		t.Errorf("moon common: %v, want only the hit holding moon and Neptune", got)
	}
}

// The reply to a memory that holds only the everyday word, found by the context signal (the
// memory before it), is left out with it.
func TestFuseLeavesOutTheReplyToACommonWordHit(t *testing.T) {
	ix := index("I'm over the moon about it", "congratulations, well deserved", "the moon over Neptune tonight")
	query := "How many moons does Neptune have?"
	side := search.NewTextSide(ix, "t", "", query, bm25.Analysis{}, true)
	cands := textCandidates("0xa", "0xr", "0xc") // 0xr: the reply, a follower of 0x1
	in := search.Input{Text: [2]search.TextSide{{}, side}, ContextWeight: 0.5, ContextAdded: true,
		Before: func(refs []uint64) map[uint64][]uint64 {
			if slices.Contains(refs, 2) {
				return map[uint64][]uint64{2: {1}}
			}
			return nil
		},
		RefScores: func(lang string, terms []string, refs []uint64) map[uint64]float64 {
			return ix.ScoreRefs("t", lang, terms, refs, bm25.Params{})
		},
		RefTerms: func(refs []uint64) [][]string { return ix.RefTerms("t", refs) }}
	ids := func(in search.Input) []string { return fusedIDs(cands, in) }
	if got := ids(in); !slices.Equal(got, []string{"0xa", "0xc", "0xr"}) {
		t.Fatalf("without the rule: %v", got)
	}
	in.Common = map[string]bool{"moon": true}
	if got := ids(in); !slices.Equal(got, []string{"0xc"}) {
		t.Errorf("moon common: %v, want only the hit holding moon and Neptune", got)
	}
}

// What the rule costs a question: CommonMatches on an English question over a small index.
func BenchmarkCommonMatches(b *testing.B) {
	ix := index("I'm over the moon about it", "that sign looks serious", "John booked the pottery class")
	query := "What is the torque spec for a cylinder head bolt on the moon?"
	sides := [2]search.TextSide{{}, search.NewTextSide(ix, "t", "", query, bm25.Analysis{}, true)}
	for b.Loop() {
		search.CommonMatches(query, sides, fakeLevels)
	}
}

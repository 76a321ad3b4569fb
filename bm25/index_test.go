package bm25

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

func wantStats(t *testing.T, ix *Index, tenant, lang string, want Stats) {
	t.Helper()
	got := ix.Stats(tenant, lang)
	if got.Docs != want.Docs || got.TotalLen != want.TotalLen || !maps.Equal(got.DF, want.DF) {
		t.Errorf("Stats(%q, %q) = %+v, want %+v", tenant, lang, got, want)
	}
}

func TestIndexAddRemoveReAdd(t *testing.T) {
	var ix Index
	ix.Add("t1", "m1", "de", Analyze("de", "Die Einarbeitung dauert"))   // einarbeitung dauert
	ix.Add("t1", "m2", "de", Analyze("de", "Einarbeitungen und Urlaub")) // einarbeitung urlaub
	ix.Add("t1", "m3", "en", Analyze("en", "onboarding takes time"))     // onboard take time
	ix.Add("t2", "m1", "de", Analyze("de", "Urlaub"))                    // other tenant, same id

	wantStats(t, &ix, "t1", "de", Stats{Docs: 2, TotalLen: 4, DF: map[string]int64{"einarbeitung": 2, "dauert": 1, "urlaub": 1}})
	wantStats(t, &ix, "t1", "en", Stats{Docs: 1, TotalLen: 3, DF: map[string]int64{"onboard": 1, "take": 1, "time": 1}})
	wantStats(t, &ix, "t2", "de", Stats{Docs: 1, TotalLen: 1, DF: map[string]int64{"urlaub": 1}})

	ix.Remove("t1", "m1")
	wantStats(t, &ix, "t1", "de", Stats{Docs: 1, TotalLen: 2, DF: map[string]int64{"einarbeitung": 1, "urlaub": 1}})
	ix.Remove("t1", "m1") // twice: nothing changes
	ix.Remove("t1", "nope")
	wantStats(t, &ix, "t1", "de", Stats{Docs: 1, TotalLen: 2, DF: map[string]int64{"einarbeitung": 1, "urlaub": 1}})

	ix.Add("t1", "m1", "de", Analyze("de", "Die Einarbeitung dauert"))
	wantStats(t, &ix, "t1", "de", Stats{Docs: 2, TotalLen: 4, DF: map[string]int64{"einarbeitung": 2, "dauert": 1, "urlaub": 1}})

	// Adding an existing id replaces it, even across languages.
	ix.Add("t1", "m2", "en", Analyze("en", "holiday holiday"))
	wantStats(t, &ix, "t1", "de", Stats{Docs: 1, TotalLen: 2, DF: map[string]int64{"einarbeitung": 1, "dauert": 1}})
	wantStats(t, &ix, "t1", "en", Stats{Docs: 2, TotalLen: 5, DF: map[string]int64{"onboard": 1, "take": 1, "time": 1, "holidai": 1}})

	// Removing everything leaves empty statistics and the other tenant alone.
	for _, id := range []string{"m1", "m2", "m3"} {
		ix.Remove("t1", id)
	}
	wantStats(t, &ix, "t1", "de", Stats{DF: map[string]int64{}})
	wantStats(t, &ix, "t1", "en", Stats{DF: map[string]int64{}})
	if ix.Len("t1") != 0 || ix.Len("t2") != 1 {
		t.Errorf("Len t1 = %d, t2 = %d; want 0, 1", ix.Len("t1"), ix.Len("t2"))
	}
	wantStats(t, &ix, "t2", "de", Stats{Docs: 1, TotalLen: 1, DF: map[string]int64{"urlaub": 1}})
}

func TestIndexUntaggedAndEnglishAreSeparateCorpora(t *testing.T) {
	var ix Index
	ix.Add("t", "a", "", Analyze("", "support group"))
	ix.Add("t", "b", "en", Analyze("en", "support"))
	wantStats(t, &ix, "t", "", Stats{Docs: 1, TotalLen: 2, DF: map[string]int64{"support": 1, "group": 1}})
	wantStats(t, &ix, "t", "en", Stats{Docs: 1, TotalLen: 1, DF: map[string]int64{"support": 1}})
}

func TestIndexStatsForQueryTerms(t *testing.T) {
	var ix Index
	ix.Add("t", "a", "de", []string{"x", "y"})
	ix.Add("t", "b", "de", []string{"x"})
	got := ix.Stats("t", "de", "x", "unknown")
	if got.Docs != 2 || got.TotalLen != 3 || !maps.Equal(got.DF, map[string]int64{"x": 2}) {
		t.Errorf("Stats for terms = %+v", got)
	}
}

func TestIndexRebuildEqualsIncremental(t *testing.T) {
	texts := []Source{
		{ID: "1", Lang: "de", Text: "Die Einarbeitung der neuen Kollegin"},
		{ID: "2", Lang: "de", Text: "Einarbeitungen dauern"},
		{ID: "3", Lang: "en", Text: "Caroline went to the support group"},
		{ID: "4", Lang: "", Text: "untagged support"},
	}
	var incremental, rebuilt Index
	for _, s := range texts {
		incremental.Add("t", s.ID, s.Lang, Analyze(s.Lang, s.Text))
	}
	rebuilt.Add("t", "stale", "de", []string{"weg"})
	rebuilt.Rebuild("t", slices.Values(texts))
	for _, lang := range []string{"de", "en", ""} {
		wantStats(t, &rebuilt, "t", lang, incremental.Stats("t", lang))
	}
	if rebuilt.Len("t") != 4 {
		t.Errorf("Len after rebuild = %d, want 4", rebuilt.Len("t"))
	}
}

// A Builder counted apart and swapped in holds what Adds to the Index would, replaces what the
// tenant held before, leaves other tenants alone and is empty afterwards.
func TestIndexReplaceWithBuilder(t *testing.T) {
	var incremental, replaced Index
	replaced.Add("t", "stale", "de", []string{"weg"})
	replaced.Add("other", "x", "de", []string{"bleibt"})
	var b Builder
	for i, s := range []Source{
		{ID: "1", Lang: "de", Text: "Die Einarbeitung der neuen Kollegin"},
		{ID: "2", Lang: "de", Text: "Einarbeitungen dauern"},
		{ID: "3", Lang: "en", Text: "Caroline went to the support group"},
		{ID: "2", Lang: "", Text: "untagged support replaces 2"},
	} {
		tokens := Analyze(s.Lang, s.Text)
		incremental.Add("t", s.ID, s.Lang, tokens)
		b.Add(s.ID, s.Lang, tokens)
		if i == 0 {
			wantStats(t, &replaced, "t", "de", Stats{Docs: 1, TotalLen: 1, DF: map[string]int64{"weg": 1}}) // not yet
		}
	}
	if b.Len() != 3 {
		t.Errorf("Builder.Len = %d, want 3", b.Len())
	}
	// A Remove on the builder undoes its Add, as on the Index (an unknown id does nothing).
	incremental.Remove("t", "3")
	b.Remove("3")
	b.Remove("unknown")
	(&Builder{}).Remove("x")
	if b.Len() != 2 {
		t.Errorf("Builder.Len after Remove = %d, want 2", b.Len())
	}
	b.Add("3", "en", Analyze("en", "Caroline went to the support group"))
	incremental.Add("t", "3", "en", Analyze("en", "Caroline went to the support group"))
	replaced.Replace("t", &b)
	for _, lang := range []string{"de", "en", ""} {
		wantStats(t, &replaced, "t", lang, incremental.Stats("t", lang))
	}
	wantStats(t, &replaced, "other", "de", Stats{Docs: 1, TotalLen: 1, DF: map[string]int64{"bleibt": 1}})
	if b.Len() != 0 || replaced.Len("t") != 3 {
		t.Errorf("after Replace: builder %d docs, index %d; want 0, 3", b.Len(), replaced.Len("t"))
	}

	// The emptied builder starts afresh; replacing with nothing forgets the tenant.
	b.Add("4", "de", []string{"neu"})
	replaced.Add("t", "5", "de", []string{"später"}) // the Index's own, not the builder's
	if b.Len() != 1 || replaced.Len("t") != 4 {
		t.Errorf("builder and index share state: %d, %d", b.Len(), replaced.Len("t"))
	}
	replaced.Replace("t", &Builder{})
	if replaced.Len("t") != 0 || replaced.Len("other") != 1 {
		t.Errorf("after an empty Replace: t %d, other %d", replaced.Len("t"), replaced.Len("other"))
	}
}

// TestIndexRandomOps checks the incremental statistics against a recount from scratch after a
// long random sequence of adds, replaces and removes (which also reuses freed term ids).
func TestIndexRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	live := map[string][]string{}
	var ix Index
	for range 5000 {
		id := fmt.Sprint(rng.IntN(50))
		if rng.IntN(3) == 0 {
			ix.Remove("t", id)
			delete(live, id)
			continue
		}
		tokens := make([]string, 1+rng.IntN(6))
		for i := range tokens {
			tokens[i] = vocab[rng.IntN(len(vocab))] + fmt.Sprint(rng.IntN(3))
		}
		ix.Add("t", id, "de", tokens)
		live[id] = tokens
	}
	want := Stats{DF: map[string]int64{}}
	for _, tokens := range live {
		want.Docs++
		want.TotalLen += int64(len(tokens))
		distinct := slices.Compact(slices.Sorted(slices.Values(tokens)))
		for _, tok := range distinct {
			want.DF[tok]++
		}
	}
	wantStats(t, &ix, "t", "de", want)
}

func TestIndexConcurrent(t *testing.T) {
	var ix Index
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			tenant := fmt.Sprint("t", w%2)
			for i := range 500 {
				id := fmt.Sprint(w, "-", i%20)
				ix.Add(tenant, id, "en", []string{"x", fmt.Sprint("y", i%7)})
				_ = ix.Stats(tenant, "en", "x")
				if i%3 == 0 {
					ix.Remove(tenant, id)
				}
			}
		})
	}
	wg.Wait()
	for _, tenant := range []string{"t0", "t1"} {
		st := ix.Stats(tenant, "en", "x")
		if st.Docs != int64(ix.Len(tenant)) || st.DF["x"] != st.Docs || st.TotalLen != 2*st.Docs {
			t.Errorf("%s: %+v with %d docs", tenant, st, ix.Len(tenant))
		}
	}
}

// TestIndexMemoryPerDoc measures what the doc comment on Index promises: 100k docs of 40 tokens
// (30 distinct) drawn from a 50k-term vocabulary, counted by a full load (Builder, Replace) with
// references, as recall's statistics are.
func TestIndexMemoryPerDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~100 MB")
	}
	const docs, vocab = 100_000, 50_000
	terms := vocabulary("term", vocab)
	rng := rand.New(rand.NewPCG(3, 4))
	tokens := make([]string, 40)
	perDoc, estimate := indexHeapAndEstimate(docs, func(b *Builder, d int) {
		for i := range 30 {
			tokens[i] = terms[rng.IntN(vocab)]
		}
		copy(tokens[30:], tokens[:10]) // 10 repeats: ~30 distinct
		b.AddRef(fmt.Sprintf("0x%x", 0x10000+d), "de", uint64(0x10000+d), tokens)
	})
	runtime.KeepAlive(terms)
	t.Logf("%d docs: %.1f MB, %.0f B/doc (vocabulary of %d terms included); Bytes estimates %.0f B/doc", docs, perDoc*docs/1e6, perDoc, vocab, estimate)
	if perDoc > 1000 {
		t.Errorf("%.0f B/doc, the Index doc comment promises about 800", perDoc)
	}
	// The memory budget (graph's budget.go) adds up Bytes: it must be near the heap.
	if estimate < 0.7*perDoc || estimate > 1.3*perDoc {
		t.Errorf("Bytes estimates %.0f B/doc, the heap holds %.0f", estimate, perDoc)
	}
}

// TestTitleFieldMemoryPerDoc measures the title field recall keeps beside the chunks (graph's
// textIndex.titles: each chunk's memory title as a document): 100k chunks with titles of 3
// distinct terms from a 20k-term vocabulary.
func TestTitleFieldMemoryPerDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~30 MB")
	}
	const docs, vocab = 100_000, 20_000
	terms := vocabulary("title", vocab)
	rng := rand.New(rand.NewPCG(7, 8))
	tokens := make([]string, 3)
	perDoc := indexHeapPerDoc(docs, func(b *Builder, d int) {
		for i := range tokens {
			tokens[i] = terms[rng.IntN(vocab)]
		}
		b.AddRef(fmt.Sprintf("%032x#0", d), "de", uint64(0x10000+d), tokens)
	})
	runtime.KeepAlive(terms)
	t.Logf("%d title docs: %.1f MB, %.0f B/doc (vocabulary of %d terms included)", docs, perDoc*docs/1e6, perDoc, vocab)
	if perDoc > 400 {
		t.Errorf("%.0f B/doc for the title field, docs/recall.md states about 300", perDoc)
	}
}

// vocabulary is n distinct terms prefix00000, prefix00001, ….
func vocabulary(prefix string, n int) []string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return terms
}

// indexHeapPerDoc loads docs documents (add adds document d) as a full load does (Builder,
// Replace) and returns the heap the Index holds per document.
func indexHeapPerDoc(docs int, add func(b *Builder, d int)) float64 {
	perDoc, _ := indexHeapAndEstimate(docs, add)
	return perDoc
}

// indexHeapAndEstimate is indexHeapPerDoc and Index.Bytes's estimate per document.
func indexHeapAndEstimate(docs int, add func(b *Builder, d int)) (measured, estimated float64) {
	var ix Index
	before := heapInUse()
	var b Builder
	for d := range docs {
		add(&b, d)
	}
	ix.Replace("tenant", &b)
	after := heapInUse()
	runtime.KeepAlive(&ix)
	return float64(after-before) / float64(docs), float64(ix.Bytes("tenant")) / float64(docs)
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkScore100Candidates(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	docs := make([]Doc, 100)
	for i := range docs {
		tokens := make([]string, 40)
		for j := range tokens {
			tokens[j] = fmt.Sprint("t", rng.IntN(2000))
		}
		docs[i] = Doc{ID: fmt.Sprint(i), Tokens: tokens}
	}
	st := Stats{Docs: 100_000, TotalLen: 4_000_000, DF: map[string]int64{"t1": 500, "t2": 50, "t3": 5}}
	for b.Loop() {
		Score([]string{"t1", "t2", "t3"}, docs, st, Params{})
	}
}

func TestIndexDocTerms(t *testing.T) {
	var ix Index
	ix.Add("t", "d1", "", []string{"b", "a", "b"})
	got := ix.DocTerms("t", "d1")
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("DocTerms = %v, want [a b]", got)
	}
	if ix.DocTerms("t", "nope") != nil || ix.DocTerms("other", "d1") != nil {
		t.Error("unknown document or tenant has terms")
	}
}

func TestIndexRefTerms(t *testing.T) {
	var ix Index
	ix.AddRef("t", "d1", "", 7, []string{"b", "a", "b"})
	ix.AddRef("t", "d2", "de", 8, []string{"c"})
	got := ix.RefTerms("t", []uint64{8, 9, 7})
	slices.Sort(got[2])
	if !slices.Equal(got[0], []string{"c"}) || got[1] != nil || !slices.Equal(got[2], []string{"a", "b"}) {
		t.Errorf("RefTerms = %v, want [[c] [] [a b]]", got)
	}
	if got := ix.RefTerms("other", []uint64{7}); len(got) != 1 || got[0] != nil {
		t.Errorf("unknown tenant: %v", got)
	}
}

// BenchmarkTitleField is what the title field adds to a recall (graph's titleMatch): the
// statistics of a 6-term query and ScoreRefs over 200 candidate chunks, in a title field of
// 100k chunks with 3-term titles from a 20k-term vocabulary.
func BenchmarkTitleField(b *testing.B) {
	const docs, vocab = 100_000, 20_000
	rng := rand.New(rand.NewPCG(9, 10))
	var bl Builder
	for d := range docs {
		bl.AddRef(fmt.Sprintf("%032x#0", d), "", uint64(1+d), []string{
			fmt.Sprint("w", rng.IntN(vocab)), fmt.Sprint("w", rng.IntN(vocab)), fmt.Sprint("w", rng.IntN(vocab))})
	}
	var ix Index
	ix.Replace("t", &bl)
	refs := make([]uint64, 200)
	for i := range refs {
		refs[i] = uint64(1 + rng.IntN(docs))
	}
	query := []string{"w1", "w20", "w300", "w4000", "w5", "nowhere"}
	for b.Loop() {
		ix.Stats("t", "", query...)
		ix.ScoreRefs("t", "", query, refs, Params{})
	}
}

package bm25

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
)

func TestDumpLoadCountsTheSame(t *testing.T) {
	var ix Index
	texts := []string{"the cat sat on the mat", "a dog chased the cat", "Die Katze schläft im Garten",
		"the mat was red", "Der Hund bellt im Garten laut"}
	for i, text := range texts {
		lang := ""
		if i == 2 || i == 4 {
			lang = "de"
		}
		tokens, length := AnalyzeDocForSearch(lang, text)
		ix.AddRefLen("t", fmt.Sprint("d", i), lang, uint64(100+i), tokens, length)
	}
	ix.Remove("t", "d3") // leaves free slots and term ids behind
	var b Builder
	if err := b.Load(ix.Dump("t")); err != nil {
		t.Fatal(err)
	}
	var back Index
	back.Replace("t", &b)
	if back.Len("t") != ix.Len("t") {
		t.Fatalf("%d documents, want %d", back.Len("t"), ix.Len("t"))
	}
	for _, lang := range []string{"", "de"} {
		q := Analyze(lang, "cat mat garten katze hund red")
		if got, want := back.Stats("t", lang, q...), ix.Stats("t", lang, q...); !reflect.DeepEqual(got, want) {
			t.Errorf("%q stats %+v, want %+v", lang, got, want)
		}
		refs := []uint64{100, 101, 102, 103, 104}
		if got, want := back.ScoreRefs("t", lang, q, refs, Params{}), ix.ScoreRefs("t", lang, q, refs, Params{}); !reflect.DeepEqual(got, want) {
			t.Errorf("%q scores %v, want %v", lang, got, want)
		}
	}
	// The loaded index keeps working as one built by Add.
	back.Remove("t", "d0")
	ix.Remove("t", "d0")
	q := Analyze("", "cat")
	if got, want := back.Stats("t", "", q...), ix.Stats("t", "", q...); !reflect.DeepEqual(got, want) {
		t.Errorf("after a remove: %+v, want %+v", got, want)
	}
}

func TestLoadRefusesInconsistentDumps(t *testing.T) {
	corpora := []DumpCorpus{{Lang: "", Terms: []string{"cat"}, DF: []uint32{1}, Docs: []uint32{0}, Freqs: []uint32{1}}}
	doc := func(change func(d *Dump)) Dump {
		d := Dump{Corpora: corpora, IDs: []string{"a"}, Corpus: []uint32{0}, Refs: []uint64{7}, Lengths: []uint32{1},
			Counts: []uint32{1}, Terms: []uint32{0}, Freqs: []uint32{1}}
		if change != nil {
			change(&d)
		}
		return d
	}
	for name, d := range map[string]Dump{
		"term out of range":   doc(func(d *Dump) { d.Terms[0] = 5 }),
		"corpus out of range": doc(func(d *Dump) { d.Corpus[0] = 2 }),
		"document twice": doc(func(d *Dump) {
			d.IDs, d.Corpus, d.Refs, d.Lengths = []string{"a", "a"}, []uint32{0, 0}, []uint64{1, 2}, []uint32{1, 1}
			d.Counts, d.Terms, d.Freqs = []uint32{1, 1}, []uint32{0, 0}, []uint32{1, 1}
			d.Corpora = []DumpCorpus{{Terms: []string{"cat"}, DF: []uint32{2}, Docs: []uint32{0, 1}, Freqs: []uint32{1, 1}}}
		}),
		"postings miscounted": doc(func(d *Dump) {
			d.Corpora = []DumpCorpus{{Terms: []string{"cat"}, DF: []uint32{2}, Docs: []uint32{0, 0}, Freqs: []uint32{1, 1}}}
		}),
		"posting of no document": doc(func(d *Dump) {
			d.Corpora = []DumpCorpus{{Terms: []string{"cat"}, DF: []uint32{1}, Docs: []uint32{3}, Freqs: []uint32{1}}}
		}),
		"postings short": doc(func(d *Dump) {
			d.Corpora = []DumpCorpus{{Terms: []string{"cat"}, DF: []uint32{1}}}
		}),
		"freqs short":       doc(func(d *Dump) { d.Freqs = nil }),
		"counts over terms": doc(func(d *Dump) { d.Counts[0] = 2 }),
		"terms left over":   doc(func(d *Dump) { d.Counts[0] = 0 }),
		"a column short":    doc(func(d *Dump) { d.Refs = nil }),
		"frequency zero":    doc(func(d *Dump) { d.Freqs[0] = 0 }),
		"no id":             doc(func(d *Dump) { d.IDs[0] = "" }),
	} {
		var b Builder
		if err := b.Load(d); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	var b Builder
	if err := b.Load(doc(nil)); err != nil {
		t.Fatal(err)
	}
	if ref, ok := b.Ref("a"); !ok || ref != 7 {
		t.Fatalf("Ref(a) = %d, %v", ref, ok)
	}
	if _, ok := b.Ref("b"); ok {
		t.Fatal("Ref(b) found")
	}
}

// loadedPair is an index of n documents built by adds and removes, and the same index read back
// from its dump (Dump, Load, Replace), whose index of documents by id is left to its first use.
func loadedPair(t *testing.T, n int) (built, loaded *Index) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	built, loaded = &Index{}, &Index{}
	// Ids added out of order and some removed: the index's order is not the ids', and it has
	// free slots.
	for i := range n {
		lang := []string{"", "de", "en"}[i%3]
		tokens := make([]string, 1+rng.IntN(12))
		for j := range tokens {
			tokens[j] = fmt.Sprint("w", rng.IntN(50))
		}
		built.AddRef("t", fmt.Sprintf("d%03d", (i*37)%n), lang, uint64(1000+i), tokens)
		if i%7 == 3 {
			built.Remove("t", fmt.Sprintf("d%03d", (i*37)%n))
		}
	}
	d := built.Dump("t")
	d.SortByID()
	if !slices.IsSorted(d.IDs) {
		t.Fatalf("dump not in id order: %v", d.IDs[:5])
	}
	var b Builder
	if err := b.Load(d); err != nil {
		t.Fatal(err)
	}
	if b.t.docs != nil {
		t.Fatal("a dump in id order was indexed by id at its load")
	}
	loaded.Replace("t", &b)
	return built, loaded
}

// answersAsBuilt fails t where loaded answers a query other than built does.
func answersAsBuilt(t *testing.T, when string, built, loaded *Index, refs []uint64) {
	t.Helper()
	if loaded.Len("t") != built.Len("t") {
		t.Errorf("%s: %d documents, want %d", when, loaded.Len("t"), built.Len("t"))
	}
	for _, lang := range []string{"", "de", "en"} {
		q := []string{"w1", "w7", "w13", "w42", "fresh", "none"}
		if got, want := loaded.Stats("t", lang), built.Stats("t", lang); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q stats differ", when, lang)
		}
		if got, want := loaded.Search("t", lang, q, 20, Params{}), built.Search("t", lang, q, 20, Params{}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q search %v, want %v", when, lang, got, want)
		}
		if got, want := loaded.ScoreRefs("t", lang, q, refs, Params{}), built.ScoreRefs("t", lang, q, refs, Params{}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q scores differ", when, lang)
		}
		if got, want := loaded.Holding("t", lang, q, 30), built.Holding("t", lang, q, 30); !slices.Equal(got, want) {
			t.Errorf("%s: %q holding %v, want %v", when, lang, got, want)
		}
	}
	sortedTerms := func(lists [][]string) [][]string {
		for _, l := range lists {
			slices.Sort(l)
		}
		return lists
	}
	if got, want := sortedTerms(loaded.RefTerms("t", refs)), sortedTerms(built.RefTerms("t", refs)); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ref terms differ", when)
	}
	each := func(ix *Index) map[uint64][]string {
		out := map[uint64][]string{}
		ix.Each("t", func(ref uint64, terms []string) { out[ref] = slices.Sorted(slices.Values(terms)) })
		return out
	}
	if got, want := each(loaded), each(built); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Each differs", when)
	}
	for i := range 210 {
		id := fmt.Sprintf("d%03d", i)
		got, want := loaded.DocTerms("t", id), built.DocTerms("t", id)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: DocTerms(%s) = %v, want %v", when, id, got, want)
		}
	}
}

// TestLoadedIndexAnswersAsBuilt: an index read back from its dump answers every query as the
// index it was dumped from, before and after the first lookup by id (which indexes the ids),
// and keeps answering so through later adds and removes.
func TestLoadedIndexAnswersAsBuilt(t *testing.T) {
	built, loaded := loadedPair(t, 200)
	refs := make([]uint64, 0, 280)
	for r := range uint64(220) {
		refs = append(refs, 1000+r)
	}
	answersAsBuilt(t, "loaded", built, loaded, refs) // its last check is DocTerms: the first lookup by id
	answersAsBuilt(t, "after DocTerms", built, loaded, refs)
	for i := range 60 {
		id := fmt.Sprintf("d%03d", i*3)
		if i%2 == 0 {
			built.Remove("t", id)
			loaded.Remove("t", id)
			continue
		}
		tokens := []string{"w1", fmt.Sprint("w", i), "fresh"}
		built.AddRef("t", id, "de", uint64(5000+i), tokens)
		loaded.AddRef("t", id, "de", uint64(5000+i), tokens)
		refs = append(refs, uint64(5000+i))
	}
	answersAsBuilt(t, "after adds and removes", built, loaded, refs)
	// Each of Remove, Add and Builder.Ref is the first lookup by id of some loaded index.
	for name, first := range map[string]func(*Index){
		"Remove": func(ix *Index) { ix.Remove("t", "d010") },
		"Add":    func(ix *Index) { ix.AddRef("t", "d011", "", 1011, []string{"w1"}) },
	} {
		built, loaded := loadedPair(t, 50)
		first(built)
		first(loaded)
		answersAsBuilt(t, name+" first", built, loaded, append(refs, 1011))
	}
	built, _ = loadedPair(t, 50)
	d := built.Dump("t")
	d.SortByID()
	var b Builder
	if err := b.Load(d); err != nil {
		t.Fatal(err)
	}
	if ref, ok := b.Ref("d048"); !ok || ref != 1004 { // the fifth added
		t.Errorf("Builder.Ref(d048) = %d, %v; want 1004", ref, ok)
	}
}

// TestLoadOfADumpInAnotherOrder: a dump whose documents are not in id order (Dump's own order,
// as snapshots written before SortByID hold) loads as well, indexed by id at once.
func TestLoadOfADumpInAnotherOrder(t *testing.T) {
	built, _ := loadedPair(t, 60)
	d := built.Dump("t")
	if slices.IsSorted(d.IDs) {
		t.Fatal("the dump is in id order already")
	}
	var b Builder
	if err := b.Load(d); err != nil {
		t.Fatal(err)
	}
	if b.t.docs == nil {
		t.Fatal("a dump out of id order was not indexed by id at its load")
	}
	var loaded Index
	loaded.Replace("t", &b)
	refs := make([]uint64, 70)
	for i := range refs {
		refs[i] = uint64(1000 + i)
	}
	answersAsBuilt(t, "out of order", built, &loaded, refs)
}

// TestLoadedIndexConcurrentFirstLookups: the first lookups by id of a loaded index, from
// readers under the read lock (DocTerms) beside searches, build its index of ids once (go test
// -race checks that they do not race).
func TestLoadedIndexConcurrentFirstLookups(t *testing.T) {
	built, loaded := loadedPair(t, 300)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 300 {
				id := fmt.Sprintf("d%03d", (i+w*50)%300)
				got, want := loaded.DocTerms("t", id), built.DocTerms("t", id)
				if len(got) != len(want) {
					t.Errorf("DocTerms(%s): %d terms, want %d", id, len(got), len(want))
					return
				}
				loaded.Search("t", "", []string{"w1", "w2"}, 5, Params{})
			}
		})
	}
	wg.Wait()
}

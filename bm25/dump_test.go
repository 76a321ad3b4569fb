package bm25

import (
	"fmt"
	"reflect"
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

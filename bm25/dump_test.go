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
	good := Dump{Corpora: []DumpCorpus{{Lang: "", Terms: []string{"cat"}}},
		Docs: []DumpDoc{{ID: "a", Terms: []uint32{0}, Freqs: []uint32{1}, Length: 1}}}
	for name, d := range map[string]Dump{
		"term out of range":   {Corpora: good.Corpora, Docs: []DumpDoc{{ID: "a", Terms: []uint32{5}, Freqs: []uint32{1}}}},
		"corpus out of range": {Corpora: good.Corpora, Docs: []DumpDoc{{ID: "a", Corpus: 2}}},
		"document twice":      {Corpora: good.Corpora, Docs: []DumpDoc{good.Docs[0], good.Docs[0]}},
		"freqs short":         {Corpora: good.Corpora, Docs: []DumpDoc{{ID: "a", Terms: []uint32{0}}}},
	} {
		var b Builder
		if err := b.Load(d); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	var b Builder
	if err := b.Load(good); err != nil {
		t.Fatal(err)
	}
}

package graph

import (
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/semvec"
	"github.com/knowmind/knowmind/snapshot"
)

// openSections writes sections as a snapshot file and opens it as a tenant's first load does.
func openSections(t *testing.T, memories int, sections []snapshot.Section) (*restored, error) {
	t.Helper()
	path, key := filepath.Join(t.TempDir(), "index.snap"), SnapshotKey([]byte("test"))
	if err := snapshot.WriteFile(path, key, snapshot.Tag{Tenant: "t", Memories: memories}, sections); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.Open(path, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return decodeSnapshot(r, nil)
}

// TestSnapshotSectionsRoundTrip: a tenant's caches written as writeSnapshot writes them and read
// back as an open reads them hold the same memories, statistics, term lists and vectors, and
// the text indexes answer every query as the ones written.
func TestSnapshotSectionsRoundTrip(t *testing.T) {
	x := syntheticIndex(1500) // two vector blocks, the second part full
	x.removeMemoryLocked("t", "mem-000007")
	// A memory in the removed one's place: the indexes' order is no longer the ids' (the file's
	// is).
	late := analysedDoc{ID: "mem-late#0", UID: 0x9000, Tokens: []string{"w1", "w17", "late"}, Length: 3,
		Title: []string{"w333"}, Vec: make([]float32, 384)}
	x.addMemoryLocked("t", "mem-late", []analysedDoc{late})
	if slices.IsSorted(x.ix.Dump("t").IDs) {
		t.Fatal("the index's documents are in id order already")
	}
	res, err := openSections(t, len(x.memories), x.sections())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.memories, x.memories) || !maps.Equal(res.shas, x.shas) {
		t.Fatal("memories or shas differ")
	}
	var text, titles bm25.Index
	text.Replace("t", res.text)
	titles.Replace("t", res.titles)
	for _, pair := range [][2]*bm25.Index{{&text, &x.ix}, {&titles, &x.titles}} {
		got, want := pair[0], pair[1]
		if got.Len("t") != want.Len("t") {
			t.Fatalf("%d documents, want %d", got.Len("t"), want.Len("t"))
		}
		for id, docs := range x.memories {
			for _, doc := range docs {
				g, w := got.DocTerms("t", doc), want.DocTerms("t", doc)
				slices.Sort(g)
				slices.Sort(w)
				if !slices.Equal(g, w) {
					t.Fatalf("%s: terms %v, want %v", id, g, w)
				}
			}
		}
		q := []string{"w1", "w17", "w333", "w19999", "late"}
		if g, w := got.Stats("t", "", q...), want.Stats("t", "", q...); !reflect.DeepEqual(g, w) {
			t.Fatalf("stats %+v, want %+v", g, w)
		}
		if g, w := got.Search("t", "", q, 10, bm25.Params{}), want.Search("t", "", q, 10, bm25.Params{}); !reflect.DeepEqual(g, w) {
			t.Fatalf("search %v, want %v", g, w)
		}
		refs := []uint64{0x9000, 0x10000, 0x10007, 0x10000 + 1499, 0x10000 + 1500}
		for i := range 200 {
			refs = append(refs, uint64(0x10000+i*7))
		}
		if g, w := got.ScoreRefs("t", "", q, refs, bm25.Params{}), want.ScoreRefs("t", "", q, refs, bm25.Params{}); !maps.Equal(g, w) {
			t.Fatalf("scores %v, want %v", g, w)
		}
		if g, w := got.Holding("t", "", q, 50), want.Holding("t", "", q, 50); !slices.Equal(g, w) {
			t.Fatalf("holding %v, want %v", g, w)
		}
	}
	if res.vecs.len() != x.vec.len() || res.vecs.dim != x.vec.dim || !reflect.DeepEqual(res.vecs.byMemory, x.vec.byMemory) {
		t.Fatalf("%d vectors of %d dimensions, want %d of %d", res.vecs.len(), res.vecs.dim, x.vec.len(), x.vec.dim)
	}
	for uid, slot := range x.vec.slot {
		if !slices.Equal(res.vecs.vecs.Vector(res.vecs.slot[uid], nil), x.vec.vecs.Vector(slot, nil)) {
			t.Fatalf("chunk %d: another vector", uid)
		}
	}
	if res.words.Bytes() != x.words.Bytes() {
		t.Fatalf("word vectors of %d bytes, want %d", res.words.Bytes(), x.words.Bytes())
	}
}

// TestSnapshotSectionCutsAreCorrupt: a section cut short inside a whole, authentic file (as a
// writer's bug would leave it) is refused as corrupt by its decoder, never read as whole nor a
// panic; so is a file without one of the sections every snapshot has.
func TestSnapshotSectionCutsAreCorrupt(t *testing.T) {
	x := syntheticIndex(40)
	sections := x.sections()
	for i, s := range sections {
		step := max(1, len(s.Data)/60)
		for cut := 0; cut < len(s.Data); cut += step {
			bad := slices.Clone(sections)
			bad[i].Data = s.Data[:cut]
			if _, err := openSections(t, len(x.memories), bad); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("%s cut to %d of %d bytes: %v", s.Name, cut, len(s.Data), err)
			}
		}
		if s.Name == sectionSequences {
			continue // absent when no memory has a place
		}
		without := slices.Delete(slices.Clone(sections), i, i+1)
		if _, err := openSections(t, len(x.memories), without); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("without %s: %v", s.Name, err)
		}
	}
	if _, err := openSections(t, len(x.memories)+1, sections); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("tagged with another count: %v", err)
	}
}

// TestSemanticSectionFlags: the semantic section keeps whether its model is current and whether
// it is partial, and a reader that knows only the current flag (the whole flag equal to it)
// takes a partial model for a stale one.
func TestSemanticSectionFlags(t *testing.T) {
	var docs []semvec.Doc
	for i := range 30 {
		docs = append(docs, semvec.Doc{Ref: uint64(i + 1), Terms: []string{"w" + strconv.Itoa(i%7), "w" + strconv.Itoa(i%5), "common"}})
	}
	state := semvec.Build(docs, semOptions).State()
	for _, c := range []struct{ current, partial bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		b := encodeSemantic(state, c.current, c.partial)
		m, current, partial, err := decodeSemantic(b)
		if err != nil || current != c.current || partial != c.partial || !reflect.DeepEqual(m.State(), state) {
			t.Fatalf("%+v: read back current %v, partial %v, same model %v, %v", c, current, partial, err == nil && reflect.DeepEqual(m.State(), state), err)
		}
		if old := snapshot.NewDec(b).Uvarint() == 1; old != (c.current && !c.partial) {
			t.Fatalf("%+v: a reader of the current flag alone takes it as current: %v", c, old)
		}
	}
}

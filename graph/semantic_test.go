package graph_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/search"
)

// The semantic model (graph/semantic.go) is a cache derived from the text index: after every
// write or removal, the next recall starts a rebuild, and the rebuilt model holds exactly the
// chunks the text index holds.
func TestSemanticModelFollowsWrites(t *testing.T) {
	defer graph.SetSemanticRebuildEvery(0)()
	f := newRecallFixture(t)
	pool := with(func(_ *search.Plan, w *search.Weights) { w.SemanticPool = 5 })
	for i := range 12 { // distinct texts (the same content twice is one memory), ≥ semMinDocs chunks
		f.store(fmt.Sprintf("Pottery %d", i), fmt.Sprintf("Pottery class %d fired clay bowls in the kiln and glazed the vases.", i))
		f.store(fmt.Sprintf("Hiking %d", i), fmt.Sprintf("Hike %d climbed the mountain ridge above the forest lake.", i))
	}
	check := func(when string) []uint64 {
		t.Helper()
		f.recallWith(knowmind.RecallQuery{Query: "kiln and glaze", K: 5}, pool)
		refs, current := f.ten.SemanticState()
		if !current {
			// The recall that saw the change started the rebuild; the state waits for it.
			f.recallWith(knowmind.RecallQuery{Query: "kiln and glaze", K: 5}, pool)
			refs, current = f.ten.SemanticState()
		}
		if !current {
			t.Fatalf("%s: the semantic model is not current after a rebuild", when)
		}
		if text := f.ten.TextRefs(); !slices.Equal(refs, text) || len(refs) == 0 {
			t.Fatalf("%s: the semantic model holds %d chunks %v, the text index %d %v", when, len(refs), refs, len(text), text)
		}
		return refs
	}
	first := check("after the first recall")

	if _, err := f.ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Garden",
		Content: "The garden beds hold tomatoes, beans and herbs watered every morning.", Source: "garden.md"}); err != nil {
		t.Fatal(err)
	}
	added := check("after a document was added")
	if len(added) != len(first)+1 {
		t.Fatalf("after adding one chunk: %d chunks, before %d", len(added), len(first))
	}
	// The same source again replaces the document: its old chunk stays (closed), a new one is added.
	if _, err := f.ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Garden",
		Content: "The orchard trees carry apples and pears picked in autumn.", Source: "garden.md"}); err != nil {
		t.Fatal(err)
	}
	replaced := check("after the document was replaced")
	if len(replaced) != len(added)+1 {
		t.Fatalf("after replacing the document: %v, before %v", replaced, added)
	}
}

// A build of the semantic model reads each chunk's context from the tenant's open links: both
// ends of a link see each other's chunks, an unlinked memory has none.
func TestSemanticLinksAreContext(t *testing.T) {
	f := newRecallFixture(t)
	a := f.store("Alpha", "The alpha memory talks about pottery.")
	b := f.store("Beta", "The beta memory talks about kilns.")
	f.store("Gamma", "The gamma memory stands alone.")
	f.link(a, b, "RELATES_TO")
	f.recall(knowmind.RecallQuery{Query: "pottery", K: 5}) // loads the text index
	links, err := f.ten.SemanticLinks(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	chunks := f.ten.TextRefs()
	if len(chunks) != 3 {
		t.Fatalf("%d chunks indexed, want 3", len(chunks))
	}
	var linked []uint64
	for from, to := range links {
		if len(to) != 1 || to[0] == from {
			t.Fatalf("chunk %d: context %v, want the one chunk of the other end", from, to)
		}
		if links[to[0]] == nil || links[to[0]][0] != from {
			t.Fatalf("chunk %d links to %d, which does not link back: %v", from, to[0], links)
		}
		linked = append(linked, from)
	}
	if len(linked) != 2 {
		t.Fatalf("%d chunks with context, want the two linked memories' chunks: %v", len(linked), links)
	}
}

// The link read pages through each relation's linked memories: read one memory a page, it
// finds every chunk's context that one page of all finds.
func TestSemanticLinksPaged(t *testing.T) {
	f := newRecallFixture(t)
	var ids []string
	for _, w := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		ids = append(ids, f.store(w, "The "+w+" memory talks about "+w+" things."))
	}
	f.link(ids[0], ids[1], "RELATES_TO")
	f.link(ids[2], ids[3], "RELATES_TO")
	f.link(ids[0], ids[3], "RELATES_TO")
	f.recall(knowmind.RecallQuery{Query: "alpha", K: 5}) // loads the text index
	whole, err := f.ten.SemanticLinks(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	restore := graph.SetSemLinksPage(1)
	defer restore()
	paged, err := f.ten.SemanticLinks(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 4 {
		t.Fatalf("%d chunks with context, want the four linked memories' chunks: %v", len(whole), whole)
	}
	if len(paged) != len(whole) {
		t.Fatalf("paged read: %d chunks with context, want %d: %v against %v", len(paged), len(whole), paged, whole)
	}
	for c, to := range whole {
		got := slices.Sorted(slices.Values(paged[c]))
		if want := slices.Sorted(slices.Values(to)); !slices.Equal(got, want) {
			t.Fatalf("chunk %d: paged context %v, want %v", c, got, want)
		}
	}
}

// A memory that shares no word with the query, but whose words the tenant uses alongside the
// query's, reaches the hits through the semantic pool (the default) — above every memory of an
// unrelated topic — and without it scores nothing.
func TestRecallSemanticPoolFindsWithoutSharedWords(t *testing.T) {
	f := newRecallFixture(t)
	pottery := []string{"pottery", "clay", "kiln", "glaze", "wheel", "ceramic", "bowls", "studio"}
	hiking := []string{"hiking", "trail", "mountain", "ridge", "forest", "lake", "boots", "summit"}
	for i := range 12 { // distinct texts, ≥ semMinDocs chunks in all
		var p, h []string
		for j := range 5 {
			p = append(p, pottery[(i+j*3)%len(pottery)])
			h = append(h, hiking[(i+j*3)%len(hiking)])
		}
		f.store(fmt.Sprintf("Studio %d", i), fmt.Sprintf("Notes on %s (entry %d).", strings.Join(p, ", "), i))
		f.store(fmt.Sprintf("Outing %d", i), fmt.Sprintf("Notes on %s (entry %d).", strings.Join(h, ", "), i))
	}
	target := f.store("Weekend", "Throwing pottery on the wheel all Saturday.")
	q := knowmind.RecallQuery{Query: "kiln glaze", K: knowmind.RecallMaxK}
	// store_memory's conflict check recalls the nearest memories, so the first store built the
	// model from one chunk (empty: below semMinDocs), and the later stores came within
	// semRebuildEvery of that build. Let the next recall rebuild it from the whole tenant, as
	// the first recall after semRebuildEvery does.
	restore := graph.SetSemanticRebuildEvery(0)
	f.recall(q) // starts the rebuild
	refs, current := f.ten.SemanticState()
	restore()
	if chunks := f.ten.TextRefs(); !current || !slices.Equal(refs, chunks) {
		t.Fatalf("semantic model (current %v) holds %d chunks, the text index %d", current, len(refs), len(chunks))
	}
	// score is the target's score and how many unrelated memories rank above it (-1: not a hit).
	score := func(o search.Options) (float64, int) {
		unrelated := 0
		for _, h := range f.recallWith(q, o).Hits {
			if h.MemoryID == target {
				return h.Score, unrelated
			}
			if strings.HasPrefix(h.Title, "Outing") {
				unrelated++
			}
		}
		return -1, unrelated
	}
	if s, _ := score(with(func(_ *search.Plan, w *search.Weights) { w.SemanticPool = 0 })); s > 0 {
		t.Fatalf("without the semantic pool the memory scores %.3f: the test does not test the pool", s)
	}
	s, above := score(search.Default())
	if s <= 0 || above > 0 {
		t.Fatalf("with the semantic pool: score %.3f, %d unrelated memories above it; want a score and none above", s, above)
	}
	// The pool is text candidates: without the text signal (the speed benchmark's vector
	// recall@10 row) the hits are the vector signal's alone, as without the model.
	vectorOnly := f.recallWith(q, with(func(p *search.Plan, _ *search.Weights) { p.TextScore = false }))
	noModel := f.recallWith(q, with(func(p *search.Plan, w *search.Weights) { p.TextScore, w.SemanticPool, w.Concept = false, 0, 0 }))
	if !slices.EqualFunc(vectorOnly.Hits, noModel.Hits, func(a, b knowmind.RecallHit) bool { return a.MemoryID == b.MemoryID && a.Score == b.Score }) {
		t.Fatalf("without the text signal the pool still counts:\n%+v\nwithout the model:\n%+v", vectorOnly.Hits, noModel.Hits)
	}
}

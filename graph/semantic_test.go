package graph_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// newLinkedFixture is a tenant of five memories, four of them linked (0-1, 2-3, 0-3), with its
// text index loaded.
func newLinkedFixture(t *testing.T) *recallFixture {
	f := newRecallFixture(t)
	var ids []string
	for _, w := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		ids = append(ids, f.store(w, "The "+w+" memory talks about "+w+" things."))
	}
	f.link(ids[0], ids[1], "RELATES_TO")
	f.link(ids[2], ids[3], "RELATES_TO")
	f.link(ids[0], ids[3], "RELATES_TO")
	f.recall(knowmind.RecallQuery{Query: "alpha", K: 5}) // loads the text index
	return f
}

// The link read pages through each relation's linked memories: read one memory a page, it
// finds every chunk's context that one page of all finds.
func TestSemanticLinksPaged(t *testing.T) {
	f := newLinkedFixture(t)
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

// storeLinkedTopics stores two topics of 12 memories each (≥ semMinDocs chunks) and links each
// pottery memory to a hiking one, so a model built with links differs from one built without.
func storeLinkedTopics(f *recallFixture) {
	f.t.Helper()
	for i := range 12 {
		p := f.store(fmt.Sprintf("Pottery %d", i), fmt.Sprintf("Pottery class %d fired clay bowls in the kiln and glazed the vases.", i))
		h := f.store(fmt.Sprintf("Hiking %d", i), fmt.Sprintf("Hike %d climbed the mountain ridge above the forest lake.", i))
		if i%2 == 0 {
			f.link(p, h, "RELATES_TO")
		}
	}
}

// failLinks is a semantic link-read hook that fails the pages it is told to and counts them all.
type failLinks struct {
	mu    sync.Mutex
	fail  func(call int) bool // call counts from 1
	calls int
	sizes []int
}

func (h *failLinks) hook(_ string, size int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	h.sizes = append(h.sizes, size)
	if h.fail != nil && h.fail(h.calls) {
		return errors.New("test: page past its deadline")
	}
	return nil
}

func (h *failLinks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// A page of the link read that fails is read again at half the size, and the read finds every
// chunk's context as before; a page that fails again fails the read.
func TestSemanticLinksPageRetried(t *testing.T) {
	f := newLinkedFixture(t)
	whole, err := f.ten.SemanticLinks(f.ctx)
	if err != nil || len(whole) != 4 {
		t.Fatalf("%d chunks with context, want the four linked memories' chunks: %v, %v", len(whole), whole, err)
	}
	defer graph.SetSemLinksPage(4)()
	h := &failLinks{fail: func(call int) bool { return call == 1 }}
	defer graph.SetSemLinksHook(h.hook)()
	retried, err := f.ten.SemanticLinks(f.ctx)
	if err != nil {
		t.Fatalf("a page that failed once: %v", err)
	}
	if len(h.sizes) < 2 || h.sizes[0] != 4 || slices.ContainsFunc(h.sizes[1:], func(s int) bool { return s != 2 }) {
		t.Fatalf("page sizes read %v, want 4 (failed) and then 2", h.sizes)
	}
	if !maps.EqualFunc(retried, whole, func(a, b []uint64) bool {
		return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
	}) {
		t.Fatalf("after a retried page: %v, want %v", retried, whole)
	}
	h2 := &failLinks{fail: func(call int) bool { return call <= 2 }}
	defer graph.SetSemLinksHook(h2.hook)()
	if links, err := f.ten.SemanticLinks(f.ctx); err == nil || h2.count() != 2 {
		t.Fatalf("a page that failed twice: %v, %v after %d pages, want an error after 2", links, err, h2.count())
	}
}

// A model built while its link read fails is partial: it serves, built without the links, and
// without any write a later recall rebuilds it with them (after semLinksRetry, doubling). A
// lasting failure gets SemLinksRetries repairs, no more.
func TestSemanticModelRepairsLinks(t *testing.T) {
	f := newRecallFixture(t)
	storeLinkedTopics(f)
	q := knowmind.RecallQuery{Query: "kiln and glaze", K: 5}
	f.recall(q) // loads the text index
	text := f.ten.TextRefs()
	plain, _ := f.ten.BuildSemanticState(false)
	want, partial := f.ten.BuildSemanticState(true)
	if partial || reflect.DeepEqual(want, plain) {
		t.Fatalf("with links (partial %v) the model is the one without: the test does not test links", partial)
	}
	defer graph.SetSemLinksRetry(20 * time.Millisecond)()
	// until recalls until done holds (each waits for the build it started) or the time is up.
	until := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within 30 s: %s", what)
			}
			f.recall(q)
		}
	}

	// A lasting failure: the first build and SemLinksRetries repairs, two pages each (the page
	// and its half), then none.
	always := &failLinks{fail: func(int) bool { return true }}
	restore := graph.SetSemLinksHook(always.hook)
	f.ten.DropSemanticModel()
	f.recall(q) // builds the model, in the recall
	m, partial, _ := f.ten.SemanticModel()
	if !partial || !reflect.DeepEqual(m.State(), plain) {
		t.Fatalf("built while the links fail: partial %v, the model without links %v", partial, reflect.DeepEqual(m.State(), plain))
	}
	until("every repair tried", func() bool { _, _, n := f.ten.SemanticModel(); return n == graph.SemLinksRetries })
	time.Sleep(20 * time.Millisecond << graph.SemLinksRetries) // twice the last wait
	f.recall(q)
	m, partial, _ = f.ten.SemanticModel()
	if calls := always.count(); calls != 2*(1+graph.SemLinksRetries) || !partial || !reflect.DeepEqual(m.State(), plain) {
		t.Fatalf("after every repair failed: %d pages read, want %d; partial %v", calls, 2*(1+graph.SemLinksRetries), partial)
	}
	restore()

	// The read fails once (its page and the page's half), then works: the partial model is
	// replaced by the one with links, the text index unchanged.
	once := &failLinks{fail: func(call int) bool { return call <= 2 }}
	defer graph.SetSemLinksHook(once.hook)()
	f.ten.DropSemanticModel()
	f.recall(q)
	if m, partial, _ := f.ten.SemanticModel(); !partial || !reflect.DeepEqual(m.State(), plain) {
		t.Fatalf("built while the links fail: partial %v", partial)
	}
	until("the model rebuilt with its links", func() bool { _, partial, _ := f.ten.SemanticModel(); return !partial })
	m, _, repairs := f.ten.SemanticModel()
	if !reflect.DeepEqual(m.State(), want) || repairs != 0 || once.count() < 3 {
		t.Fatalf("after the repair: the model with links %v, %d repairs pending, %d pages read",
			reflect.DeepEqual(m.State(), want), repairs, once.count())
	}
	if now := f.ten.TextRefs(); !slices.Equal(now, text) {
		t.Fatalf("the text index changed during the test: %d chunks, before %d", len(now), len(text))
	}
}

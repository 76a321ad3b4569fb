package wordvec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// topics builds documents of two topics plus words common to both; "kitten" only ever appears
// with pet words and "dividend" only with finance words, never together with the other.
func topics(n int, seed uint64) [][]string {
	pets := []string{"cat", "dog", "vet", "fur", "leash", "puppy", "bark", "purr"}
	money := []string{"stock", "bond", "market", "trade", "price", "broker", "yield", "fund"}
	common := []string{"today", "really", "think", "good", "time"}
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(from []string, k int) []string {
		out := make([]string, 0, k)
		for _, i := range r.Perm(len(from))[:k] {
			out = append(out, from[i])
		}
		return out
	}
	var docs [][]string
	for i := range n {
		var d []string
		if i%2 == 0 {
			d = pick(pets, 4)
			if i%6 == 0 {
				d = append(d, "kitten")
			}
		} else {
			d = pick(money, 4)
			if i%6 == 1 {
				d = append(d, "dividend")
			}
		}
		docs = append(docs, append(d, pick(common, 2)...))
	}
	return docs
}

func TestSharedContextsEndCloser(t *testing.T) {
	m := New(0)
	for _, d := range topics(600, 1) {
		m.Add(d)
	}
	near, scores := m.Nearest("kitten", 5, nil)
	if len(near) != 5 {
		t.Fatalf("nearest of kitten: %v", near)
	}
	pets := map[string]bool{"cat": true, "dog": true, "vet": true, "fur": true, "leash": true, "puppy": true, "bark": true, "purr": true}
	for _, w := range near {
		if !pets[w] {
			t.Errorf("nearest of kitten %v (%v): %q is not a pet word", near, scores, w)
		}
	}
	// "kitten" and "dividend" never share a document with each other's topic: a query naming
	// one is closer to a text of its topic that does not contain it than to the other topic.
	sim := m.Similarity([]string{"kitten"}, [][]string{{"dog", "vet"}, {"bond", "yield"}, {"really", "good"}})
	if !(sim[0] > 0.3 && sim[1] < sim[0]-0.3) {
		t.Errorf("kitten vs pet text %.3f, vs finance text %.3f: want the pet text clearly closer", sim[0], sim[1])
	}
	sim = m.Similarity([]string{"dividend"}, [][]string{{"dog", "vet"}, {"bond", "yield"}})
	if !(sim[1] > 0.3 && sim[0] < sim[1]-0.3) {
		t.Errorf("dividend vs pet text %.3f, vs finance text %.3f: want the finance text clearly closer", sim[0], sim[1])
	}
	// The words every document uses carry no topic: centring leaves them near neither.
	sim = m.Similarity([]string{"kitten"}, [][]string{{"really", "good"}})
	if sim[0] > 0.3 {
		t.Errorf("kitten vs common words %.3f: want low", sim[0])
	}
}

func TestRemoveUndoesAdd(t *testing.T) {
	docs := topics(200, 2)
	m := New(0)
	for _, d := range docs[:100] {
		m.Add(d)
	}
	want := m.Similarity([]string{"kitten", "cat"}, [][]string{{"dog"}, {"bond"}, {"vet", "fur"}})
	for _, d := range docs[100:] {
		m.Add(d)
	}
	// Asked between the writes: the cached vectors of the 200-document model must not
	// outlive the removals below.
	if mid := m.Similarity([]string{"kitten", "cat"}, [][]string{{"dog"}, {"bond"}, {"vet", "fur"}}); slices.Equal(mid, want) {
		t.Errorf("adding 100 documents changed no similarity: %v", mid)
	}
	// Removed in another order than added.
	for i := len(docs) - 1; i >= 100; i-- {
		m.Remove(docs[i])
	}
	got := m.Similarity([]string{"kitten", "cat"}, [][]string{{"dog"}, {"bond"}, {"vet", "fur"}})
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("similarity %d after add and remove: %v, want %v", i, got[i], want[i])
		}
	}
	for _, d := range docs[:100] {
		m.Remove(d)
	}
	if m.Docs() != 0 || m.Len() != 0 || len(m.slot) != 0 {
		t.Errorf("after removing everything: docs %d, terms %d, rows %d", m.Docs(), m.Len(), len(m.slot))
	}
	for d, v := range m.global {
		if v != 0 {
			t.Fatalf("global sum not zero at %d: %v", d, v)
		}
	}
	for i, v := range m.ctx {
		if v != 0 {
			t.Fatalf("freed rows not zero at %d: %v", i, v)
		}
	}
}

func TestCapBoundsRows(t *testing.T) {
	m := New(10)
	for i := range 50 {
		m.Add([]string{fmt.Sprintf("w%d", i), fmt.Sprintf("w%d", i+1), "x"})
	}
	if len(m.slot) != 10 || len(m.ctx) != 10*Dims {
		t.Fatalf("rows %d, floats %d: want 10 rows", len(m.slot), len(m.ctx))
	}
	if m.Len() != 52 {
		t.Errorf("terms counted %d, want 52", m.Len())
	}
	// A term without a row has no vector: nothing is similar to it.
	if near, _ := m.Nearest("w40", 3, nil); near != nil {
		t.Errorf("a term beyond the cap has neighbours %v", near)
	}
	// A row freed by removal goes to the next new term, and it holds only its own documents.
	m.Remove([]string{"w0", "w1", "x"})
	m.Add([]string{"fresh", "x"})
	if _, ok := m.slot["fresh"]; !ok {
		t.Errorf("a new term did not get the freed row")
	}
}

func TestIndexVectors(t *testing.T) {
	a, b := index("kitten"), index("kitten")
	if a != b {
		t.Fatal("index vector not deterministic")
	}
	var plus, minus int
	seen := map[uint8]bool{}
	for _, e := range a {
		if seen[e.pos] {
			t.Fatalf("position %d twice", e.pos)
		}
		seen[e.pos] = true
		if e.sign > 0 {
			plus++
		} else {
			minus++
		}
	}
	if plus != Nonzero/2 || minus != Nonzero/2 {
		t.Errorf("signs %d+ %d-", plus, minus)
	}
}

// similarityFixture is the similarity benchmarks' workload: a 10k-chunk corpus of 20-term chunks
// over a Zipf-distributed 20k-term vocabulary, 500 candidate chunks and a 6-term query.
func similarityFixture() (m *Model, q []string, cands [][]string) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%d", i)
	}
	// Zipf-like term choice, as in text.
	z := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	doc := func() []string {
		d := make([]string, 20)
		for i := range d {
			d[i] = vocab[z.Uint64()]
		}
		return d
	}
	m = New(0)
	for range 10000 {
		m.Add(doc())
	}
	cands = make([][]string, 500)
	for i := range cands {
		cands[i] = doc()
	}
	return m, doc()[:6], cands
}

// BenchmarkSimilarity is recall's cost: a 6-term query against 500 candidate chunks of 20 terms
// from a 10k-chunk corpus.
func BenchmarkSimilarity(b *testing.B) {
	m, q, cands := similarityFixture()
	b.ResetTimer()
	for b.Loop() {
		m.Similarity(q, cands)
	}
}

// BenchmarkSimilarityKeyed: the same with the candidates keyed (recall passes chunk uids), once
// their norms are cached.
func BenchmarkSimilarityKeyed(b *testing.B) {
	m, q, cands := similarityFixture()
	keys := make([]uint64, len(cands))
	for i := range keys {
		keys[i] = uint64(i + 1)
	}
	m.SimilarityKeyed(q, keys, cands)
	b.ResetTimer()
	for b.Loop() {
		m.SimilarityKeyed(q, keys, cands)
	}
}

// BenchmarkAdd is the cost of counting one 20-term chunk (load and ingest hooks).
func BenchmarkAdd(b *testing.B) {
	m := New(0)
	d := make([]string, 20)
	for i := range d {
		d[i] = fmt.Sprintf("t%d", i)
	}
	for b.Loop() {
		m.Add(d)
	}
}

// TestMemoryPer100kChunks measures what the package comment promises: 100k chunks of 30
// distinct terms drawn from a 50k-term vocabulary (more than the cap) hold the capped rows,
// as many again for the rows' cached weighted vectors, and a count per term: about 45 MB.
func TestMemoryPer100kChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~45 MB")
	}
	const docs, vocab = 100_000, 50_000
	terms := make([]string, vocab)
	for i := range terms {
		terms[i] = fmt.Sprintf("term%05d", i)
	}
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.1, 2, vocab-1)
	doc := make([]string, 30)
	before := heapInUse()
	m := New(0)
	start := time.Now()
	for range docs {
		for i := range doc {
			doc[i] = terms[z.Uint64()]
		}
		m.Add(doc)
	}
	took := time.Since(start)
	after := heapInUse()
	runtime.KeepAlive(terms)
	runtime.KeepAlive(m)
	mb := float64(after-before) / 1e6
	t.Logf("%d chunks, %d terms, %d rows: %.1f MB; counted in %s", docs, m.Len(), len(m.slot), mb, took.Round(time.Millisecond))
	if len(m.slot) > DefaultCap {
		t.Errorf("%d rows above the cap %d", len(m.slot), DefaultCap)
	}
	if mb > 56 {
		t.Errorf("%.1f MB for 100k chunks; the package comment promises about 45 MB", mb)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}

// SimilarityKeyed gives Similarity's scores, from cached text norms on a second call, and
// forgets the norms at a write (a stale norm would give another cosine than a fresh one).
func TestSimilarityKeyed(t *testing.T) {
	docs := topics(300, 3)
	m := New(0)
	for _, d := range docs[:200] {
		m.Add(d)
	}
	q := []string{"kitten", "cat", "bond"}
	texts := docs[200:260]
	keys := make([]uint64, len(texts))
	for i := range keys {
		keys[i] = uint64(i + 1)
	}
	near := func(stage string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Fatalf("%s: text %d: %v, want %v", stage, i, got[i], want[i])
			}
		}
	}
	want := m.Similarity(q, texts)
	near("first call", m.SimilarityKeyed(q, keys, texts), want)
	near("cached norms", m.SimilarityKeyed(q, keys, texts), want)
	for _, d := range docs[260:] {
		m.Add(d)
	}
	fresh := m.Similarity(q, texts)
	near("after writes", m.SimilarityKeyed(q, keys, texts), fresh)
	if slices.Equal(fresh, want) {
		t.Fatal("the writes changed no similarity: the test proves nothing")
	}
}

// BenchmarkSimilarityVaried is recall's pattern at 100k chunks (the speed benchmark's): every
// call a different query and 160 keyed candidate chunks of 36 terms, from a corpus whose
// vocabulary (60k terms, Zipf) exceeds the rows' cap, 64 such recalls in turn.
func BenchmarkSimilarityVaried(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	vocab := make([]string, 60000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%d", i)
	}
	z := rand.NewZipf(r, 1.05, 2, uint64(len(vocab)-1))
	doc := func(n int) []string {
		d := make([]string, n)
		for i := range d {
			d[i] = vocab[z.Uint64()]
		}
		return d
	}
	m := New(0)
	for range 100_000 {
		m.Add(doc(36))
	}
	type call struct {
		q     []string
		keys  []uint64
		texts [][]string
	}
	calls := make([]call, 64)
	for i := range calls {
		c := call{q: doc(4)}
		for j := range 160 {
			c.keys = append(c.keys, uint64(r.IntN(100_000)+1))
			c.texts = append(c.texts, doc(36))
			_ = j
		}
		calls[i] = c
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		c := calls[i%len(calls)]
		m.SimilarityKeyed(c.q, c.keys, c.texts)
		i++
	}
}

package semvec

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/knowmind/knowmind/wordvec"
)

func TestJacobiEigen(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 9
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	for i := range n {
		for j := 0; j <= i; j++ {
			x := rng.NormFloat64()
			a[i][j], a[j][i] = x, x
		}
	}
	g := make([][]float64, n)
	for i := range g {
		g[i] = slices.Clone(a[i])
	}
	vals, vecs := jacobiEigen(g)
	// A·v = λ·v for every eigenpair.
	for e := range n {
		for i := range n {
			var s float64
			for j := range n {
				s += a[i][j] * vecs[j][e]
			}
			if math.Abs(s-vals[e]*vecs[i][e]) > 1e-9 {
				t.Fatalf("eigenpair %d row %d: A·v %v, λ·v %v", e, i, s, vals[e]*vecs[i][e])
			}
		}
	}
}

func TestRandomizedSVDFindsLeadingSpectrum(t *testing.T) {
	// A symmetric matrix of known rank 3 plus small noise: the three leading singular values
	// come back.
	n := 60
	rng := rand.New(rand.NewPCG(3, 4))
	basis := cols(3, n)
	for c := range basis {
		for r := range basis[c] {
			basis[c][r] = rng.NormFloat64()
		}
	}
	orthonormalize(basis)
	want := []float64{9, 5, 2}
	a := csr{n: n, start: make([]int32, n+1)}
	for r := range n {
		for c := range n {
			var v float64
			for k, s := range want {
				v += s * basis[k][r] * basis[k][c]
			}
			a.col, a.val = append(a.col, int32(c)), append(a.val, float32(v))
		}
		a.start[r+1] = int32(len(a.col))
	}
	_, s := randomizedSVD(&a, 3, Options{}.withDefaults())
	for i, w := range want {
		if math.Abs(s[i]-w) > 1e-3 {
			t.Fatalf("singular values %v, want %v", s, want)
		}
	}
}

// topics builds a corpus in which each topic's words co-occur, plus pairs of synonyms: two
// words of a topic that never share a document (each document uses one of them). A good word
// model puts a synonym near its partner through the neighbours they share.
func topics(seed uint64, nTopics, perTopic, docs int) (corpus [][]string, synonyms [][2]string, common []string) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range 30 {
		common = append(common, fmt.Sprintf("common%d", i))
	}
	word := func(topic, i int) string { return fmt.Sprintf("t%dw%d", topic, i) }
	for tp := range nTopics {
		synonyms = append(synonyms, [2]string{fmt.Sprintf("t%dsynA", tp), fmt.Sprintf("t%dsynB", tp)})
	}
	for range docs {
		tp := rng.IntN(nTopics)
		var d []string
		for range 6 {
			d = append(d, word(tp, rng.IntN(perTopic)))
		}
		for range 2 { // a word of another topic: noise
			d = append(d, word(rng.IntN(nTopics), rng.IntN(perTopic)))
		}
		for range 4 {
			d = append(d, common[rng.IntN(len(common))])
		}
		if rng.IntN(3) == 0 {
			d = append(d, synonyms[tp][rng.IntN(2)])
		}
		corpus = append(corpus, d)
	}
	return corpus, synonyms, common
}

// rankOf is the rank (1 = nearest) of want among the vocabulary by sim to term.
func rankOf(term, want string, vocab []string, sim func(a, b string) float64) int {
	s := sim(term, want)
	r := 1
	for _, v := range vocab {
		if v != term && v != want && sim(term, v) > s {
			r++
		}
	}
	return r
}

// TestWordSimilarityBeatsRandomIndexing compares the two offline word models on the same
// corpus: the mean reciprocal rank of each synonym's partner (they never share a document)
// among all words, and how often a topic word's nearest word is of its own topic.
func TestWordSimilarityBeatsRandomIndexing(t *testing.T) {
	corpus, synonyms, _ := topics(11, 40, 25, 4000)
	docs := make([]Doc, len(corpus))
	ri := wordvec.New(0)
	vocabSet := map[string]bool{}
	for i, d := range corpus {
		docs[i] = Doc{Ref: uint64(i + 1), Terms: d}
		ri.Add(d)
		for _, w := range d {
			vocabSet[w] = true
		}
	}
	m := Build(docs, Options{Vocab: 2048, Dims: 64})
	vocab := make([]string, 0, len(vocabSet))
	for w := range vocabSet {
		vocab = append(vocab, w)
	}
	slices.Sort(vocab)
	riSim := func(a, b string) float64 {
		return ri.Similarity([]string{a}, [][]string{{b}})[0]
	}
	mrr := func(sim func(a, b string) float64) float64 {
		var s float64
		for _, p := range synonyms {
			s += 1 / float64(rankOf(p[0], p[1], vocab, sim))
		}
		return s / float64(len(synonyms))
	}
	svdMRR, riMRR := mrr(m.WordSimilarity), mrr(riSim)
	t.Logf("synonym MRR: PPMI+SVD %.3f, random indexing %.3f", svdMRR, riMRR)
	if svdMRR < riMRR+0.05 || svdMRR < 0.3 {
		t.Fatalf("PPMI+SVD synonym MRR %.3f, random indexing %.3f: want the SVD clearly better and ≥ 0.3", svdMRR, riMRR)
	}
	// Nearest neighbour of topic words within their topic.
	same := func(sim func(a, b string) float64) float64 {
		var ok, n int
		for tp := 0; tp < 40; tp += 4 {
			for i := range 25 {
				w := fmt.Sprintf("t%dw%d", tp, i)
				best, bestS := "", math.Inf(-1)
				for _, v := range vocab {
					if v == w {
						continue
					}
					if s := sim(w, v); s > bestS {
						best, bestS = v, s
					}
				}
				n++
				if len(best) > 0 && best[:len(fmt.Sprintf("t%d", tp))+1] == fmt.Sprintf("t%dw", tp) ||
					best == synonyms[tp][0] || best == synonyms[tp][1] {
					ok++
				}
			}
		}
		return float64(ok) / float64(n)
	}
	svdNN, riNN := same(m.WordSimilarity), same(riSim)
	t.Logf("nearest word in its own topic: PPMI+SVD %.3f, random indexing %.3f", svdNN, riNN)
	if svdNN < riNN {
		t.Fatalf("PPMI+SVD topic neighbours %.3f below random indexing's %.3f", svdNN, riNN)
	}
}

func TestTopNMatchesBruteForce(t *testing.T) {
	corpus, _, _ := topics(5, 20, 20, 1500)
	docs := make([]Doc, len(corpus))
	for i, d := range corpus {
		docs[i] = Doc{Ref: uint64(i + 1), Terms: d}
	}
	m := Build(docs, Options{})
	q := m.Query([]string{"t3w1", "t3w2", "t3w5"})
	if q == nil {
		t.Fatal("no query vector")
	}
	got := m.TopN(q, 20, nil)
	all := m.Scores(q, m.refs)
	type rs struct {
		ref uint64
		s   float32
	}
	var want []rs
	for r, s := range all {
		want = append(want, rs{r, s})
	}
	slices.SortFunc(want, func(a, b rs) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return 0
	})
	if len(got) != 20 {
		t.Fatalf("TopN gave %d", len(got))
	}
	// The scan in parts (as at 100k chunks) gives the same hits as the scan in one.
	defer func(p, procs int) { scanPart = p; runtime.GOMAXPROCS(procs) }(scanPart, runtime.GOMAXPROCS(4))
	scanPart = 100
	if parted := m.TopN(q, 20, nil); !slices.Equal(parted, got) {
		t.Fatalf("TopN in parts %v, in one %v", parted, got)
	}
	for i, h := range got {
		if h.Score != want[i].s {
			t.Fatalf("rank %d: %v, brute force %v", i, h.Score, want[i].s)
		}
	}
	// The top documents are of topic 3 (most of their words).
	topic3 := 0
	for _, h := range got {
		n := 0
		for _, w := range corpus[h.Ref-1] {
			if len(w) > 3 && w[:3] == "t3w" {
				n++
			}
		}
		if n >= 3 {
			topic3++
		}
	}
	if topic3 < 15 {
		t.Fatalf("only %d of the top 20 are about topic 3", topic3)
	}
	skipped := m.TopN(q, 5, func(r uint64) bool { return r == got[0].Ref })
	if skipped[0].Ref == got[0].Ref || skipped[0].Ref != got[1].Ref {
		t.Fatalf("skip: top %v, want %v", skipped[0], got[1])
	}
}

// TopN's order is total: equal scores (here ten copies of one text, scanned in falling
// reference order) come by the lower reference, and the cut keeps the lowest, in one scan or
// in parts, so a recall's semantic pool does not depend on where the documents lie.
func TestTopNTiesByReference(t *testing.T) {
	corpus, _, _ := topics(5, 20, 20, 300)
	var docs []Doc
	for i, d := range corpus {
		docs = append(docs, Doc{Ref: uint64(i + 1), Terms: d})
	}
	for i := range 10 {
		docs = append(docs, Doc{Ref: uint64(2000 - i), Terms: []string{"t3w1", "t3w2", "t3w5", "t3w7"}})
	}
	m := Build(docs, Options{})
	q := m.Query([]string{"t3w1", "t3w2", "t3w5"})
	if q == nil {
		t.Fatal("no query vector")
	}
	want := make([]Hit, 0, len(docs))
	for r, s := range m.Scores(q, m.refs) {
		want = append(want, Hit{Ref: r, Score: s})
	}
	slices.SortFunc(want, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Ref, b.Ref)
	})
	if want[0].Score != want[1].Score {
		t.Fatalf("the copies do not tie: %v", want[:2])
	}
	got := m.TopN(q, 4, nil)
	if !slices.Equal(got, want[:4]) {
		t.Fatalf("TopN = %v, want %v", got, want[:4])
	}
	defer func(p, procs int) { scanPart = p; runtime.GOMAXPROCS(procs) }(scanPart, runtime.GOMAXPROCS(4))
	scanPart = 50
	if parted := m.TopN(q, 4, nil); !slices.Equal(parted, want[:4]) {
		t.Fatalf("TopN in parts = %v, want %v", parted, want[:4])
	}
}

func TestEmptyAndTinyCorpora(t *testing.T) {
	m := Build(nil, Options{})
	if m.Query([]string{"a"}) != nil || m.TopN([]float32{1}, 3, nil) != nil {
		t.Fatal("an empty model answers")
	}
	m = Build([]Doc{{Ref: 1, Terms: []string{"a", "b"}}, {Ref: 2, Terms: []string{"a", "b"}}}, Options{})
	if q := m.Query([]string{"a"}); q != nil {
		if h := m.TopN(q, 5, nil); len(h) > 2 {
			t.Fatalf("TopN gave %d of 2 docs", len(h))
		}
	}
}

// synthetic100k is 100k documents of 20 terms over a 20k-term vocabulary (Zipf-like).
func synthetic100k(n int) []Doc {
	rng := rand.New(rand.NewPCG(9, 9))
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 1)), 1.1, 1, 20000-1)
	docs := make([]Doc, n)
	for i := range docs {
		terms := make([]string, 20)
		for j := range terms {
			terms[j] = fmt.Sprintf("w%d", z.Uint64())
		}
		_ = rng
		docs[i] = Doc{Ref: uint64(i + 1), Terms: terms}
	}
	return docs
}

// TestMemoryPer100k states the built model's memory for 100k documents (go test -run Memory -v).
func TestMemoryPer100k(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100k model")
	}
	docs := synthetic100k(100000)
	m := Build(docs, Options{})
	t.Logf("100k docs: model %d MB, vocabulary %d", m.Bytes()>>20, m.Vocab())
	if m.Bytes() > 40<<20 {
		t.Fatalf("model takes %d MB per 100k documents", m.Bytes()>>20)
	}
}

// BenchmarkBuild100k: building the model from 100k documents (go test -run '^$' -bench Build).
func BenchmarkBuild100k(b *testing.B) {
	docs := synthetic100k(100000)
	b.ResetTimer()
	for range b.N {
		Build(docs, Options{})
	}
}

// BenchmarkTopN100k: one exact scan of 100k document vectors for the top 30.
func BenchmarkTopN100k(b *testing.B) {
	docs := synthetic100k(100000)
	m := Build(docs, Options{})
	q := m.Query([]string{"w3", "w40", "w500"})
	b.ResetTimer()
	for range b.N {
		m.TopN(q, 30, nil)
	}
}

// TestNearLinksWords: a question word and its answers' words never share a document, only
// neighbouring ones (a question turn and its reply). With the neighbours as context the model
// puts them close; without, it cannot.
func TestNearLinksWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	var docs []Doc
	for i := range 600 {
		tp := i % 6
		q := []string{fmt.Sprintf("ask%d", tp), fmt.Sprintf("common%d", rng.IntN(20)), fmt.Sprintf("common%d", rng.IntN(20))}
		a := []string{fmt.Sprintf("reply%d", tp), fmt.Sprintf("detail%d_%d", tp, rng.IntN(5)), fmt.Sprintf("common%d", rng.IntN(20))}
		n := len(docs)
		docs = append(docs, Doc{Ref: uint64(n + 1), Terms: q, Near: []int{n + 1}}, Doc{Ref: uint64(n + 2), Terms: a, Near: []int{n}})
	}
	plain := make([]Doc, len(docs))
	for i, d := range docs {
		plain[i] = Doc{Ref: d.Ref, Terms: d.Terms}
	}
	with, without := Build(docs, Options{}), Build(plain, Options{})
	var sumWith, sumWithout float64
	for tp := range 6 {
		sumWith += with.WordSimilarity(fmt.Sprintf("ask%d", tp), fmt.Sprintf("reply%d", tp))
		sumWithout += without.WordSimilarity(fmt.Sprintf("ask%d", tp), fmt.Sprintf("reply%d", tp))
	}
	t.Logf("question word to its reply word, mean cosine: with neighbours %.3f, without %.3f", sumWith/6, sumWithout/6)
	if sumWith/6 < 0.5 || sumWith/6 < sumWithout/6+0.3 {
		t.Fatalf("with neighbours %.3f, without %.3f: want the neighbours to link the words", sumWith/6, sumWithout/6)
	}
}

// BenchmarkBuild100kNear: the same with each document's 4 neighbours as context (a linked
// conversation or graph).
func BenchmarkBuild100kNear(b *testing.B) {
	docs := synthetic100k(100000)
	for i := range docs {
		for _, j := range []int{i - 2, i - 1, i + 1, i + 2} {
			if j >= 0 && j < len(docs) {
				docs[i].Near = append(docs[i].Near, j)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		Build(docs, Options{ContextWeight: 0.5})
	}
}

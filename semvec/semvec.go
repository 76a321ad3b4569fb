// Package semvec builds a corpus's own word and text vectors offline, without a download: the
// positive pointwise mutual information (PPMI) of the corpus's term co-occurrences within a
// document, reduced by a truncated, randomized singular value decomposition (Halko, Martinsson
// and Tropp: a Gaussian sketch, power iterations, a small dense SVD). Terms used in the same
// contexts — also terms that never meet but share their neighbours — end with similar vectors.
// A text's vector is the IDF-weighted sum of its terms' unit vectors, less the corpus's mean text
// vector, at unit length; TopN scans the texts' vectors exactly for the ones most similar to a
// query's.
//
// A Model is a derived cache, built at once from the documents (Build) and never updated: the
// caller rebuilds it when the corpus changed (graph/semantic.go). Everything is bounded by
// Options: at most Vocab terms hold a vector (the most frequent with df ≥ MinDF), at most
// MaxDocTerms of a document's terms count as its co-occurrences; the co-occurrence counts are a
// dense Vocab² float32 matrix while building (16 MiB at 2048), the PPMI a sparse one.
//
// Memory of a built model: Dims float32 per vocabulary term and per document (256 B per text at
// Dims 64) plus its reference: BenchmarkTopN and TestMemoryPer100k state the cost per 100k texts.
package semvec

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// Options bound a build; zero fields take the defaults.
type Options struct {
	Vocab       int // terms holding a vector (default 2048)
	Dims        int // dimensions of the vectors (default 64)
	MinDF       int // a term needs at least this document frequency (default 2)
	MaxDocTerms int // a document's terms counted as co-occurring, its rarest in-vocabulary ones (default 48)
	Power       int // power iterations of the randomized SVD (default 3)
	Oversample  int // extra sketch columns (default 12)
	Seed        uint64
	// ContextWeight weighs a co-occurrence with a document's Near documents against one within
	// it (default 1); MaxNear bounds the Near documents counted (default 8).
	ContextWeight float32
	MaxNear       int
}

func (o Options) withDefaults() Options {
	if o.Vocab <= 0 {
		o.Vocab = 2048
	}
	if o.Dims <= 0 {
		o.Dims = 64
	}
	if o.MinDF <= 0 {
		o.MinDF = 2
	}
	if o.MaxDocTerms <= 0 {
		o.MaxDocTerms = 48
	}
	if o.Power <= 0 {
		o.Power = 3
	}
	if o.Oversample <= 0 {
		o.Oversample = 12
	}
	if o.ContextWeight <= 0 {
		o.ContextWeight = 1
	}
	if o.MaxNear <= 0 {
		o.MaxNear = 8
	}
	return o
}

// Doc is one document: the caller's reference (a chunk uid) and its analysed terms. Near,
// optional, lists the documents next to it (their indexes in Build's docs; e.g. the turns before
// and after it, the memories it is linked to): their terms count as co-occurring with the
// document's at half weight × ContextWeight (a neighbour that lists it back counts the pair
// from its side too), without entering the document's own vector.
type Doc struct {
	Ref   uint64
	Terms []string
	Near  []int
}

// Model holds the word vectors of a corpus and the vectors of its documents. It is immutable
// after Build and safe for concurrent use.
type Model struct {
	dims  int
	vocab map[string]int32
	words []float32 // vocabulary × dims, unit rows (zero: no vector)
	idf   []float32 // per vocabulary term
	mean  []float32 // the documents' mean weighted vector, subtracted from every text's
	refs  []uint64
	row   map[uint64]int32 // reference → its row in docs
	docs  []float32        // len(refs) × dims, unit rows (zero: no vocabulary term)
	n     int              // documents the model was built from
}

// Dims is the dimension of the model's vectors.
func (m *Model) Dims() int { return m.dims }

// Len is the number of documents the model holds vectors for.
func (m *Model) Len() int { return len(m.refs) }

// Built is the number of documents the model was built from.
func (m *Model) Built() int { return m.n }

// Vocab is the number of terms holding a vector.
func (m *Model) Vocab() int { return len(m.vocab) }

// Bytes estimates the model's memory: its vectors, references and vocabulary.
func (m *Model) Bytes() int {
	b := 4*(len(m.words)+len(m.idf)+len(m.mean)+len(m.docs)) + 8*len(m.refs) + 24*len(m.row)
	for t := range m.vocab {
		b += len(t) + 40
	}
	return b
}

// Build learns the model from docs (every term of a document counts once).
func Build(docs []Doc, o Options) *Model {
	o = o.withDefaults()
	m := &Model{dims: o.Dims, vocab: map[string]int32{}, n: len(docs)}
	// Document frequencies and the vocabulary: the most frequent terms with df ≥ MinDF.
	df := map[string]int32{}
	for _, d := range docs {
		for _, t := range distinct(d.Terms) {
			df[t]++
		}
	}
	var terms []string
	for t, n := range df {
		if int(n) >= o.MinDF {
			terms = append(terms, t)
		}
	}
	slices.SortFunc(terms, func(a, b string) int {
		if c := cmp.Compare(df[b], df[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	terms = terms[:min(len(terms), o.Vocab)]
	v := len(terms)
	for i, t := range terms {
		m.vocab[t] = int32(i)
	}
	m.idf = make([]float32, v)
	for i, t := range terms {
		m.idf[i] = float32(math.Log(1 + float64(len(docs))/float64(df[t])))
	}
	if v < 2 {
		m.finishDocs(docs)
		return m
	}
	// Co-occurrence counts within a document (dense, v²), then PPMI (sparse, symmetric).
	counts := make([]float32, v*v)
	docIDs := make([][]int32, len(docs))
	for i, d := range docs {
		docIDs[i] = m.docIDs(d.Terms, nil, o.MaxDocTerms)
	}
	var ctx []int32
	for i, d := range docs {
		ids := docIDs[i]
		for i, a := range ids {
			for _, b := range ids[i+1:] {
				counts[int(a)*v+int(b)]++
				counts[int(b)*v+int(a)]++
			}
		}
		if len(d.Near) == 0 {
			continue
		}
		ctx = ctx[:0]
		for _, j := range d.Near[:min(len(d.Near), o.MaxNear)] {
			if j >= 0 && j < len(docs) && j != i {
				ctx = append(ctx, docIDs[j]...)
			}
		}
		slices.Sort(ctx)
		ctx = slices.Compact(ctx)
		for _, a := range ids {
			for _, b := range ctx {
				if a != b {
					counts[int(a)*v+int(b)] += 0.5 * o.ContextWeight
					counts[int(b)*v+int(a)] += 0.5 * o.ContextWeight
				}
			}
		}
	}
	docIDs = nil
	rows := make([]float64, v)
	var total float64
	for a := range v {
		var s float64
		for _, c := range counts[a*v : (a+1)*v] {
			s += float64(c)
		}
		rows[a] = s
		total += s
	}
	ppmi := csr{n: v, start: make([]int32, v+1)}
	for a := range v {
		for b := range v {
			c := counts[a*v+b]
			if c == 0 {
				continue
			}
			if pmi := math.Log(float64(c) * total / (rows[a] * rows[b])); pmi > 0 {
				ppmi.col = append(ppmi.col, int32(b))
				ppmi.val = append(ppmi.val, float32(pmi))
			}
		}
		ppmi.start[a+1] = int32(len(ppmi.col))
	}
	counts = nil
	u, s := randomizedSVD(&ppmi, min(o.Dims, v), o)
	// Word vectors: U·√Σ at unit length.
	k := len(s)
	m.words = make([]float32, v*o.Dims)
	for a := range v {
		row := m.words[a*o.Dims : (a+1)*o.Dims]
		for j := range k {
			row[j] = float32(u[j][a] * math.Sqrt(s[j]))
		}
		normalize(row)
	}
	m.finishDocs(docs)
	return m
}

// docIDs appends the document's distinct vocabulary ids, the rarest max of them, to ids.
func (m *Model) docIDs(terms []string, ids []int32, limit int) []int32 {
	for _, t := range terms {
		if id, ok := m.vocab[t]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > limit { // the vocabulary is ordered by df, so the highest ids are the rarest
		ids = append(ids[:0], ids[len(ids)-limit:]...)
	}
	return ids
}

// finishDocs computes every document's vector and the mean they are centred by.
func (m *Model) finishDocs(docs []Doc) {
	m.mean = make([]float32, m.dims)
	m.refs = make([]uint64, len(docs))
	m.row = make(map[uint64]int32, len(docs))
	m.docs = make([]float32, len(docs)*m.dims)
	for i, d := range docs {
		m.refs[i] = d.Ref
		m.row[d.Ref] = int32(i)
	}
	if len(m.words) == 0 {
		return
	}
	mean := make([]float64, m.dims)
	var counted int
	for i, d := range docs {
		row := m.docs[i*m.dims : (i+1)*m.dims]
		if m.weighted(d.Terms, row) {
			normalize(row)
			for j, x := range row {
				mean[j] += float64(x)
			}
			counted++
		}
	}
	if counted == 0 {
		return
	}
	for j := range mean {
		m.mean[j] = float32(mean[j] / float64(counted))
	}
	for i := range docs {
		row := m.docs[i*m.dims : (i+1)*m.dims]
		if isZero(row) {
			continue
		}
		for j := range row {
			row[j] -= m.mean[j]
		}
		normalize(row)
	}
}

// weighted writes the IDF-weighted sum of the terms' unit vectors (distinct terms) into out;
// false when no term holds a vector.
func (m *Model) weighted(terms []string, out []float32) bool {
	clear(out)
	any := false
	seen := make(map[int32]bool, len(terms))
	for _, t := range terms {
		id, ok := m.vocab[t]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		w := m.idf[id]
		for j, x := range m.words[int(id)*m.dims : int(id+1)*m.dims] {
			out[j] += w * x
		}
		any = true
	}
	return any && !isZero(out)
}

// Query returns the query's vector (its terms' as a text's), nil when none of its terms holds
// a vector.
func (m *Model) Query(terms []string) []float32 {
	if m == nil || len(m.words) == 0 {
		return nil
	}
	q := make([]float32, m.dims)
	if !m.weighted(terms, q) {
		return nil
	}
	normalize(q)
	for j := range q {
		q[j] -= m.mean[j]
	}
	if isZero(q) {
		return nil
	}
	normalize(q)
	return q
}

// Word returns a term's unit vector (nil: none), for tests and diagnosis.
func (m *Model) Word(term string) []float32 {
	id, ok := m.vocab[term]
	if !ok || len(m.words) == 0 {
		return nil
	}
	return m.words[int(id)*m.dims : int(id+1)*m.dims]
}

// WordSimilarity is the cosine of two terms' vectors (0 when either has none).
func (m *Model) WordSimilarity(a, b string) float64 {
	x, y := m.Word(a), m.Word(b)
	if x == nil || y == nil {
		return 0
	}
	return float64(dot(x, y))
}

// Hit is a document of TopN: its reference and cosine to the query.
type Hit struct {
	Ref   uint64
	Score float32
}

// TopN scans every document's vector exactly and returns the n most similar to q (unit, from
// Query), best first, equal scores by the lower reference (whatever the scan's split); skip (may be nil; called concurrently) leaves references out. Large
// models are scanned in GOMAXPROCS parts at once (BenchmarkTopN100k times one at 100k chunks),
// each part's best n merged.
func (m *Model) TopN(q []float32, n int, skip func(uint64) bool) []Hit {
	if m == nil || len(q) != m.dims || n <= 0 {
		return nil
	}
	parts := min(runtime.GOMAXPROCS(0), len(m.refs)/scanPart)
	if parts <= 1 {
		return m.topRange(q, n, skip, 0, len(m.refs))
	}
	found := make([][]Hit, parts)
	var wg sync.WaitGroup
	per := (len(m.refs) + parts - 1) / parts
	for p := range parts {
		lo, hi := p*per, min((p+1)*per, len(m.refs))
		wg.Go(func() { found[p] = m.topRange(q, n, skip, lo, hi) })
	}
	wg.Wait()
	all := slices.Concat(found...)
	slices.SortFunc(all, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Ref, b.Ref)
	})
	return all[:min(n, len(all))]
}

// scanPart is the fewest documents worth a goroutine of TopN's scan (a variable for the test
// of the parallel scan).
var scanPart = 16384

// topRange is TopN over the documents lo..hi.
func (m *Model) topRange(q []float32, n int, skip func(uint64) bool, lo, hi int) []Hit {
	h := make(hitHeap, 0, n+1)
	for i := lo; i < hi; i++ {
		ref := m.refs[i]
		s := dot(q, m.docs[i*m.dims:(i+1)*m.dims])
		if len(h) == n && weaker(Hit{Ref: ref, Score: s}, h[0]) {
			continue
		}
		if skip != nil && skip(ref) {
			continue
		}
		heap.Push(&h, Hit{Ref: ref, Score: s})
		if len(h) > n {
			heap.Pop(&h)
		}
	}
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// Scores returns the cosine of q with each reference's document vector (absent: unknown or no
// vector).
func (m *Model) Scores(q []float32, refs []uint64) map[uint64]float32 {
	out := make(map[uint64]float32, len(refs))
	if m == nil || len(q) != m.dims {
		return out
	}
	for _, ref := range refs {
		if i, ok := m.row[ref]; ok {
			row := m.docs[int(i)*m.dims : int(i+1)*m.dims]
			if !isZero(row) {
				out[ref] = dot(q, row)
			}
		}
	}
	return out
}

// weaker orders hits: the lower score, of equal scores the higher reference.
func weaker(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Ref > b.Ref
}

// hitHeap is a min-heap under weaker: its root is the weakest hit kept.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return weaker(h[i], h[j]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// csr is a sparse square matrix in compressed rows.
type csr struct {
	n     int
	start []int32
	col   []int32
	val   []float32
}

// mul sets out[c] = M·x[c] for each column vector x[c] (M symmetric, so also Mᵀ·x).
func (a *csr) mul(x, out [][]float64) {
	for c := range x {
		xc, oc := x[c], out[c]
		for r := range a.n {
			var s float64
			for p := a.start[r]; p < a.start[r+1]; p++ {
				s += float64(a.val[p]) * xc[a.col[p]]
			}
			oc[r] = s
		}
	}
}

// randomizedSVD returns the k leading left singular vectors (as columns u[j], length n) and
// singular values of the symmetric matrix a.
func randomizedSVD(a *csr, k int, o Options) ([][]float64, []float64) {
	l := min(k+o.Oversample, a.n)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	omega, y := cols(l, a.n), cols(l, a.n)
	for c := range omega {
		for r := range omega[c] {
			omega[c][r] = rng.NormFloat64()
		}
	}
	a.mul(omega, y)
	orthonormalize(y)
	for range o.Power {
		a.mul(y, omega)
		orthonormalize(omega)
		a.mul(omega, y)
		orthonormalize(y)
	}
	// B = Qᵀ·A (l×n): row i of B is (A·q_i)ᵀ since A is symmetric.
	b := cols(l, a.n)
	a.mul(y, b)
	// B·Bᵀ (l×l) = W Σ² Wᵀ; U = Q·W.
	g := make([][]float64, l)
	for i := range l {
		g[i] = make([]float64, l)
		for j := 0; j <= i; j++ {
			var s float64
			for r := range a.n {
				s += b[i][r] * b[j][r]
			}
			g[i][j], g[j][i] = s, s
		}
	}
	vals, vecs := jacobiEigen(g)
	order := make([]int, l)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, z int) int { return cmp.Compare(vals[z], vals[x]) })
	u := cols(k, a.n)
	s := make([]float64, k)
	for j := range k {
		e := order[j]
		s[j] = math.Sqrt(max(vals[e], 0))
		for i := range l {
			w := vecs[i][e]
			if w == 0 {
				continue
			}
			for r := range a.n {
				u[j][r] += y[i][r] * w
			}
		}
	}
	return u, s
}

func cols(c, n int) [][]float64 {
	out := make([][]float64, c)
	for i := range out {
		out[i] = make([]float64, n)
	}
	return out
}

// orthonormalize makes the columns orthonormal (modified Gram-Schmidt, twice); a column that
// falls to zero stays zero.
func orthonormalize(q [][]float64) {
	for range 2 {
		for i := range q {
			for j := range i {
				var d float64
				for r := range q[i] {
					d += q[i][r] * q[j][r]
				}
				for r := range q[i] {
					q[i][r] -= d * q[j][r]
				}
			}
			var n float64
			for _, x := range q[i] {
				n += x * x
			}
			if n < 1e-24 {
				clear(q[i])
				continue
			}
			n = 1 / math.Sqrt(n)
			for r := range q[i] {
				q[i][r] *= n
			}
		}
	}
}

// jacobiEigen diagonalises the symmetric matrix g (destroyed): eigenvalues and eigenvectors
// (as columns of vecs).
func jacobiEigen(g [][]float64) ([]float64, [][]float64) {
	n := len(g)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 60; sweep++ {
		var off float64
		for i := range n {
			for j := i + 1; j < n; j++ {
				off += g[i][j] * g[i][j]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(g[p][q]) < 1e-300 {
					continue
				}
				theta := (g[q][q] - g[p][p]) / (2 * g[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					gkp, gkq := g[k][p], g[k][q]
					g[k][p], g[k][q] = c*gkp-s*gkq, s*gkp+c*gkq
				}
				for k := range n {
					gpk, gqk := g[p][k], g[q][k]
					g[p][k], g[q][k] = c*gpk-s*gqk, s*gpk+c*gqk
				}
				for k := range n {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p], v[k][q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
	}
	vals := make([]float64, n)
	for i := range n {
		vals[i] = g[i][i]
	}
	return vals, v
}

func distinct(terms []string) []string {
	d := slices.Clone(terms)
	slices.Sort(d)
	return slices.Compact(d)
}

func dot(a, b []float32) float32 {
	// Four independent sums: with one, the scan of every document vector (TopN, 100k rows per
	// recall) waits on the latency of each addition.
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func normalize(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	f := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= f
	}
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Expand returns the query vector q moved towards the documents refs (pseudo-relevance
// feedback in the model's space): q + beta·(their mean vector at unit length), at unit length.
// q itself when none of refs holds a vector.
func (m *Model) Expand(q []float32, refs []uint64, beta float32) []float32 {
	if m == nil || len(q) != m.dims || len(refs) == 0 {
		return q
	}
	c := make([]float32, m.dims)
	for _, ref := range refs {
		if i, ok := m.row[ref]; ok {
			for j, x := range m.docs[int(i)*m.dims : int(i+1)*m.dims] {
				c[j] += x
			}
		}
	}
	if isZero(c) {
		return q
	}
	normalize(c)
	out := make([]float32, m.dims)
	for j := range out {
		out[j] = q[j] + beta*c[j]
	}
	normalize(out)
	return out
}

// Refs returns the references of the documents the model holds, in build order.
func (m *Model) Refs() []uint64 {
	if m == nil {
		return nil
	}
	return slices.Clone(m.refs)
}

// State is a built model's contents, for persisting it (graph's snapshots): the vocabulary in
// id order, the word vectors, IDF weights and mean, and every document's reference and vector.
type State struct {
	Dims  int
	Vocab []string
	Words []float32
	IDF   []float32
	Mean  []float32
	Refs  []uint64
	Docs  []float32
	Built int
}

// State returns m's contents (shared with m: neither is changed afterwards).
func (m *Model) State() State {
	vocab := make([]string, len(m.vocab))
	for t, id := range m.vocab {
		vocab[id] = t
	}
	return State{Dims: m.dims, Vocab: vocab, Words: m.words, IDF: m.idf, Mean: m.mean, Refs: m.refs, Docs: m.docs, Built: m.n}
}

// FromState returns the model s holds, or an error when s is inconsistent.
func FromState(s State) (*Model, error) {
	v := len(s.Vocab)
	if s.Dims <= 0 || len(s.IDF) != v || (len(s.Words) != 0 && len(s.Words) != v*s.Dims) ||
		len(s.Mean) != s.Dims || len(s.Docs) != len(s.Refs)*s.Dims {
		return nil, fmt.Errorf("semvec: inconsistent state")
	}
	m := &Model{dims: s.Dims, vocab: make(map[string]int32, v), words: s.Words, idf: s.IDF, mean: s.Mean,
		refs: s.Refs, row: make(map[uint64]int32, len(s.Refs)), docs: s.Docs, n: s.Built}
	for i, t := range s.Vocab {
		m.vocab[t] = int32(i)
	}
	for i, r := range s.Refs {
		m.row[r] = int32(i)
	}
	return m, nil
}

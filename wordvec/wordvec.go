// Package wordvec learns word vectors from a corpus's own co-occurrences, without a download:
// random indexing over documents. Every term has a fixed random sparse "index vector" (Nonzero
// entries of ±1 in Dims dimensions, derived from a hash of the term, so nothing is stored for
// it); a term's context vector is the sum of the index vectors of the terms it shares a
// document with. Terms used in the same contexts end with similar context vectors — a
// random projection of the term-term co-occurrence matrix.
//
// The model is incremental and exact: adding a document adds its co-occurrences, removing it
// subtracts them (the sums are of ±1, exact in float32 far beyond any corpus size), so a
// Remove undoes an Add and the order of writes does not matter.
//
// At query time the counts are centred by what independence would give (a term in df(w) of N
// documents is expected to meet term c df(w)·df(c)/N times), which removes the pull of
// frequent words that every context shares — a PMI-like correction computed from one global
// sum. A text's vector is the IDF-weighted sum of its terms' unit context vectors; Similarity
// compares a query with texts by cosine.
//
// Memory: Dims float32 per term holding a vector (512 B at Dims 128), at most DefaultCap terms
// (16 MiB of rows), as many again for the cache of each row's IDF-weighted unit vector (valid
// until the next write), plus a document frequency per distinct term; terms beyond the cap get
// no vector (they still count as contexts of others). TestMemoryPer100kChunks: 100k chunks of
// 30 distinct terms over a 50k-term vocabulary take about 45 MB. The model holds no text and
// no per-chunk data beyond a bounded cache of candidate texts' norms: what a chunk counted is
// undone from its terms, which the caller keeps (the BM25 statistics do).
//
// All methods are safe for concurrent use. The zero value is an empty model with the default
// cap.
package wordvec

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"sync"
)

const (
	// Dims is the dimension of index and context vectors.
	Dims = 128
	// Nonzero is how many entries of an index vector are ±1 (half each).
	Nonzero = 8
	// DefaultCap bounds the terms holding a context vector.
	DefaultCap = 1 << 15
)

// Model is one corpus's co-occurrence word vectors.
type Model struct {
	mu     sync.RWMutex
	cap    int
	df     map[string]int32 // every term in at least one document
	slot   map[string]int32 // terms holding a context vector → their row in ctx
	free   []int32
	ctx    []float32 // rows of Dims
	global [Dims]float32
	docs   int64

	// The IDF-weighted unit vector of each row's term is cached between writes in wvec (rows
	// of Dims, beside ctx): recall asks for the same few thousand terms again and again, and
	// computing them was most of its cost. Row r's entry is valid while wgen[r] == gen; any
	// write bumps gen (a write moves every vector: the centring uses the global sum). A row
	// array instead of a map keyed by term: no rehashing as it fills after each write, nothing
	// for the GC to scan, bounded by the rows. wgen and gen are guarded by cmu (Similarity
	// holds only mu's read lock); a valid row is never written until the next write lock.
	cmu   sync.Mutex
	wvec  []float32
	wgen  []uint64
	gen   uint64
	norms map[uint64]float64 // squared norm of a keyed text's vector (SimilarityKeyed)
}

// New returns an empty model holding context vectors for at most capTerms terms (0: DefaultCap).
func New(capTerms int) *Model {
	if capTerms <= 0 {
		capTerms = DefaultCap
	}
	return &Model{cap: capTerms, df: map[string]int32{}, slot: map[string]int32{}}
}

type entry struct {
	pos  uint8
	sign float32
}

// index returns the term's index vector: Nonzero distinct positions, the first half +1, the
// rest -1.
func index(term string) [Nonzero]entry {
	h := fnv.New64a()
	h.Write([]byte(term))
	s := h.Sum64()
	var out [Nonzero]entry
	var used [Dims]bool
	for i := 0; i < Nonzero; {
		// splitmix64
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		p := uint8(z % Dims)
		if used[p] {
			continue
		}
		used[p] = true
		out[i] = entry{pos: p, sign: 1}
		if i >= Nonzero/2 {
			out[i].sign = -1
		}
		i++
	}
	return out
}

func distinct(terms []string) []string {
	d := slices.Clone(terms)
	slices.Sort(d)
	return slices.Compact(d)
}

// Add counts one document (its terms; repeats count once).
func (m *Model) Add(terms []string) { m.update(terms, 1) }

// Remove undoes Add of the same terms.
func (m *Model) Remove(terms []string) { m.update(terms, -1) }

func (m *Model) update(terms []string, sign float32) {
	terms = distinct(terms)
	if len(terms) == 0 {
		return
	}
	var sum [Dims]float32
	idx := make([][Nonzero]entry, len(terms))
	for i, t := range terms {
		idx[i] = index(t)
		for _, e := range idx[i] {
			sum[e.pos] += e.sign
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropCache()
	if m.df == nil {
		m.df, m.slot = map[string]int32{}, map[string]int32{}
	}
	if m.cap <= 0 {
		m.cap = DefaultCap
	}
	if sign > 0 {
		m.docs++
		for _, t := range terms {
			m.df[t]++
			if m.df[t] == 1 && len(m.slot) < m.cap {
				// A term gets a row only when its first document arrives, so its row holds
				// exactly the documents that contain it.
				m.slot[t] = m.newRow()
			}
		}
	}
	for i, t := range terms {
		r, ok := m.slot[t]
		if !ok {
			continue
		}
		row := m.ctx[int(r)*Dims : int(r+1)*Dims]
		for d := range row {
			row[d] += sign * sum[d]
		}
		for _, e := range idx[i] { // not its own context
			row[e.pos] -= sign * e.sign
		}
	}
	for d := range m.global {
		m.global[d] += sign * sum[d]
	}
	if sign < 0 {
		m.docs--
		for _, t := range terms {
			n, ok := m.df[t]
			if !ok {
				continue
			}
			if n > 1 {
				m.df[t] = n - 1
				continue
			}
			delete(m.df, t)
			if r, ok := m.slot[t]; ok {
				clear(m.ctx[int(r)*Dims : int(r+1)*Dims])
				m.free = append(m.free, r)
				delete(m.slot, t)
			}
		}
	}
}

func (m *Model) newRow() int32 {
	if n := len(m.free); n > 0 {
		r := m.free[n-1]
		m.free = m.free[:n-1]
		return r
	}
	r := int32(len(m.ctx) / Dims)
	m.ctx = append(m.ctx, make([]float32, Dims)...)
	m.wvec = append(m.wvec, make([]float32, Dims)...)
	m.wgen = append(m.wgen, 0)
	return r
}

// Replace makes m hold what from holds (from is not used afterwards): a model built aside,
// e.g. by a full scan, swapped in at once.
func (m *Model) Replace(from *Model) {
	from.mu.Lock()
	defer from.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cap, m.df, m.slot, m.free, m.ctx, m.global, m.docs = from.cap, from.df, from.slot, from.free, from.ctx, from.global, from.docs
	m.wvec, m.wgen = from.wvec, from.wgen
	m.dropCache()
}

// dropCache empties the weighted vectors' cache; the caller holds mu's write lock.
func (m *Model) dropCache() {
	m.cmu.Lock()
	m.gen++
	m.norms = nil
	m.cmu.Unlock()
}

// Docs is the number of documents counted.
func (m *Model) Docs() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.docs
}

// Len is the number of distinct terms counted.
func (m *Model) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.df)
}

// unitLocked returns the term's centred context vector at unit length (false: no vector, or
// nothing beyond what independence predicts).
func (m *Model) unitLocked(term string, out *[Dims]float64) bool {
	r, ok := m.slot[term]
	if !ok || m.docs == 0 {
		return false
	}
	row := m.ctx[int(r)*Dims : int(r+1)*Dims]
	expect := float64(m.df[term]) / float64(m.docs)
	var norm float64
	for d := range row {
		v := float64(row[d]) - expect*float64(m.global[d])
		out[d] = v
		norm += v * v
	}
	if norm == 0 {
		return false
	}
	norm = math.Sqrt(norm)
	for d := range out {
		out[d] /= norm
	}
	return true
}

// idfLocked weighs a term in a text's vector: rarer terms say more about a text.
func (m *Model) idfLocked(term string) float64 {
	return math.Log(1 + float64(m.docs)/float64(max(m.df[term], 1)))
}

// Similarity scores each text (its terms) against the query's terms: the cosine of their
// vectors (IDF-weighted sums of the terms' unit centred context vectors); 0 when either has
// no vector.
func (m *Model) Similarity(query []string, texts [][]string) []float64 {
	return m.SimilarityKeyed(query, nil, texts)
}

// maxNorms bounds the cached text norms (SimilarityKeyed): ~40 B each.
const maxNorms = 1 << 18

// SimilarityKeyed is Similarity for texts that have keys (keys[i] != 0: e.g. a chunk's uid):
// the norm of a keyed text's vector is kept until the next write, so a text seen again costs
// one lookup per term (the query's dot product with each term's vector is computed once per
// call) instead of summing Dims components per term. keys may be nil.
func (m *Model) SimilarityKeyed(query []string, keys []uint64, texts [][]string) []float64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]float64, len(texts))
	if len(m.slot) == 0 {
		return out
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	s.reset(len(m.wgen))
	// Every term occurrence is looked up once in the model's own rows (a term without a row has
	// no vector and counts for nothing); the passes below work on the rows. rows holds the
	// query's rows, then each text's in order, -1 for a term without one.
	total := len(query)
	for _, text := range texts {
		total += len(text)
	}
	rows := slices.Grow(s.rows[:0], total)
	for _, t := range query {
		rows = append(rows, m.rowOf(s, t))
	}
	for _, text := range texts {
		for _, t := range text {
			rows = append(rows, m.rowOf(s, t))
		}
	}
	s.rows = rows
	m.weighRows(s)
	var q [Dims]float64
	s.pass++
	for _, r := range rows[:len(query)] {
		if r < 0 || s.mark[r] == s.pass {
			continue
		}
		s.mark[r] = s.pass
		if v := s.vec(m, r); v != nil {
			for d := range q {
				q[d] += float64(v[d])
			}
		}
	}
	var nq float64
	for _, x := range q {
		nq += x * x
	}
	if nq == 0 {
		return out
	}
	// The query's dot product with a term's vector, computed once per term and call: a text's
	// dot product is their sum.
	var q32 [Dims]float32
	for d := range q {
		q32[d] = float32(q[d])
	}
	var cached map[uint64]float64
	if keys != nil {
		m.cmu.Lock()
		cached = m.norms
		m.cmu.Unlock()
	}
	computed := map[uint64]float64{}
	var sum [Dims]float64
	at := len(query)
	for ti, text := range texts {
		trows := rows[at : at+len(text)]
		at += len(text)
		var key uint64
		if keys != nil {
			key = keys[ti]
		}
		n2, known := cached[key]
		if key == 0 {
			known = false
		}
		s.pass++
		var qt float64 // the query's dot product with the text's vector
		found := false
		if !known {
			sum = [Dims]float64{}
		}
		for _, r := range trows {
			if r < 0 || s.mark[r] == s.pass {
				continue
			}
			s.mark[r] = s.pass
			v := s.vec(m, r)
			if v == nil {
				continue
			}
			found = true
			if s.qvAt[r] != s.call {
				s.qv[r], s.qvAt[r] = float64(dot(&q32, v)), s.call
			}
			qt += s.qv[r]
			if !known {
				for d := range sum {
					sum[d] += float64(v[d])
				}
			}
		}
		if !found {
			continue
		}
		if !known {
			n2 = 0
			for _, x := range sum {
				n2 += x * x
			}
			if key != 0 {
				computed[key] = n2
			}
		}
		if n2 > 0 {
			out[ti] = qt / math.Sqrt(nq*n2)
		}
	}
	if len(computed) > 0 {
		m.cmu.Lock()
		if m.norms == nil || len(m.norms)+len(computed) > maxNorms {
			m.norms = make(map[uint64]float64, len(computed))
		}
		maps.Copy(m.norms, computed)
		m.cmu.Unlock()
	}
	return out
}

// scratch is one SimilarityKeyed call's working memory per row of the model, reused through
// scratchPool: entries are stamped with the call (or the pass over one text) instead of
// cleared, so a call costs what its terms cost, not what the model's rows do.
type scratch struct {
	call, pass uint32
	seen       []uint32  // row → call that met it (its term in terms[at[row]])
	at         []int32   // row → index into terms
	state      []uint8   // row → hasVec or noVec, once weighRows ran (valid when seen[row] == call)
	qv         []float64 // row → the query's dot product with its vector (valid when qvAt[row] == call)
	qvAt       []uint32
	mark       []uint32 // row → pass that counted it (a repeat in a text counts once)
	terms      []string // the call's distinct terms with a row, in the order met
	met        []int32  // their rows
	rows       []int32
}

const (
	hasVec uint8 = 1 + iota
	noVec
)

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// reset starts a call on a model of n rows.
func (s *scratch) reset(n int) {
	if len(s.seen) < n {
		s.seen, s.at, s.state = make([]uint32, n), make([]int32, n), make([]uint8, n)
		s.qv, s.qvAt, s.mark = make([]float64, n), make([]uint32, n), make([]uint32, n)
		s.call, s.pass = 0, 0
	}
	if s.call > math.MaxUint32-2 || s.pass > math.MaxUint32-(1<<24) {
		clear(s.seen)
		clear(s.qvAt)
		clear(s.mark)
		s.call, s.pass = 0, 0
	}
	s.call++
	s.terms, s.met = s.terms[:0], s.met[:0]
}

// rowOf returns term's row (-1: none) and records the rows met in this call. The caller holds
// mu's read lock.
func (m *Model) rowOf(s *scratch, term string) int32 {
	r, ok := m.slot[term]
	if !ok {
		return -1
	}
	if s.seen[r] != s.call {
		s.seen[r], s.at[r] = s.call, int32(len(s.terms))
		s.terms, s.met = append(s.terms, term), append(s.met, r)
	}
	return r
}

// vec returns row r's IDF-weighted unit vector (nil: none); weighRows ran for r in this call.
func (s *scratch) vec(m *Model, r int32) []float32 {
	if s.state[r] != hasVec {
		return nil
	}
	return m.wvec[int(r)*Dims : int(r+1)*Dims : int(r+1)*Dims]
}

// weighRows makes sure every row met in this call holds its term's IDF-weighted unit vector in
// the cache (computed when stale), and records which rows have none. The caller holds mu's
// read lock.
func (m *Model) weighRows(s *scratch) {
	var missing []int32
	m.cmu.Lock()
	gen := m.gen
	for _, r := range s.met {
		if m.wgen[r] == gen {
			s.state[r] = hasVec
		} else {
			missing = append(missing, r)
		}
	}
	m.cmu.Unlock()
	if len(missing) == 0 {
		return
	}
	computed := make([]float32, len(missing)*Dims)
	var u [Dims]float64
	for j, r := range missing {
		term := s.terms[s.at[r]]
		if !m.unitLocked(term, &u) {
			s.state[r] = noVec // nothing beyond independence: no vector (not cached, cheap to see)
			missing[j] = -1
			continue
		}
		w := m.idfLocked(term)
		v := computed[j*Dims : (j+1)*Dims]
		for d := range v {
			v[d] = float32(w * u[d])
		}
	}
	m.cmu.Lock()
	defer m.cmu.Unlock()
	for j, r := range missing {
		if r < 0 {
			continue
		}
		row := m.wvec[int(r)*Dims : int(r+1)*Dims]
		if m.wgen[r] != gen { // another reader may have filled it meanwhile: never write a valid row
			copy(row, computed[j*Dims:(j+1)*Dims])
			m.wgen[r] = gen
		}
		s.state[r] = hasVec
	}
}

// dot is q·v over Dims components in float32, in eight independent sums (the loop is bound by
// the latency of one chain of additions otherwise, and float32 needs no conversions): the
// query's dot product with each candidate term, a few thousand per recall. Its rounding
// (~1e-6 relative) is far below any difference between candidates that matters.
func dot(q *[Dims]float32, v []float32) float32 {
	v = v[:Dims]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for d := 0; d < Dims; d += 8 {
		s0 += q[d] * v[d]
		s1 += q[d+1] * v[d+1]
		s2 += q[d+2] * v[d+2]
		s3 += q[d+3] * v[d+3]
		s4 += q[d+4] * v[d+4]
		s5 += q[d+5] * v[d+5]
		s6 += q[d+6] * v[d+6]
		s7 += q[d+7] * v[d+7]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// Nearest returns up to n terms whose vectors are closest (cosine) to term's, best first, with
// their cosines; candidates restricts the search (nil: every term with a vector).
func (m *Model) Nearest(term string, n int, candidates []string) ([]string, []float64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var q [Dims]float64
	if !m.unitLocked(term, &q) {
		return nil, nil
	}
	type scored struct {
		t string
		s float64
	}
	var all []scored
	try := func(t string) {
		if t == term {
			return
		}
		var v [Dims]float64
		if m.unitLocked(t, &v) {
			all = append(all, scored{t, cosine(&q, &v)})
		}
	}
	if candidates == nil {
		for t := range m.slot {
			try(t)
		}
	} else {
		for _, t := range distinct(candidates) {
			try(t)
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		if a.t < b.t {
			return -1
		}
		return 1
	})
	all = all[:min(n, len(all))]
	terms, scores := make([]string, len(all)), make([]float64, len(all))
	for i, s := range all {
		terms[i], scores[i] = s.t, s.s
	}
	return terms, scores
}

func cosine(a, b *[Dims]float64) float64 {
	var dot, na, nb float64
	for d := range a {
		dot += a[d] * b[d]
		na += a[d] * a[d]
		nb += b[d] * b[d]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// State is what a Model counts, for persisting it (graph's snapshots): the terms with their
// document frequencies, the rows of those holding a context vector, the global sum and the
// document count. The cache of weighted vectors is not part of it.
type State struct {
	Cap    int
	Terms  []string
	DF     []int32
	Row    []int32 // per term its row in Ctx, -1: none
	Ctx    []float32
	Global []float32
	Docs   int64
}

// State copies what m counts.
func (m *Model) State() State {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := State{Cap: m.cap, Terms: make([]string, 0, len(m.df)), DF: make([]int32, 0, len(m.df)),
		Row: make([]int32, 0, len(m.df)), Ctx: slices.Clone(m.ctx), Global: slices.Clone(m.global[:]), Docs: m.docs}
	for t, n := range m.df {
		r, ok := m.slot[t]
		if !ok {
			r = -1
		}
		s.Terms, s.DF, s.Row = append(s.Terms, t), append(s.DF, n), append(s.Row, r)
	}
	return s
}

// FromState returns a model counting what s holds, or an error when s is inconsistent.
func FromState(s State) (*Model, error) {
	if len(s.DF) != len(s.Terms) || len(s.Row) != len(s.Terms) || len(s.Global) != Dims || len(s.Ctx)%Dims != 0 {
		return nil, fmt.Errorf("wordvec: inconsistent state")
	}
	rows := len(s.Ctx) / Dims
	m := &Model{cap: s.Cap, df: make(map[string]int32, len(s.Terms)), slot: map[string]int32{}, ctx: s.Ctx,
		docs: s.Docs, wvec: make([]float32, len(s.Ctx)), wgen: make([]uint64, rows)}
	m.gen = 1 // no weighted vector is cached yet (wgen 0)
	copy(m.global[:], s.Global)
	used := make([]bool, rows)
	for i, t := range s.Terms {
		m.df[t] = s.DF[i]
		if r := s.Row[i]; r >= 0 {
			if int(r) >= rows || used[r] {
				return nil, fmt.Errorf("wordvec: inconsistent state: row %d", r)
			}
			used[r] = true
			m.slot[t] = r
		}
	}
	for r, u := range used {
		if !u {
			m.free = append(m.free, int32(r))
		}
	}
	return m, nil
}

// Bytes estimates the model's memory: its rows (context vectors and their weighted cache) and
// its terms.
func (m *Model) Bytes() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b := 4*(len(m.ctx)+len(m.wvec)) + 8*len(m.wgen) + 40*len(m.slot)
	for t := range m.df {
		b += len(t) + 50
	}
	return b
}

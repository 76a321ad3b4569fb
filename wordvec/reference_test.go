package wordvec

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"testing"
)

// similarityReference is SimilarityKeyed in its plain form (a string map numbering every
// occurrence per call): the one working on the model's rows must score exactly as it does.
func (m *Model) similarityReference(query []string, keys []uint64, texts [][]string) []float64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	// Every term occurrence is numbered once (one map access per occurrence); the passes below
	// work on the numbers. ids holds the query's numbers, then each text's in order.
	total := len(query)
	for _, text := range texts {
		total += len(text)
	}
	slot := make(map[string]int32, min(total/2, 1<<16)) // texts repeat terms: about half are distinct
	ids := make([]int32, 0, total)
	var terms []string
	for _, t := range query {
		ids = append(ids, numberRef(slot, &terms, t))
	}
	for _, text := range texts {
		for _, t := range text {
			ids = append(ids, numberRef(slot, &terms, t))
		}
	}
	vecs := m.weightedRef(terms)
	// mark[i] == pass number: term i already counted in this text (a repeat counts once).
	mark := make([]int32, len(vecs))
	var pass int32 = 1
	out := make([]float64, len(texts))
	var q [Dims]float64
	for _, i := range ids[:len(query)] {
		if mark[i] == pass || vecs[i] == nil {
			mark[i] = pass
			continue
		}
		mark[i] = pass
		v := vecs[i][:Dims]
		for d := range q {
			q[d] += float64(v[d])
		}
	}
	var nq float64
	for _, x := range q {
		nq += x * x
	}
	if nq == 0 {
		return out
	}
	// The query's dot product with every term's vector: a text's dot product is their sum.
	var q32 [Dims]float32
	for d := range q {
		q32[d] = float32(q[d])
	}
	qv := make([]float64, len(vecs))
	for i, v := range vecs {
		if v != nil {
			qv[i] = float64(dot(&q32, v))
		}
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
		tids := ids[at : at+len(text)]
		at += len(text)
		var key uint64
		if keys != nil {
			key = keys[ti]
		}
		n2, known := cached[key]
		if key == 0 {
			known = false
		}
		pass++
		var qt float64 // the query's dot product with the text's vector
		found := false
		if !known {
			sum = [Dims]float64{}
		}
		for _, i := range tids {
			if mark[i] == pass {
				continue
			}
			mark[i] = pass
			v := vecs[i]
			if v == nil {
				continue
			}
			found = true
			qt += qv[i]
			if !known {
				v = v[:Dims]
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

// number returns t's number in slot, numbering it next (appended to terms) when new.
func numberRef(slot map[string]int32, terms *[]string, t string) int32 {
	i, ok := slot[t]
	if !ok {
		i = int32(len(*terms))
		slot[t] = i
		*terms = append(*terms, t)
	}
	return i
}

// weightedLocked returns each term's IDF-weighted unit vector (nil: none), from the cache or
// computed and cached. The caller holds mu's read lock.
func (m *Model) weightedRef(terms []string) (vecs [][]float32) {
	vecs = make([][]float32, len(terms))
	rows := make([]int32, len(terms))
	var missing []int
	m.cmu.Lock()
	gen := m.gen
	for i, t := range terms {
		r, ok := m.slot[t]
		if !ok {
			continue // no row: no vector
		}
		rows[i] = r
		if m.wgen[r] == gen {
			vecs[i] = m.wvec[int(r)*Dims : int(r+1)*Dims]
		} else {
			missing = append(missing, i)
		}
	}
	m.cmu.Unlock()
	if len(missing) == 0 {
		return vecs
	}
	computed := make([]float32, len(missing)*Dims)
	var u [Dims]float64
	for j, i := range missing {
		if !m.unitLocked(terms[i], &u) {
			missing[j] = -1 // nothing beyond independence: no vector (not cached, cheap to see)
			continue
		}
		w := m.idfLocked(terms[i])
		v := computed[j*Dims : (j+1)*Dims]
		for d := range v {
			v[d] = float32(w * u[d])
		}
	}
	m.cmu.Lock()
	defer m.cmu.Unlock()
	for j, i := range missing {
		if i < 0 {
			continue
		}
		r := int(rows[i])
		row := m.wvec[r*Dims : (r+1)*Dims]
		if m.wgen[r] != gen { // another reader may have filled it meanwhile: never write a valid row
			copy(row, computed[j*Dims:(j+1)*Dims])
			m.wgen[r] = gen
		}
		vecs[i] = row
	}
	return vecs
}

// TestSimilarityKeyedMatchesReference compares SimilarityKeyed with the per-call numbering it
// replaced, bit for bit, on models with capped rows (terms without a vector), removed documents
// (freed and reused rows), repeated and unknown terms, keyed and unkeyed texts, cached norms and
// models of different sizes sharing the pool's scratch.
func TestSimilarityKeyedMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 12 {
		vocab := make([]string, 300+r.IntN(3000))
		for i := range vocab {
			vocab[i] = fmt.Sprintf("w%d", i)
		}
		z := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
		doc := func(n int) []string {
			d := make([]string, n)
			for i := range d {
				d[i] = vocab[z.Uint64()]
				if r.IntN(20) == 0 {
					d[i] = fmt.Sprintf("unknown%d", r.IntN(50))
				}
			}
			return d
		}
		m := New([]int{0, 40, 500}[trial%3])
		var added [][]string
		for range 200 + r.IntN(2000) {
			d := doc(5 + r.IntN(30))
			m.Add(d)
			added = append(added, d)
		}
		for _, d := range added[:len(added)/5] {
			m.Remove(d)
		}
		for range 20 {
			m.Add(doc(10))
		}
		byKey := map[uint64][]string{} // equal keys must mean equal texts (the norm cache's contract)
		for round := range 4 {
			q := doc(1 + r.IntN(6))
			q = append(q, q[0]) // a repeated query term counts once
			texts := make([][]string, 1+r.IntN(300))
			keys := make([]uint64, len(texts))
			for i := range texts {
				texts[i] = doc(r.IntN(40))
				keys[i] = uint64(1 + r.IntN(400))
				if r.IntN(10) == 0 {
					keys[i] = 0
				}
			}
			for i, k := range keys {
				if k == 0 {
					continue
				}
				if prev, ok := byKey[k]; ok {
					texts[i] = prev
				} else {
					byKey[k] = texts[i]
				}
			}
			want := m.similarityReference(q, nil, texts)
			for _, ks := range [][]uint64{nil, keys, keys} { // keys twice: the second call hits the cached norms
				got := m.SimilarityKeyed(q, ks, texts)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("trial %d round %d text %d (keys %v): %v, reference %v", trial, round, i, ks != nil, got[i], want[i])
					}
				}
			}
			if round == 2 {
				m.Add(doc(12)) // a write: weighted vectors and norms are stale
			}
		}
	}
}

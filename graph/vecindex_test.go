package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/knowmind/knowmind/rank"
)

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// bruteTop is the exact answer: uids by falling dot product.
func bruteTop(held map[uint64][]float32, q []float32, n int) []uint64 {
	uids := make([]uint64, 0, len(held))
	for u := range held {
		uids = append(uids, u)
	}
	slices.SortFunc(uids, func(a, b uint64) int {
		da, db := rank.Dot(q, held[a]), rank.Dot(q, held[b])
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	return uids[:min(n, len(uids))]
}

// The set answers exactly what a brute-force scan of what it should hold answers, through adds,
// replacements and removals (slots refilled from the end), on both the one-goroutine and the
// split scan.
func TestVectorSetSearchIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dim = 24
	for _, memories := range []int{50, 30000} {
		var s vectorSet
		held := map[uint64][]float32{}
		chunks := map[string][]uint64{}
		next := uint64(1)
		for m := range memories {
			id := "m" + strconv.Itoa(m)
			var vecs []chunkVector
			for range 1 + m%3 {
				v := chunkVector{uid: next, vec: randomUnit(rng, dim)}
				next++
				vecs = append(vecs, v)
			}
			s.add(id, vecs)
			for _, v := range vecs {
				held[v.uid] = v.vec
				chunks[id] = append(chunks[id], v.uid)
			}
		}
		// Remove every fifth memory, replace every seventh.
		for m := 0; m < memories; m++ {
			id := "m" + strconv.Itoa(m)
			switch {
			case m%5 == 0:
				s.remove(id)
			case m%7 == 0:
				v := chunkVector{uid: next, vec: randomUnit(rng, dim)}
				next++
				s.add(id, []chunkVector{v})
				held[v.uid] = v.vec
			default:
				continue
			}
			for _, u := range chunks[id] {
				delete(held, u)
			}
			if m%7 == 0 && m%5 != 0 {
				chunks[id] = []uint64{next - 1}
			}
		}
		if s.len() != len(held) {
			t.Fatalf("%d memories: set holds %d vectors, want %d", memories, s.len(), len(held))
		}
		for range 20 {
			q := randomUnit(rng, dim)
			got, ok := s.search(q, 30)
			if !ok {
				t.Fatal("search refused")
			}
			if want := bruteTop(held, q, 30); !slices.Equal(got, want) {
				t.Fatalf("%d memories: search\n%v\nwant\n%v", memories, got, want)
			}
		}
	}
}

// A query or vector of another dimension is refused, not scored.
func TestVectorSetDimension(t *testing.T) {
	var s vectorSet
	if _, ok := s.search([]float32{1, 0}, 5); ok {
		t.Fatal("an empty set answered")
	}
	s.add("a", []chunkVector{{uid: 1, vec: []float32{1, 0}}, {uid: 2, vec: []float32{0, 1, 0}}})
	if s.len() != 1 || s.skipped != 1 {
		t.Fatalf("held %d, skipped %d; want 1 and 1", s.len(), s.skipped)
	}
	if _, ok := s.search([]float32{1, 0, 0}, 5); ok {
		t.Fatal("a query of another dimension was answered")
	}
	if got, ok := s.search([]float32{1, 0}, 5); !ok || !slices.Equal(got, []uint64{1}) {
		t.Fatalf("search = %v, %v", got, ok)
	}
}

// BenchmarkVectorSetSearch: one exact top-100 scan of 100k chunk vectors of 384 dimensions
// (the hash embedder's), the cost the exact search adds to a recall of a tenant that size.
func BenchmarkVectorSetSearch(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const dim, n = 384, 100_000
	var s vectorSet
	for i := range n {
		s.add(strconv.Itoa(i), []chunkVector{{uid: uint64(i + 1), vec: randomUnit(rng, dim)}})
	}
	q := randomUnit(rng, dim)
	b.ResetTimer()
	for b.Loop() {
		if _, ok := s.search(q, 100); !ok {
			b.Fatal("refused")
		}
	}
}

// search returns the uids of the n chunks whose vectors have the largest dot product with q
// (cosine: vectors are unit length), best first, and false when the set cannot answer (empty,
// or q of another dimension). The scan itself is rank.Blocks.TopN.
func (s *vectorSet) search(q []float32, n int) ([]uint64, bool) {
	uids, _, ok := s.searchScored(q, n)
	return uids, ok
}

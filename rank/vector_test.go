package rank

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
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

// TopN answers what sorting every score answers, on the one-goroutine and the split scan,
// with ties broken by the lower index.
func TestTopNIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const dim = 20
	for _, total := range []int{1, 57, 3 * minParallelScan} {
		data := make([]float32, 0, total*dim)
		for range total {
			data = append(data, randomUnit(rng, dim)...)
		}
		// A few exact duplicates make ties.
		if total > 10 {
			copy(data[5*dim:6*dim], data[9*dim:10*dim])
		}
		q := randomUnit(rng, dim)
		all := make([]Slot, total)
		for i := range all {
			all[i] = Slot{i, Dot(q, data[i*dim:(i+1)*dim])}
		}
		slices.SortStableFunc(all, func(a, b Slot) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return a.Index - b.Index
		})
		for _, n := range []int{1, 10, 100} {
			got := TopN(q, data, dim, n)
			if want := all[:min(n, total)]; !slices.Equal(got, want) {
				t.Fatalf("total %d n %d: got %v, want %v", total, n, got[:min(5, len(got))], want[:min(5, len(want))])
			}
		}
	}
	if TopN([]float32{1}, []float32{1, 2}, 2, 5) != nil || TopN(nil, nil, 0, 1) != nil {
		t.Fatal("a query of another dimension must give nil")
	}
}

func TestDot(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{5, 4, 3, 2, 1, 99}
	if got := Dot(a, b); got != 35 {
		t.Fatalf("dot = %v", got)
	}
}

// BenchmarkTopN: the exact scan of 100k chunks of 384 dimensions for the 50 best.
func BenchmarkTopN(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim, total = 384, 100_000
	data := make([]float32, 0, total*dim)
	for range total {
		data = append(data, randomUnit(rng, dim)...)
	}
	q := randomUnit(rng, dim)
	b.ResetTimer()
	for b.Loop() {
		TopN(q, data, dim, 50)
	}
}

// TopN is the row-major scan the product used before Blocks, kept as the reference Blocks.TopN is
// checked against (and benchmarked beside): it returns the n vectors of data (len(data)/dim vectors of dim float32 each, laid end to
// end) with the largest dot product with q, best first; equal scores keep the lower index
// first. For unit-length vectors the dot product is the cosine. Large sets are scanned by
// GOMAXPROCS goroutines, each keeping its own best n. nil when q's length is not dim.
func TopN(q, data []float32, dim, n int) []Slot {
	if dim <= 0 || len(q) != dim || n <= 0 {
		return nil
	}
	total := len(data) / dim
	parts := 1
	if total >= minParallelScan {
		parts = min(runtime.GOMAXPROCS(0), total/(minParallelScan/2))
	}
	tops := make([]topN, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from, to := p*total/parts, (p+1)*total/parts
		wg.Go(func() { tops[p] = scan(q, data, dim, n, from, to) })
	}
	wg.Wait()
	return merged(tops, n)
}

// scan scores vectors [from, to) and keeps the best n.
func scan(q, data []float32, dim, n, from, to int) topN {
	var t topN
	for i := from; i < to; i++ {
		score := Dot(q, data[i*dim:(i+1)*dim])
		if len(t.hits) == n && score <= t.hits[0].Score {
			continue
		}
		t.offer(n, Slot{Index: i, Score: score})
	}
	return t
}

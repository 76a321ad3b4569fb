package rank

import (
	"math"
	"math/rand/v2"
	"slices"
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

// TopNSigns scores exactly what it keeps and, with its pre-selection at 2% of the set, finds
// nearly all of TopN's best vectors when they lie near the query (as a recall's best chunks do:
// they share its words); with r covering the set it is TopN.
func TestTopNSignsRecall(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim, total, n = 384, 20000, 100
	data := make([]float32, 0, total*dim)
	var signs []uint64
	q := randomUnit(rng, dim)
	for i := range total {
		v := randomUnit(rng, dim)
		if i%100 == 0 { // some vectors near the query, at varying distance
			mix := float32(i%700) / 700
			for j := range v {
				v[j] = mix*v[j] + (1-mix)*q[j]
			}
			var norm float64
			for _, x := range v {
				norm += float64(x) * float64(x)
			}
			for j := range v {
				v[j] /= float32(math.Sqrt(norm))
			}
		}
		data = append(data, v...)
		signs = AppendSigns(signs, v)
	}
	exact := TopN(q, data, dim, n)
	if got := TopNSigns(q, data, signs, dim, n, total); !slices.Equal(got, exact) {
		t.Fatal("with r covering the set, TopNSigns differs from TopN")
	}
	got := TopNSigns(q, data, signs, dim, n, total/50)
	want := map[int]float32{}
	for _, h := range exact[:10] {
		want[h.Index] = h.Score
	}
	found := 0
	for i, h := range got {
		if h.Score != Dot(q, data[h.Index*dim:(h.Index+1)*dim]) || (i > 0 && h.Score > got[i-1].Score) {
			t.Fatalf("hit %d: score %v is not its exact dot product, or out of order", i, h.Score)
		}
		if _, ok := want[h.Index]; ok {
			found++
		}
	}
	if found < 10 {
		t.Errorf("top 10 of TopN: %d found by TopNSigns at r = 2%%", found)
	}
}

func BenchmarkTopNSigns100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim, total = 384, 100_000
	data := make([]float32, 0, total*dim)
	var signs []uint64
	for range total {
		v := randomUnit(rng, dim)
		data = append(data, v...)
		signs = AppendSigns(signs, v)
	}
	q := randomUnit(rng, dim)
	for b.Loop() {
		TopNSigns(q, data, signs, dim, 100, 2000)
	}
}

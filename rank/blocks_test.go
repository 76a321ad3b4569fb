package rank

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// rows lays vectors out row by row, as TopN takes them.
func rows(vs [][]float32) []float32 {
	var out []float32
	for _, v := range vs {
		out = append(out, v...)
	}
	return out
}

// Blocks.TopN gives TopN's answer over the same vectors, scores bit for bit, for dense and
// sparse queries, across block boundaries, on the one-goroutine and the split scan, with ties.
func TestBlocksTopNEqualsTopN(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dim := range []int{22, 384} {
		for _, total := range []int{1, 57, 3*BlockSize + 17, 3 * minParallelScan} {
			if dim == 384 && total > 3*BlockSize+17 {
				continue // the split scan is covered at dim 22
			}
			vs := make([][]float32, total)
			b := NewBlocks(dim)
			for i := range vs {
				vs[i] = randomUnit(rng, dim)
				if i == 40 && total > 50 {
					vs[i] = slices.Clone(vs[7]) // a tie
				}
				b.Append(vs[i])
			}
			data := rows(vs)
			for _, sparse := range []bool{false, true} {
				q := randomUnit(rng, dim)
				if sparse {
					for i := range q {
						if i%5 != 2 && i != dim-1 {
							q[i] = 0
						}
					}
				}
				for _, n := range []int{1, 10, 100} {
					want := TopN(q, data, dim, n)
					if got := b.TopN(q, n); !slices.Equal(got, want) {
						t.Fatalf("dim %d total %d sparse %v n %d: got %v, want %v", dim, total, sparse, n, got[:min(5, len(got))], want[:min(5, len(want))])
					}
				}
			}
		}
	}
	if NewBlocks(2).TopN([]float32{1}, 5) != nil {
		t.Fatal("a query of another dimension must give nil")
	}
}

// Appends, overwrites and swap-removes keep Blocks equal to a plain list of the vectors.
func TestBlocksWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const dim = 6
	b := NewBlocks(dim)
	var model [][]float32
	for step := range 6000 {
		switch r := rng.IntN(10); {
		case r < 6 || len(model) == 0:
			v := randomUnit(rng, dim)
			b.Append(v)
			model = append(model, v)
		case r < 8:
			i, v := rng.IntN(len(model)), randomUnit(rng, dim)
			b.Set(i, v)
			model[i] = v
		default:
			i, last := rng.IntN(len(model)), len(model)-1
			b.RemoveSwap(i)
			model[i] = model[last]
			model = model[:last]
		}
		if b.Len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, b.Len(), len(model))
		}
		if want := (len(model) + BlockSize - 1) / BlockSize; len(b.blocks) != want {
			t.Fatalf("step %d: %d blocks for %d vectors, want %d", step, len(b.blocks), len(model), want)
		}
	}
	for i, v := range model {
		if got := b.Vector(i, nil); !slices.Equal(got, v) {
			t.Fatalf("vector %d = %v, want %v", i, got, v)
		}
	}
	q := randomUnit(rng, dim)
	if got, want := b.TopN(q, 20), TopN(q, rows(model), dim, 20); !slices.Equal(got, want) {
		t.Fatalf("TopN after writes: got %v, want %v", got, want)
	}
}

func benchBlocks(b *testing.B, sparse bool) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim, total = 384, 100_000
	bl := NewBlocks(dim)
	for range total {
		bl.Append(randomUnit(rng, dim))
	}
	q := randomUnit(rng, dim)
	if sparse {
		for i := range q {
			if i%4 != 1 {
				q[i] = 0
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		bl.TopN(q, 50)
	}
}

// BenchmarkBlocksTopN: 100k vectors of 384 dimensions, a dense query (a model's), the best 50.
func BenchmarkBlocksTopN(b *testing.B) { benchBlocks(b, false) }

// BenchmarkBlocksTopNSparse: the same for a query with 96 of 384 components non-zero (the hash
// embedder's few-word queries).
func BenchmarkBlocksTopNSparse(b *testing.B) { benchBlocks(b, true) }

// Blocks read back from their columns hold the same vectors and score the same; columns of the
// wrong count or length are refused.
func TestBlocksOfColumns(t *testing.T) {
	const dim = 7
	b := NewBlocks(dim)
	for i := range BlockSize + 5 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(i*dim+j) / 100
		}
		b.Append(v)
	}
	b.RemoveSwap(3)
	back, err := BlocksOf(dim, b.Len(), b.Columns())
	if err != nil {
		t.Fatal(err)
	}
	q := []float32{1, 0, -1, 0.5, 0, 0, 2}
	if got, want := back.TopN(q, 10), b.TopN(q, 10); !reflect.DeepEqual(got, want) {
		t.Fatalf("TopN read back %v, held %v", got, want)
	}
	for i := range b.Len() {
		if got, want := back.Vector(i, nil), b.Vector(i, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("vector %d: %v, want %v", i, got, want)
		}
	}
	cols := b.Columns()
	for _, bad := range []struct {
		n    int
		cols [][]float32
	}{
		{b.Len() + BlockSize, cols},
		{b.Len(), cols[:1]},
		{b.Len(), [][]float32{cols[0], cols[1][:dim]}},
	} {
		if _, err := BlocksOf(dim, bad.n, bad.cols); err == nil {
			t.Errorf("%d vectors in %d blocks accepted", bad.n, len(bad.cols))
		}
	}
}

package rank

import (
	"fmt"
	"runtime"
	"sync"
)

// BlockSize is how many vectors one block of Blocks holds.
const BlockSize = 1024

// Blocks holds vectors of one dimension column-major in blocks of BlockSize vectors: block b
// holds vectors b·BlockSize … (b+1)·BlockSize-1, component j of its p-th vector at
// [j·BlockSize+p]. A scan then reads, per query component, one contiguous column of each
// block, and skips the columns of the query's zero components entirely: the built-in hash
// embedder's queries of a few words fill ~90 of 384 dimensions, so their scan reads a quarter
// of the memory a row-by-row scan reads. Scores equal Dot's bit for bit (see TopN).
//
// Not safe for concurrent writes; TopN may run concurrently with other TopN calls.
type Blocks struct {
	dim    int
	n      int
	blocks [][]float32
}

// NewBlocks returns an empty set of dim-dimensional vectors.
func NewBlocks(dim int) *Blocks { return &Blocks{dim: dim} }

// Len is the number of vectors held.
func (b *Blocks) Len() int { return b.n }

// Dim is the vectors' dimension.
func (b *Blocks) Dim() int { return b.dim }

// Append adds v (of length Dim) as vector Len().
func (b *Blocks) Append(v []float32) {
	if b.n%BlockSize == 0 && b.n/BlockSize == len(b.blocks) {
		b.blocks = append(b.blocks, make([]float32, b.dim*BlockSize))
	}
	b.n++
	b.Set(b.n-1, v)
}

// Set overwrites vector i with v.
func (b *Blocks) Set(i int, v []float32) {
	blk, p := b.blocks[i/BlockSize], i%BlockSize
	for j, x := range v[:b.dim] {
		blk[j*BlockSize+p] = x
	}
}

// Columns are the blocks as held, for persisting them: block b holds vectors b·BlockSize …,
// column-major (see Blocks), every block dim·BlockSize long. They must not be changed.
func (b *Blocks) Columns() [][]float32 { return b.blocks }

// BlocksOf holds n dim-dimensional vectors in blocks laid out as Columns returns them (a
// snapshot read back): no vector is copied one by one.
func BlocksOf(dim, n int, blocks [][]float32) (*Blocks, error) {
	if dim <= 0 || n < 0 || len(blocks) != (n+BlockSize-1)/BlockSize {
		return nil, fmt.Errorf("rank: %d blocks for %d vectors of %d dimensions", len(blocks), n, dim)
	}
	for i, blk := range blocks {
		if len(blk) != dim*BlockSize {
			return nil, fmt.Errorf("rank: block %d holds %d values, want %d", i, len(blk), dim*BlockSize)
		}
	}
	return &Blocks{dim: dim, n: n, blocks: blocks}, nil
}

// Vector appends vector i to out.
func (b *Blocks) Vector(i int, out []float32) []float32 {
	blk, p := b.blocks[i/BlockSize], i%BlockSize
	for j := range b.dim {
		out = append(out, blk[j*BlockSize+p])
	}
	return out
}

// RemoveSwap removes vector i by moving the last vector into its place (as a slice's
// swap-remove does); a block left empty is freed.
func (b *Blocks) RemoveSwap(i int) {
	last := b.n - 1
	if i != last {
		src, ps := b.blocks[last/BlockSize], last%BlockSize
		dst, pd := b.blocks[i/BlockSize], i%BlockSize
		for j := range b.dim {
			dst[j*BlockSize+pd] = src[j*BlockSize+ps]
		}
	}
	b.n = last
	if keep := (b.n + BlockSize - 1) / BlockSize; keep < len(b.blocks) {
		b.blocks[len(b.blocks)-1] = nil
		b.blocks = b.blocks[:keep]
	}
}

// TopN returns the n vectors with the largest dot product with q, best first, equal scores by
// the lower index: TopN(q, data, dim, n) over the same vectors laid out row by row, with the
// same scores. nil when q's length is not Dim.
//
// Each score is summed in Dot's order: components in four accumulators by dimension mod 4
// (the tail after the last group of four in the first), each in increasing dimension, then
// added first to last. A zero query component only ever adds an exact zero there, so leaving
// it out changes no bit.
func (b *Blocks) TopN(q []float32, n int) []Slot {
	if b.dim <= 0 || len(q) != b.dim || n <= 0 {
		return nil
	}
	var lanes [4][]lane
	body := len(q) - len(q)%4
	for i, v := range q {
		if v == 0 {
			continue
		}
		l := i % 4
		if i >= body {
			l = 0
		}
		lanes[l] = append(lanes[l], lane{i, v})
	}
	nb := len(b.blocks)
	parts := 1
	if b.n >= minParallelScan {
		parts = min(runtime.GOMAXPROCS(0), nb)
	}
	tops := make([]topN, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from, to := p*nb/parts, (p+1)*nb/parts
		wg.Go(func() { tops[p] = b.scan(&lanes, n, from, to) })
	}
	wg.Wait()
	return merged(tops, n)
}

// lane is one non-zero query component: its dimension and value.
type lane struct {
	dim int
	val float32
}

// scan scores the vectors of blocks [from, to) and keeps the best n.
func (b *Blocks) scan(lanes *[4][]lane, n, from, to int) topN {
	var t topN
	acc := new([4][BlockSize]float32)
	for bi := from; bi < to; bi++ {
		blk := b.blocks[bi]
		cnt := min(BlockSize, b.n-bi*BlockSize)
		for l := range lanes {
			a := acc[l][:cnt]
			clear(a)
			ls := lanes[l]
			// Four columns per pass: a[p]+x0+x1+x2+x3 adds left to right, the order of four
			// passes, with a quarter of the accumulator's loads and stores. The conversions
			// forbid fused multiply-adds, as in Dot.
			k := 0
			for ; k+4 <= len(ls); k += 4 {
				w0, w1, w2, w3 := ls[k].val, ls[k+1].val, ls[k+2].val, ls[k+3].val
				c0 := blk[ls[k].dim*BlockSize:][:len(a)]
				c1 := blk[ls[k+1].dim*BlockSize:][:len(a)]
				c2 := blk[ls[k+2].dim*BlockSize:][:len(a)]
				c3 := blk[ls[k+3].dim*BlockSize:][:len(a)]
				for p := range a {
					a[p] = a[p] + float32(w0*c0[p]) + float32(w1*c1[p]) + float32(w2*c2[p]) + float32(w3*c3[p])
				}
			}
			for ; k < len(ls); k++ {
				w, c := ls[k].val, blk[ls[k].dim*BlockSize:][:len(a)]
				for p := range a {
					a[p] += float32(w * c[p])
				}
			}
		}
		a0, a1, a2, a3 := acc[0][:cnt], acc[1][:cnt], acc[2][:cnt], acc[3][:cnt]
		base := bi * BlockSize
		for p := range a0 {
			score := a0[p] + a1[p] + a2[p] + a3[p]
			if len(t.hits) == n && score <= t.hits[0].Score {
				continue
			}
			t.offer(n, Slot{Index: base + p, Score: score})
		}
	}
	return t
}

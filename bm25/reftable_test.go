package bm25

import (
	"math/rand/v2"
	"testing"
)

// TestRefTableAsMap: a long random run of puts and deletes over dense and sparse references
// leaves the table answering as a Go map given the same operations, through its growth and its
// deletions' moves (a small key range keeps probe runs long and wrapping around).
func TestRefTableAsMap(t *testing.T) {
	for _, keys := range []uint64{40, 3000, 1 << 40} {
		rng := rand.New(rand.NewPCG(keys, 7))
		var table refTable
		want := map[uint64]uint32{}
		for op := range 50_000 {
			ref := 1 + rng.Uint64N(keys)
			slot := uint32(rng.IntN(4))
			switch rng.IntN(3) {
			case 0:
				table.deleteSlot(ref, slot)
				if s, ok := want[ref]; ok && s == slot {
					delete(want, ref)
				}
			default:
				table.put(ref, slot)
				want[ref] = slot
			}
			if op%5000 == 0 || op == 49_999 {
				if table.n != len(want) {
					t.Fatalf("keys %d, op %d: %d entries, want %d", keys, op, table.n, len(want))
				}
				for ref, slot := range want {
					if got, ok := table.get(ref); !ok || got != slot {
						t.Fatalf("keys %d, op %d: get(%d) = %d, %v; want %d", keys, op, ref, got, ok, slot)
					}
				}
				for range 200 {
					ref := 1 + rng.Uint64N(keys)
					_, ok := table.get(ref)
					if _, in := want[ref]; ok != in {
						t.Fatalf("keys %d, op %d: get(%d) found %v, want %v", keys, op, ref, ok, in)
					}
				}
			}
		}
	}
	var empty refTable
	if _, ok := empty.get(1); ok {
		t.Fatal("the zero table holds 1")
	}
	empty.deleteSlot(1, 0)
	empty.put(5, 2)
	if s, ok := empty.get(5); !ok || s != 2 {
		t.Fatalf("get(5) = %d, %v", s, ok)
	}
	if _, ok := empty.get(0); ok {
		t.Fatal("reference 0 found")
	}
}

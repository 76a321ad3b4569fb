package bm25

// refTable maps a document's reference (never 0) to its slot: tenantIndex.byRef. It is a
// hash table with linear probing in one flat slice, not a Go map, because a tenant's open fills
// it with every document (Builder.Load) and a map's insertions were most of that fill's cost:
// here a probe is one multiplication and, mostly, one cache line (docs/scale.md has the
// measurements). The zero value is empty and ready.
type refTable struct {
	entries []refEntry // a power of two long, at most half full; ref 0 = empty
	n       int
}

type refEntry struct {
	ref  uint64
	slot uint32
}

// home is ref's first probe: Fibonacci hashing, since references (Dgraph's uids) are dense
// runs of integers whose low bits alone would cluster.
func (t *refTable) home(ref uint64) int {
	return int((ref * 0x9E3779B97F4A7C15) >> 32 & uint64(len(t.entries)-1))
}

// withRoom returns an empty table sized for n references.
func withRoom(n int) refTable {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return refTable{entries: make([]refEntry, size)}
}

func (t *refTable) get(ref uint64) (uint32, bool) {
	if ref == 0 || t.n == 0 {
		return 0, false
	}
	mask := len(t.entries) - 1
	for i := t.home(ref); ; i = (i + 1) & mask {
		switch e := t.entries[i]; e.ref {
		case ref:
			return e.slot, true
		case 0:
			return 0, false
		}
	}
}

// put maps ref (not 0) to slot, replacing what it mapped to.
func (t *refTable) put(ref uint64, slot uint32) {
	if 2*(t.n+1) > len(t.entries) {
		t.grow()
	}
	mask := len(t.entries) - 1
	for i := t.home(ref); ; i = (i + 1) & mask {
		switch t.entries[i].ref {
		case ref:
			t.entries[i].slot = slot
			return
		case 0:
			t.entries[i] = refEntry{ref: ref, slot: slot}
			t.n++
			return
		}
	}
}

// deleteSlot forgets ref if it maps to slot, moving back the entries after it that would no
// longer be found (linear probing's deletion, without markers left behind).
func (t *refTable) deleteSlot(ref uint64, slot uint32) {
	if ref == 0 || t.n == 0 {
		return
	}
	mask := len(t.entries) - 1
	i := t.home(ref)
	for ; t.entries[i].ref != ref; i = (i + 1) & mask {
		if t.entries[i].ref == 0 {
			return
		}
	}
	if t.entries[i].slot != slot {
		return
	}
	t.n--
	for j := (i + 1) & mask; t.entries[j].ref != 0; j = (j + 1) & mask {
		// The entry at j stays unless its home is not cyclically in (i, j]: then the hole at i
		// is on its probe path, and it moves there.
		if h := t.home(t.entries[j].ref); (j-h)&mask >= (j-i)&mask {
			t.entries[i] = t.entries[j]
			i = j
		}
	}
	t.entries[i] = refEntry{}
}

func (t *refTable) grow() {
	old := t.entries
	*t = withRoom(max(t.n+1, len(old)))
	for _, e := range old {
		if e.ref != 0 {
			t.put(e.ref, e.slot)
		}
	}
}

package graph

import (
	"strconv"
	"sync"

	"github.com/knowmind/knowmind/rank"
)

// Exact vector search in this process: every chunk vector of a tenant, scanned per recall.
//
// Why: Dgraph v25.2.0's HNSW loses true neighbours as a tenant grows, and ef is its only
// query-time knob; the exact scan inside Dgraph (has(Chunk.embedding) + math) is exact but slow
// (docs/recall.md has both measured). A scan of float32 vectors held here (rank.Blocks) is cheap,
// so recall takes the exact top chunks and their cosines from this set and asks Dgraph only to
// map them, by uid, to their eligible memories (recallQuery's VX). The vectors held are the
// stored ones (the same scan, hooks and syncs as the text index), so the scores are those
// Dgraph would compute; a chunk this process has not seen yet (another replica's write before
// the next sync) is not a vector candidate until then. Without the set (Config.NoExactVectors,
// or nothing held yet) Dgraph's HNSW and the full-text pools propose the candidates.
//
// The set lives and dies with the tenant's BM25 statistics (textIndex): the same scan loads it,
// the same ingest hooks and replica syncs keep it current (a chunk's vector travels with its
// analysed text, analysedDoc.vec), under the same rules. Cost: 4·dim bytes per chunk (1.5 KB at
// 384 dimensions: 150 MB for 100k chunks); Config.NoExactVectors turns it off.
type vectorSet struct {
	mu       sync.RWMutex
	dim      int
	vecs     *rank.Blocks // slot i is vector i; nil until the first vector
	uids     []uint64     // chunk uid per slot
	slot     map[uint64]int
	byMemory map[string][]uint64 // Memory.id → its chunks' uids held here
	skipped  int                 // vectors refused for a dimension other than dim
}

// chunkVector is one chunk's vector, keyed by the chunk's uid.
type chunkVector struct {
	uid uint64
	vec []float32
}

// add records a memory's chunk vectors, replacing what the set held for it. A vector whose
// dimension differs from the set's (the first one added sets it) is counted and dropped: an
// embedder change is followed by a re-embed and a reload.
func (s *vectorSet) add(memoryID string, vecs []chunkVector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(memoryID, vecs)
}

func (s *vectorSet) addLocked(memoryID string, vecs []chunkVector) {
	s.removeLocked(memoryID)
	if len(vecs) == 0 {
		return
	}
	if s.slot == nil {
		s.slot, s.byMemory = map[uint64]int{}, map[string][]uint64{}
	}
	held := make([]uint64, 0, len(vecs))
	for _, v := range vecs {
		if s.dim == 0 {
			s.dim = len(v.vec)
		}
		if len(v.vec) != s.dim || v.vec == nil {
			s.skipped++
			continue
		}
		if i, ok := s.slot[v.uid]; ok { // the same chunk under another memory id: keep one copy
			s.vecs.Set(i, v.vec)
			continue
		}
		if s.vecs == nil {
			s.vecs = rank.NewBlocks(s.dim)
		}
		s.slot[v.uid] = len(s.uids)
		s.uids = append(s.uids, v.uid)
		s.vecs.Append(v.vec)
		held = append(held, v.uid)
	}
	if len(held) > 0 {
		s.byMemory[memoryID] = held
	}
}

// remove forgets a memory's chunk vectors: each slot is refilled with the last one.
func (s *vectorSet) remove(memoryID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(memoryID)
}

func (s *vectorSet) removeLocked(memoryID string) {
	for _, uid := range s.byMemory[memoryID] {
		i, ok := s.slot[uid]
		if !ok {
			continue
		}
		last := len(s.uids) - 1
		if i != last {
			s.uids[i] = s.uids[last]
			s.slot[s.uids[i]] = i
		}
		s.vecs.RemoveSwap(i)
		s.uids = s.uids[:last]
		delete(s.slot, uid)
	}
	delete(s.byMemory, memoryID)
}

// replace takes over what a load built.
func (s *vectorSet) replace(built *vectorSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dim, s.vecs, s.uids, s.slot, s.byMemory, s.skipped = built.dim, built.vecs, built.uids, built.slot, built.byMemory, built.skipped
}

// len is the number of chunk vectors held.
func (s *vectorSet) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.uids)
}

// searchScored is search with each chunk's score (the dot product with q), best first.
func (s *vectorSet) searchScored(q []float32, n int) ([]uint64, []float32, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.uids) == 0 || len(q) != s.dim || n <= 0 {
		return nil, nil, false
	}
	top := s.vecs.TopN(q, n)
	out := make([]uint64, len(top))
	scores := make([]float32, len(top))
	for i, h := range top {
		out[i], scores[i] = s.uids[h.Index], h.Score
	}
	return out, scores, true
}

// parseUID reads a uid as Dgraph writes it ("0x2a").
func parseUID(s string) (uint64, error) {
	return strconv.ParseUint(s, 0, 64)
}

// formatUIDs writes uids for a DQL uid() list.
func formatUIDs(uids []uint64) string {
	var b []byte
	for i, u := range uids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, u, 16)
	}
	return string(b)
}

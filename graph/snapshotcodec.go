package graph

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/semvec"
	"github.com/knowmind/knowmind/snapshot"
	"github.com/knowmind/knowmind/textdoc"
	"github.com/knowmind/knowmind/wordvec"
)

// The encoding of each cache in its snapshot section. Lists are written as columns (all ids,
// then all counts, …: snapshot.Enc.Strings, Uint32s) so that reading a section back takes a
// few allocations, not a few per memory; every decoder checks what it reads before it is
// installed, and a section that does not decode is the whole snapshot's corruption.

// encodeMemories writes the held memories: ids, content shas, document counts, document ids.
func encodeMemories(memories map[string][]string, shas map[string]string) []byte {
	ids, shaCol := make([]string, 0, len(memories)), make([]string, 0, len(memories))
	counts, docs := make([]uint64, 0, len(memories)), make([]string, 0, len(memories))
	for id, d := range memories {
		ids, shaCol, counts = append(ids, id), append(shaCol, shas[id]), append(counts, uint64(len(d)))
		docs = append(docs, d...)
	}
	var e snapshot.Enc
	e.Strings(ids)
	e.Strings(shaCol)
	e.Uvarints(counts)
	e.Strings(docs)
	return e.Bytes()
}

func decodeMemories(b []byte) (map[string][]string, map[string]string, error) {
	d := snapshot.NewDec(b)
	ids, shaCol, counts, docs := d.Strings(), d.Strings(), d.Uvarints(), d.Strings()
	if err := d.Done(); err != nil {
		return nil, nil, err
	}
	if len(shaCol) != len(ids) || len(counts) != len(ids) {
		return nil, nil, fmt.Errorf("%w: %d memories, %d shas, %d counts", snapshot.ErrCorrupt, len(ids), len(shaCol), len(counts))
	}
	memories, shas := make(map[string][]string, len(ids)), make(map[string]string, len(ids))
	at := 0
	for i, id := range ids {
		n := counts[i]
		if n > uint64(len(docs)-at) {
			return nil, nil, fmt.Errorf("%w: memory %q: %d documents of %d left", snapshot.ErrCorrupt, id, n, len(docs)-at)
		}
		memories[id] = docs[at : at+int(n) : at+int(n)]
		at += int(n)
		if shaCol[i] != "" {
			shas[id] = shaCol[i]
		}
	}
	if at != len(docs) {
		return nil, nil, fmt.Errorf("%w: %d documents for memories holding %d", snapshot.ErrCorrupt, len(docs), at)
	}
	return memories, shas, nil
}

// encodeSequences writes the memories held in sequences: id, sequence, position, chunk uids.
func encodeSequences(members []textdoc.Member) []byte {
	var e snapshot.Enc
	e.Uvarint(uint64(len(members)))
	for _, m := range members {
		e.String(m.ID)
		e.String(m.Place.Sequence)
		e.Uvarint(uint64(m.Place.Position))
		e.Uvarints(m.Refs)
	}
	return e.Bytes()
}

func decodeSequences(b []byte) (*textdoc.Sequences, error) {
	seqs := &textdoc.Sequences{}
	if b == nil {
		return seqs, nil
	}
	d := snapshot.NewDec(b)
	for range d.Count(4) {
		id, seq, pos, refs := d.String(), d.String(), d.Int(knowmind.MaxSequencePosition), d.Uvarints()
		if d.Err() != nil {
			break
		}
		seqs.Set(id, textdoc.Place{Sequence: seq, Position: pos}, refs)
	}
	return seqs, d.Done()
}

// encodeDump writes a bm25.Dump: the vocabularies with their postings, then the documents'
// columns, in id order (outside the text index's lock), so that the open installs them without
// indexing the ids (bm25.Builder.Load); a file written before in another order opens as well.
func encodeDump(dump bm25.Dump) []byte {
	dump.SortByID()
	var e snapshot.Enc
	e.Uvarint(uint64(len(dump.Corpora)))
	for _, c := range dump.Corpora {
		e.String(c.Lang)
		e.Strings(c.Terms)
		e.Uint32s(c.DF)
		e.Uint32s(c.Docs)
		e.Uint32s(c.Freqs)
	}
	e.Strings(dump.IDs)
	e.Uint32s(dump.Corpus)
	e.Uvarints(dump.Refs)
	e.Uint32s(dump.Lengths)
	e.Uint32s(dump.Counts)
	e.Uint32s(dump.Terms)
	e.Uint32s(dump.Freqs)
	return e.Bytes()
}

// decodeIndex reads what encodeDump wrote and counts it into a builder (bm25.Builder.Load checks
// the columns against each other).
func decodeIndex(b []byte) (*bm25.Builder, error) {
	d := snapshot.NewDec(b)
	var dump bm25.Dump
	dump.Corpora = make([]bm25.DumpCorpus, d.Count(2))
	for i := range dump.Corpora {
		dump.Corpora[i] = bm25.DumpCorpus{Lang: d.String(), Terms: d.Strings(), DF: d.Uint32s(), Docs: d.Uint32s(), Freqs: d.Uint32s()}
	}
	dump.IDs, dump.Corpus, dump.Refs = d.Strings(), d.Uint32s(), d.Uvarints()
	dump.Lengths, dump.Counts, dump.Terms, dump.Freqs = d.Uint32s(), d.Uint32s(), d.Uint32s(), d.Uint32s()
	if err := d.Done(); err != nil {
		return nil, err
	}
	var ix bm25.Builder
	if err := ix.Load(dump); err != nil {
		return nil, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return &ix, nil
}

// The vector set is two sections: "vectors", each slot's chunk uid and each memory's slots, and
// "vector-blocks", the vectors themselves in the blocks rank.Blocks scans, which the reader
// reads straight into their place (readVectorBlocks) instead of through a buffer.

// encode writes the vector set's slots and memories ("vectors"). Called with the text index's
// lock held.
func (s *vectorSet) encode() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var e snapshot.Enc
	e.Uvarints(s.uids)
	ids, counts, slots := make([]string, 0, len(s.byMemory)), make([]uint64, 0, len(s.byMemory)), make([]uint32, 0, len(s.uids))
	for id, uids := range s.byMemory {
		ids, counts = append(ids, id), append(counts, uint64(len(uids)))
		for _, uid := range uids {
			slots = append(slots, uint32(s.slot[uid]))
		}
	}
	e.Strings(ids)
	e.Uvarints(counts)
	e.Uint32s(slots)
	return e.Bytes()
}

// encodeBlocks writes the vectors ("vector-blocks"): dimension and count as 4 little-endian
// bytes each, then every block as rank.Blocks.Columns holds it.
func (s *vectorSet) encodeBlocks() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	if s.vecs != nil {
		n = s.vecs.Len()
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(s.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	if s.vecs != nil {
		for _, blk := range s.vecs.Columns() {
			b = snapshot.Float32sAppend(b, blk)
		}
	}
	return b
}

// maxVectorDim bounds the dimension a snapshot's vectors may claim.
const maxVectorDim = 1 << 16

// readVectorBlocks reads the "vector-blocks" section of size bytes from r into blocks of their
// own, after checking that the dimension and count it claims fill it exactly.
func readVectorBlocks(r *snapshot.Reader, size int) (*rank.Blocks, int, error) {
	var head [8]byte
	if size < len(head) {
		return nil, 0, fmt.Errorf("%w: vector blocks of %d bytes", snapshot.ErrCorrupt, size)
	}
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, 0, err
	}
	dim, n := int(binary.LittleEndian.Uint32(head[:4])), int(binary.LittleEndian.Uint32(head[4:]))
	blocks := (n + rank.BlockSize - 1) / rank.BlockSize
	if dim > maxVectorDim || (n > 0 && dim == 0) || int64(size-len(head)) != int64(blocks)*int64(dim)*rank.BlockSize*4 {
		return nil, 0, fmt.Errorf("%w: %d vectors of %d dimensions in %d bytes", snapshot.ErrCorrupt, n, dim, size)
	}
	if n == 0 {
		return nil, dim, nil
	}
	cols := make([][]float32, blocks)
	for i := range cols {
		cols[i] = make([]float32, dim*rank.BlockSize)
		if err := snapshot.ReadFloat32s(r, cols[i]); err != nil {
			return nil, 0, fmt.Errorf("%w: vector block %d: %v", snapshot.ErrCorrupt, i, err)
		}
	}
	vecs, err := rank.BlocksOf(dim, n, cols)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return vecs, dim, nil
}

// decodeVectorSlots reads the "vectors" section: a vector set without its vectors (join).
func decodeVectorSlots(b []byte) (*vectorSet, error) {
	d := snapshot.NewDec(b)
	uids := d.Uvarints()
	ids, counts, slots := d.Strings(), d.Uvarints(), d.Uint32s()
	if err := d.Done(); err != nil {
		return nil, err
	}
	if len(counts) != len(ids) {
		return nil, fmt.Errorf("%w: %d memories with vectors, %d counts", snapshot.ErrCorrupt, len(ids), len(counts))
	}
	s := vectorSet{uids: uids, slot: make(map[uint64]int, len(uids)), byMemory: make(map[string][]uint64, len(ids))}
	for i, uid := range uids {
		if _, dup := s.slot[uid]; dup {
			return nil, fmt.Errorf("%w: chunk %d in two vector slots", snapshot.ErrCorrupt, uid)
		}
		s.slot[uid] = i
	}
	byMemory := make([]uint64, len(slots))
	at := 0
	for i, id := range ids {
		c := counts[i]
		if c > uint64(len(slots)-at) {
			return nil, fmt.Errorf("%w: memory %q: %d vectors of %d left", snapshot.ErrCorrupt, id, c, len(slots)-at)
		}
		for j, slot := range slots[at : at+int(c)] {
			if int(slot) >= len(uids) {
				return nil, fmt.Errorf("%w: memory %q: vector slot %d of %d", snapshot.ErrCorrupt, id, slot, len(uids))
			}
			byMemory[at+j] = uids[slot]
		}
		s.byMemory[id] = byMemory[at : at+int(c) : at+int(c)]
		at += int(c)
	}
	if at != len(slots) {
		return nil, fmt.Errorf("%w: %d vector slots for memories holding %d", snapshot.ErrCorrupt, len(slots), at)
	}
	return &s, nil
}

// join gives s the vectors read from the "vector-blocks" section: one per slot.
func (s *vectorSet) join(vecs *rank.Blocks, dim int) error {
	n := 0
	if vecs != nil {
		n = vecs.Len()
	}
	if len(s.uids) != n {
		return fmt.Errorf("%w: %d vectors for %d chunk uids", snapshot.ErrCorrupt, n, len(s.uids))
	}
	s.dim, s.vecs = dim, vecs
	return nil
}

func encodeWords(s wordvec.State) []byte {
	var e snapshot.Enc
	e.Uvarint(uint64(s.Cap))
	e.Varint(s.Docs)
	e.Float32s(s.Global)
	e.Float32s(s.Ctx)
	e.Strings(s.Terms)
	e.Uint32s(int32sAsUint32s(s.DF))
	e.Uint32s(int32sAsUint32s(s.Row))
	return e.Bytes()
}

func decodeWords(b []byte) (*wordvec.Model, error) {
	d := snapshot.NewDec(b)
	s := wordvec.State{Cap: d.Int(1 << 31), Docs: d.Varint(), Global: d.Float32s(), Ctx: d.Float32s(), Terms: d.Strings()}
	s.DF, s.Row = uint32sAsInt32s(d.Uint32s()), uint32sAsInt32s(d.Uint32s())
	if err := d.Done(); err != nil {
		return nil, err
	}
	m, err := wordvec.FromState(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return m, nil
}

func int32sAsUint32s(v []int32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = uint32(x)
	}
	return out
}

func uint32sAsInt32s(v []uint32) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// Flags of the semantic section: semCurrent, the model was built from the text index the
// snapshot holds; semPartial, it was built without the links it asked for (semantic.go). A
// reader that knows only semCurrent compares the whole flag with it and so takes a partial model
// for a stale one: rebuilt either way.
const (
	semCurrent = 1 << iota
	semPartial
)

func encodeSemantic(s semvec.State, current, partial bool) []byte {
	var e snapshot.Enc
	flag := uint64(0)
	if current {
		flag |= semCurrent
	}
	if partial {
		flag |= semPartial
	}
	e.Uvarint(flag)
	e.Uvarint(uint64(s.Dims))
	e.Uvarint(uint64(s.Built))
	e.Strings(s.Vocab)
	e.Float32s(s.Words)
	e.Float32s(s.IDF)
	e.Float32s(s.Mean)
	e.Uvarints(s.Refs)
	e.Float32s(s.Docs)
	return e.Bytes()
}

func decodeSemantic(b []byte) (m *semvec.Model, current, partial bool, err error) {
	d := snapshot.NewDec(b)
	flag := d.Uvarint()
	current, partial = flag&semCurrent != 0, flag&semPartial != 0
	s := semvec.State{Dims: d.Int(1 << 16), Built: d.Int(1 << 31), Vocab: d.Strings()}
	s.Words, s.IDF, s.Mean = d.Float32s(), d.Float32s(), d.Float32s()
	s.Refs, s.Docs = d.Uvarints(), d.Float32s()
	if err := d.Done(); err != nil {
		return nil, false, false, err
	}
	if m, err = semvec.FromState(s); err != nil {
		return nil, false, false, fmt.Errorf("%w: %v", snapshot.ErrCorrupt, err)
	}
	return m, current, partial, nil
}

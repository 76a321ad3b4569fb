package graph

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/knowmind/knowmind/snapshot"
)

// BenchmarkSnapshotDecode decodes the sections of a synthetic tenant of 10k one-chunk memories
// (KNOWMIND_SNAPSHOT_BENCH_N; 40 words from a 20k vocabulary, 384-dimension vectors) one after
// the other from memory: what opening a snapshot costs beyond reading the file and the vectors.
func BenchmarkSnapshotDecode(b *testing.B) {
	sections := benchSnapshotSections(b)
	raw := map[string][]byte{}
	for _, s := range sections {
		raw[s.Name] = s.Data
		b.Logf("section %s: %d B", s.Name, len(s.Data))
	}
	b.ResetTimer()
	for range b.N {
		if _, _, err := decodeMemories(raw[sectionMemories]); err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{sectionText, sectionTitles} {
			if _, err := decodeIndex(raw[name]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := decodeVectorSlots(raw[sectionVectors]); err != nil {
			b.Fatal(err)
		}
		if _, err := decodeWords(raw[sectionWords]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSnapshotFile writes benchSnapshotSections' tenant as a sealed snapshot file and returns
// its path and key.
func benchSnapshotFile(b *testing.B) (string, []byte) {
	sections := benchSnapshotSections(b)
	path, key := filepath.Join(b.TempDir(), "index.snap"), SnapshotKey([]byte("bench"))
	m, _, err := decodeMemories(sections[1].Data)
	if err != nil {
		b.Fatal(err)
	}
	if err := snapshot.WriteFile(path, key, snapshot.Tag{Tenant: "t", Memories: len(m)}, sections); err != nil {
		b.Fatal(err)
	}
	return path, key
}

// BenchmarkSnapshotOpen reads the same tenant's sealed snapshot file and decodes its sections as
// opening a tenant does (snapshot.Open, decodeSnapshot: streamed, decoded in parallel): all of
// an open but the store's sample check and the catch-up.
func BenchmarkSnapshotOpen(b *testing.B) {
	path, key := benchSnapshotFile(b)
	if fi, err := os.Stat(path); err == nil {
		b.Logf("file: %d B", fi.Size())
	}
	b.ResetTimer()
	for range b.N {
		r, err := snapshot.Open(path, key)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := decodeSnapshot(r, nil); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// benchSnapshotSections encodes the sections of a synthetic tenant of 10k one-chunk memories
// (KNOWMIND_SNAPSHOT_BENCH_N).
func benchSnapshotSections(b *testing.B) []snapshot.Section {
	n := 10_000
	if s := os.Getenv("KNOWMIND_SNAPSHOT_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	return syntheticIndex(n).sections()
}

// syntheticIndex is a tenant "t" of n one-chunk memories: 40 words from a 20k vocabulary,
// 3-word titles, 384-dimension vectors.
func syntheticIndex(n int) *textIndex {
	rng := rand.New(rand.NewPCG(1, 2))
	x := &textIndex{state: textLoaded, shas: map[string]string{}}
	for i := range n {
		id := fmt.Sprintf("mem-%06d", i)
		tokens := make([]string, 40)
		for j := range tokens {
			tokens[j] = fmt.Sprintf("w%d", rng.IntN(20000))
		}
		v := make([]float32, 384)
		for j := range v {
			v[j] = rng.Float32()
		}
		doc := analysedDoc{ID: id + "#0", UID: uint64(0x10000 + i), Tokens: tokens, Length: 40, Title: tokens[:3],
			Vec: v}
		x.addMemoryLocked("t", id, []analysedDoc{doc})
		x.shas[id] = fmt.Sprintf("%064d", i)
	}
	return x
}

// sections are x's snapshot sections as writeSnapshot writes them (without a semantic model).
func (x *textIndex) sections() []snapshot.Section {
	return []snapshot.Section{{Name: sectionText, Data: encodeDump(x.ix.Dump("t"))},
		{Name: sectionMemories, Data: encodeMemories(x.memories, x.shas)},
		{Name: sectionTitles, Data: encodeDump(x.titles.Dump("t"))}, {Name: sectionWords, Data: encodeWords(x.words.State())},
		{Name: sectionSequences, Data: encodeSequences(x.seq.Members())},
		{Name: sectionVectors, Data: x.vec.encode()}, {Name: sectionVectorBlocks, Data: x.vec.encodeBlocks()}}
}

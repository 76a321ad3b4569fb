package graph

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/snapshot"
)

// BenchmarkSnapshotDecode decodes the sections of a synthetic tenant of 10k one-chunk memories
// (KNOWMIND_SNAPSHOT_BENCH_N; 40 words from a 20k vocabulary, 384-dimension vectors): what
// opening a snapshot costs beyond reading the file.
func BenchmarkSnapshotDecode(b *testing.B) {
	n, dim := 10_000, 384
	if s := os.Getenv("KNOWMIND_SNAPSHOT_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var x textIndex
	x.state = textLoaded
	memories := map[string][]string{}
	shas := map[string]string{}
	for i := range n {
		id := fmt.Sprintf("mem-%06d", i)
		tokens := make([]string, 40)
		for j := range tokens {
			tokens[j] = fmt.Sprintf("w%d", rng.IntN(20000))
		}
		vec := make([]float32, dim)
		for j := range vec {
			vec[j] = rng.Float32()
		}
		doc := analysedDoc{ID: id + "#0", UID: uint64(0x10000 + i), Tokens: tokens, Length: 40, Title: tokens[:3],
			Vec: vec}
		x.addMemoryLocked("t", id, []analysedDoc{doc})
		memories[id] = []string{id + "#0"}
		shas[id] = fmt.Sprintf("%064d", i)
	}
	var mem, vec snapshot.Enc
	encodeMemories(&mem, memories, shas)
	x.vec.encode(&vec)
	text, titles, words := encodeDump(x.ix.Dump("t")), encodeDump(x.titles.Dump("t")), encodeWords(x.words.State())
	b.Logf("sections: memories %d B, text %d B, titles %d B, vectors %d B, words %d B", mem.Len(), len(text), len(titles), vec.Len(), len(words))
	b.ResetTimer()
	for range b.N {
		if _, _, err := decodeMemories(mem.Bytes()); err != nil {
			b.Fatal(err)
		}
		for _, s := range [][]byte{text, titles} {
			d, err := decodeDump(s)
			if err != nil {
				b.Fatal(err)
			}
			var bl bm25.Builder
			if err := bl.Load(d); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := decodeVectors(vec.Bytes()); err != nil {
			b.Fatal(err)
		}
		if _, err := decodeWords(words); err != nil {
			b.Fatal(err)
		}
	}
}

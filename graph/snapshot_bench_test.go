package graph

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/snapshot"
)

// BenchmarkSnapshotDecode decodes the sections of a synthetic tenant of 10k one-chunk memories
// (KNOWMIND_SNAPSHOT_BENCH_N; 40 words from a 20k vocabulary, 384-dimension vectors): what
// opening a snapshot costs beyond reading the file.
func BenchmarkSnapshotDecode(b *testing.B) {
	mem, text, titles, vec, words := benchSnapshotSections(b)
	b.Logf("sections: memories %d B, text %d B, titles %d B, vectors %d B, words %d B", len(mem), len(text), len(titles), len(vec), len(words))
	b.ResetTimer()
	for range b.N {
		if _, _, err := decodeMemories(mem); err != nil {
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
		if _, err := decodeVectors(vec); err != nil {
			b.Fatal(err)
		}
		if _, err := decodeWords(words); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotOpen reads the same tenant's sealed snapshot file and decodes its sections as
// opening a tenant does (snapshot.ReadFile, decodeSections: in parallel): all of an open but the
// store's sample check and the catch-up.
func BenchmarkSnapshotOpen(b *testing.B) {
	mem, text, titles, vec, words := benchSnapshotSections(b)
	path, key := filepath.Join(b.TempDir(), "index.snap"), SnapshotKey([]byte("bench"))
	tag := snapshot.Tag{Tenant: "t"}
	m, _, err := decodeMemories(mem)
	if err != nil {
		b.Fatal(err)
	}
	tag.Memories = len(m)
	sections := []snapshot.Section{{Name: "memories", Data: mem}, {Name: "text", Data: text}, {Name: "titles", Data: titles},
		{Name: "vectors", Data: vec}, {Name: "words", Data: words}}
	if err := snapshot.WriteFile(path, key, tag, sections); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		tag, sections, err := snapshot.ReadFile(path, key)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := decodeSections(tag, sections); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSnapshotSections encodes the sections of a synthetic tenant of 10k one-chunk memories
// (KNOWMIND_SNAPSHOT_BENCH_N; 40 words from a 20k vocabulary, 384-dimension vectors).
func benchSnapshotSections(b *testing.B) (mem, text, titles, vec, words []byte) {
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
		v := make([]float32, dim)
		for j := range v {
			v[j] = rng.Float32()
		}
		doc := analysedDoc{ID: id + "#0", UID: uint64(0x10000 + i), Tokens: tokens, Length: 40, Title: tokens[:3],
			Vec: v}
		x.addMemoryLocked("t", id, []analysedDoc{doc})
		memories[id] = []string{id + "#0"}
		shas[id] = fmt.Sprintf("%064d", i)
	}
	var me, ve snapshot.Enc
	encodeMemories(&me, memories, shas)
	x.vec.encode(&ve)
	return me.Bytes(), encodeDump(x.ix.Dump("t")), encodeDump(x.titles.Dump("t")), ve.Bytes(), encodeWords(x.words.State())
}

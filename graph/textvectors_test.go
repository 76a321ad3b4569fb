package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"
	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// readingEmbedder is the harness's embedder without its recompute capability
// (graph.RecomputableEmbedder): a client with it reads the stored vectors back, as with a model
// embedder.
type readingEmbedder struct{ graph.Embedder }

// storedVectors reads every chunk vector stored in ten, by chunk uid.
func storedVectors(t *testing.T, ten *graph.Tenant) map[uint64][]float32 {
	t.Helper()
	var out struct {
		C []struct {
			UID string          `json:"uid"`
			V   json.RawMessage `json:"v"`
		}
	}
	dgraphtest.Query(t, ten, `{ c(func: has(Chunk.embedding)) { uid v: Chunk.embedding } }`, nil, &out)
	vecs := map[uint64][]float32{}
	for _, c := range out.C {
		raw := c.V
		var s string
		if json.Unmarshal(raw, &s) == nil { // Dgraph may write a vector as a string
			raw = []byte(s)
		}
		var v []float32
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("chunk %s: vector %s: %v", c.UID, c.V, err)
		}
		uid, err := strconv.ParseUint(c.UID, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		vecs[uid] = v
	}
	return vecs
}

func wantHeld(t *testing.T, what string, held, want map[uint64][]float32) {
	t.Helper()
	if !maps.EqualFunc(held, want, slices.Equal) {
		differ := 0
		for uid, v := range want {
			if !slices.Equal(held[uid], v) {
				differ++
			}
		}
		t.Errorf("%s: %d vectors held, %d stored, %d of them missing or different", what, len(held), len(want), differ)
	}
}

// With the hash embedder a load and a sync compute the chunk vectors from the chunk texts
// instead of reading them (graph.RecomputableEmbedder): what they hold must be exactly what every
// ingest path stored — store_memory in either language, a document whose chunks carry its title
// and headings, a note, a bulk import — and a chunk stored without a vector stays without one.
func TestTextStatsLoadRecomputesVectors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := dgraphtest.Shared(t)
	a := dgraphtest.NewTenant(t)
	if _, err := a.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Montag", Content: "Die Lieferung kommt am Montag mit dem Anhänger."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "The delivery arrives on Monday, with the trailer."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch",
		Content: "# Wartung\n\nDas Getriebe wird jedes Jahr von der Werkstatt geprüft.\n\n## Kupplung\n\nDie Kupplung auch.\n\n# Lager\n\nDas Lager öffnet an der Rampe."}); err != nil {
		t.Fatal(err)
	}
	actor := knowmind.Actor{Principal: "tok:a", Via: "test"}
	if _, err := a.CreateNote(ctx, knowmind.NoteScope{Principal: "tok:a"}, knowmind.CreateNoteInput{Project: "main",
		Body: "# Schulung\n\nDie Schulung findet jährlich statt.", Class: knowmind.ClassUserDoc, Actor: actor}); err != nil {
		t.Fatal(err)
	}
	imported := dgraphtest.NewTenant(t)
	path, _ := exportJSONL(t, a)
	src, err := bulk.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	importFile(t, imported, src, 2)

	readers := map[string]*graph.Tenant{}
	for _, ten := range []*graph.Tenant{a, imported} {
		reader, err := openWith(t, readingEmbedder{env.Embedder}).Tenant(ctx, ten.Name, false)
		if err != nil {
			t.Fatal(err)
		}
		readers[ten.Name] = reader
		stored := storedVectors(t, ten)
		if len(stored) < 5 { // the note is not exported
			t.Fatalf("tenant %s stores %d chunk vectors, want at least 5", ten.Name, len(stored))
		}
		for _, x := range []*graph.Tenant{ten, reader} {
			if err := x.RebuildTextStats(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wantHeld(t, "load, recomputed, "+ten.Name, ten.HeldVectors(), stored)
		wantHeld(t, "load, read, "+ten.Name, reader.HeldVectors(), stored)
	}

	// A sync's fetch recomputes too: another replica's memory and document.
	b, err := openWith(t, env.Embedder).Tenant(ctx, a.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Werk", Content: "Die Zahnradfabrik liefert die Teile morgen früh."}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Anleitung",
		Content: "# Montage\n\nErst die Welle, dann das Lager.\n\n# Prüfung\n\nDanach läuft der Motor eine Stunde."}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.SyncTextStats(ctx, false); err != nil || res.Added != 2 {
		t.Fatalf("sync %+v, %v: want b's two memories added", res, err)
	}
	stored := storedVectors(t, a)
	wantHeld(t, "sync, recomputed", a.HeldVectors(), stored)

	// Computed, not read: a chunk whose stored vector is another's (no ingest writes that) keeps
	// its own in the recomputing copy, while the reading copy holds what is stored; a chunk
	// stored without a vector (a note whose embedding failed) is held by neither.
	uids := slices.Sorted(maps.Keys(stored))
	swapped, other, bare := uids[0], uids[1], uids[2]
	dgraphtest.SetNquads(t, a, fmt.Sprintf("<%#x> <Chunk.embedding> %q .\n", swapped, graph.VectorString(stored[other])))
	if _, err := dgraphtest.DG(t, a).NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true,
		DelNquads: fmt.Appendf(nil, "<%#x> <Chunk.embedding> * .\n", bare)}); err != nil {
		t.Fatal(err)
	}
	reader := readers[a.Name]
	for _, x := range []*graph.Tenant{a, reader} {
		if err := x.RebuildTextStats(ctx); err != nil {
			t.Fatal(err)
		}
	}
	recomputed, read := a.HeldVectors(), reader.HeldVectors()
	if !slices.Equal(recomputed[swapped], stored[swapped]) || !slices.Equal(read[swapped], stored[other]) {
		t.Errorf("chunk %#x with another's stored vector: the recomputing load holds its own %v, the reading one the stored %v",
			swapped, slices.Equal(recomputed[swapped], stored[swapped]), slices.Equal(read[swapped], stored[other]))
	}
	if _, ok := recomputed[bare]; ok {
		t.Errorf("chunk %#x stored without a vector: the recomputing load holds one", bare)
	}
	if _, ok := read[bare]; ok {
		t.Errorf("chunk %#x stored without a vector: the reading load holds one", bare)
	}
	if len(recomputed) != len(stored)-1 || len(read) != len(stored)-1 {
		t.Errorf("held %d (recomputed) and %d (read) vectors, want %d", len(recomputed), len(read), len(stored)-1)
	}
}

// BenchmarkTextStatsLoadVectors measures a full load of a tenant holding KNOWMIND_SYNC_BENCH_N
// (default 5000) memories of one 40-word chunk with its hash vector stored, as ingest writes them
// (written without the HNSW index, which a load does not use): "read" reads every vector back
// from Chunk.embedding, "recompute" computes it from the chunk text (the hash embedder's way).
//
//	KNOWMIND_SYNC_BENCH_N=20000 go test ./graph/ -run '^$' -bench TextStatsLoadVectors -benchtime 2x -v
func BenchmarkTextStatsLoadVectors(b *testing.B) {
	n := textBenchN(b)
	ctx := context.Background()
	env := dgraphtest.Shared(b)
	ten := dgraphtest.NewTenant(b)
	// Opened before the index is dropped: opening a tenant applies its schema, index included.
	reader, err := openWith(b, readingEmbedder{env.Embedder}).Tenant(ctx, ten.Name, false)
	if err != nil {
		b.Fatal(err)
	}
	if err := graph.DropVectorIndex(ctx, dgraphtest.DG(b, ten)); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	writeVectorMemories(b, ten, env.Embedder, n)
	b.Logf("wrote %d memories with vectors in %s", n, time.Since(start).Round(time.Millisecond))
	for _, c := range []struct {
		name string
		ten  *graph.Tenant
	}{{"read", reader}, {"recompute", ten}} {
		b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
			for b.Loop() {
				if err := c.ten.RebuildTextStats(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if got := len(c.ten.HeldVectors()); got != n {
				b.Fatalf("%d vectors held, want %d", got, n)
			}
		})
	}
}

// writeVectorMemories writes n indexed memories of one untagged 40-word chunk each with the
// chunk's vector from emb, created an hour ago, in batches.
func writeVectorMemories(tb testing.TB, ten *graph.Tenant, emb graph.Embedder, n int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	created := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	for s := 0; s < n; s += textLoadBatch {
		texts := make([]string, min(textLoadBatch, n-s))
		for i := range texts {
			words := make([]string, 40)
			for j := range words {
				words[j] = fmt.Sprintf("wort%dx", rng.IntN(20000))
			}
			texts[i] = strings.Join(words, " ")
		}
		vecs, err := emb.EmbedPassages(context.Background(), texts)
		if err != nil {
			tb.Fatal(err)
		}
		nodes := make([]map[string]any, len(texts))
		for i, text := range texts {
			nodes[i] = map[string]any{
				"uid": fmt.Sprintf("_:m%d", i), "dgraph.type": "Memory",
				"Memory.id": uuid.NewString(), "Memory.kind": knowmind.KindMemory, "Memory.content": text, "Memory.preview": text,
				"Memory.status": knowmind.StatusIndexed, "Memory.content_sha": graph.ContentSHA(text),
				"Memory.created_at": created, "Memory.updated_at": created, "Memory.valid_from": created,
				"Memory.chunk_count": 1, "Memory.chunks": []map[string]any{{"uid": fmt.Sprintf("_:c%d", i),
					"dgraph.type": "Chunk", "Chunk.text": text, "Chunk.position": 0,
					"Chunk.embedding": graph.VectorString(vecs[i])}},
			}
		}
		dgraphtest.SetJSON(tb, ten, nodes)
	}
}

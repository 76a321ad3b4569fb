package graph_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Loaders for the BM25 statistics' tests and benchmarks: they write indexed memories with their
// chunks straight into the tenant in batched mutations, without embedding or vectors (the
// statistics read none), which is what makes 100k memories take minutes instead of hours.

// textMemory is one indexed memory for writeTextMemories: chunks are stored as Chunk.text@de when
// lang is "de", as untagged Chunk.text otherwise, the way ingest stores them.
type textMemory struct {
	id, lang string
	chunks   []string
}

// sources are the memory's chunks as BM25 documents, keyed as the statistics key them.
func (m textMemory) sources() []bm25.Source {
	lang := ""
	if m.lang == "de" {
		lang = "de"
	}
	out := make([]bm25.Source, len(m.chunks))
	for i, text := range m.chunks {
		out[i] = bm25.Source{ID: m.id + "#" + strconv.Itoa(i), Lang: lang, Text: text}
	}
	return out
}

// textLoadBatch is how many memories one mutation writes.
const textLoadBatch = 500

// writeTextMemories writes memories in one transaction, created an hour ago.
func writeTextMemories(tb testing.TB, ten *graph.Tenant, memories []textMemory) {
	tb.Helper()
	writeTextMemoriesAt(tb, ten, memories, time.Now().Add(-time.Hour))
}

// writeTextMemoriesAt writes memories in one transaction, created (and updated) at created.
func writeTextMemoriesAt(tb testing.TB, ten *graph.Tenant, memories []textMemory, at time.Time) {
	tb.Helper()
	created := at.UTC().Format(time.RFC3339Nano)
	nodes := make([]map[string]any, 0, len(memories))
	for i, m := range memories {
		textKey := "Chunk.text"
		if m.lang == "de" {
			textKey = "Chunk.text@de"
		}
		chunks := make([]map[string]any, len(m.chunks))
		for j, text := range m.chunks {
			chunks[j] = map[string]any{"uid": fmt.Sprintf("_:c%d_%d", i, j), "dgraph.type": "Chunk",
				textKey: text, "Chunk.position": j}
		}
		nodes = append(nodes, map[string]any{
			"uid": fmt.Sprintf("_:m%d", i), "dgraph.type": "Memory",
			"Memory.id": m.id, "Memory.kind": knowmind.KindMemory,
			"Memory.content": strings.Join(m.chunks, "\n\n"), "Memory.preview": strings.Join(m.chunks, "\n\n"),
			"Memory.status":     knowmind.StatusIndexed,
			"Memory.created_at": created, "Memory.updated_at": created, "Memory.valid_from": created,
			"Memory.chunk_count": len(m.chunks), "Memory.chunks": chunks,
		})
	}
	dgraphtest.SetJSON(tb, ten, nodes)
}

// loadTextOnly writes n indexed memories with one untagged chunk of 40 synthetic words each,
// created an hour ago.
func loadTextOnly(tb testing.TB, ten *graph.Tenant, n int) {
	tb.Helper()
	loadTextOnlyAt(tb, ten, n, time.Now().Add(-time.Hour))
}

// loadTextOnlyAt is loadTextOnly with the memories created at created.
func loadTextOnlyAt(tb testing.TB, ten *graph.Tenant, n int, created time.Time) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("wort%dx", i)
	}
	for s := 0; s < n; s += textLoadBatch {
		batch := make([]textMemory, 0, textLoadBatch)
		for range min(textLoadBatch, n-s) {
			words := make([]string, 40)
			for j := range words {
				words[j] = vocab[rng.IntN(len(vocab))]
			}
			batch = append(batch, textMemory{id: uuid.NewString(), chunks: []string{strings.Join(words, " ")}})
		}
		writeTextMemoriesAt(tb, ten, batch, created)
	}
}

// Words the mixed corpus draws from: inflected forms the stemmers fold, stop words they drop,
// umlauts, and words of each language written in the other.
var (
	germanWords = strings.Fields(`die der das und Lieferung Lieferungen geliefert Getriebe Getrieben
		Kupplung Kupplungen Werkstatt Werkstätten prüft geprüft Prüfung Häuser Haus Bäume Straßen
		Einarbeitung Einarbeitungen Mitarbeiterinnen dauert länger als geplant Kinder Kindern Kindes
		Rechnung Rechnungen Zahlung binnen Tagen Wartung jährlich Schulung the supported connections`)
	englishWords = strings.Fields(`the a of to and running runs connections connected delivery
		deliveries gearbox clutch workshop inspected inspection houses trees streets onboarding
		employees takes longer than planned children invoice invoices payment within days
		maintenance yearly training Lieferung Getriebe`)
)

// loadMixedTexts writes n memories, alternately German and untagged English, of one to three
// chunks each (10 to 40 words, some of them synthetic so the vocabulary keeps growing), and
// returns every chunk as written.
func loadMixedTexts(tb testing.TB, ten *graph.Tenant, n int) []bm25.Source {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var all []bm25.Source
	for s := 0; s < n; s += textLoadBatch {
		batch := make([]textMemory, 0, textLoadBatch)
		for i := s; i < min(s+textLoadBatch, n); i++ {
			m := textMemory{id: uuid.NewString(), lang: "de"}
			vocab := germanWords
			if i%2 == 1 {
				m.lang, vocab = "en", englishWords
			}
			for range 1 + rng.IntN(3) {
				words := make([]string, 10+rng.IntN(31))
				for j := range words {
					if rng.IntN(4) == 0 {
						words[j] = fmt.Sprintf("wort%d", rng.IntN(5000))
					} else {
						words[j] = vocab[rng.IntN(len(vocab))]
					}
				}
				m.chunks = append(m.chunks, strings.Join(words, " ")+".")
			}
			batch = append(batch, m)
			all = append(all, m.sources()...)
		}
		writeTextMemories(tb, ten, batch)
	}
	return all
}

// textBenchN is the corpus size of the statistics' benchmarks: KNOWMIND_SYNC_BENCH_N, default
// 5000.
// textBenchTenant is a fresh tenant holding textBenchN text-only memories.
func textBenchTenant(b *testing.B) (*graph.Tenant, int) {
	n := textBenchN(b)
	ten := dgraphtest.NewTenant(b)
	start := time.Now()
	loadTextOnly(b, ten, n)
	b.Logf("loaded %d memories in %s", n, time.Since(start).Round(time.Millisecond))
	return ten, n
}

func textBenchN(b *testing.B) int {
	n := 5000
	if s := os.Getenv("KNOWMIND_SYNC_BENCH_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// wantSameStats fails unless got and want hold the same statistics for the German and the
// untagged corpus.
func wantSameStats(t *testing.T, what string, got, want func(lang string, terms ...string) bm25.Stats) {
	t.Helper()
	for _, lang := range []string{"de", ""} {
		g, w := got(lang), want(lang)
		if g.Docs == 0 || g.Docs != w.Docs || g.TotalLen != w.TotalLen || !maps.Equal(g.DF, w.DF) {
			t.Errorf("%s: corpus %q has %d docs, %d tokens, %d terms; want %d, %d, %d", what, lang,
				g.Docs, g.TotalLen, len(g.DF), w.Docs, w.TotalLen, len(w.DF))
		}
	}
}

// The pipelined load (pages read while earlier ones are analysed on every core, counted in
// order) gives exactly the statistics of a sequential analysis of the texts as written, and of
// the sequential load it replaced, for a German and English corpus of many pages.
func TestTextStatsLoadEqualsSequential(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	defer graph.SetTextScanPage(250)() // several pages, each split among the workers
	ten := dgraphtest.NewTenant(t)
	const n = 1200
	written := loadMixedTexts(t, ten, n)

	if err := ten.RebuildTextStats(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ten.TextStatsMemories(); got != n {
		t.Fatalf("statistics hold %d memories, want %d", got, n)
	}
	var fromTexts bm25.Index
	fromTexts.Rebuild(ten.Name, slices.Values(written))
	wantSameStats(t, "pipelined load vs the texts as written", ten.TextStats,
		func(lang string, _ ...string) bm25.Stats { return fromTexts.Stats(ten.Name, lang) })

	sequential, ph, err := ten.SequentialTextLoad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ph.Memories != n || ph.Chunks != len(written) {
		t.Fatalf("sequential load read %d memories, %d chunks; want %d, %d", ph.Memories, ph.Chunks, n, len(written))
	}
	wantSameStats(t, "pipelined vs sequential load", ten.TextStats,
		func(lang string, _ ...string) bm25.Stats { return sequential.Stats(ten.Name, lang) })
	_, got := df(ten, "Lieferungen", "Getriebe", "Werkstätten")
	t.Logf("%d chunks; German DF %v", len(written), got)
}

// Writes committed while a load runs (after its snapshot) are queued and replayed after it: a
// new memory is counted, and so is a re-uploaded document's new version (the old one is closed
// and stays).
func TestTextStatsLoadKeepsWritesDuringIt(t *testing.T) {
	f := newReplicaFixture(t)
	defer graph.SetTextScanPage(100)()
	loadMixedTexts(t, f.a, 400)
	f.upload(f.a, "Lager", "# Lager\n\nDas Lager öffnet an der Rampe.")
	f.syncByRecall(f.a)
	before := f.a.TextStatsMemories()

	// The writes run beside the load, not inside its hook: store_memory's conflict check
	// recalls, and a recall waits for the load. The hook holds the load until both writes'
	// after-write steps have queued their index updates (committed after the snapshot).
	var once sync.Once
	var writes sync.WaitGroup
	var storeErr, uploadErr, queueErr error
	restore := graph.SetTextLoadHook(func(tenant string) {
		if tenant != f.a.Name {
			return
		}
		once.Do(func() {
			writes.Go(func() {
				_, storeErr = f.a.StoreMemory(f.ctx, knowmind.StoreMemoryInput{Title: "Neu",
					Content: "Die Lieferung kommt mit dem Gabelstapler."})
			})
			writes.Go(func() {
				_, uploadErr = f.a.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Lager",
					Content: "# Lager\n\nDas Lager öffnet am Hof."})
			})
			deadline := time.Now().Add(time.Minute)
			for f.a.TextPendingOps() < 2 {
				if time.Now().After(deadline) {
					queueErr = fmt.Errorf("%d index updates queued during the load, want 2", f.a.TextPendingOps())
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	})
	err := f.a.RebuildTextStats(f.ctx)
	restore()
	writes.Wait()
	if err != nil || storeErr != nil || uploadErr != nil || queueErr != nil {
		t.Fatalf("load: %v; writes during it: store %v, upload %v, queued: %v", err, storeErr, uploadErr, queueErr)
	}
	if _, got := df(f.a, "Gabelstapler", "Hof", "Rampe"); !maps.Equal(got, map[string]int64{"Gabelstapler": 1, "Hof": 1, "Rampe": 1}) {
		t.Fatalf("DF after the load %v: the writes during it are lost", got)
	}
	if got := f.a.TextStatsMemories(); got != before+2 {
		t.Errorf("statistics hold %d memories, %d before the load; want two more", got, before)
	}
	f.matchesRescan(f.a)
}

// WarmTextStats loads every tenant, so that the first recall of each finds its statistics
// loaded and its semantic model built; cancelled, it stops and leaves the tenants to their first recall.
func TestTextStatsWarmLoadsEveryTenant(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var names []string
	for i, content := range []string{"Die Lieferung kommt am Montag.", "Das Getriebe wird geprüft."} {
		ten := dgraphtest.NewTenant(t)
		if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: fmt.Sprint("M", i), Content: content}); err != nil {
			t.Fatal(err)
		}
		names = append(names, ten.Name)
	}
	names = append(names, dgraphtest.NewTenant(t).Name) // an empty one

	// A cancelled warm-up stops at once and loads nothing.
	stopped, stop := context.WithCancel(ctx)
	stop()
	cold := openWith(t, dgraphtest.Shared(t).Embedder)
	cold.WarmTextStats(stopped)
	ten, err := cold.Tenant(ctx, names[0], false)
	if err != nil {
		t.Fatal(err)
	}
	if ten.TextStatsLoaded() {
		t.Fatal("a cancelled warm-up loaded statistics")
	}

	// A fresh client, as after a restart.
	c := openWith(t, dgraphtest.Shared(t).Embedder)
	c.WarmTextStats(ctx)
	for i, name := range names {
		ten, err := c.Tenant(ctx, name, false)
		if err != nil {
			t.Fatal(err)
		}
		if !ten.TextStatsLoaded() || ten.TextStatsLoads() != 1 {
			t.Fatalf("tenant %s after the warm-up: loaded %v, %d loads", name, ten.TextStatsLoaded(), ten.TextStatsLoads())
		}
		if !ten.SemanticBuilt() {
			t.Fatalf("tenant %s after the warm-up: no semantic model", name)
		}
		if _, err := ten.Recall(ctx, knowmind.RecallQuery{Query: "Lieferung Getriebe", K: 3}); err != nil {
			t.Fatal(err)
		}
		if n := ten.TextStatsLoads(); n != 1 {
			t.Fatalf("tenant %s: the recall after the warm-up loaded again (%d loads)", name, n)
		}
		if want := min(1, 2-i); ten.TextStatsMemories() != want {
			t.Fatalf("tenant %s holds %d memories, want %d", name, ten.TextStatsMemories(), want)
		}
	}
}

// A warm-up cancelled in the middle of a tenant's load (the service shutting down) leaves that
// tenant unloaded; a recall that was waiting for the load does it itself.
func TestTextStatsWarmStopsDuringLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	defer graph.SetTextScanPage(100)()
	name := dgraphtest.NewTenant(t).Name
	c := openWith(t, dgraphtest.Shared(t).Embedder)
	ten, err := c.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	loadMixedTexts(t, ten, 300)

	warm, stop := context.WithCancel(ctx)
	defer stop()
	var once sync.Once
	recalled := make(chan error, 1)
	restore := graph.SetTextLoadHook(func(tenant string) {
		if tenant != name {
			return
		}
		once.Do(func() {
			go func() { // waits for the warm-up's load, which then stops
				_, err := ten.Recall(ctx, knowmind.RecallQuery{Query: "Lieferung", K: 3})
				recalled <- err
			}()
			time.Sleep(50 * time.Millisecond)
			stop()
		})
	})
	defer restore()
	started := time.Now()
	c.WarmTextStats(warm)
	t.Logf("warm-up returned %s after the start", time.Since(started).Round(time.Millisecond))
	if err := <-recalled; err != nil {
		t.Fatal(err)
	}
	if !ten.TextStatsLoaded() || ten.TextStatsLoads() != 1 || ten.TextStatsMemories() != 300 {
		t.Fatalf("after the recall: loaded %v, %d loads, %d memories", ten.TextStatsLoaded(), ten.TextStatsLoads(), ten.TextStatsMemories())
	}
}

// BenchmarkTextStatsLoad measures a full load of a tenant's statistics — what the first recall
// after a start waits for unless WarmTextStats has run — over KNOWMIND_SYNC_BENCH_N (default
// 5000) memories of one 40-word chunk, and logs the sequential load it replaced phase by phase:
// reading the store, analysing the texts, counting the tokens.
//
//	KNOWMIND_SYNC_BENCH_N=100000 go test ./graph/ -run '^$' -bench TextStatsLoad -benchtime 2x -timeout 60m
func BenchmarkTextStatsLoad(b *testing.B) {
	ten, n := textBenchTenant(b)
	ctx := context.Background()
	_, ph, err := ten.SequentialTextLoad(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("sequential load of %d memories (%d chunks): read %s, analyse %s, count %s", ph.Memories, ph.Chunks,
		ph.Read.Round(time.Millisecond), ph.Analyse.Round(time.Millisecond), ph.Count.Round(time.Millisecond))
	for _, page := range []int{500, 1000, 2000} {
		b.Run(fmt.Sprintf("n=%d/page=%d", n, page), func(b *testing.B) {
			defer graph.SetTextScanPage(page)()
			for b.Loop() {
				if err := ten.RebuildTextStats(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	if got := ten.TextStatsMemories(); got != n {
		b.Fatalf("statistics hold %d memories, want %d", got, n)
	}
}

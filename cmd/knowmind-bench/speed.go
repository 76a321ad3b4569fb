package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/localdgraph"
	"github.com/knowmind/knowmind/internal/runes"
)

// runBenchSpeed measures recall on synthetic memories: latency and throughput from 1 and 8
// clients, next to the same DQL sent to Dgraph directly, and the vector candidate step's
// recall@10 against exact (brute-force) search.
//
// Workload (seeded, so runs are comparable): a vocabulary of 20,000 pseudo-words drawn with a
// Zipf law (s = 1.07), each memory a 4-word title and 40 words of content, one chunk, a third
// of them German (stored as Chunk.text@de), vectors from the configured embedder; each memory
// linked RELATES_TO to two random earlier ones. The memories are written by batched mutations
// in the shape ingest writes (StoreMemory is one transaction per memory, far too slow for
// 100k). Queries: 4 words taken from a random stored memory.
func runBenchSpeed(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench speed", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	bf.snapshots = true
	n := fs.Int("n", 10000, "memories")
	queries := fs.Int("queries", 200, "queries per measurement")
	seed := fs.Uint64("seed", 1, "random seed of the workload")
	k := fs.Int("k", 5, "k of the timed recalls")
	hops := fs.Int("hops", 2, "hops of the timed recalls")
	batch := fs.Int("batch", 1000, "memories per load transaction")
	tenant := fs.String("tenant", "", "tenant of the workload (default speed-N); with --dir, measure the first N memories of an interrupted bigger load")
	sweep := fs.Bool("sweep", false, "also measure vector recall@10 for several over-fetch / ef settings")
	timing := fs.Bool("timing", true, "measure latency and throughput (off: only vector recall)")
	dropIndex := fs.Bool("drop-vector-index", true, "load without Dgraph's HNSW index and rebuild it in the background afterwards (recall does not use it while the service holds the vectors)")
	only := fs.String("only", "", "time only the recall variants whose name matches this regular expression")
	memProfile := fs.String("memprofile", "", "write this process's allocation profile (pprof allocs, since its start: focus on graph.(*Tenant).RecallTraced) to this file after the timings")
	settle := fs.Duration("settle", 3*time.Minute, "before the timings, wait up to this long for the throwaway alpha to go quiet (under 10% of a core for 10 s: after a load it rolls up postings in the background, which made runs differ by 1.5×); 0: do not wait")
	hold := fs.Duration("hold", 0, "experiments: after the timings keep the cluster up this long, the tenant's DQL login in --dir/hold.json (0600)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process (service and benchmark) over the timed variants to this file")
	indexWait := fs.Duration("index-wait", 0, "after restoring the HNSW index the load dropped, wait up to this long for the alpha to build it (quiet: under 10% of a core for 10 s) before the vector recall rows, and print its memory (the rebuild's peak); 0: do not wait")
	vectorIndex := fs.String("vector-index", "", `experiment: another index for Chunk.embedding in the benchmark tenant, e.g. 'hnsw(metric:"euclidean")' (use a fresh --dir: opening the tenant again re-applies the schema)`)
	indexMB := fs.Int("index-memory-mb", graph.DefaultIndexMemoryMB, "the service's --index-memory-mb (serve's default; the cold row sets its own)")
	cold := fs.Bool("cold", true, "after the restart row, time a tenant dropped by the index memory budget and read back from its snapshot (loads a neighbour tenant of a hundredth of --n, kept with --dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	bf.indexMemoryMB = *indexMB
	if *hold > 0 && bf.dir == "" {
		return fmt.Errorf("--hold needs --dir (its login is written there)")
	}
	bulkMode := bf.bulkMode && bf.dgraph == ""
	if bulkMode {
		bf.removeOnUpdate = true
	}
	b, err := openBenchBackend(ctx, bf)
	if err != nil {
		return err
	}
	defer b.Close()
	name := *tenant
	if name == "" {
		name = fmt.Sprintf("speed-%d", *n)
	}
	ten, err := b.tenant(ctx, name)
	if err != nil {
		return err
	}

	if *vectorIndex != "" {
		if err := ten.DG().Alter(ctx, "<Chunk.embedding>: float32vector @index("+*vectorIndex+") ."); err != nil {
			return fmt.Errorf("--vector-index: %w", err)
		}
		fmt.Fprintf(os.Stdout, "Chunk.embedding index: %s\n\n", *vectorIndex)
	}
	w := newWorkload(*seed)
	ids, vecs, dropped, err := loadSynthetic(ctx, b, ten, w, *n, *batch, *dropIndex && *vectorIndex == "")
	if err != nil {
		return err
	}
	memPhase(os.Stdout, b, "the load")
	if bulkMode {
		// As knowmind import with its own managed Dgraph: the index stays dropped through the
		// restart (a background build stopped by it would not resume) and is rebuilt by the
		// alpha that serves, below.
		start := time.Now()
		if err := b.restart(ctx, func(c *localdgraph.Config) { c.CacheRemoveOnUpdate = false }); err != nil {
			return fmt.Errorf("restart after the load: %w", err)
		}
		if ten, err = b.tenant(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "bulk-load mode: the alpha loaded with remove-on-update and was restarted with serve's settings in %.1f s\n\n", time.Since(start).Seconds())
		memPhase(os.Stdout, b, "the restart")
	}

	// Queries, and their vectors for the exact search.
	qs := make([]string, *queries)
	for i := range qs {
		qs[i] = w.query(w.rng.IntN(*n))
	}

	out := os.Stdout
	fmt.Fprintf(out, "# Recall speed, %d memories (embedder %s, %d queries per row, k=%d hops=%d)\n\n", *n, b.embedder.ID(), *queries, *k, *hops)

	// The first recall loads the tenant's BM25 statistics from a scan.
	start := time.Now()
	if _, err := ten.Recall(ctx, knowmind.RecallQuery{Query: qs[0], K: *k, Hops: *hops}); err != nil {
		return err
	}
	fmt.Fprintf(out, "first recall (includes the BM25 statistics scan of %d chunks): %.0f ms\n\n", *n, float64(time.Since(start).Microseconds())/1000)
	memPhase(out, b, "the first recall")

	if *settle > 0 && b.alphaPid() > 0 {
		took, quiet := settleAlpha(ctx, b.alphaPid(), *settle)
		fmt.Fprintf(out, "alpha settled: %v after %.0f s (under 10%% of a core for 10 s; limit %s)\n\n", quiet, took.Seconds(), *settle)
	}
	if *timing {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
		}
		err := timeVariants(ctx, out, ten, qs, *k, *hops, *only, dropped, b.alphaPid())
		if *cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		if *memProfile != "" && err == nil {
			f, ferr := os.Create(*memProfile)
			if ferr != nil {
				return ferr
			}
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			return err
		}
		memPhase(out, b, "the timings")
	}

	if ten, err = restartRow(ctx, out, b, name, *n, qs, *k, *hops); err != nil {
		return err
	}
	if *cold {
		if ten, err = coldRow(ctx, out, b, name, *n, *seed, qs, *k, *hops); err != nil {
			return err
		}
	}

	if *hold > 0 {
		if err := holdCluster(ctx, b, bf.dir, name, *hold); err != nil {
			return err
		}
	}

	if dropped {
		// Recall does not need it (the service holds the vectors); analysts' similar_to does.
		if err := ten.RestoreVectorIndex(ctx, true); err != nil {
			return err
		}
		fmt.Fprintln(out, "HNSW index of Chunk.embedding: rebuild started in the background; the rows that need it are left out")
		fmt.Fprintln(out)
		if *indexWait > 0 && b.alphaPid() > 0 {
			took, quiet := settleAlpha(ctx, b.alphaPid(), *indexWait)
			fmt.Fprintf(out, "HNSW rebuild: alpha quiet %v after %.0f s (limit %s)\n", quiet, took.Seconds(), *indexWait)
			memPhase(out, b, "the HNSW rebuild")
		}
	}

	// Vector recall@10: exact top-10 by brute force over every stored vector, against the
	// candidate step (HNSW over-fetch + exact re-score: recall with text off and no hops) and
	// against bare HNSW top-10.
	var overFetch, pools, union, bare float64
	for _, q := range qs {
		qv, err := b.embedder.EmbedQuery(ctx, q)
		if err != nil {
			return err
		}
		exact := exactTop(qv, vecs, ids, 10)
		// The vector signal as full recall computes it; the same without the service's exact
		// search (HNSW and the full-text pools); HNSW alone.
		for ci, c := range []struct {
			sum     *float64
			signals ablation
		}{
			{&union, ablation{NoTextScore: true, NoRerank: true}},
			{&pools, ablation{NoTextScore: true, NoRerank: true, NoExactVectors: true}},
			{&overFetch, ablation{NoText: true, NoRerank: true, NoExactVectors: true}},
		} {
			if ci > 0 && dropped {
				break // HNSW is being built
			}
			res, err := ten.RecallWith(ctx, knowmind.RecallQuery{Query: q, K: 10}, c.signals.options())
			if err != nil {
				return err
			}
			got := make([]string, len(res.Hits))
			for i, h := range res.Hits {
				got[i] = h.MemoryID
			}
			*c.sum += overlap(exact, got)
		}
		if dropped {
			continue
		}
		hn, err := bareHNSW(ctx, ten, graph.VectorString(qv), 10)
		if err != nil {
			return err
		}
		bare += overlap(exact, hn)
	}
	if dropped {
		fmt.Fprintf(out, "vector recall@10 against exact search (%d queries): recall's vector signal (the service's exact search) %.3f; HNSW rows not measured (index being rebuilt)\n\n",
			len(qs), union/float64(len(qs)))
	} else {
		fmt.Fprintf(out, "vector recall@10 against exact search (%d queries):\n"+
			"- recall's vector signal (the service's exact search, HNSW at ef %d and the text candidates, re-scored in Dgraph): %.3f\n"+
			"- without the service's exact search (HNSW at ef %d and the full-text pools, re-scored exactly): %.3f\n"+
			"- HNSW candidates alone (similar_to over-fetch at ef %d, re-scored exactly): %.3f\n"+
			"- bare similar_to top-10 (default ef): %.3f\n\n",
			len(qs), graph.ExactVectorEF, union/float64(len(qs)), graph.VectorEF, pools/float64(len(qs)),
			graph.VectorEF, overFetch/float64(len(qs)), bare/float64(len(qs)))
	}

	fmt.Fprintf(out, "peak RSS: alpha %s, this process (service and benchmark) %s\n\n", peakRSS(b.alphaPid()), peakRSS(os.Getpid()))

	// How over-fetch and the query-time ef trade recall for time.
	if *sweep && !dropped {
		fmt.Fprintln(out, "| similar_to k | ef | recall@10 | p50 ms |")
		fmt.Fprintln(out, "|--:|--:|--:|--:|")
		for _, c := range sweepSettings {
			var sum float64
			var lat []float64
			for _, q := range qs {
				qv, _ := b.embedder.EmbedQuery(ctx, q)
				start := time.Now()
				got, err := rescored(ctx, ten, graph.VectorString(qv), c[0], c[1], 10)
				if err != nil {
					return err
				}
				lat = append(lat, float64(time.Since(start).Microseconds())/1000)
				sum += overlap(exactTop(qv, vecs, ids, 10), got)
			}
			fmt.Fprintf(out, "| %d | %d | %.3f | %.1f |\n", c[0], c[1], sum/float64(len(qs)), percentile(lat, 50))
		}
	}
	return nil
}

// rescored is the candidate step alone: similar_to's top n with query-time ef, re-scored
// exactly, best k memories.
func rescored(ctx context.Context, ten *benchTenant, vec string, n, ef, k int) ([]string, error) {
	root := fmt.Sprintf("similar_to(Chunk.embedding, %d, $vec, ef: %d)", n, ef)
	if n == 0 {
		root = "has(Chunk.embedding)" // exact: every stored vector scored inside Dgraph
	}
	resp, err := ten.DG().Query(ctx, fmt.Sprintf(`query q($vec: float32vector) {
  VC as var(func: %s) { e as Chunk.embedding  vs as math(e dot $vec) }
  c(func: uid(VC), orderdesc: val(vs), first: %d) { ~Memory.chunks { Memory.id } }
}`, root, k), map[string]string{"$vec": vec})
	if err != nil {
		return nil, err
	}
	return chunkMemoryIDs(resp)
}

// workload generates the synthetic memories and queries.
type workload struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	mu    sync.Mutex
	texts map[int][]string // content words per memory index, for queries
}

func newWorkload(seed uint64) *workload {
	rng := rand.New(rand.NewPCG(seed, 42))
	syl := []string{"ka", "lo", "mi", "ber", "tan", "sel", "vo", "ri", "dun", "gra", "pe", "shu", "ne", "wal", "tor", "fi", "lan", "mo", "zen", "ku"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 20000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syl[rng.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &workload{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1)), vocab: vocab, texts: map[int][]string{}}
}

// fork is a workload of its own seed over the same vocabulary: tenants loaded in parallel each
// get one, so what a tenant holds does not depend on the order the loads ran in.
func (w *workload) fork(seed uint64) *workload {
	rng := rand.New(rand.NewPCG(seed, 42))
	return &workload{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(w.vocab)-1)), vocab: w.vocab, texts: map[int][]string{}}
}

func (w *workload) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = w.vocab[w.zipf.Uint64()]
	}
	return out
}

func (w *workload) memory(i int) (title, content string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	words := w.words(40)
	w.texts[i] = words
	return strings.Join(w.words(4), " "), strings.Join(words, " ") + "."
}

func (w *workload) query(i int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	words := w.texts[i]
	q := make([]string, 4)
	for j := range q {
		q[j] = words[w.rng.IntN(len(words))]
	}
	return strings.Join(q, " ")
}

// loadSynthetic writes n memories (or finds them from an earlier run in --dir) and returns
// their ids and vectors, index-aligned.
//
// dropIndex: the load runs without Dgraph's HNSW index (dropped reports whether this run did
// so); the caller restores it.
func loadSynthetic(ctx context.Context, b *benchBackend, ten *benchTenant, w *workload, n, batch int, dropIndex bool) (ids []string, vecs [][]float32, dropped bool, err error) {
	ids = make([]string, n)
	vecs = make([][]float32, n)
	texts := make([]string, n)
	langs := make([]string, n)
	titles := make([]string, n)
	contents := make([]string, n)
	for i := range n {
		titles[i], contents[i] = w.memory(i)
		texts[i] = titles[i] + "\n\n" + contents[i]
		if i%3 == 0 {
			langs[i] = "de"
		}
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("speed-%d", i))).String()
	}
	start := time.Now()
	for s := 0; s < n; s += 256 {
		e := min(s+256, n)
		v, err := b.embedder.EmbedPassages(ctx, texts[s:e])
		if err != nil {
			return nil, nil, false, err
		}
		copy(vecs[s:e], v)
	}
	fmt.Fprintf(os.Stderr, "embedded %d texts in %.1fs\n", n, time.Since(start).Seconds())

	existing, err := storedSources(ctx, ten)
	if err != nil {
		return nil, nil, false, err
	}
	if len(existing) > n {
		// Exact search would miss the extra vectors that HNSW searches.
		return nil, nil, false, fmt.Errorf("the tenant holds %d memories, more than --n %d", len(existing), n)
	}
	if len(existing) == n {
		fmt.Fprintf(os.Stderr, "reusing %d stored memories\n", len(existing))
		// An earlier run's background rebuild of the HNSW index may not have finished before
		// its cluster stopped: then this run is one without the index (and restores it).
		noIndex := false
		if _, err := bareHNSW(ctx, ten, graph.VectorString(vecs[0]), 1); err != nil {
			if !strings.Contains(err.Error(), "not indexed") {
				return nil, nil, false, err
			}
			noIndex = true
		}
		if linked, err := hasEdges(ctx, ten); err != nil || linked {
			return ids, vecs, noIndex, err
		}
		return ids, vecs, noIndex, linkSynthetic(ctx, ten, ids, n)
	}
	if len(existing) > 0 {
		// An interrupted load: each batch committed whole, so skip the batches already there.
		fmt.Fprintf(os.Stderr, "resuming a load: %d memories stored\n", len(existing))
	}

	start = time.Now()
	if dropIndex {
		if err := ten.DropVectorIndex(ctx); err != nil {
			return nil, nil, false, err
		}
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	added := 0
	for s := 0; s < n; s += batch {
		e := min(s+batch, n)
		if _, done := existing[ids[s]]; done {
			if _, last := existing[ids[e-1]]; last {
				continue
			}
		}
		nodes := make([]map[string]any, 0, e-s)
		for i := s; i < e; i++ {
			textPred := "Chunk.text"
			if langs[i] == "de" {
				textPred = "Chunk.text@de"
			}
			node := map[string]any{
				"uid": fmt.Sprintf("_:m%d", i), "dgraph.type": "Memory",
				"Memory.id": ids[i], "Memory.kind": knowmind.KindMemory, "Memory.title": titles[i],
				"Memory.content": contents[i], "Memory.preview": runes.Truncate(contents[i], knowmind.RecallMaxContentChars),
				"Memory.status":      knowmind.StatusIndexed,
				"Memory.content_sha": graph.ContentSHA(contents[i]), "Memory.created_at": now,
				"Memory.updated_at": now, "Memory.valid_from": now, "Memory.chunk_count": 1,
				"Memory.memory_type": knowmind.MemorySemantic, "Memory.source": "synthetic",
				"Memory.chunks": []map[string]any{{
					"uid": fmt.Sprintf("_:c%d", i), "dgraph.type": "Chunk", textPred: texts[i],
					"Chunk.embedding": graph.VectorString(vecs[i]), "Chunk.position": 0,
				}},
			}
			if langs[i] == "de" {
				node["Memory.lang"] = "de"
			} else {
				node["Memory.lang"] = "en"
			}
			nodes = append(nodes, node)
		}
		body, err := json.Marshal(nodes)
		if err != nil {
			return nil, nil, false, err
		}
		err = ten.DG().SetJSON(ctx, body)
		if err != nil {
			return nil, nil, false, fmt.Errorf("load batch at %d: %w", s, err)
		}
		el := time.Since(start).Seconds()
		added += e - s
		fmt.Fprintf(os.Stderr, "\rloaded %d/%d memories, %.0f/s", e, n, float64(added)/el)
	}
	fmt.Fprintf(os.Stderr, "\nloaded %d memories in %.0fs (%.0f/s, %d per transaction)\n", added, time.Since(start).Seconds(),
		float64(added)/time.Since(start).Seconds(), batch)
	if err := linkSynthetic(ctx, ten, ids, n); err != nil {
		return nil, nil, false, err
	}
	el := time.Since(start)
	fmt.Printf("load: %d memories and their links in %.0f s (%.0f memories/s, HNSW index %s)\n\n", added, el.Seconds(),
		float64(added)/el.Seconds(), map[bool]string{true: "dropped during the load, rebuilt in the background after the timings", false: "updated per batch"}[dropIndex])
	return ids, vecs, dropIndex, nil
}

// hasEdges tells whether the workload's links were written (a load interrupted before them
// has none).
func hasEdges(ctx context.Context, ten *benchTenant) (bool, error) {
	resp, err := ten.DG().Query(ctx, `{ e(func: has(RELATES_TO), first: 1) { uid } }`, nil)
	if err != nil {
		return false, err
	}
	var out struct{ E []struct{} }
	if err := json.Unmarshal(resp, &out); err != nil {
		return false, err
	}
	return len(out.E) > 0, nil
}

// linkSynthetic writes the workload's edges: each memory RELATES_TO two random earlier ones,
// both directions materialised with the facets link writes.
func linkSynthetic(ctx context.Context, ten *benchTenant, ids []string, n int) error {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	uidOf, err := memoryUIDs(ctx, ten)
	if err != nil {
		return err
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(7, 7))
	var nq strings.Builder
	flush := func() error {
		if nq.Len() == 0 {
			return nil
		}
		body := []byte(nq.String())
		nq.Reset()
		return ten.DG().SetNquads(ctx, body)
	}
	edges := 0
	for i := 1; i < n; i++ {
		for range 2 {
			j := rng.IntN(i)
			a, c := uidOf[ids[i]], uidOf[ids[j]]
			fmt.Fprintf(&nq, "<%s> <RELATES_TO> <%s> (id=%q, created_at=%s, valid_from=%s, inverse=false) .\n", a, c,
				graph.EdgeID(ids[i], "RELATES_TO", ids[j]), now, now)
			fmt.Fprintf(&nq, "<%s> <RELATES_TO> <%s> (id=%q, created_at=%s, valid_from=%s, inverse=true) .\n", c, a,
				graph.EdgeID(ids[j], "RELATES_TO", ids[i]), now, now)
			edges += 2
		}
		if i%2500 == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "linked %d edges in %.0fs\n", edges, time.Since(start).Seconds())
	return nil
}

func memoryUIDs(ctx context.Context, ten *benchTenant) (map[string]string, error) {
	resp, err := ten.DG().Query(ctx, `{ m(func: has(Memory.id)) { uid Memory.id } }`, nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		M []struct {
			UID string `json:"uid"`
			ID  string `json:"Memory.id"`
		} `json:"m"`
	}
	if err := json.Unmarshal(resp, &out); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(out.M))
	for _, x := range out.M {
		m[x.ID] = x.UID
	}
	return m, nil
}

// measure runs total calls of fn from clients goroutines; it returns each call's latency in
// ms and the throughput.
func measure(ctx context.Context, total, clients int, fn func(context.Context, int) error) ([]float64, float64, error) {
	lat := make([]float64, total)
	start := time.Now()
	err := parallel(ctx, total, clients, func(ctx context.Context, i int) error {
		t := time.Now()
		if err := fn(ctx, i); err != nil {
			return err
		}
		lat[i] = float64(time.Since(t).Microseconds()) / 1000
		return nil
	})
	return lat, float64(total) / time.Since(start).Seconds(), err
}

// measurePaired times a and b on each of total queries, one after the other in one goroutine,
// a first for even queries and b first for odd ones, and returns their latencies in ms and the
// bytes a allocated per query (memory statistics read outside the timed calls).
func measurePaired(ctx context.Context, total int, a, b func(context.Context, int) error) (la, lb []float64, aAlloc uint64, err error) {
	fns, lat := [2]func(context.Context, int) error{a, b}, [2][]float64{make([]float64, total), make([]float64, total)}
	var before, after runtime.MemStats
	for i := range total {
		for k := range 2 {
			j := (i + k) % 2 // a first for even i
			if j == 0 {
				runtime.ReadMemStats(&before)
			}
			t := time.Now()
			if err := fns[j](ctx, i); err != nil {
				return nil, nil, 0, err
			}
			lat[j][i] = float64(time.Since(t).Microseconds()) / 1000
			if j == 0 {
				runtime.ReadMemStats(&after)
				aAlloc += after.TotalAlloc - before.TotalAlloc
			}
		}
	}
	return lat[0], lat[1], aAlloc / uint64(max(total, 1)), nil
}

func percentile(ms []float64, p float64) float64 {
	s := slices.Clone(ms)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

// exactTop returns the ids of the k vectors with the highest dot product with q.
func exactTop(q []float32, vecs [][]float32, ids []string, k int) []string {
	type sc struct {
		i int
		s float32
	}
	best := make([]sc, 0, k+1)
	for i, v := range vecs {
		var s float32
		for j := range q {
			s += q[j] * v[j]
		}
		if len(best) < k || s > best[len(best)-1].s {
			best = append(best, sc{i, s})
			slices.SortFunc(best, func(a, b sc) int {
				if a.s > b.s {
					return -1
				}
				if a.s < b.s {
					return 1
				}
				return 0
			})
			if len(best) > k {
				best = best[:k]
			}
		}
	}
	out := make([]string, len(best))
	for i, b := range best {
		out[i] = ids[b.i]
	}
	return out
}

func overlap(want, got []string) float64 {
	if len(want) == 0 {
		return 1
	}
	n := 0
	for _, w := range want {
		if slices.Contains(got, w) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// bareHNSW is similar_to's own top-k, without over-fetch (for comparison).
func bareHNSW(ctx context.Context, ten *benchTenant, vec string, k int) ([]string, error) {
	resp, err := ten.DG().Query(ctx, fmt.Sprintf(`query q($vec: float32vector) {
  c(func: similar_to(Chunk.embedding, %d, $vec)) { ~Memory.chunks { Memory.id } }
}`, k), map[string]string{"$vec": vec})
	if err != nil {
		return nil, err
	}
	return chunkMemoryIDs(resp)
}

// chunkMemoryIDs reads the memory ids of a block "c" of chunks, in order.
func chunkMemoryIDs(data []byte) ([]string, error) {
	var out struct {
		C []struct {
			M []struct {
				ID string `json:"Memory.id"`
			} `json:"~Memory.chunks"`
		} `json:"c"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range out.C {
		for _, m := range c.M {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// sweepSettings are the (similar_to k, ef) pairs --sweep measures.
// k = 0 is the exact scan (has(Chunk.embedding)), for the cost of exactness.
var sweepSettings = [][2]int{{10, 90}, {100, 100}, {100, 400}, {200, 200}, {400, 400}, {400, 1000}, {1000, 1000}, {400, 2000}, {1000, 3000}, {0, 0}}

// procCPU is the CPU time in seconds process pid has used (user and system), read from
// /proc in clock ticks of 10 ms.
func procCPU(pid int) (float64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command (which may hold spaces) start after the last ')'.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	var utime, stime float64
	fmt.Sscan(f[11], &utime)           // field 14 of the whole line
	fmt.Sscan(f[12], &stime)           // field 15
	return (utime + stime) / 100, true // clock ticks (USER_HZ = 100 on Linux)
}

// settleAlpha waits until the process pid used under 10% of a core for 10 consecutive seconds,
// or limit passed; it reports how long it waited and whether the process went quiet.
func settleAlpha(ctx context.Context, pid int, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	cpu := func() (float64, bool) { return procCPU(pid) }
	last, ok := cpu()
	if !ok {
		return 0, false
	}
	quiet := 0
	for time.Since(start) < limit && ctx.Err() == nil {
		time.Sleep(time.Second)
		now, ok := cpu()
		if !ok {
			return time.Since(start), false
		}
		if now-last < 0.1 {
			quiet++
		} else {
			quiet = 0
		}
		last = now
		if quiet >= 10 {
			return time.Since(start), true
		}
	}
	return time.Since(start), false
}

// peakRSS reads a process's peak resident set (VmHWM) from /proc, or "?".
func peakRSS(pid int) string { return procStatus(pid, "VmHWM") }

// procStatus reads a memory field of /proc/PID/status (VmRSS, VmHWM) in MB, or "?".
func procStatus(pid int, field string) string {
	if pid <= 0 {
		return "?"
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return fmt.Sprintf("%.0f MB", kb/1024)
		}
	}
	return "?"
}

// memPhase prints the alpha's and this process's resident set now and their peaks so far, after
// a phase of the run (the load, the first recall, the timings, the HNSW rebuild): which phase
// raises the peak (issue 19's alpha + service ≤ 4 GB; docs/dgraph-notes.md).
func memPhase(out io.Writer, b *benchBackend, phase string) {
	a, self := b.alphaPid(), os.Getpid()
	fmt.Fprintf(out, "memory after %s: alpha RSS %s (peak %s), this process %s (peak %s)\n\n", phase,
		procStatus(a, "VmRSS"), peakRSS(a), procStatus(self, "VmRSS"), peakRSS(self))
}

// speedVariant is one row of the timing table: a recall with some signals off.
type speedVariant struct {
	name string
	q    knowmind.RecallQuery
	a    ablation
	hnsw bool // needs Dgraph's HNSW index
}

// timeVariants measures each recall variant through the service (Tenant.RecallTraced: embed,
// text and vector search, both requests, fusion) and the Dgraph work it sends — the same
// requests (the first and the details, recorded by a traced recall of each query beforehand)
// sent directly, in order, in one read-only transaction — at 1 client interleaved query by query
// (measurePaired), at 8 clients one after the other. A second
// table breaks the service's time at 1 client down by phase.
func timeVariants(ctx context.Context, out io.Writer, ten *benchTenant, qs []string, k, hops int, only string, dropped bool, alphaPid int) error {
	match := regexp.MustCompile(only)
	asOfNow := time.Now().UTC()
	variants := []speedVariant{
		{"vector only, hops 0", knowmind.RecallQuery{K: k}, ablation{NoText: true}, false},
		{"text only, hops 0", knowmind.RecallQuery{K: k}, ablation{NoVector: true}, false},
		{"text only, hops 0, Dgraph's anyoftext", knowmind.RecallQuery{K: k}, ablation{NoVector: true, DgraphText: true}, false},
		{"vector only, hops 0, without the exact search (HNSW ef 2000)", knowmind.RecallQuery{K: k}, ablation{NoText: true, NoExactVectors: true}, true},
		{"text+vector, hops 0", knowmind.RecallQuery{K: k}, ablation{}, false},
		{"text+vector, hops 1", knowmind.RecallQuery{K: k, Hops: 1}, ablation{}, false},
		{fmt.Sprintf("text+vector, hops %d (the tools' default plan)", hops), knowmind.RecallQuery{K: k, Hops: hops}, ablation{}, false},
		{fmt.Sprintf("text+vector, hops %d, keeping hits found by one everyday word (Weights.CommonWords off)", hops), knowmind.RecallQuery{K: k, Hops: hops}, ablation{NoCommonWords: true}, false},
		{fmt.Sprintf("text+vector, hops %d, without the PPMI+SVD model (no semantic pool, no concept signal)", hops), knowmind.RecallQuery{K: k, Hops: hops}, ablation{SemanticPool: -1, ConceptWeight: -1}, false},
		{fmt.Sprintf("text+vector, hops %d, Dgraph's anyoftext", hops), knowmind.RecallQuery{K: k, Hops: hops}, ablation{DgraphText: true}, false},
		{fmt.Sprintf("recall_at_time (now), hops %d", hops), knowmind.RecallQuery{K: k, Hops: hops, AsOf: &asOfNow}, ablation{}, false},
		{"text+vector, hops 3", knowmind.RecallQuery{K: k, Hops: 3}, ablation{}, false},
	}
	var breakdown []string
	fmt.Fprintf(out, "| recall variant | service p50 / p95 ms, 1 client | service p50 / p95 ms, q/s, 8 clients | direct DQL (both requests) p50 / p95 ms, 1 client | direct DQL p50 / p95 ms, q/s, 8 clients | overhead (p50 service / direct, 1 client) |\n")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|")
	for _, v := range variants {
		if !match.MatchString(v.name) || (v.hnsw && dropped) {
			continue
		}
		reqs := make([][]graph.RecallRequest, len(qs))
		for i, q := range qs {
			vq := v.q
			vq.Query = q
			var tr graph.RecallTrace
			if _, err := ten.RecallTraced(ctx, vq, v.a.options(), &tr); err != nil {
				return err
			}
			reqs[i] = tr.Requests
		}
		// phases sums the traces of the 1-client service measurement (one goroutine).
		var phases graph.RecallTrace
		var traced bool
		service := func(ctx context.Context, i int) error {
			q := v.q
			q.Query = qs[i%len(qs)]
			var tr *graph.RecallTrace
			if traced {
				tr = &graph.RecallTrace{}
			}
			_, err := ten.RecallTraced(ctx, q, v.a.options(), tr)
			if tr != nil {
				phases.Prepare += tr.Prepare
				phases.Query += tr.Query
				phases.Decode += tr.Decode
				phases.Fuse += tr.Fuse
				phases.Details += tr.Details
			}
			return err
		}
		direct := func(ctx context.Context, i int) error {
			txn := ten.DG().ReadOnly()
			for _, r := range reqs[i%len(reqs)] {
				if _, err := txn.Query(ctx, r.DQL, r.Vars); err != nil {
					return err
				}
			}
			return nil
		}
		var cells [4]string
		var p50 [2]float64
		// One client: each query through the service and then directly, or the other way round,
		// alternating — both meet the alpha in the same state and neither always goes first
		// (measured one after the other, whichever ran first was slower by up to 1.3× on a busy
		// machine).
		traced = true
		svc, dir, allocated, err := measurePaired(ctx, len(qs), service, direct)
		traced = false
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		for pi, lat := range [][]float64{svc, dir} {
			p50[pi] = percentile(lat, 50)
			cells[2*pi] = fmt.Sprintf("%.0f / %.0f", p50[pi], percentile(lat, 95))
		}
		// CPU per recall at 8 clients, of this process and of the alpha, for the service and for
		// the same requests sent directly: unlike latency on a shared 2-core machine, it does not
		// depend on who else runs.
		var cpu [2][2]float64 // [service, direct][this process, alpha], ms per recall
		for pi, fn := range []func(context.Context, int) error{service, direct} {
			self0, _ := procCPU(os.Getpid())
			alpha0, alphaOK := procCPU(alphaPid)
			lat, qps, err := measure(ctx, len(qs), 8, fn)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			self1, _ := procCPU(os.Getpid())
			alpha1, _ := procCPU(alphaPid)
			cpu[pi][0] = (self1 - self0) * 1000 / float64(len(qs))
			if alphaOK {
				cpu[pi][1] = (alpha1 - alpha0) * 1000 / float64(len(qs))
			}
			cells[2*pi+1] = fmt.Sprintf("%.0f / %.0f, %.1f", percentile(lat, 50), percentile(lat, 95), qps)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %.2f× |\n", v.name, cells[0], cells[1], cells[2], cells[3], p50[0]/max(p50[1], 0.001))
		n := time.Duration(len(qs))
		ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d/n)/1e6) }
		breakdown = append(breakdown, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %.0f | %.1f / %.1f | %.1f / %.1f | %.2f× |", v.name,
			ms(phases.Prepare), ms(phases.Query), ms(phases.Decode), ms(phases.Fuse), ms(phases.Details), float64(allocated)/1024,
			cpu[0][0], cpu[0][1], cpu[1][0], cpu[1][1], (cpu[0][0]+cpu[0][1])/max(cpu[1][0]+cpu[1][1], 0.001)))
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Service time by phase, 1 client, mean ms: prepare (embedding, the service's text and vector search, the plan), the first request's round trip, decoding its answer, scoring and fusion, the details request with its decoding; and the KB this process allocated per recall (the Dgraph client's included). CPU ms per recall at 8 clients (10-ms clock ticks over the run): this process (service and benchmark) / the alpha, through the service and with the same requests sent directly, and the ratio of their sums.")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| recall variant | prepare | first request | decode | fuse | details | KB allocated | CPU via service: process / alpha | CPU direct: process / alpha | CPU ratio |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, line := range breakdown {
		fmt.Fprintln(out, line)
	}
	fmt.Fprintln(out)
	return nil
}

// holdCluster keeps the benchmark's Dgraph up for d (or until ctx ends) with nothing else
// running, and leaves the tenant's login where a DQL experiment finds it: --dir/hold.json.
func holdCluster(ctx context.Context, b *benchBackend, dir, tenant string, d time.Duration) error {
	cred, err := b.client.NamespaceCredentials(ctx, tenant)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(map[string]any{"alphas": b.alphas, "userid": cred.User, "password": cred.Password, "namespace": cred.Namespace})
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "hold.json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "holding the cluster for %s; login in %s\n", d, file)
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	return os.Remove(file)
}

// restartRow restarts the service (its graph client: Close writes every loaded tenant's index
// snapshot, as serve's shutdown does; Dgraph keeps running) and times the first recalls of the
// new one: restart → first recall (opening the client and the tenant, reading the snapshot and
// catching up), and the p95 of the first 10. Then it prints the resident memory of the alpha
// and of this process once the garbage of the closed client is returned to the system. It
// returns the tenant on the new client.
func restartRow(ctx context.Context, out io.Writer, b *benchBackend, name string, n int, qs []string, k, hops int) (*benchTenant, error) {
	b.client.Close()
	b.client = nil
	start := time.Now()
	c, err := graph.Open(ctx, b.graphCfg)
	if err != nil {
		return nil, err
	}
	b.client = c
	ten, err := b.tenant(ctx, name)
	if err != nil {
		return nil, err
	}
	opened := time.Since(start)
	first, p95, err := firstRecalls(ctx, ten, qs, k, hops)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "| restart | restart → first recall | of it: client and tenant opened | p95 of the first 10 recalls | snapshot loads |\n|---|--:|--:|--:|---|\n")
	fmt.Fprintf(out, "| service (Dgraph kept running) | %.0f ms | %.0f ms | %.0f ms | %v |\n\n", ms(opened+first),
		ms(opened), p95, c.SnapshotLoads())
	debug.FreeOSMemory()
	memPhase(out, b, "the restart's first recalls")
	fmt.Fprintf(out, "the service's index estimate after the restart: %.0f MB (this process also holds the benchmark's own copy of the vectors, %.0f MB, and its workload)\n\n",
		float64(c.IndexBytes())/(1<<20), float64(b.embedder.Dim()*4*n)/(1<<20))
	return ten, nil
}

// coldRow times a tenant dropped by the index memory budget and read back from its snapshot,
// as a service holding more tenants than its --index-memory-mb meets it: the service is opened
// again with a budget of the hot tenant's index bytes plus 1 MB, the hot tenant is recalled
// (read from its snapshot), then a neighbour tenant of a hundredth of its size (loaded once,
// kept with --dir), whose load puts the two over the budget and drops the least recently used, the
// hot one. Its next recall reads its snapshot back and catches up: the cold first recall, and
// the p95 of the first 10. It returns the hot tenant on the new client.
func coldRow(ctx context.Context, out io.Writer, b *benchBackend, name string, n int, seed uint64, qs []string, k, hops int) (*benchTenant, error) {
	hotBytes := b.client.IndexBytes()
	b.client.Close()
	b.client = nil
	cfg := b.graphCfg
	cfg.IndexMemoryBytes = int64(hotBytes) + 1<<20
	c, err := graph.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b.client = c
	hot, err := b.tenant(ctx, name)
	if err != nil {
		return nil, err
	}
	if _, err := hot.Recall(ctx, knowmind.RecallQuery{Query: qs[0], K: k, Hops: hops}); err != nil {
		return nil, err
	}
	neighbourN := max(n/100, 100)
	neighbour, err := b.tenant(ctx, fmt.Sprintf("%s-neighbour", name))
	if err != nil {
		return nil, err
	}
	stdout := os.Stdout
	os.Stdout, _ = os.Open(os.DevNull) // loadSynthetic's progress line
	nw := newWorkload(seed + 1)
	_, _, _, err = loadSynthetic(ctx, b, neighbour, nw, neighbourN, 1000, false)
	os.Stdout = stdout
	if err != nil {
		return nil, fmt.Errorf("load the neighbour tenant: %w", err)
	}
	if _, err := neighbour.Recall(ctx, knowmind.RecallQuery{Query: nw.query(0), K: k, Hops: hops}); err != nil {
		return nil, err
	}
	c.WaitIndexBudget()
	if c.IndexEvictions() == 0 {
		return nil, fmt.Errorf("cold row: the budget of %d MB did not drop the hot tenant (indexes held %d MB)", cfg.IndexMemoryBytes>>20, c.IndexBytes()>>20)
	}
	first, p95, err := firstRecalls(ctx, hot, qs, k, hops)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "| cold tenant | first recall after the budget dropped it | p95 of its first 10 recalls | budget | neighbour | evictions | snapshot loads |\n|---|--:|--:|--:|--:|--:|---|\n")
	fmt.Fprintf(out, "| %d memories, read back from its snapshot | %.0f ms | %.0f ms | %d MB | %d memories | %d | %v |\n\n",
		n, ms(first), p95, cfg.IndexMemoryBytes>>20, neighbourN, c.IndexEvictions(), c.SnapshotLoads())
	return hot, nil
}

// firstRecalls times ten recalls in a row: the first, and the p95 of all ten in ms.
func firstRecalls(ctx context.Context, ten *benchTenant, qs []string, k, hops int) (time.Duration, float64, error) {
	var lat []float64
	var first time.Duration
	for i := range 10 {
		t0 := time.Now()
		if _, err := ten.Recall(ctx, knowmind.RecallQuery{Query: qs[i%len(qs)], K: k, Hops: hops}); err != nil {
			return 0, 0, err
		}
		took := time.Since(t0)
		if i == 0 {
			first = took
		}
		lat = append(lat, ms(took))
	}
	return first, percentile(lat, 95), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

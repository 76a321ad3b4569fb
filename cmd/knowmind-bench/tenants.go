package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dql"
)

// runBenchTenants measures many tenants in one service under an index memory budget
// (--index-memory-mb, graph's budget.go): what the service holds, a hot tenant's latency while
// the others come and go, and a cold tenant's first recall read back from its snapshot.
//
// Workload: --tenants small tenants of --per memories and --big tenants of --big-n memories,
// written as bench speed writes them (seeded synthetic text, one workload seed per tenant, hash
// vectors, two links per memory), --load-workers tenants at a time (each created through the
// service, then loaded by the benchmark's own client). Then, on one service client with the
// budget and snapshots in <dir>/index:
//
//  1. hot alone: the first big tenant is recalled --queries times (its first recall loads it);
//  2. first pass: every other tenant is recalled once (a load from Dgraph, then its snapshot is
//     written; the budget drops the least recently used), the hot tenant once after each;
//  3. cold pass: the same again; a tenant the budget dropped is read back from its snapshot.
//
// It prints the hot tenant's p50/p95 alone and during each pass, the first recalls of the small
// and the big tenants in each pass, the evictions and snapshot loads, the estimated bytes held
// against the budget and the resident memory of the service (this process) and the alpha.
//
// Big tenants are loaded without Dgraph's HNSW index and left without it, recorded as built so
// that no open asks for the rebuild: recall finds vectors in the service's exact copy and does
// not query HNSW, and the rebuild (~20 minutes of the alpha at 100k memories, refusing every
// other tenant's schema change meanwhile) would run under the timings. At a scale that takes
// long to load, --prepare loads the tenants into --dir, recalling each once right after its
// load (its first recall, from Dgraph, which leaves its snapshot in <dir>/index), records in
// <dir>/prepared-tenants how many tenants are complete (also when interrupted), then stops; a
// later run with --reuse-snapshots on the same --dir starts a fresh service on them (at most
// that many): the hot tenant alone, then only the cold pass, every tenant read back from its
// snapshot as after a restart.
func runBenchTenants(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench tenants", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	bf.snapshots = true
	small := fs.Int("tenants", 60, "small tenants")
	per := fs.Int("per", 200, "memories per small tenant")
	big := fs.Int("big", 2, "big tenants")
	bigN := fs.Int("big-n", 5000, "memories per big tenant")
	budget := fs.Int("index-memory-mb", 64, "the service's --index-memory-mb")
	queries := fs.Int("queries", 50, "recalls of the hot tenant alone")
	seed := fs.Uint64("seed", 1, "random seed of the workload")
	loadWorkers := fs.Int("load-workers", 3, "tenants created and loaded at a time (and opened at a time with --reuse-snapshots)")
	prepare := fs.Bool("prepare", false, "load the tenants into --dir, recalling each once after its load (writing its snapshot to <dir>/index), then stop")
	settle := fs.Duration("settle", 5*time.Minute, "after the hot tenant's first recall, wait up to this long for the alpha to go quiet; 0: do not wait")
	reuse := fs.Bool("reuse-snapshots", false, "keep <dir>/index from a --prepare run and time only the cold pass (every tenant read from its snapshot)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*prepare || *reuse) && bf.dir == "" {
		return fmt.Errorf("--prepare and --reuse-snapshots need --dir")
	}
	// A --prepare run on a --dir an earlier one was stopped in goes on from its snapshots.
	bf.keepIndex = *reuse || *prepare
	if *big < 1 {
		return fmt.Errorf("--big must be at least 1: the first big tenant is the hot one")
	}
	bf.indexMemoryMB = *budget
	out := os.Stdout

	type tenant struct {
		name string
		n    int
		big  bool
		w    *workload
		ten  *benchTenant
	}
	base := newWorkload(*seed)
	var tenants []tenant
	for i := range *big {
		tenants = append(tenants, tenant{name: fmt.Sprintf("big-%d-%d", i, *bigN), n: *bigN, big: true})
	}
	for i := range *small {
		tenants = append(tenants, tenant{name: fmt.Sprintf("small-%d-%d", i, *per), n: *per})
	}
	for i := range tenants {
		tenants[i].w = base.fork(*seed*1_000_003 + uint64(i))
	}
	preparedFile := filepath.Join(bf.dir, "prepared-tenants")
	if *reuse {
		// A --prepare run that was stopped early completed the tenants before this count.
		if data, err := os.ReadFile(preparedFile); err == nil {
			if k, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && k < len(tenants) {
				if k <= *big {
					return fmt.Errorf("%s: only %d tenants prepared, the big ones are %d", preparedFile, k, *big)
				}
				fmt.Fprintf(out, "%s: %d tenants prepared; using those (%d small instead of %d)\n\n", preparedFile, k, k-*big, *small)
				tenants = tenants[:k]
			}
		}
	}
	nSmall := len(tenants) - *big

	b, err := openBenchBackend(ctx, bf)
	if err != nil {
		return err
	}
	defer b.Close()

	query := func(t tenant) string { return t.w.query(t.w.rng.IntN(t.n)) }
	recall := func(t tenant) (float64, error) {
		t0 := time.Now()
		_, err := t.ten.Recall(ctx, knowmind.RecallQuery{Query: query(t), K: 5, Hops: 1})
		return float64(time.Since(t0).Microseconds()) / 1000, err
	}

	// Load (or, reusing, open) every tenant, --load-workers at a time.
	var mu sync.Mutex
	var openMS, smallFirst, bigFirst []float64
	done := make([]bool, len(tenants))
	start := time.Now()
	stdout := os.Stdout
	os.Stdout, _ = os.Open(os.DevNull) // loadSynthetic's line per tenant
	err = parallel(ctx, len(tenants), *loadWorkers, func(ctx context.Context, i int) error {
		t := &tenants[i]
		t0 := time.Now()
		ten, err := b.client.Tenant(ctx, t.name, !*reuse)
		for try := 2; err != nil && ctx.Err() == nil && try <= 3; try++ {
			// A busy alpha can keep /admin's addNamespace past the client's 30 s.
			fmt.Fprintf(os.Stderr, "open %s (try %d): %v\n", t.name, try, err)
			ten, err = b.client.Tenant(ctx, t.name, !*reuse)
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", t.name, err)
		}
		took := float64(time.Since(t0).Microseconds()) / 1000
		t.ten = &benchTenant{Tenant: ten}
		if *reuse {
			for j := range t.n { // the texts the queries pick words from
				t.w.memory(j)
			}
		} else if err := loadTenant(ctx, b, t.ten, t.w, t.n, t.big); err != nil {
			return fmt.Errorf("load %s: %w", t.name, err)
		}
		var first float64
		if *prepare {
			// On a busy machine a first recall can pass a request's deadline; the tenant's
			// load is kept, and a later try or the timed run loads its indexes again.
			for try := 1; ; try++ {
				if first, err = recall(*t); err == nil || ctx.Err() != nil || try == 3 {
					break
				}
				fmt.Fprintf(os.Stderr, "first recall of %s (try %d): %v\n", t.name, try, err)
			}
			if err != nil {
				return fmt.Errorf("first recall of %s: %w", t.name, err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		openMS = append(openMS, took)
		if *prepare {
			if t.big {
				bigFirst = append(bigFirst, first)
			} else {
				smallFirst = append(smallFirst, first)
			}
		}
		done[i] = true
		return nil
	})
	os.Stdout = stdout
	if *prepare {
		// The big tenants (the first, and the longest to load) and the small ones loaded
		// without a gap after them.
		complete := 0
		if !slices.Contains(done[:*big], false) {
			for complete = *big; complete < len(done) && done[complete]; complete++ {
			}
		}
		if werr := os.WriteFile(preparedFile, []byte(strconv.Itoa(complete)+"\n"), 0o600); werr != nil && err == nil {
			err = werr
		}
		fmt.Fprintf(out, "prepared: the first %d of %d tenants complete (%s)\n", complete, len(tenants), preparedFile)
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	fmt.Fprintf(out, "# Many tenants in one service: %d × %d memories + %d × %d, --index-memory-mb %d (embedder %s)\n\n",
		nSmall, *per, *big, *bigN, *budget, b.embedder.ID())
	verb := "created and loaded"
	if *reuse {
		verb = "opened (login, schema record read)"
	}
	fmt.Fprintf(out, "load: %d tenants %s in %.0f s, %d at a time; each tenant's open: p50 %.0f ms, max %.0f ms\n\n",
		len(tenants), verb, elapsed.Seconds(), *loadWorkers, percentile(openMS, 50), percentile(openMS, 100))
	if *prepare {
		b.client.WaitIndexBudget()
		debug.FreeOSMemory()
		fmt.Fprintln(out, "| each tenant recalled once right after its load (from Dgraph) | small tenants' first recall p50 / p95 / max | big tenants' first recall | evictions | snapshot loads | index bytes held / budget | service RSS | alpha RSS |")
		fmt.Fprintln(out, "|---|--:|--:|--:|---|--:|--:|--:|")
		fmt.Fprintf(out, "| %d × %d + %d × %d | %.0f / %.0f / %.0f ms | %.0f ms (max of %d) | %d | %v | %.0f / %d MB | %s | %s |\n\n",
			nSmall, *per, *big, *bigN, percentile(smallFirst, 50), percentile(smallFirst, 95), percentile(smallFirst, 100),
			percentile(bigFirst, 100), len(bigFirst), b.client.IndexEvictions(), b.client.SnapshotLoads(),
			float64(b.client.IndexBytes())/(1<<20), *budget, procStatus(os.Getpid(), "VmRSS"), procStatus(b.alphaPid(), "VmRSS"))
		memPhase(out, b, "the load")
		printPeak(out, b)
		return nil
	}
	memPhase(out, b, "the load")

	hot := tenants[0]
	first, err := recall(hot)
	if err != nil {
		return err
	}
	if *settle > 0 && b.alphaPid() > 0 {
		took, quiet := settleAlpha(ctx, b.alphaPid(), *settle)
		fmt.Fprintf(out, "alpha settled: %v after %.0f s (under 10%% of a core for 10 s; limit %s)\n\n", quiet, took.Seconds(), *settle)
	}
	var alone []float64
	for range *queries {
		ms, err := recall(hot)
		if err != nil {
			return err
		}
		alone = append(alone, ms)
	}
	b.client.WaitIndexBudget()
	from := "a load from Dgraph"
	if *reuse {
		from = "read from its snapshot"
	}
	fmt.Fprintf(out, "hot tenant (%s): first recall %.0f ms (%s); alone p50 %.1f ms, p95 %.1f ms (%d recalls); its indexes %.1f MB\n\n",
		hot.name, first, from, percentile(alone, 50), percentile(alone, 95), len(alone), float64(b.client.IndexBytes())/(1<<20))

	fmt.Fprintln(out, "| pass | small tenants' first recall p50 / p95 / max | big tenants' first recall | hot p50 / p95 meanwhile | evictions | snapshot loads | index bytes held / budget | service RSS | alpha RSS |")
	fmt.Fprintln(out, "|---|--:|--:|--:|--:|---|--:|--:|--:|")
	passes := []string{"first (from Dgraph)", "cold (from snapshots)"}
	if *reuse {
		passes = passes[1:]
	}
	for _, pass := range passes {
		var smallMS, bigMS, hotMS []float64
		for _, t := range tenants[1:] {
			ms, err := recall(t)
			if err != nil {
				return err
			}
			if t.big {
				bigMS = append(bigMS, ms)
			} else {
				smallMS = append(smallMS, ms)
			}
			if ms, err = recall(hot); err != nil {
				return err
			}
			hotMS = append(hotMS, ms)
		}
		b.client.WaitIndexBudget()
		debug.FreeOSMemory()
		bigCol := "–"
		if len(bigMS) > 0 {
			bigCol = fmt.Sprintf("%.0f ms (max of %d)", percentile(bigMS, 100), len(bigMS))
		}
		fmt.Fprintf(out, "| %s | %.0f / %.0f / %.0f ms | %s | %.1f / %.1f ms | %d | %v | %.0f / %d MB | %s | %s |\n",
			pass, percentile(smallMS, 50), percentile(smallMS, 95), percentile(smallMS, 100), bigCol,
			percentile(hotMS, 50), percentile(hotMS, 95), b.client.IndexEvictions(), b.client.SnapshotLoads(),
			float64(b.client.IndexBytes())/(1<<20), *budget, procStatus(os.Getpid(), "VmRSS"), procStatus(b.alphaPid(), "VmRSS"))
	}
	fmt.Fprintln(out)
	memPhase(out, b, "both passes")
	printPeak(out, b)
	return nil
}

// loadTenant writes a tenant's synthetic memories through the benchmark's own login into its
// namespace. A big tenant is loaded without the HNSW index and recorded as built, so that no open
// rebuilds it (runBenchTenants says why).
func loadTenant(ctx context.Context, b *benchBackend, ten *benchTenant, w *workload, n int, big bool) error {
	cred, err := b.client.NamespaceCredentials(ctx, ten.Name)
	if err != nil {
		return err
	}
	if ten.dg, err = dql.Dial(ctx, b.alphas, cred); err != nil {
		return fmt.Errorf("login into tenant %s: %w", ten.Name, err)
	}
	defer ten.dg.Close() // recalls go through the service
	if big {
		// Recorded as built before the load: an open after an interrupted load would otherwise
		// ask for the build, and a build refuses every alter meanwhile — every new tenant's.
		if err := ten.DropVectorIndex(ctx); err != nil {
			return err
		}
		if err := ten.dg.Upsert(ctx, `{ m as var(func: eq(Meta.key, "knowmind")) }`, nil, []byte(`uid(m) <Meta.vector_index> "built" .`)); err != nil {
			return err
		}
	}
	_, _, _, err = loadSynthetic(ctx, b, ten, w, n, 1000, false)
	return err
}

func printPeak(out io.Writer, b *benchBackend) {
	fmt.Fprintf(out, "peak RSS: alpha %s, this process (service and benchmark) %s\n", peakRSS(b.alphaPid()), peakRSS(os.Getpid()))
}

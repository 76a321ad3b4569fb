package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/knowmind/knowmind"
)

// runBenchTenants measures many tenants in one service under an index memory budget
// (--index-memory-mb, graph's budget.go): what the service holds, a hot tenant's latency while
// the others come and go, and a cold tenant's first recall read back from its snapshot.
//
// Workload: --tenants small tenants of --per memories and --big tenants of --big-n memories,
// written as bench speed writes them (seeded synthetic text, hash vectors, two links per memory).
// Then, on one service client with the budget and snapshots in <dir>/index:
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
// Big tenants are loaded without Dgraph's HNSW index (recall finds vectors in the service's
// exact copy; an index build would hold every other tenant's schema change back). At a scale
// that takes long to load, --prepare loads the tenants into --dir and runs the first pass (each
// tenant's snapshot written to <dir>/index), and a later run with --reuse-snapshots on the same
// --dir starts a fresh service on them: the hot tenant alone, then only the cold pass, every
// tenant read back from its snapshot as after a restart.
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
	prepare := fs.Bool("prepare", false, "load the tenants into --dir and run the first pass (writing every tenant's snapshot to <dir>/index), then stop")
	reuse := fs.Bool("reuse-snapshots", false, "keep <dir>/index from a --prepare run and time only the cold pass (every tenant read from its snapshot)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*prepare || *reuse) && bf.dir == "" {
		return fmt.Errorf("--prepare and --reuse-snapshots need --dir")
	}
	bf.keepIndex = *reuse
	if *big < 1 {
		return fmt.Errorf("--big must be at least 1: the first big tenant is the hot one")
	}
	bf.indexMemoryMB = *budget
	b, err := openBenchBackend(ctx, bf)
	if err != nil {
		return err
	}
	defer b.Close()
	out := os.Stdout
	w := newWorkload(*seed)

	type tenant struct {
		name string
		n    int
		ten  *benchTenant
	}
	var tenants []tenant
	for i := range *big {
		tenants = append(tenants, tenant{name: fmt.Sprintf("big-%d-%d", i, *bigN), n: *bigN})
	}
	for i := range *small {
		tenants = append(tenants, tenant{name: fmt.Sprintf("small-%d-%d", i, *per), n: *per})
	}
	start := time.Now()
	stdout := os.Stdout
	os.Stdout, _ = os.Open(os.DevNull) // loadSynthetic's line per tenant
	for i := range tenants {
		if tenants[i].ten, err = b.tenant(ctx, tenants[i].name); err == nil {
			_, _, _, err = loadSynthetic(ctx, b, tenants[i].ten, w, tenants[i].n, 1000, i < *big)
			tenants[i].ten.DG().Close() // the loader's login; recalls go through the service
		}
		if err != nil {
			os.Stdout = stdout
			return fmt.Errorf("load %s: %w", tenants[i].name, err)
		}
	}
	os.Stdout = stdout
	fmt.Fprintf(out, "# Many tenants in one service: %d × %d memories + %d × %d, --index-memory-mb %d (embedder %s)\n\n",
		*small, *per, *big, *bigN, *budget, b.embedder.ID())
	fmt.Fprintf(out, "load: %d tenants in %.0f s\n\n", len(tenants), time.Since(start).Seconds())
	memPhase(out, b, "the load")

	query := func(n int) string { return w.query(w.rng.IntN(n)) }
	recall := func(t tenant) (float64, error) {
		t0 := time.Now()
		_, err := t.ten.Recall(ctx, knowmind.RecallQuery{Query: query(t.n), K: 5, Hops: 1})
		return float64(time.Since(t0).Microseconds()) / 1000, err
	}
	hot := tenants[0]
	first, err := recall(hot)
	if err != nil {
		return err
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
	switch {
	case *prepare:
		passes = passes[:1]
	case *reuse:
		passes = passes[1:]
	}
	for _, pass := range passes {
		var smallMS, bigMS, hotMS []float64
		for _, t := range tenants[1:] {
			ms, err := recall(t)
			if err != nil {
				return err
			}
			if t.n == *bigN {
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

func printPeak(out io.Writer, b *benchBackend) {
	fmt.Fprintf(out, "peak RSS: alpha %s, this process (service and benchmark) %s\n", peakRSS(b.alphaPid()), peakRSS(os.Getpid()))
}

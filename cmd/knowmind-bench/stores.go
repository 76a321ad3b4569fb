package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/localdgraph"
)

// runBenchStores times knowmind_store_memory's graph call in a tenant of --n synthetic memories
// (written as bench speed writes them) with and without a writer: a store with a writer and no
// sequence joins the writer's implicit sequence (graph.Tenant.implicitSequence), which costs two
// bounded reads before the write (the writer's latest key, that sequence's last member); without
// a writer it does neither. The two kinds alternate store by store, so both see the same machine
// and the same tenant; the writer's stores form one sequence that grows by one each time.
//
// Each run loads its own tenant and adds --stores × 2 memories to it, so it needs a throwaway
// Dgraph (no --dir: a kept tenant would hold more than --n on the next run).
func runBenchStores(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench stores", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	n := fs.Int("n", 10000, "memories in the tenant before the timed stores")
	stores := fs.Int("stores", 200, "timed stores of each kind (with a writer, without), alternating")
	warm := fs.Int("warm", 20, "untimed stores of each kind first")
	seed := fs.Uint64("seed", 1, "random seed of the workload")
	settle := fs.Duration("settle", 10*time.Minute, "after the load and the HNSW index's restore, wait up to this long for the alpha to go quiet (under 10% of a core for 10 s); 0: do not wait")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if bf.dir != "" {
		return fmt.Errorf("bench stores adds memories to its tenant: run it on a throwaway Dgraph (no --dir)")
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
	name := fmt.Sprintf("stores-%d", *n)
	ten, err := b.tenant(ctx, name)
	if err != nil {
		return err
	}
	w := newWorkload(*seed)
	if _, _, _, err = loadSynthetic(ctx, b, ten, w, *n, 1000, true); err != nil {
		return err
	}
	if bulkMode {
		if err := b.restart(ctx, func(c *localdgraph.Config) { c.CacheRemoveOnUpdate = false }); err != nil {
			return fmt.Errorf("restart after the load: %w", err)
		}
		if ten, err = b.tenant(ctx, name); err != nil {
			return err
		}
	}
	out := os.Stdout
	quiet := func() {
		if *settle > 0 && b.alphaPid() > 0 {
			took, quiet := settleAlpha(ctx, b.alphaPid(), *settle)
			fmt.Fprintf(out, "alpha settled: %v after %.0f s (under 10%% of a core for 10 s; limit %s)\n\n", quiet, took.Seconds(), *settle)
		}
	}
	// A serving tenant has its HNSW index and its text index loaded: every store updates both.
	// Dgraph refuses the index while it still indexes what the restart left (errIndexingInProgress).
	quiet()
	for attempt := 0; ; attempt++ {
		err := ten.RestoreVectorIndex(ctx, true)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "errIndexingInProgress") || attempt == 30 {
			return err
		}
		time.Sleep(10 * time.Second)
	}
	if _, err := ten.Recall(ctx, knowmind.RecallQuery{Query: w.query(0), K: 5, Hops: 1}); err != nil {
		return err
	}
	quiet()

	const writer = "bench-stores-token"
	var with, without []float64
	for i := range *warm + *stores {
		for _, wr := range []string{writer, ""} {
			title, content := w.memory(*n + 2*i)
			t0 := time.Now()
			if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: content, Writer: wr}); err != nil {
				return err
			}
			ms := float64(time.Since(t0).Microseconds()) / 1000
			if i < *warm {
				continue
			}
			if wr != "" {
				with = append(with, ms)
			} else {
				without = append(without, ms)
			}
		}
	}
	fmt.Fprintf(out, "# store_memory, %d memories in the tenant (embedder %s), %d stores of each kind alternating after %d of each untimed\n\n", *n, b.embedder.ID(), *stores, *warm)
	fmt.Fprintln(out, "| store | p50 | p95 | mean |\n|---|--:|--:|--:|")
	for _, r := range []struct {
		name string
		ms   []float64
	}{{"with a writer: joins its implicit sequence (two reads more)", with}, {"without a writer: no sequence", without}} {
		var sum float64
		for _, x := range r.ms {
			sum += x
		}
		fmt.Fprintf(out, "| %s | %.1f ms | %.1f ms | %.1f ms |\n", r.name, percentile(r.ms, 50), percentile(r.ms, 95), sum/float64(max(len(r.ms), 1)))
	}
	fmt.Fprintln(out)
	return nil
}

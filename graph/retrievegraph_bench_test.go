package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// BenchmarkRetrieveGraph measures knowmind_retrieve's graph mode on a tenant of
// KNOWMIND_BENCH_GRAPH_MEMORIES memories (default 20,000; no chunks, written straight to
// Dgraph as link writes edges): each memory RELATES_TO one earlier memory (a random tree, so
// all are connected) and every second one is CAUSED_BY another (with the CAUSES inverse) —
// about three links per memory. Depth 5 from a random start reaches thousands of memories;
// the answer is cut at knowmind.GraphMaxNodes.
func BenchmarkRetrieveGraph(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("KNOWMIND_BENCH_GRAPH_MEMORIES")); err == nil && v > 1 {
		n = v
	}
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	now := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339Nano)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	const batch = 2000
	for lo := 0; lo < n; lo += batch {
		var nq strings.Builder
		for i := lo; i < min(lo+batch, n); i++ {
			fmt.Fprintf(&nq, "_:m%[1]d <dgraph.type> \"Memory\" .\n_:m%[1]d <Memory.id> \"m%[1]d\" .\n_:m%[1]d <Memory.kind> \"memory\" .\n"+
				"_:m%[1]d <Memory.title> \"Memory %[1]d\" .\n_:m%[1]d <Memory.status> \"indexed\" .\n_:m%[1]d <Memory.valid_from> %[2]q .\n"+
				"_:m%[1]d <Memory.created_at> %[2]q .\n", i, now)
		}
		dgraphtest.SetNquads(b, ten, nq.String())
	}
	uids := map[int]string{}
	for lo := 0; lo < n; lo += 5000 {
		ids := make([]string, 0, 5000)
		for i := lo; i < min(lo+5000, n); i++ {
			ids = append(ids, strconv.Quote(fmt.Sprintf("m%d", i)))
		}
		resp, err := dgraphtest.DG(b, ten).NewReadOnlyTxn().Query(ctx, fmt.Sprintf(`{ m(func: eq(Memory.id, [%s])) { uid Memory.id } }`, strings.Join(ids, ",")))
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			M []struct {
				UID string `json:"uid"`
				ID  string `json:"Memory.id"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			b.Fatal(err)
		}
		for _, m := range out.M {
			i, _ := strconv.Atoi(m.ID[1:])
			uids[i] = m.UID
		}
	}
	edge := func(nq *strings.Builder, from, to int, rel, inverse string) {
		fmt.Fprintf(nq, "<%[1]s> <%[3]s> <%[2]s> (id=\"e\", created_at=%[5]s, valid_from=%[5]s, inverse=false) .\n"+
			"<%[2]s> <%[4]s> <%[1]s> (id=\"i\", created_at=%[5]s, valid_from=%[5]s, inverse=true) .\n", uids[from], uids[to], rel, inverse, now)
	}
	links := 0
	for lo := 1; lo < n; lo += batch {
		var nq strings.Builder
		for i := lo; i < min(lo+batch, n); i++ {
			edge(&nq, i, rng.IntN(i), "RELATES_TO", "RELATES_TO")
			links++
			if i%2 == 0 {
				edge(&nq, i, rng.IntN(n), "CAUSED_BY", "CAUSES")
				links++
			}
		}
		dgraphtest.SetNquads(b, ten, nq.String())
	}
	b.Logf("loaded %d memories and %d links in %s", n, links, time.Since(start).Round(time.Millisecond))
	if _, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: "m0", MaxDepth: 5}); err != nil { // warm the caches
		b.Fatal(err)
	}
	for _, depth := range []int{1, 3, 5} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			var nodes, rels int
			truncated := 0
			for b.Loop() {
				r, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: fmt.Sprintf("m%d", rng.IntN(n)), MaxDepth: depth})
				if err != nil {
					b.Fatal(err)
				}
				nodes, rels = len(r.Memories), len(r.Relations)
				if r.Truncated {
					truncated++
				}
			}
			b.ReportMetric(float64(nodes), "memories")
			b.ReportMetric(float64(rels), "relations")
			b.ReportMetric(float64(truncated)/float64(b.N), "truncated")
		})
	}
}

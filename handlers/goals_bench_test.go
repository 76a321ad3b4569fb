package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Workload: knowmind_store_memory over loopback HTTP (token check, ingest of
// one ~30-word memory with chunk and vector, goal matching) in a tenant with
// 0 and 5,000 open event goals. Each goal's trigger is two words, the first
// one of 500 words that every stored memory draws 20 from, the second one no
// memory contains: every store checks ~200 goals in full and fires none.
// Run: go test ./handlers/ -run '^$' -bench StoreWithGoals -benchtime 100x
func BenchmarkStoreWithGoals(b *testing.B) {
	for _, n := range []int{0, 5000} {
		b.Run(fmt.Sprintf("open-goals=%d", n), func(b *testing.B) {
			srv := newTestServer(b, func(d *Deps) { d.RateLimit = 0 })
			url := srv.URL + "/api/mcp/v1"
			tenant := dgraphtest.TenantName(b)
			token := newToken(b, tenant, knowmind.ScopeWrite)
			seedGoals(b, tenant, n)
			i := 0
			store := func() {
				i++
				var words []string
				for k := range 20 {
					words = append(words, fmt.Sprintf("w%d", (i*37+k*11)%500))
				}
				var res StoreMemoryResult
				structured(b, callTool(b, url, token, "knowmind_store_memory", map[string]any{"title": fmt.Sprintf("m%d", i),
					"content": fmt.Sprintf("memory %d about %s", i, strings.Join(words, " "))}), &res)
				if len(res.PMMatches) != 0 {
					b.Fatalf("fired %+v", res.PMMatches)
				}
			}
			store() // loads the goal index
			b.ResetTimer()
			for b.Loop() {
				store()
			}
		})
	}
}

// seedGoals writes n open event goals in one mutation.
func seedGoals(b testing.TB, tenant string, n int) {
	if n == 0 {
		return
	}
	ctx := context.Background()
	ten, err := dgraphtest.Shared(b).Client.Tenant(ctx, tenant, true)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	var nodes []map[string]any
	for i := range n {
		tr, _ := json.Marshal(knowmind.GoalTrigger{Words: []string{fmt.Sprintf("w%d", i%500), fmt.Sprintf("never%d", i)}})
		nodes = append(nodes, map[string]any{"dgraph.type": "Goal", "Goal.id": fmt.Sprintf("bench-goal-%d", i), "Goal.text": "g",
			"Goal.kind": knowmind.GoalEvent, "Goal.status": knowmind.GoalOpen, "Goal.trigger": string(tr), "Goal.created_at": now})
	}
	dgraphtest.SetJSON(b, ten, nodes)
}

package handlers

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind_store_memories stores what it can and says per item what happened: indexed,
// unchanged (already stored, also twice in one call) or failed with store_memory's error.
func TestStoreMemories(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)

	memories := []map[string]any{
		{"title": "Schulung", "content": "Alle Mitarbeitenden absolvieren die QM-Schulung jährlich.", "tags": []string{"qm"}, "memory_type": "procedural"},
		{"content": "Alle   Mitarbeitenden absolvieren die QM-Schulung jährlich."}, // the same content, reformatted
		{"title": "empty", "content": "  "},
		{"content": "Valid text, bad type.", "memory_type": "gossip"},
		{"title": "Deploy", "content": "Deploy with make release and check the health endpoint."},
	}
	var res StoreMemoriesResult
	structured(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": memories}), &res)
	if len(res.Results) != 5 || res.Stored != 2 || res.Unchanged != 1 || res.Failed != 2 || res.EmbeddingProvider == "" {
		t.Fatalf("store_memories %+v", res)
	}
	r := res.Results
	if r[0].Status != knowmind.ItemIndexed || r[0].ID == "" || r[0].ChunksWritten != 1 || r[4].Status != knowmind.ItemIndexed {
		t.Errorf("stored items %+v, %+v", r[0], r[4])
	}
	if r[1].Status != knowmind.ItemUnchanged || r[1].ID != r[0].ID {
		t.Errorf("the repeated content %+v, want unchanged with id %s", r[1], r[0].ID)
	}
	if e := r[2].Error; r[2].Status != knowmind.ItemFailed || e == nil || e.Code != jsonrpc.CodeInternalError || e.Message != knowmind.ReasonContentRequired {
		t.Errorf("blank content %+v %+v, want -32603 content_required", r[2], e)
	}
	if e := r[3].Error; e == nil || e.Code != jsonrpc.CodeInvalidParams || e.Data["param"] != "memory_type" {
		t.Errorf("bad memory_type %+v, want -32602 naming memory_type", e)
	}
	m := memoryOf(t, tenant, r[0].ID)
	if m.MemoryType != "procedural" || len(m.Tags) != 1 || m.Status != knowmind.StatusIndexed || m.Chunks != 1 {
		t.Errorf("stored memory %+v", m)
	}
	if s := statsOf(t, url, read); s.Memories != 2 || s.Chunks != 2 {
		t.Errorf("stats %+v, want 2 memories and 2 chunks", s)
	}

	// Again: everything already stored is unchanged; recall finds what was stored.
	structured(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": memories[:1]}), &res)
	if res.Unchanged != 1 || res.Results[0].ID != r[0].ID {
		t.Errorf("second call %+v", res)
	}
	var rec RecallResult
	structured(t, callTool(t, url, read, "knowmind_recall", map[string]any{"query": "health endpoint deploy"}), &rec)
	if len(rec.Hits) == 0 || rec.Hits[0].MemoryID != r[4].ID {
		t.Errorf("recall after store_memories: %+v, want %s first", rec.Hits, r[4].ID)
	}

	// The batch is bounded (its tag is tied to the domain's limit in limits_test.go); the scope
	// is write.
	many := make([]map[string]any, knowmind.MaxStoreMemoriesItems+1)
	for i := range many {
		many[i] = map[string]any{"content": fmt.Sprintf("memory %d", i)}
	}
	wantRPCError(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": many}), jsonrpc.CodeInvalidParams, "memories")
	wantRPCError(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": []any{}}), jsonrpc.CodeInvalidParams, "memories")
	wantRPCError(t, callTool(t, url, read, "knowmind_store_memories", map[string]any{"memories": memories[:1]}), codeScope, "")
}

// Each item of knowmind_store_memories counts as one ingest with its outcome.
func TestStoreMemoriesMetrics(t *testing.T) {
	m := NewMetrics(dgraphtest.Shared(t).Client.IndexSizes)
	srv := newTestServer(t, func(d *Deps) { d.Metrics, d.MetricsToken = m, "metrics-secret" })
	write := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	structured(t, callTool(t, srv.URL+"/api/mcp/v1", write, "knowmind_store_memories", map[string]any{"memories": []map[string]any{
		{"content": "counted once"}, {"content": "counted   once"}, {"content": ""},
	}}), &StoreMemoriesResult{})
	for result, want := range map[string]float64{"stored": 1, "unchanged": 1, "failed": 1} {
		if got := counterValue(m.ingests.WithLabelValues("knowmind_store_memories", result)); got != want {
			t.Errorf("ingests %s = %v, want %v", result, got, want)
		}
	}
	if got := counterValue(m.ingestChunks.WithLabelValues("knowmind_store_memories")); got != 1 {
		t.Errorf("ingest chunks = %v, want 1", got)
	}
}

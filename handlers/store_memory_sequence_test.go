package handlers

import (
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// A conversation stored turn by turn through the MCP endpoint with a sequence and no positions:
// the turns take places 0, 1, 2 … (explore shows them), and recall finds the reply that shares
// no word with the question right after the turn that asked it. A position without a sequence
// is -32602 naming position (in a batch, for that item alone).
func TestStoreMemorySequenceFindsTheReply(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	write := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	turns := []map[string]any{
		{"title": "Melanie", "content": "I finally repainted the garden fence last weekend."},
		{"title": "Caroline", "content": "Nice! The blue looks great in the photos."},
		{"title": "Melanie", "content": "How long have you been doing pottery, Caroline?"},
	}
	var ids []string
	for _, turn := range turns {
		turn["sequence"] = "chat 2023-05-08"
		var stored StoreMemoryResult
		structured(t, callTool(t, url, write, "knowmind_store_memory", turn), &stored)
		ids = append(ids, stored.MemoryID)
	}
	var batch StoreMemoriesResult
	structured(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": []any{
		map[string]any{"title": "Caroline", "content": "Three years now, since I finished college.", "sequence": "chat 2023-05-08"},
		map[string]any{"title": "Melanie", "content": "My kids want to visit the aquarium next month.", "sequence": "chat 2023-05-08"},
		map[string]any{"content": "A place in nothing.", "position": 2},
	}}), &batch)
	if batch.Stored != 2 || batch.Failed != 1 || batch.Results[2].Error == nil || batch.Results[2].Error.Code != -32602 || batch.Results[2].Error.Data["param"] != "position" {
		t.Fatalf("store_memories: %+v", batch)
	}
	ids = append(ids, batch.Results[0].ID, batch.Results[1].ID)
	for i, id := range ids {
		var res ExploreResult
		structured(t, callTool(t, url, write, "knowmind_explore", map[string]any{"memory_id": id}), &res)
		if res.Memory.Sequence != "chat 2023-05-08" || res.Memory.Position == nil || *res.Memory.Position != i {
			t.Fatalf("turn %d: place %q %v, want position %d", i, res.Memory.Sequence, res.Memory.Position, i)
		}
	}
	var rec RecallResult
	structured(t, callTool(t, url, write, "knowmind_recall", map[string]any{"query": "How long has Caroline been doing pottery?", "k": 3}), &rec)
	if len(rec.Hits) < 2 || rec.Hits[0].MemoryID != ids[2] || rec.Hits[1].MemoryID != ids[3] {
		t.Fatalf("recall: %+v, want the question %s then the reply %s", rec.Hits, ids[2], ids[3])
	}
	wantRPCError(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"content": "Somewhere.", "sequence": "chat", "position": -1}), -32602, "position")
}

package handlers

import (
	"encoding/json"
	"fmt"
	"strings"
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

// Two conversations of one token at once, each in its own MCP session, store their turns
// interleaved and without a sequence: each session's turns form their own implicit sequence
// (each turn's predecessor is its own session's turn before it), and the context signal finds
// each reply after its own question. A one-shot request has no session: its turns join the
// token's implicit sequence, as before sessions counted.
func TestStoreMemoryImplicitSequencePerSession(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	write := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	sessions := []string{openSession(t, url, write), openSession(t, url, write)}
	inSession := func(sid, name string, args any) reply {
		t.Helper()
		a, _ := json.Marshal(args)
		return send(t, url, write, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, a),
			"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	}
	conversations := [][]string{
		{"How long have you been doing pottery, Caroline?", "Three years now, since I finished college.", "Do you sell the bowls?"},
		{"Which train do we take to Hamburg on Monday?", "The 7:12 from platform four, I booked it.", "Then I will bring coffee."},
	}
	ids := make([][]string, 2)
	for turn := range 3 {
		for c, sid := range sessions { // interleaved: A1 B1 A2 B2 A3 B3
			var stored StoreMemoryResult
			structured(t, inSession(sid, "knowmind_store_memory", map[string]any{"content": conversations[c][turn]}), &stored)
			ids[c] = append(ids[c], stored.MemoryID)
		}
	}
	var oneShot []string
	for _, content := range []string{"A note without a session.", "Another note without a session."} {
		var stored StoreMemoryResult
		structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{"content": content}), &stored)
		oneShot = append(oneShot, stored.MemoryID)
	}
	place := func(id string) (string, int) {
		t.Helper()
		var res ExploreResult
		structured(t, callTool(t, url, write, "knowmind_explore", map[string]any{"memory_id": id}), &res)
		if res.Memory.Position == nil || !strings.HasPrefix(res.Memory.Sequence, "implicit ") {
			t.Fatalf("memory %s: place %q %v, want an implicit sequence", id, res.Memory.Sequence, res.Memory.Position)
		}
		return res.Memory.Sequence, *res.Memory.Position
	}
	var keys []string
	for c := range conversations {
		key, _ := place(ids[c][0])
		for i, id := range ids[c] {
			if seq, pos := place(id); seq != key || pos != i {
				t.Errorf("session %d turn %d: %q %d, want %q %d", c, i, seq, pos, key, i)
			}
		}
		keys = append(keys, key)
	}
	first, _ := place(oneShot[0])
	if second, pos := place(oneShot[1]); second != first || pos != 1 {
		t.Errorf("one-shot notes: %q then %q %d, want one sequence", first, second, pos)
	}
	if keys[0] == keys[1] || first == keys[0] || first == keys[1] {
		t.Fatalf("sequences %q %q, one-shot %q: want three", keys[0], keys[1], first)
	}
	var rec RecallResult
	structured(t, callTool(t, url, write, "knowmind_recall", map[string]any{"query": "How long has Caroline been doing pottery?", "k": 3}), &rec)
	if len(rec.Hits) < 2 || rec.Hits[0].MemoryID != ids[0][0] || rec.Hits[1].MemoryID != ids[0][1] {
		t.Fatalf("recall: %+v, want the question %s then its reply %s", rec.Hits, ids[0][0], ids[0][1])
	}
}

package handlers

import (
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind_store_memory's occurred_at through the MCP endpoint: the memory is valid from
// then, explore shows the days its text names resolved against it ("gestern" on 8 May 2023 is
// the 7th), and a time that is no ISO 8601 time is -32602 naming occurred_at (in a batch, for
// that item alone).
func TestStoreMemoryOccurredAtResolvesDates(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	var stored StoreMemoryResult
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"content":     "Gestern war Lisa beim Kunden, nächsten Freitag kommt die Abnahme.",
		"occurred_at": "2023-05-08T13:56:00Z"}), &stored)
	var res ExploreResult
	structured(t, callTool(t, url, write, "knowmind_explore", map[string]any{"memory_id": stored.MemoryID}), &res)
	want := []time.Time{time.Date(2023, 5, 7, 0, 0, 0, 0, time.UTC), time.Date(2023, 5, 12, 0, 0, 0, 0, time.UTC)}
	if len(res.Memory.Dates) != 2 || !res.Memory.Dates[0].Equal(want[0]) || !res.Memory.Dates[1].Equal(want[1]) {
		t.Fatalf("dates %v, want %v", res.Memory.Dates, want)
	}
	if !res.Memory.ValidFrom.Equal(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)) {
		t.Fatalf("valid_from %v, want occurred_at", res.Memory.ValidFrom)
	}
	wantRPCError(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"content": "Noch etwas.", "occurred_at": "yesterday"}), -32602, "occurred_at")

	// The writer's zone decides the day: at 21:30 -07:00 on 8 May (4:30 UTC on the 9th)
	// "gestern" is the 7th — stored directly, and through a capture's draft accepted later.
	const evening = "2023-05-08T21:30:00-07:00"
	structured(t, callTool(t, url, write, "knowmind_store_memory", map[string]any{
		"content": "Gestern hat Jonas den Vertrag unterschrieben.", "occurred_at": evening}), &stored)
	structured(t, callTool(t, url, write, "knowmind_explore", map[string]any{"memory_id": stored.MemoryID}), &res)
	if len(res.Memory.Dates) != 1 || !res.Memory.Dates[0].Equal(want[0]) {
		t.Fatalf("store_memory at %s: dates %v, want %v", evening, res.Memory.Dates, want[:1])
	}
	var capt knowmind.CaptureResult
	structured(t, callTool(t, url, write, "knowmind_capture", map[string]any{
		"text": "Gestern hat der Vertrieb 20 neue Kunden gewonnen.", "occurred_at": evening}), &capt)
	if len(capt.Drafts) != 1 {
		t.Fatalf("capture: want one draft, got %+v", capt)
	}
	var accepted struct {
		MemoryID string `json:"memory_id"`
	}
	structured(t, callTool(t, url, write, "knowmind_review_draft", map[string]any{"draft_id": capt.Drafts[0].ID, "action": "accept"}), &accepted)
	structured(t, callTool(t, url, write, "knowmind_explore", map[string]any{"memory_id": accepted.MemoryID}), &res)
	if len(res.Memory.Dates) != 1 || !res.Memory.Dates[0].Equal(want[0]) {
		t.Fatalf("accepted draft captured at %s: dates %v, want %v", evening, res.Memory.Dates, want[:1])
	}

	// knowmind_store_memories: each item at its own time.
	var batch StoreMemoriesResult
	structured(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": []any{
		map[string]any{"content": "I ran a charity race last Sunday.", "occurred_at": "2023-05-25T10:00:00Z"},
		map[string]any{"content": "The conference is in two weeks.", "occurred_at": "2023-05-08T10:00:00Z"},
	}}), &batch)
	if batch.Stored != 2 {
		t.Fatalf("store_memories: %+v", batch)
	}
	for i, want := range []time.Time{time.Date(2023, 5, 21, 0, 0, 0, 0, time.UTC), time.Date(2023, 5, 22, 0, 0, 0, 0, time.UTC)} {
		structured(t, callTool(t, url, write, "knowmind_explore", map[string]any{"memory_id": batch.Results[i].ID}), &res)
		if len(res.Memory.Dates) != 1 || !res.Memory.Dates[0].Equal(want) {
			t.Fatalf("store_memories item %d: dates %v, want %v", i, res.Memory.Dates, want)
		}
	}
	// An item whose occurred_at is no time fails alone, with store_memory's error; the rest is stored.
	structured(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": []any{
		map[string]any{"content": "Noch etwas anderes.", "occurred_at": "gestern"},
		map[string]any{"content": "Die Abnahme ist am Freitag.", "occurred_at": "2023-05-08T10:00:00Z"}}}), &batch)
	if batch.Stored != 1 || batch.Failed != 1 || len(batch.Results) != 2 || batch.Results[1].Status != knowmind.ItemIndexed || batch.Results[1].ID == "" {
		t.Fatalf("store_memories with one bad occurred_at: %+v", batch)
	}
	if r := batch.Results[0]; r.Status != knowmind.ItemFailed || r.Index != 0 || r.Error == nil || r.Error.Code != -32602 || r.Error.Data["param"] != "occurred_at" {
		t.Fatalf("the bad item %+v %+v, want failed with -32602 naming occurred_at", r, r.Error)
	}
	wantRPCError(t, callTool(t, url, write, "knowmind_store_memories", map[string]any{"memories": []any{}}), -32602, "memories")
}

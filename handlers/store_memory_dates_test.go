package handlers

import (
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind_store_memory's occurred_at through the MCP endpoint: the memory is valid from
// then, explore shows the days its text names resolved against it ("gestern" on 8 May 2023 is
// the 7th), and a time that is no ISO 8601 time is -32602 naming occurred_at.
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
}

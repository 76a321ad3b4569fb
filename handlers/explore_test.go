package handlers

import (
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind_explore through the MCP endpoint: a read token explores, the
// parameters are checked before the graph is asked, and another tenant's
// ids do not exist for it.
func TestExplore(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	writeToken := newToken(t, tenant, knowmind.ScopeWrite)
	readToken := newToken(t, tenant, knowmind.ScopeRead)
	otherToken := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeAdmin)
	client := seedMemory(t, tenant, "Müller GmbH", "semantic", "class:client")
	workshop := seedMemory(t, tenant, "Workshop Q1", "episodic")
	var link LinkResult
	structured(t, callTool(t, url, writeToken, "knowmind_link", linkArgs(workshop, client, "FOR_CLIENT")), &link)

	var res ExploreResult
	structured(t, callTool(t, url, readToken, "knowmind_explore", map[string]any{"memory_id": client}), &res)
	if res.Memory.ID != client || res.Memory.Title != "Müller GmbH" || len(res.Nodes) != 2 || len(res.Versions) != 1 {
		t.Fatalf("explore: %+v", res)
	}
	if len(res.Edges) != 1 || res.Edges[0].From != workshop || res.Edges[0].RelType != "FOR_CLIENT" ||
		res.Edges[0].InverseType != "HAS_WORKSHOP" || res.Edges[0].ID != link.EdgeID {
		t.Fatalf("edges: %+v, want workshop FOR_CLIENT client with the link's id %s", res.Edges, link.EdgeID)
	}
	if res.Chunks == nil || res.Truncated || res.Entities == nil || len(res.Entities) != 0 {
		t.Fatalf("chunks and entities must be [] and nothing cut: %+v", res)
	}

	// The entities store_memory was given come back with their names.
	var stored StoreMemoryResult
	structured(t, callTool(t, url, writeToken, "knowmind_store_memory", map[string]any{
		"title": "Ansprechpartnerin Müller GmbH", "content": "Lisa Müller leitet den Einkauf der Müller GmbH.",
		"entities": []any{map[string]any{"type": "person", "name": "Lisa Müller"},
			map[string]any{"type": "organisation", "name": "Müller GmbH"}}}), &stored)
	structured(t, callTool(t, url, readToken, "knowmind_explore", map[string]any{"memory_id": stored.MemoryID}), &res)
	if want := []knowmind.ExploreEntity{{Type: "organisation", ID: "mueller-gmbh", Name: "Müller GmbH"},
		{Type: "person", ID: "lisa-mueller", Name: "Lisa Müller"}}; !slices.Equal(res.Entities, want) {
		t.Fatalf("entities %+v, want %+v", res.Entities, want)
	}

	for _, tc := range []struct {
		name  string
		args  map[string]any
		param string
	}{
		{"missing id", map[string]any{}, "memory_id"},
		{"hops 0", map[string]any{"memory_id": client, "hops": 0}, "hops"},
		{"hops 4", map[string]any{"memory_id": client, "hops": 4}, "hops"},
		{"bad as_of", map[string]any{"memory_id": client, "as_of": "yesterday"}, "as_of"},
		{"long id", map[string]any{"memory_id": strings.Repeat("x", 201)}, "memory_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRPCError(t, callTool(t, url, readToken, "knowmind_explore", tc.args), -32602, tc.param)
		})
	}
	wantRPCError(t, callTool(t, url, readToken, "knowmind_explore", map[string]any{"memory_id": "mem_unknown"}), codeNotFound, "")
	r := callTool(t, url, otherToken, "knowmind_explore", map[string]any{"memory_id": client})
	wantRPCError(t, r, codeNotFound, "")
	if strings.Contains(string(r.Body), "Müller") {
		t.Fatalf("another tenant's explore leaks: %s", r.Body)
	}
}

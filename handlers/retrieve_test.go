package handlers

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
)

func (c *engineClient) retrieve(tool string, args map[string]any) knowmind.RetrieveResult {
	c.t.Helper()
	var res knowmind.RetrieveResult
	structured(c.t, callTool(c.t, c.url, c.read, tool, args), &res)
	if res.Memories == nil || res.SemanticProfiles == nil {
		c.t.Fatalf("%s answered null arrays: %+v", tool, res)
	}
	for _, m := range res.Memories {
		if m.Entities == nil {
			c.t.Fatalf("%s: memory %s without entities array", tool, m.ID)
		}
	}
	return res
}

func memoryIDs(ms []knowmind.RetrievedMemory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// Replay at a time before an update_fact returns the old version, after it the new one;
// the relevance, chronological and profile modes answer in the same shape.
func TestReplayAndRetrieveThroughMCP(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	acme := c.capture(map[string]any{"text": "Die Acme GmbH liefert die Server bis zum 15. Mai.", "category": "customer"})
	if len(acme.Stored) != 1 {
		t.Fatalf("capture %+v", acme)
	}
	oldID := acme.Stored[0].ID
	kantine := c.store("Kantine", "Die Kantine schließt freitags um 14 Uhr.")
	time.Sleep(20 * time.Millisecond)
	before := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(20 * time.Millisecond)
	var up UpdateFactResult
	structured(t, callTool(t, c.url, c.write, "knowmind_update_fact", map[string]any{"target_id": oldID,
		"new_title": "Lieferung", "new_content": "Die Acme GmbH liefert die Server bis zum 30. Juni."}), &up)

	r := c.retrieve("knowmind_replay", map[string]any{"timestamp": before})
	if got := memoryIDs(r.Memories); !slices.Equal(got, []string{kantine, oldID}) {
		t.Fatalf("replay before the update: %v, want [%s %s]", got, kantine, oldID)
	}
	if m := r.Memories[1]; m.ValidTo == nil || m.EntityType != "organisation" || m.EntityID != "acme-gmbh" ||
		!strings.Contains(m.Content, "15. Mai") || m.Category != "customer" {
		t.Fatalf("old version %+v", m)
	}
	// Profiles show the current state: Acme's profile quotes the new version (update_fact keeps the entities).
	if r.SortBy != "replay" || r.AsOf == nil || r.ContextTokens <= 0 || len(r.SemanticProfiles) != 1 ||
		r.SemanticProfiles[0].Facts[0].MemoryID != up.NewMemoryID {
		t.Fatalf("replay answer: sort_by %q as_of %v tokens %d profiles %+v", r.SortBy, r.AsOf, r.ContextTokens, r.SemanticProfiles)
	}
	r = c.retrieve("knowmind_replay", map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
	if got := memoryIDs(r.Memories); !slices.Equal(got, []string{up.NewMemoryID, kantine}) || r.Memories[0].ValidTo != nil {
		t.Fatalf("replay now: %v", got)
	}
	r = c.retrieve("knowmind_replay", map[string]any{"timestamp": before, "entity_type": "organisation", "limit": 5})
	if got := memoryIDs(r.Memories); !slices.Equal(got, []string{oldID}) {
		t.Fatalf("replay of organisations: %v", got)
	}

	var lisa StoreMemoryResult
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "Phoenix",
		"content": "Lisa Müller leitet das Projekt Phoenix.", "entities": []map[string]any{{"type": "person", "name": "Lisa Müller"}}}), &lisa)
	r = c.retrieve("knowmind_retrieve", map[string]any{"sort_by": "chronological", "limit": 2})
	if got := memoryIDs(r.Memories); !slices.Equal(got, []string{lisa.ID, up.NewMemoryID}) || !r.Truncated {
		t.Fatalf("chronological: %v truncated %v", got, r.Truncated)
	}
	r = c.retrieve("knowmind_retrieve", map[string]any{"sort_by": "profile", "entity_type": "person"})
	if len(r.SemanticProfiles) != 1 || r.SemanticProfiles[0].ID != "lisa-mueller" || r.SemanticProfiles[0].FactCount != 1 ||
		!strings.HasPrefix(r.SemanticProfiles[0].Summary, "Lisa Müller (person): ") || !slices.Equal(memoryIDs(r.Memories), []string{lisa.ID}) {
		t.Fatalf("profile: %+v / %v", r.SemanticProfiles, memoryIDs(r.Memories))
	}
	r = c.retrieve("knowmind_retrieve", map[string]any{"query": "Wann schließt die Kantine?"})
	if len(r.Memories) == 0 || r.Memories[0].ID != kantine || r.Memories[0].Score == nil || r.SortBy != "relevance" {
		t.Fatalf("relevance: %v", memoryIDs(r.Memories))
	}
	r = c.retrieve("knowmind_retrieve", map[string]any{"query": "Wann schließt die Kantine?", "entity_type": "person"})
	if slices.Contains(memoryIDs(r.Memories), kantine) {
		t.Fatalf("relevance with entity_type person: %v", memoryIDs(r.Memories))
	}
}

// Graph mode at depth 1 and 3 returns the expected memories and relations with depths.
func TestRetrieveGraphThroughMCP(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	a := c.store("A", "Der Serverausfall am Montag.")
	b := c.store("B", "Das fehlerhafte Update am Sonntag.")
	cc := c.store("C", "Der Zeitdruck vor dem Release.")
	d := c.store("D", "Ein verwandtes Thema.")
	c.link(a, b, "CAUSED_BY")
	c.link(b, cc, "CAUSED_BY")
	var lr knowmind.LinkResult
	structured(t, callTool(t, c.url, c.write, "knowmind_link", map[string]any{"from_id": d, "to_id": a, "rel_type": "RELATES_TO",
		"confidence": 0.7, "metadata": map[string]any{"reason": "same incident"}}), &lr)

	r := c.retrieve("knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": a, "max_depth": 1})
	if len(r.Memories) != 3 || len(r.Relations) != 2 || *r.Memories[0].Depth != 0 || r.Memories[0].ID != a {
		t.Fatalf("depth 1: %v %+v", memoryIDs(r.Memories), r.Relations)
	}
	r = c.retrieve("knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": a})
	if len(r.Memories) != 4 || len(r.Relations) != 3 {
		t.Fatalf("depth 3 (default): %v %+v", memoryIDs(r.Memories), r.Relations)
	}
	for _, rel := range r.Relations {
		want := map[string]int{a + ">" + b: 1, b + ">" + cc: 2, d + ">" + a: 1, a + ">" + d: 1}[rel.SourceID+">"+rel.TargetID]
		if want == 0 || rel.Depth != want || rel.CreatedBy == "" || rel.CreatedBy == "knowmind_link" {
			t.Errorf("relation %+v", rel)
		}
		// The link's meta: confidence 1 unless given, the reason as given.
		if rel.Type == "RELATES_TO" && (rel.Confidence != 0.7 || rel.Reason != "same incident") ||
			rel.Type == "CAUSED_BY" && (rel.Confidence != 1 || rel.Reason != "") {
			t.Errorf("relation meta %+v", rel)
		}
	}
	// A detected contradiction is linked by capture, with its reason.
	x := c.capture(map[string]any{"text": "Die Acme GmbH liefert die Server bis zum 15. Mai."})
	y := c.capture(map[string]any{"text": "Update: Die Acme GmbH liefert die Server bis zum 30. Juni."})
	if len(x.Stored) != 1 || len(y.Stored) != 1 || len(y.Conflicts) != 1 {
		t.Fatalf("captures %+v / %+v", x, y)
	}
	r = c.retrieve("knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": y.Stored[0].ID, "relation_types": []string{"contradicts"}})
	if len(r.Relations) != 1 || r.Relations[0].CreatedBy != "capture" || r.Relations[0].Reason == "" || r.Relations[0].Type != "CONTRADICTS" {
		t.Fatalf("contradiction relation %+v", r.Relations)
	}
	r = c.retrieve("knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": a, "relation_types": []string{"relates_to"}})
	if !slices.Equal(memoryIDs(r.Memories), []string{a, d}) || len(r.Relations) != 1 || r.Relations[0].Type != "RELATES_TO" {
		t.Fatalf("relates_to only: %v %+v", memoryIDs(r.Memories), r.Relations)
	}
}

// Every parameter error of knowmind_retrieve and knowmind_replay is -32602 naming the
// parameter; an unknown start memory is 404.
func TestRetrieveAndReplayParameterErrors(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	long := strings.Repeat("x", 4001)
	for name, tc := range map[string]struct {
		tool  string
		args  map[string]any
		code  int64
		param string
	}{
		"replay without timestamp":   {"knowmind_replay", map[string]any{}, jsonrpc.CodeInvalidParams, "timestamp"},
		"replay bad timestamp":       {"knowmind_replay", map[string]any{"timestamp": "yesterday"}, jsonrpc.CodeInvalidParams, "timestamp"},
		"replay limit 0":             {"knowmind_replay", map[string]any{"timestamp": "2026-01-01", "limit": 0}, jsonrpc.CodeInvalidParams, "limit"},
		"replay limit 101":           {"knowmind_replay", map[string]any{"timestamp": "2026-01-01", "limit": 101}, jsonrpc.CodeInvalidParams, "limit"},
		"replay long query":          {"knowmind_replay", map[string]any{"timestamp": "2026-01-01", "query": long}, jsonrpc.CodeInvalidParams, "query"},
		"replay long category":       {"knowmind_replay", map[string]any{"timestamp": "2026-01-01", "category": long[:201]}, jsonrpc.CodeInvalidParams, "category"},
		"retrieve unknown sort_by":   {"knowmind_retrieve", map[string]any{"sort_by": "random", "query": "x"}, jsonrpc.CodeInvalidParams, "sort_by"},
		"relevance without query":    {"knowmind_retrieve", map[string]any{}, jsonrpc.CodeInvalidParams, "query"},
		"graph without start":        {"knowmind_retrieve", map[string]any{"sort_by": "graph"}, jsonrpc.CodeInvalidParams, "start_memory_id"},
		"graph depth 0":              {"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": "m", "max_depth": 0}, jsonrpc.CodeInvalidParams, "max_depth"},
		"graph depth 6":              {"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": "m", "max_depth": 6}, jsonrpc.CodeInvalidParams, "max_depth"},
		"graph unknown relation":     {"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": "m", "relation_types": []string{"LOVES"}}, jsonrpc.CodeInvalidParams, "relation_types"},
		"graph history relation":     {"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": "m", "relation_types": []string{"SUPERSEDES"}}, jsonrpc.CodeInvalidParams, "relation_types"},
		"graph 21 relation types":    {"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": "m", "relation_types": make([]string, 21)}, jsonrpc.CodeInvalidParams, "relation_types"},
		"graph unknown start":        {"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": "mem_nope"}, codeNotFound, ""},
		"retrieve limit 101":         {"knowmind_retrieve", map[string]any{"sort_by": "chronological", "limit": 101}, jsonrpc.CodeInvalidParams, "limit"},
		"retrieve entity without id": {"knowmind_retrieve", map[string]any{"sort_by": "profile", "entity": map[string]any{"type": "person"}}, jsonrpc.CodeInvalidParams, "entity"},
		"link confidence 2":          {"knowmind_link", map[string]any{"from_id": "a", "to_id": "b", "rel_type": "RELATES_TO", "confidence": 2}, jsonrpc.CodeInvalidParams, "confidence"},
		"link long reason":           {"knowmind_link", map[string]any{"from_id": "a", "to_id": "b", "rel_type": "RELATES_TO", "metadata": map[string]any{"reason": long[:501]}}, jsonrpc.CodeInvalidParams, "reason"},
		"retrieve long entity_type":  {"knowmind_retrieve", map[string]any{"sort_by": "profile", "entity_type": long[:201]}, jsonrpc.CodeInvalidParams, "entity_type"},
	} {
		t.Run(name, func(t *testing.T) {
			token := c.read
			if tc.tool == "knowmind_link" {
				token = c.write
			}
			wantRPCError(t, callTool(t, c.url, token, tc.tool, tc.args), tc.code, tc.param)
		})
	}
}

// Retrieve's relevance filters apply before the limit: memories of a category (or naming an
// entity type) that rank below the 25 best of the unfiltered list are still returned.
func TestRetrieveFiltersBeforeTheLimit(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	items := make([]map[string]any, 30)
	for i := range items {
		items[i] = map[string]any{"title": fmt.Sprintf("Wartung %d", i+1),
			"content": fmt.Sprintf("Serverwartung im Rechenzentrum Frankfurt: Schicht %d prüft Kühlung und Strom.", i+1)}
	}
	var bulk StoreMemoriesResult
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memories", map[string]any{"memories": items}), &bulk)
	if bulk.Stored != 30 {
		t.Fatalf("store_memories: %+v", bulk)
	}
	// The rules extractor rates these 0.7: drafts, accepted here.
	var customer []string
	for _, text := range []string{
		"Die Acme GmbH bezahlt die Serverwartung bis zum 15. Mai.",
		"Die Beta AG kündigt die Serverwartung zum 30. Juni.",
		"Die Gamma KG verlängert die Serverwartung bis zum 1. April.",
	} {
		res := c.capture(map[string]any{"text": text, "category": "customer"})
		if len(res.Stored)+len(res.Drafts) != 1 {
			t.Fatalf("capture %q: %+v", text, res)
		}
		if len(res.Stored) == 1 {
			customer = append(customer, res.Stored[0].ID)
			continue
		}
		customer = append(customer, c.review(res.Drafts[0].ID, "accept", "").MemoryID)
	}
	slices.Sort(customer)
	const query = "Serverwartung Rechenzentrum Frankfurt"

	top := c.retrieve("knowmind_retrieve", map[string]any{"query": query, "limit": 25})
	if len(top.Memories) != 25 {
		t.Fatalf("unfiltered: %d memories, want 25", len(top.Memories))
	}
	for _, id := range memoryIDs(top.Memories) {
		if slices.Contains(customer, id) {
			t.Fatalf("the customer memories must rank below the 25 best for this test; %s is among them", id)
		}
	}
	for _, filter := range []map[string]any{{"category": "customer"}, {"entity_type": "organisation"}} {
		args := map[string]any{"query": query, "limit": 5}
		for k, v := range filter {
			args[k] = v
		}
		r := c.retrieve("knowmind_retrieve", args)
		got := memoryIDs(r.Memories)
		slices.Sort(got)
		if !slices.Equal(got, customer) || r.Truncated {
			t.Errorf("relevance with %v: %v (truncated %v), want the customer memories %v", filter, got, r.Truncated, customer)
		}
	}
	r := c.retrieve("knowmind_retrieve", map[string]any{"query": query, "category": "customer", "limit": 2})
	if len(r.Memories) != 2 || !r.Truncated {
		t.Errorf("category customer, limit 2: %v truncated %v, want 2 of 3", memoryIDs(r.Memories), r.Truncated)
	}
}

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/knowmind/knowmind"
)

// MaxRecent bounds knowmind_list_recent's k (the spec allows 1 to 50).
const MaxRecent = 50

// listRecentQuery lists the newest memories and documents by creation
// (transaction) time: every version and status, failed ones included, so a
// failed ingest is visible where the client looks for what it stored.
// (Not func: has(Memory.created_at): on Dgraph v25.2.0 that root, ordered by
// the same predicate, returned only the newest node.)
const listRecentQuery = `query q($k: int) {
  items(func: eq(Memory.kind, ["memory", "document"]), orderdesc: Memory.created_at, first: $k) @filter(has(Memory.created_at)) {
    Memory.id Memory.title Memory.status Memory.kind Memory.created_at Memory.updated_at
    chunks: count(Memory.chunks)
  }
}`

// ListRecent returns the k most recently created memories and documents,
// newest first; k outside 1..MaxRecent is EINVALID.
func (t *Tenant) ListRecent(ctx context.Context, k int) ([]knowmind.RecentItem, error) {
	if k < 1 || k > MaxRecent {
		return nil, knowmind.InvalidParam("k", "k must be between 1 and %d", MaxRecent)
	}
	var out struct{ Items []dgMemory }
	if err := t.queryVars(ctx, listRecentQuery, map[string]string{"$k": strconv.Itoa(k)}, &out); err != nil {
		return nil, fmt.Errorf("list recent: %w", err)
	}
	items := make([]knowmind.RecentItem, len(out.Items))
	for i, m := range out.Items {
		items[i] = knowmind.RecentItem{ID: m.ID, Title: m.Title, Status: m.Status, IndexedChunks: m.Chunks,
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Kind: m.Kind}
	}
	return items, nil
}

// statsQuery counts in one request. memories: every Memory node (memories
// and documents, every version, any status). chunks: chunks with a vector.
// edges: per relation predicate, the sum of per-node counts of current
// relations: open edges (no valid_to) in the direction they were linked, so
// the materialised inverse (inverse=true) is not counted a second time. A
// facet filter on a missing facet is false, so NOT eq(inverse, true) keeps
// edges written without the facet.
func statsQuery(relations []string) string {
	var b strings.Builder
	b.WriteString("{\n  memories(func: has(Memory.id)) { count(uid) }\n  chunks(func: has(Chunk.embedding)) { count(uid) }\n")
	for i, r := range relations {
		fmt.Fprintf(&b, "  var(func: has(<%s>)) { e%d as count(<%s> @facets(%s AND NOT eq(inverse, true))) }\n", r, i, r, openFacetFilter)
	}
	if len(relations) > 0 {
		b.WriteString("  edges() {")
		for i := range relations {
			fmt.Fprintf(&b, " r%d: sum(val(e%d))", i, i)
		}
		b.WriteString(" }\n")
	}
	b.WriteString("}")
	return b.String()
}

// Stats counts the tenant's corpus for knowmind_stats. Memories counts
// memories and documents, every version and status (so it can exceed what
// list_recent shows). Edges counts current relations, as the spec says:
// each link once (not its materialised inverse), unlinked (closed) edges not
// at all. Chunks counts chunks with a vector.
func (t *Tenant) Stats(ctx context.Context) (knowmind.Stats, error) {
	resp, err := t.dg.NewReadOnlyTxn().Query(ctx, statsQuery(t.c.cfg.Relations))
	if err != nil {
		return knowmind.Stats{}, fmt.Errorf("stats: %w", err)
	}
	var out struct {
		Memories []struct{ Count int64 }
		Chunks   []struct{ Count int64 }
		Edges    []map[string]float64
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return knowmind.Stats{}, fmt.Errorf("stats: %w", err)
	}
	var s knowmind.Stats
	if len(out.Memories) > 0 {
		s.Memories = out.Memories[0].Count
	}
	if len(out.Chunks) > 0 {
		s.Chunks = out.Chunks[0].Count
	}
	// Dgraph answers each aggregate as its own object in the block's list.
	for _, obj := range out.Edges {
		for _, n := range obj {
			s.Edges += int64(n)
		}
	}
	return s, nil
}

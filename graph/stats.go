package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/knowmind/knowmind"
)

// statsQuery counts in one request. memories: every Memory node (memories
// and documents, every version, any status) but documents a new upload of
// their title replaced (for the client they are gone; replay still reads
// them). chunks: chunks with a vector, but those of replaced documents.
// edges: per relation predicate, the sum of per-node counts of current
// relations: open edges (no valid_to) in the direction they were linked, so
// the materialised inverse (inverse=true) is not counted a second time. A
// facet filter on a missing facet is false, so NOT eq(inverse, true) keeps
// edges written without the facet.
func statsQuery(relations []string) string {
	var b strings.Builder
	b.WriteString("{\n  memories(func: has(Memory.id)) @filter(NOT " + replacedDocument + ") { count(uid) }\n" +
		"  var(func: eq(Memory.kind, \"document\")) @filter(has(Memory.valid_to)) { replaced as Memory.chunks }\n" +
		"  chunks(func: has(Chunk.embedding)) @filter(NOT uid(replaced)) { count(uid) }\n")
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

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// knowmind_retrieve sort_by graph (seed 001, memory_retrieve's graph mode): a breadth-first walk
// over open relation edges from a start memory, to max_depth hops, in one DQL request. Level d
// is every current memory reached over an open edge from level d-1 that no earlier level holds,
// so each memory appears once, at its shortest distance. The fan-out is bounded: a level
// expands at most knowmind.GraphMaxNodes of its memories, each over at most as many edges per
// relation type. That loses nothing the answer shows: the answer is cut at GraphMaxNodes
// memories nearest first, so a level with more than that is the last one it reaches. Edges are followed as stored: a
// symmetric relation (RELATES_TO, CONTRADICTS) is stored both ways and so walked both ways; an
// asymmetric one only forwards, unless its inverse (CAUSES for CAUSED_BY) is walked too, which
// the default (every relation type) does. Version history (SUPERSEDES) is not walked.

// graphEdgeFacets are the facets a crossed edge reports. confidence and created_by are absent on
// edges written before they existed (read as 1 and "knowmind_link").
const graphEdgeFacets = `@facets(id: id, inverse: inverse, created_at: created_at, confidence: confidence, created_by: created_by, reason: reason)`

// graphWalkQuery renders the walk for the relation predicates rels to depth levels.
//
//	L0 as var(func: eq(Memory.id, $id)) @filter(current)
//	var(func: uid(L0), first: N) { L1_0 as <RELATES_TO> (first: N) @facets(open) @filter(current AND NOT uid(L0)) … }
//	L1 as var(func: uid(L1_0, L1_1, …))
//	… up to L<depth>
//	start(func: uid(L0)) { fields }
//	e1(func: uid(L0), first: N) { Memory.id <RELATES_TO> @facets(open) @facets(…) @filter(uid(L1)) { Memory.id } … }
//	m1(func: uid(L1), first: N) { fields }
//	… e<d>, m<d> for every level
func graphWalkQuery(rels []string, depth int) string {
	node := currentMemory + " AND " + corpusKinds
	var b strings.Builder
	b.WriteString("query g($id: string) {\n")
	fmt.Fprintf(&b, "  L0 as var(func: eq(Memory.id, $id), first: 1) @filter(%s)\n", node)
	seen := []string{"L0"}
	for d := 1; d <= depth; d++ {
		fmt.Fprintf(&b, "  var(func: uid(L%d), first: %d) {\n", d-1, knowmind.GraphMaxNodes)
		parts := make([]string, len(rels))
		for i, r := range rels {
			parts[i] = fmt.Sprintf("L%d_%d", d, i)
			fmt.Fprintf(&b, "    %s as <%s> (first: %d) @facets(%s) @filter(%s AND NOT uid(%s))\n", parts[i], r,
				knowmind.GraphMaxNodes, openFacetFilter, node, strings.Join(seen, ", "))
		}
		b.WriteString("  }\n")
		fmt.Fprintf(&b, "  L%d as var(func: uid(%s))\n", d, strings.Join(parts, ", "))
		seen = append(seen, fmt.Sprintf("L%d", d))
	}
	fmt.Fprintf(&b, "  start(func: uid(L0)) { %s }\n", retrievedFields)
	for d := 1; d <= depth; d++ {
		fmt.Fprintf(&b, "  e%d(func: uid(L%d), first: %d) {\n    Memory.id\n", d, d-1, knowmind.GraphMaxNodes)
		for _, r := range rels {
			fmt.Fprintf(&b, "    <%s> (first: %d) @facets(%s) %s @filter(uid(L%d)) { Memory.id }\n", r, knowmind.GraphMaxNodes,
				openFacetFilter, graphEdgeFacets, d)
		}
		b.WriteString("  }\n")
		fmt.Fprintf(&b, "  m%d(func: uid(L%d), first: %d) { %s }\n", d, d, knowmind.GraphMaxNodes+1, retrievedFields)
	}
	b.WriteString("}")
	return b.String()
}

// graphEdge is one crossed edge as read back: the peer and the edge's facets.
type graphEdge struct {
	ID         string     `json:"Memory.id"`
	EdgeID     string     `json:"id"`
	Inverse    bool       `json:"inverse"`
	CreatedAt  *time.Time `json:"created_at"`
	Confidence *float64   `json:"confidence"`
	CreatedBy  string     `json:"created_by"`
	Reason     string     `json:"reason"`
}

// GraphRelationTypes maps relation_types to predicates: the shapes' names in any case, the
// seed's memory_link names (caused_by, contradicts, relates_to) included; nil = every relation
// type but version history.
func (t *Tenant) GraphRelationTypes(types []string) ([]string, error) {
	if len(types) > knowmind.GraphMaxRelationTypes {
		return nil, knowmind.InvalidParam("relation_types", "at most %d relation_types", knowmind.GraphMaxRelationTypes)
	}
	if len(types) == 0 {
		var rels []string
		for _, r := range t.c.cfg.Relations {
			if !slices.Contains(historyRelations, r) {
				rels = append(rels, r)
			}
		}
		return rels, nil
	}
	var rels []string
	for _, typ := range types {
		name := strings.ToUpper(strings.TrimSpace(typ))
		rel, ok := t.c.cfg.Shapes.Relation(name)
		if !ok || !slices.Contains(t.c.cfg.Relations, name) || slices.Contains(historyRelations, name) {
			return nil, knowmind.InvalidParam("relation_types", "relation_types: %q is not one of this workspace's walkable relations (%s)",
				typ, strings.Join(t.walkable(), ", "))
		}
		if !slices.Contains(rels, rel.Name) {
			rels = append(rels, rel.Name)
		}
	}
	return rels, nil
}

func (t *Tenant) walkable() []string {
	rels, _ := t.GraphRelationTypes(nil)
	return rels
}

// RetrieveGraph walks the relations from q.StartMemoryID (ENOTFOUND when it is no current
// memory) to q.MaxDepth: the start memory (depth 0) and each memory reached with its depth,
// nearest first, at most knowmind.GraphMaxNodes; relations are the edges crossed, each once,
// in the direction it was linked.
func (t *Tenant) RetrieveGraph(ctx context.Context, q knowmind.RetrieveQuery) (knowmind.RetrieveResult, error) {
	start := time.Now()
	if q.MaxDepth < 1 || q.MaxDepth > knowmind.GraphMaxDepth {
		return knowmind.RetrieveResult{}, knowmind.InvalidParam("max_depth", "max_depth must be between 1 and %d", knowmind.GraphMaxDepth)
	}
	if err := checkIDLength("start_memory_id", q.StartMemoryID); err != nil {
		return knowmind.RetrieveResult{}, err
	}
	rels, err := t.GraphRelationTypes(q.RelationTypes)
	if err != nil {
		return knowmind.RetrieveResult{}, err
	}
	var out map[string]json.RawMessage
	if err := t.queryVars(ctx, graphWalkQuery(rels, q.MaxDepth), map[string]string{"$id": q.StartMemoryID}, &out); err != nil {
		return knowmind.RetrieveResult{}, fmt.Errorf("retrieve graph: %w", err)
	}
	var startNode []dgRetrieved
	if err := decodeBlock(out, "start", &startNode); err != nil {
		return knowmind.RetrieveResult{}, err
	}
	if len(startNode) == 0 {
		return knowmind.RetrieveResult{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "start_memory_id",
			Message: fmt.Sprintf("memory %q (start_memory_id) not found or not current", q.StartMemoryID)}
	}
	zero := 0
	first := startNode[0].domain()
	first.Depth = &zero
	mems := []knowmind.RetrievedMemory{first}
	rels2 := []knowmind.Relation{}
	seenEdge := map[string]bool{}
	more := false
	for d := 1; d <= q.MaxDepth; d++ {
		var level []dgRetrieved
		if err := decodeBlock(out, fmt.Sprintf("m%d", d), &level); err != nil {
			return knowmind.RetrieveResult{}, err
		}
		kept := map[string]bool{}
		for _, m := range level {
			if len(mems) >= knowmind.GraphMaxNodes {
				more = true
				break
			}
			depth := d
			rm := m.domain()
			rm.Depth = &depth
			mems = append(mems, rm)
			kept[m.ID] = true
		}
		var parents []map[string]json.RawMessage
		if err := decodeBlock(out, fmt.Sprintf("e%d", d), &parents); err != nil {
			return knowmind.RetrieveResult{}, err
		}
		for _, parent := range parents {
			var from string
			if err := decodeBlock(parent, "Memory.id", &from); err != nil {
				return knowmind.RetrieveResult{}, err
			}
			for _, rel := range rels {
				var edges []graphEdge
				if err := decodeBlock(parent, rel, &edges); err != nil {
					return knowmind.RetrieveResult{}, err
				}
				for _, e := range edges {
					if !kept[e.ID] {
						continue
					}
					r := knowmind.Relation{SourceID: from, TargetID: e.ID, Type: rel, Confidence: 1, CreatedBy: "knowmind_link",
						Reason: e.Reason, Depth: d}
					if e.Inverse { // a materialised inverse: report the link as it was made
						inv, _ := t.c.cfg.Shapes.Relation(rel)
						r.SourceID, r.TargetID, r.Type = e.ID, from, inv.Inverse
					}
					if e.Confidence != nil {
						r.Confidence = *e.Confidence
					}
					if e.CreatedBy != "" {
						r.CreatedBy = e.CreatedBy
					}
					if e.CreatedAt != nil {
						r.CreatedAt = *e.CreatedAt
					}
					key := r.SourceID + "|" + r.Type + "|" + r.TargetID
					if !seenEdge[key] {
						seenEdge[key] = true
						rels2 = append(rels2, r)
					}
				}
			}
		}
		if more {
			break
		}
	}
	res, err := t.finishRetrieve(ctx, knowmind.SortGraph, mems, more, start)
	res.Relations = rels2
	return res, err
}

// decodeBlock decodes one key of a DQL answer; a missing key leaves v as it is.
func decodeBlock(m map[string]json.RawMessage, key string, v any) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %s: %w", key, err)
	}
	return nil
}

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Recall's hops follow only the relation predicates that hold at least one edge in the tenant.
// Every predicate of the shapes (16 by default) costs Dgraph a task per hop even where no node
// has an edge of it, which at 100k memories is measurable (docs/dgraph-notes.md, DQL). Most
// tenants use a few.
//
// A predicate once seen holding an edge stays in the list (edges are closed, not deleted, so
// it rarely empties; a needless one only costs time). The others are asked again after
// relationsRecheck, and at once after a write of this process that may have added an edge
// (relationsWritten): only another replica's first edge of a type can go unseen, for at
// most relationsRecheck.
const relationsRecheck = 10 * time.Second

// linkedSet is a tenant's cache of the relation predicates holding edges.
type linkedSet struct {
	mu      sync.Mutex
	present map[string]bool
	checked time.Time // zero: ask Dgraph at the next recall
}

// linkedRelations returns the relation predicates (in the shapes' order) that hold an edge.
func (t *Tenant) linkedRelations(ctx context.Context) ([]string, error) {
	s := &t.links
	s.mu.Lock()
	var ask []string
	if s.checked.IsZero() || time.Since(s.checked) >= relationsRecheck {
		for _, r := range t.c.cfg.Relations {
			if !s.present[r] {
				ask = append(ask, r)
			}
		}
	}
	if len(ask) == 0 {
		defer s.mu.Unlock()
		return s.presentLocked(t.c.cfg.Relations), nil
	}
	s.mu.Unlock()

	asked := time.Now()
	found, err := t.relationsWithEdges(ctx, ask)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.present == nil {
		s.present = map[string]bool{}
	}
	for _, r := range found {
		s.present[r] = true
	}
	s.checked = asked
	return s.presentLocked(t.c.cfg.Relations), nil
}

// presentLocked lists those of all that hold an edge, in all's order; the caller holds mu.
func (s *linkedSet) presentLocked(all []string) []string {
	out := make([]string, 0, len(s.present))
	for _, r := range all {
		if s.present[r] {
			out = append(out, r)
		}
	}
	return out
}

// relationsWritten makes the next recall ask Dgraph which relations hold edges: this process
// may just have written the first edge of one.
func (t *Tenant) relationsWritten() {
	t.links.mu.Lock()
	t.links.checked = time.Time{}
	t.links.mu.Unlock()
}

// relationsWithEdges asks which of rels (shapes' validated UPPER_SNAKE names) hold an edge:
// one has() with first: 1 per predicate, one request (cheap even at 400k edges:
// docs/dgraph-notes.md, DQL).
func (t *Tenant) relationsWithEdges(ctx context.Context, rels []string) ([]string, error) {
	var q strings.Builder
	q.WriteString("{\n")
	for i, r := range rels {
		fmt.Fprintf(&q, "  r%d(func: has(<%s>), first: 1) { uid }\n", i, r)
	}
	q.WriteString("}")
	resp, err := t.dg.NewReadOnlyTxn().Query(ctx, q.String())
	if err != nil {
		return nil, fmt.Errorf("relations with edges: %w", err)
	}
	var blocks map[string][]dgUID
	if err := json.Unmarshal(resp.Json, &blocks); err != nil {
		return nil, fmt.Errorf("decode relations with edges: %w", err)
	}
	var found []string
	for i, r := range rels {
		if len(blocks[fmt.Sprintf("r%d", i)]) > 0 {
			found = append(found, r)
		}
	}
	return found, nil
}

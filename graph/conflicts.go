package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/conflict"
	"github.com/knowmind/knowmind/internal/runes"
)

// Conflict detection has two halves: this file chooses the current memories
// a new fact is compared with (a graph query), package conflict compares
// them (pure). The candidates are the current memories naming one of the
// fact's entities and the nearest by meaning, whether or not anyone gave
// them entities: recall's text and semantic ranking of the fact's text,
// conflictNeighbours of them. A memory stored with plain store_memory is
// therefore compared too.

// conflictNeighbours is how many of the nearest current memories by meaning
// a new fact is compared with, beside those sharing an entity.
const conflictNeighbours = 8

// FoundConflict is a current memory a new fact contradicts, with its uid for
// the CONTRADICTS edges.
type FoundConflict struct {
	conflict.Finding
	UID string
}

// FindConflicts compares text with its candidates: the current memories in
// byEntity (the facts of its entities, as currentFacts reads them for keys)
// and the conflictNeighbours nearest by meaning; exclude is the fact's own
// id (a memory just stored finds itself). A failed lookup of the neighbours
// is logged and the entities' memories are compared alone.
func (t *Tenant) FindConflicts(ctx context.Context, text string, keys []string, byEntity map[string][]entityFact, exclude string) ([]FoundConflict, error) {
	var facts []conflict.Fact
	uidOf := map[string]string{}
	seen := map[string]bool{exclude: true}
	for _, k := range keys {
		for _, m := range byEntity[k] {
			if !seen[m.ID] {
				seen[m.ID] = true
				uidOf[m.ID] = m.UID
				facts = append(facts, conflict.Fact{ID: m.ID, Text: m.Content})
			}
		}
	}
	near, err := t.nearestCurrent(ctx, text, seen)
	if err != nil {
		t.c.log.Warn("conflict candidates by meaning failed", "tenant", t.Name, "err", err)
	}
	facts = append(facts, near...)
	var out []FoundConflict
	var missing []string
	for _, f := range conflict.Detect(text, facts) {
		out = append(out, FoundConflict{Finding: f, UID: uidOf[f.ExistingID]})
		if uidOf[f.ExistingID] == "" {
			missing = append(missing, f.ExistingID)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	uids, err := t.memoryUIDs(ctx, missing)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].UID == "" {
			out[i].UID = uids[out[i].ExistingID]
		}
	}
	return out, nil
}

// nearestCurrent returns the current memories (not documents) nearest to
// text by recall's ranking, leaving out those in seen.
func (t *Tenant) nearestCurrent(ctx context.Context, text string, seen map[string]bool) ([]conflict.Fact, error) {
	query := runes.Cut(strings.TrimSpace(text), knowmind.RecallMaxQueryChars)
	if query == "" {
		return nil, nil
	}
	res, err := t.Recall(ctx, knowmind.RecallQuery{Query: query, K: conflictNeighbours + 1})
	if err != nil {
		return nil, fmt.Errorf("conflict candidates: %w", err)
	}
	var out []conflict.Fact
	for _, h := range res.Hits {
		if h.Kind != knowmind.KindMemory || seen[h.MemoryID] || len(out) >= conflictNeighbours {
			continue
		}
		seen[h.MemoryID] = true
		out = append(out, conflict.Fact{ID: h.MemoryID, Text: h.Content})
	}
	return out, nil
}

const memoryUIDsQuery = `{ m(func: eq(Memory.id, [%s])) ` + sameMemoryFilter + ` { uid Memory.id } }`

// memoryUIDs maps the ids of current memories to their uids.
func (t *Tenant) memoryUIDs(ctx context.Context, ids []string) (map[string]string, error) {
	var res struct {
		M []struct {
			UID string `json:"uid"`
			ID  string `json:"Memory.id"`
		}
	}
	if err := t.queryVars(ctx, fmt.Sprintf(memoryUIDsQuery, quoteAll(ids)), nil, &res); err != nil {
		return nil, fmt.Errorf("conflict candidates: read uids: %w", err)
	}
	out := map[string]string{}
	for _, m := range res.M {
		out[m.ID] = m.UID
	}
	return out, nil
}

package graph

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// Replay answers knowmind_replay (seed 001, memory_replay): the tenant's knowledge as it stood
// at q.At — memories and documents stored by then and valid then, including versions
// superseded (or facts replaced) later, and the notes the caller may see as they read then
// (notesAt: a note edited since shows its revision of then), newest valid first; query, category and entity type
// narrow it (memoryListQuery). Semantic profiles show the entities' current state, as the
// seed says. knowmind_recall_at_time is its ranked cousin.
func (t *Tenant) Replay(ctx context.Context, q knowmind.ReplayQuery) (knowmind.RetrieveResult, error) {
	start := time.Now()
	if err := checkRetrieveFilters(q.Query, q.Category, q.EntityType); err != nil {
		return knowmind.RetrieveResult{}, err
	}
	if q.Limit < 1 || q.Limit > knowmind.RetrieveMaxLimit {
		return knowmind.RetrieveResult{}, knowmind.InvalidParam("limit", "limit must be between 1 and %d", knowmind.RetrieveMaxLimit)
	}
	at := q.At.UTC()
	f := memoryFilter{At: &at, Query: strings.TrimSpace(q.Query), Category: q.Category, EntityType: q.EntityType, Limit: q.Limit}
	ms, more, err := t.listMemories(ctx, f)
	if err != nil {
		return knowmind.RetrieveResult{}, fmt.Errorf("replay: %w", err)
	}
	notes, moreNotes, err := t.notesAt(ctx, f)
	if err != nil {
		return knowmind.RetrieveResult{}, fmt.Errorf("replay: %w", err)
	}
	if len(notes) > 0 {
		ms = append(ms, notes...)
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].ValidFrom.After(ms[j].ValidFrom) })
		if len(ms) > q.Limit {
			ms, more = ms[:q.Limit], true
		}
	}
	more = more || moreNotes
	res, err := t.finishRetrieve(ctx, "replay", ms, more, start)
	res.AsOf = &at
	return res, err
}

package graph

import (
	"context"

	"github.com/knowmind/knowmind"
)

// afterWrite is the one step every write path runs once its transaction has
// committed entries that are now current — store_memory, store_memories,
// upload_document, update_fact, capture, an accepted or edited draft, a note
// created, edited, renamed or moved, an import batch. It updates the
// in-memory indexes (text statistics, vectors: indexed), checks the entries
// that ask for it (store_memory's) for conflicts with the current facts
// (entities.go, storedConflicts), and matches the tenant's open event goals (recorded on each goal).
// A write path that makes a fact current without it would leave goals
// unfired and the indexes behind, so nothing else calls indexed.
// Goal matching and the conflict check are best effort: the write stands,
// a failure is logged.
func (t *Tenant) afterWrite(ctx context.Context, es ...*entry) afterWriteResult {
	var res afterWriteResult
	mems := make([]knowmind.WrittenMemory, 0, len(es))
	for _, e := range es {
		if e == nil {
			continue
		}
		t.indexed(e)
		if e.checkConflicts {
			_, conflicts := t.storedConflicts(ctx, e, e.candidates)
			res.conflicts = append(res.conflicts, conflicts...)
		}
		mems = append(mems, knowmind.WrittenMemory{ID: e.id, Text: e.title + "\n" + e.content, Tags: e.tags,
			Category: e.category, Entities: e.entityRefs})
	}
	ms, err := t.MatchGoals(ctx, mems)
	if err != nil {
		t.c.log.Warn("goal matching failed", "tenant", t.Name, "err", err)
	}
	res.matches = ms
	return res
}

// afterWriteResult is what afterWrite found: goals fired (never nil) and
// conflicts of the entries checked.
type afterWriteResult struct {
	matches   []knowmind.GoalMatch
	conflicts []knowmind.Conflict
}

// pmMatches is the matches as a result's pm_matches: nil (left out) when none.
func (r afterWriteResult) pmMatches() []knowmind.GoalMatch {
	if len(r.matches) == 0 {
		return nil
	}
	return r.matches
}

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// Goals and drafts in knowmind export / import (docs/bulk.md): one record each, holding the
// object as knowmind_list_goals and knowmind_list_drafts show it. Export writes them after the
// relations; import writes them in the relations phase (they name memories by id), by id:
// a goal or draft whose id the tenant holds is left unchanged.

const exportGoalsQuery = `query q($after: string, $n: int) {
  m(func: has(Goal.id), first: $n, after: $after) { ` + goalFields + ` }
}`

const exportDraftsQuery = `query q($after: string, $n: int) {
  m(func: has(Draft.id), first: $n, after: $after) { ` + draftFields + ` }
}`

// exportGoalsAndDrafts emits every goal, then every draft, in uid order.
func (t *Tenant) exportGoalsAndDrafts(ctx context.Context, emit func(knowmind.Record) error) error {
	now := time.Now()
	err := t.pageMemories(ctx, exportGoalsQuery, func(raw json.RawMessage) error {
		var g dgGoal
		if err := json.Unmarshal(raw, &g); err != nil {
			return err
		}
		goal := g.domain(now)
		return emit(knowmind.Record{Type: knowmind.RecordGoal, Goal: &goal})
	})
	if err != nil {
		return fmt.Errorf("export goals: %w", err)
	}
	err = t.pageMemories(ctx, exportDraftsQuery, func(raw json.RawMessage) error {
		var d dgDraft
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		draft := d.domain()
		return emit(knowmind.Record{Type: knowmind.RecordDraft, Draft: &draft})
	})
	if err != nil {
		return fmt.Errorf("export drafts: %w", err)
	}
	return nil
}

// checkGoalRecord bounds an imported goal as knowmind_set_goal bounds a new one.
func checkGoalRecord(g *knowmind.Goal) error {
	if g == nil {
		return knowmind.InvalidParam("goal", "a goal record holds its object in goal")
	}
	switch {
	case strings.TrimSpace(g.ID) == "" || utf8.RuneCountInString(g.ID) > knowmind.MaxIDChars:
		return knowmind.InvalidParam("goal", "goal.id is required (at most %d characters)", knowmind.MaxIDChars)
	case strings.TrimSpace(g.Text) == "" || utf8.RuneCountInString(g.Text) > knowmind.MaxGoalChars:
		return knowmind.InvalidParam("goal", "goal.text is required (at most %d characters)", knowmind.MaxGoalChars)
	case !slices.Contains([]string{knowmind.GoalOpen, knowmind.GoalDone, knowmind.GoalCancelled}, g.Status):
		return knowmind.InvalidParam("goal", "goal.status must be open, done or cancelled")
	case g.Kind == knowmind.GoalTime && g.DueAt == nil:
		return knowmind.InvalidParam("goal", "a time goal needs goal.due_at")
	case g.Kind == knowmind.GoalEvent && (g.Trigger == nil || g.Trigger.Empty()):
		return knowmind.InvalidParam("goal", "an event goal needs goal.trigger")
	case g.Kind != knowmind.GoalTime && g.Kind != knowmind.GoalEvent:
		return knowmind.InvalidParam("goal", "goal.kind must be time or event")
	case len(g.MatchedIDs) > knowmind.MaxGoalMatchesKept || g.FiredCount < 0:
		return knowmind.InvalidParam("goal", "goal.matched_memory_ids holds at most %d ids", knowmind.MaxGoalMatchesKept)
	}
	if tr := g.Trigger; tr != nil && (len(tr.Words) > knowmind.MaxGoalWords || len(tr.Tags) > knowmind.MaxGoalTags) {
		return knowmind.InvalidParam("goal", "goal.trigger holds at most %d words and %d tags", knowmind.MaxGoalWords, knowmind.MaxGoalTags)
	}
	return nil
}

// checkDraftRecord bounds an imported draft as knowmind_capture bounds a new one.
func checkDraftRecord(d *knowmind.Draft) error {
	if d == nil {
		return knowmind.InvalidParam("draft", "a draft record holds its object in draft")
	}
	switch {
	case strings.TrimSpace(d.ID) == "" || utf8.RuneCountInString(d.ID) > knowmind.MaxIDChars:
		return knowmind.InvalidParam("draft", "draft.id is required (at most %d characters)", knowmind.MaxIDChars)
	case strings.TrimSpace(d.Text) == "" || utf8.RuneCountInString(d.Text) > knowmind.MaxFactChars:
		return knowmind.InvalidParam("draft", "draft.text is required (at most %d characters)", knowmind.MaxFactChars)
	case !slices.Contains([]string{knowmind.DraftOpen, knowmind.DraftAccepted, knowmind.DraftRejected}, d.Status):
		return knowmind.InvalidParam("draft", "draft.status must be draft, accepted or rejected")
	case d.Confidence < 0 || d.Confidence > 1:
		return knowmind.InvalidParam("draft", "draft.confidence must lie in 0..1")
	case len(d.Entities) > knowmind.MaxEntitiesPerFact || len(d.ConflictsWith) > knowmind.MaxEntitiesPerFact:
		return knowmind.InvalidParam("draft", "draft.entities and draft.conflicts_with hold at most %d each", knowmind.MaxEntitiesPerFact)
	}
	for _, e := range d.Entities {
		if knowmind.EntitySlug(e.ID) != e.ID || e.ID == "" || len(e.ID) > knowmind.MaxIDChars || e.Type == "" || len(e.Type) > 64 {
			return knowmind.InvalidParam("draft", "draft.entities: %q/%q is no entity reference", e.Type, e.ID)
		}
	}
	return nil
}

func goalNode(g *knowmind.Goal, blank string) map[string]any {
	n := map[string]any{"uid": blank, "dgraph.type": "Goal", "Goal.id": g.ID, "Goal.text": g.Text, "Goal.kind": g.Kind,
		"Goal.status": g.Status, "Goal.created_at": formatTime(orNow(g.CreatedAt)), "Goal.fired_count": g.FiredCount}
	for pred, at := range map[string]*time.Time{"Goal.due_at": g.DueAt, "Goal.expires_at": g.ExpiresAt,
		"Goal.closed_at": g.ClosedAt, "Goal.last_fired_at": g.LastFiredAt} {
		if at != nil {
			n[pred] = formatTime(*at)
		}
	}
	if g.Trigger != nil {
		b, _ := json.Marshal(g.Trigger)
		n["Goal.trigger"] = string(b)
	}
	if len(g.MatchedIDs) > 0 {
		n["Goal.matched"] = g.MatchedIDs
	}
	return n
}

func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now().UTC()
	}
	return t
}

// writeGoalsAndDrafts writes the goal and draft records of recs at positions idx, setting
// their results: stored, unchanged (the id exists) or failed.
func (t *Tenant) writeGoalsAndDrafts(ctx context.Context, recs []knowmind.Record, idx []int, results []knowmind.ItemResult) error {
	var goalIDs, draftIDs, memIDs []string
	var ents []knowmind.CandidateEntity
	var todo []int
	for _, i := range idx {
		r := recs[i]
		var err error
		if r.Type == knowmind.RecordGoal {
			if err = checkGoalRecord(r.Goal); err == nil {
				goalIDs = append(goalIDs, r.Goal.ID)
				results[i].ID = r.Goal.ID
			}
		} else {
			if err = checkDraftRecord(r.Draft); err == nil {
				d := r.Draft
				draftIDs = append(draftIDs, d.ID)
				results[i].ID = d.ID
				memIDs = append(memIDs, d.ConflictsWith...)
				if d.MemoryID != "" {
					memIDs = append(memIDs, d.MemoryID)
				}
				for _, e := range d.Entities {
					ents = append(ents, knowmind.CandidateEntity{Type: e.Type, ID: e.ID, Name: e.ID})
				}
			}
		}
		if err != nil {
			results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: err}
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return nil
	}
	// Entities a draft names are created as needed (named by their id: the record has no name).
	entityUIDs, err := t.ensureEntities(ctx, ents)
	if err != nil {
		return err
	}
	var qb strings.Builder
	qb.WriteString("{\n")
	for _, b := range []struct {
		name, pred, fields string
		ids                []string
	}{{"g", "Goal.id", "Goal.id", goalIDs}, {"d", "Draft.id", "Draft.id", draftIDs}, {"m", "Memory.id", "uid Memory.id", memIDs}} {
		if len(b.ids) > 0 {
			fmt.Fprintf(&qb, "  %s(func: eq(%s, [%s])) { %s }\n", b.name, b.pred, quoteAll(b.ids), b.fields)
		}
	}
	qb.WriteString("}")
	q := qb.String()
	wroteGoal := false
	err = RunTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.Query(ctx, q)
		if err != nil {
			return err
		}
		var have struct {
			G []struct {
				ID string `json:"Goal.id"`
			}
			D []struct {
				ID string `json:"Draft.id"`
			}
			M []dgMemory
		}
		if err := json.Unmarshal(resp.Json, &have); err != nil {
			return err
		}
		exists := map[string]bool{}
		for _, g := range have.G {
			exists["goal/"+g.ID] = true
		}
		for _, d := range have.D {
			exists["draft/"+d.ID] = true
		}
		memUID := map[string]string{}
		for _, m := range have.M {
			memUID[m.ID] = m.UID
		}
		var nodes []any
		wroteGoal = false
		for n, i := range todo {
			r := recs[i]
			id := results[i].ID
			if exists[r.Type+"/"+id] {
				results[i].Status = knowmind.ItemUnchanged
				continue
			}
			exists[r.Type+"/"+id] = true // the same id twice in a batch: the first wins
			results[i].Status = knowmind.ItemStored
			blank := fmt.Sprintf("_:x%d", n)
			if r.Type == knowmind.RecordGoal {
				nodes = append(nodes, goalNode(r.Goal, blank))
				wroteGoal = true
				continue
			}
			nodes = append(nodes, draftNode(r.Draft, blank, entityUIDs, memUID))
		}
		if len(nodes) == 0 {
			return nil
		}
		body, err := json.Marshal(nodes)
		if err != nil {
			return err
		}
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
	if err != nil {
		return fmt.Errorf("import goals and drafts: %w", err)
	}
	if wroteGoal {
		t.goals.invalidate()
	}
	return nil
}

func draftNode(d *knowmind.Draft, blank string, entityUIDs, memUID map[string]string) map[string]any {
	n := map[string]any{"uid": blank, "dgraph.type": "Draft", "Draft.id": d.ID, "Draft.text": strings.TrimSpace(d.Text),
		"Draft.sha": ContentSHA(d.Text), "Draft.confidence": d.Confidence, "Draft.status": d.Status,
		"Draft.extractor": d.Extractor, "Draft.created_at": formatTime(orNow(d.CreatedAt)),
		"Draft.span_start": d.Span.Start, "Draft.span_end": d.Span.End}
	setIf(n, "Draft.reason", d.Reason)
	setIf(n, "Draft.source", d.Source)
	setIf(n, "Draft.category", d.Category)
	setIf(n, "Draft.reviewed_by", d.ReviewedBy)
	if d.ReviewedAt != nil {
		n["Draft.reviewed_at"] = formatTime(*d.ReviewedAt)
	}
	var refs []map[string]string
	for _, e := range d.Entities {
		if u := entityUIDs[entityKey(e.Type, e.ID)]; u != "" {
			refs = append(refs, map[string]string{"uid": u})
		}
	}
	if len(refs) > 0 {
		n["Draft.entities"] = refs
	}
	var conflicts []map[string]string
	for _, id := range d.ConflictsWith {
		if u := memUID[id]; u != "" {
			conflicts = append(conflicts, map[string]string{"uid": u})
		}
	}
	if len(conflicts) > 0 {
		n["Draft.conflicts_with"] = conflicts
	}
	if u := memUID[d.MemoryID]; u != "" {
		n["Draft.memory"] = map[string]string{"uid": u}
	}
	return n
}

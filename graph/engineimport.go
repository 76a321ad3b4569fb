package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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

// validRecord checks an imported goal or draft (nil: the record lacks its object) by the rules
// of the root package, which the tools apply to a new one.
func validRecord[T interface{ Validate() error }](v *T, param string) error {
	if v == nil {
		return knowmind.InvalidParam(param, "a %s record holds its object in %s", param, param)
	}
	return (*v).Validate()
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
			if err = validRecord(r.Goal, "goal"); err == nil {
				goalIDs = append(goalIDs, r.Goal.ID)
				results[i].ID = r.Goal.ID
			}
		} else {
			if err = validRecord(r.Draft, "draft"); err == nil {
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
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
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

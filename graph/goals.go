package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
)

// Goals (prospective memory). Matching a write against thousands of open
// event goals must stay cheap, so each tenant keeps its open event goals in
// an in-memory knowmind.GoalIndex derived from Dgraph: loaded on the first
// write, rebuilt when this process sets or closes a goal, and re-read after
// goalCacheTTL so goals set through another replica fire within that time.

const goalCacheTTL = 30 * time.Second

// maxOpenEventGoals bounds the open event goals one tenant's index holds.
const maxOpenEventGoals = 100_000

type goalCache struct {
	mu sync.Mutex
	ix *knowmind.GoalIndex
	at time.Time
}

const goalFields = `uid Goal.id Goal.text Goal.kind Goal.status Goal.due_at Goal.expires_at Goal.trigger Goal.created_at
    Goal.closed_at Goal.fired_count Goal.last_fired_at Goal.matched`

type dgGoal struct {
	UID         string     `json:"uid"`
	ID          string     `json:"Goal.id"`
	Text        string     `json:"Goal.text"`
	Kind        string     `json:"Goal.kind"`
	Status      string     `json:"Goal.status"`
	DueAt       *time.Time `json:"Goal.due_at"`
	ExpiresAt   *time.Time `json:"Goal.expires_at"`
	Trigger     string     `json:"Goal.trigger"`
	CreatedAt   time.Time  `json:"Goal.created_at"`
	ClosedAt    *time.Time `json:"Goal.closed_at"`
	FiredCount  int        `json:"Goal.fired_count"`
	LastFiredAt *time.Time `json:"Goal.last_fired_at"`
	Matched     []string   `json:"Goal.matched"`
}

func (d dgGoal) domain(now time.Time) knowmind.Goal {
	g := knowmind.Goal{ID: d.ID, Text: d.Text, Kind: d.Kind, Status: d.Status, DueAt: d.DueAt, ExpiresAt: d.ExpiresAt,
		CreatedAt: d.CreatedAt, ClosedAt: d.ClosedAt, FiredCount: d.FiredCount, LastFiredAt: d.LastFiredAt,
		MatchedIDs: d.Matched}
	if g.MatchedIDs == nil {
		g.MatchedIDs = []string{}
	}
	sort.Strings(g.MatchedIDs)
	if d.Trigger != "" {
		var tr knowmind.GoalTrigger
		if json.Unmarshal([]byte(d.Trigger), &tr) == nil {
			g.Trigger = &tr
		}
	}
	g.Expired = g.ExpiresAt != nil && !now.Before(*g.ExpiresAt)
	g.Due = g.Status == knowmind.GoalOpen && g.DueAt != nil && !now.Before(*g.DueAt) && !g.Expired
	return g
}

// SetGoal stores a new open goal: g.Text and either g.DueAt or g.Trigger (validated by the caller).
func (t *Tenant) SetGoal(ctx context.Context, g knowmind.Goal) (knowmind.Goal, error) {
	now := time.Now().UTC()
	g.ID, g.Status, g.CreatedAt, g.MatchedIDs = uuid.NewString(), knowmind.GoalOpen, now, []string{}
	node := map[string]any{"uid": "_:g", "dgraph.type": "Goal", "Goal.id": g.ID, "Goal.text": g.Text, "Goal.kind": g.Kind,
		"Goal.status": g.Status, "Goal.created_at": now.Format(time.RFC3339Nano), "Goal.fired_count": 0}
	if g.DueAt != nil {
		node["Goal.due_at"] = g.DueAt.UTC().Format(time.RFC3339Nano)
	}
	if g.ExpiresAt != nil {
		node["Goal.expires_at"] = g.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	if g.Trigger != nil {
		b, _ := json.Marshal(g.Trigger)
		node["Goal.trigger"] = string(b)
	}
	b, _ := json.Marshal(node)
	if _, err := t.dg.NewTxn().Mutate(ctx, &api.Mutation{SetJson: b, CommitNow: true}); err != nil {
		return knowmind.Goal{}, fmt.Errorf("set goal: %w", err)
	}
	t.goals.invalidate()
	g.Expired = g.ExpiresAt != nil && !now.Before(*g.ExpiresAt)
	g.Due = g.DueAt != nil && !now.Before(*g.DueAt) && !g.Expired
	return g, nil
}

// ListGoals returns up to limit goals of a status ("" = all), due ones first,
// then newest first.
func (t *Tenant) ListGoals(ctx context.Context, status string, limit int) ([]knowmind.Goal, error) {
	fn := `has(Goal.id)`
	vars := map[string]string{"$first": strconv.Itoa(limit)}
	if status != "" {
		fn, vars["$s"] = `eq(Goal.status, $s)`, status
	}
	q := `query q($s: string, $first: int) { g(func: ` + fn + `, orderdesc: Goal.created_at, first: $first) { ` + goalFields + ` } }`
	var out struct{ G []dgGoal }
	if err := t.queryVars(ctx, q, vars, &out); err != nil {
		return nil, fmt.Errorf("list goals: %w", err)
	}
	now := time.Now()
	goals := make([]knowmind.Goal, 0, len(out.G))
	for _, d := range out.G {
		goals = append(goals, d.domain(now))
	}
	sort.SliceStable(goals, func(i, j int) bool { return goals[i].Due && !goals[j].Due })
	return goals, nil
}

// CloseGoal closes an open goal as done or cancelled.
func (t *Tenant) CloseGoal(ctx context.Context, id, status string) (knowmind.Goal, error) {
	var res knowmind.Goal
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, `query q($id: string) { g(func: eq(Goal.id, $id)) { `+goalFields+` } }`, map[string]string{"$id": id})
		if err != nil {
			return err
		}
		var out struct{ G []dgGoal }
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		if len(out.G) == 0 {
			return knowmind.Errorf(knowmind.ENOTFOUND, "goal %q not found", id)
		}
		d := out.G[0]
		if d.Status != knowmind.GoalOpen {
			return knowmind.Errorf(knowmind.ECONFLICT, "goal %q is already %s", id, d.Status)
		}
		now := time.Now().UTC()
		d.Status, d.ClosedAt = status, &now
		nq := fmt.Sprintf("<%s> <Goal.status> %q .\n<%s> <Goal.closed_at> %q .", d.UID, status, d.UID, now.Format(time.RFC3339Nano))
		if _, err := txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(nq)}); err != nil {
			return err
		}
		res = d.domain(now)
		return nil
	})
	if err != nil {
		return knowmind.Goal{}, err
	}
	t.goals.invalidate()
	return res, nil
}

func (c *goalCache) invalidate() {
	c.mu.Lock()
	c.ix = nil
	c.mu.Unlock()
}

// goalIndex returns the tenant's index of open event goals, loading it when missing or older than the TTL.
func (t *Tenant) goalIndex(ctx context.Context) (*knowmind.GoalIndex, error) {
	t.goals.mu.Lock()
	defer t.goals.mu.Unlock()
	if t.goals.ix != nil && time.Since(t.goals.at) < goalCacheTTL {
		return t.goals.ix, nil
	}
	q := fmt.Sprintf(`{ g(func: eq(Goal.status, "open"), first: %d) @filter(eq(Goal.kind, "event")) {
    uid Goal.id Goal.text Goal.kind Goal.status Goal.expires_at Goal.trigger } }`, maxOpenEventGoals)
	var out struct{ G []dgGoal }
	if err := t.queryVars(ctx, q, nil, &out); err != nil {
		return nil, fmt.Errorf("load open goals: %w", err)
	}
	now := time.Now()
	ix := knowmind.NewGoalIndex(nil, now)
	for _, d := range out.G {
		ix.Add(d.domain(now), now)
	}
	t.goals.ix, t.goals.at = ix, time.Now()
	return ix, nil
}

// MatchGoals matches written memories against the tenant's open event goals
// and records each match on its goal (fired_count, last_fired_at, matched
// memory ids, at most knowmind.MaxGoalMatchesKept of them). The answer is never nil.
func (t *Tenant) MatchGoals(ctx context.Context, mems []knowmind.WrittenMemory) ([]knowmind.GoalMatch, error) {
	out := []knowmind.GoalMatch{}
	if len(mems) == 0 {
		return out, nil
	}
	ix, err := t.goalIndex(ctx)
	if err != nil {
		return out, err
	}
	if ix.Len() == 0 {
		return out, nil
	}
	now := time.Now()
	for _, m := range mems {
		if m.ID == "" {
			continue
		}
		out = append(out, ix.Match(m, now)...)
	}
	if len(out) == 0 {
		return out, nil
	}
	return out, t.recordMatches(ctx, out, now.UTC())
}

func (t *Tenant) recordMatches(ctx context.Context, ms []knowmind.GoalMatch, now time.Time) error {
	byGoal := map[string][]string{}
	var ids []string
	for _, m := range ms {
		if _, ok := byGoal[m.GoalID]; !ok {
			ids = append(ids, m.GoalID)
		}
		byGoal[m.GoalID] = append(byGoal[m.GoalID], m.MemoryID)
	}
	idsJSON, _ := json.Marshal(ids)
	return runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.Query(ctx, fmt.Sprintf(`{ g(func: eq(Goal.id, %s)) { uid Goal.id Goal.fired_count count(Goal.matched) } }`, idsJSON))
		if err != nil {
			return err
		}
		var out struct {
			G []struct {
				UID     string `json:"uid"`
				ID      string `json:"Goal.id"`
				Fired   int    `json:"Goal.fired_count"`
				Matched int    `json:"count(Goal.matched)"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		var nq []byte
		for _, g := range out.G {
			mems := byGoal[g.ID]
			nq = fmt.Appendf(nq, "<%s> <Goal.fired_count> \"%d\" .\n<%s> <Goal.last_fired_at> %q .\n", g.UID, g.Fired+len(mems), g.UID, now.Format(time.RFC3339Nano))
			for i, m := range mems {
				if g.Matched+i < knowmind.MaxGoalMatchesKept {
					nq = fmt.Appendf(nq, "<%s> <Goal.matched> %q .\n", g.UID, m)
				}
			}
		}
		if len(nq) == 0 {
			return nil
		}
		_, err = txn.Mutate(ctx, &api.Mutation{SetNquads: nq})
		return err
	})
}

package handlers

import (
	"testing"
	"time"

	"github.com/knowmind/knowmind"
)

func (c *engineClient) setGoal(args map[string]any) knowmind.Goal {
	c.t.Helper()
	var res GoalResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_set_goal", args), &res)
	return res.Goal
}

func (c *engineClient) goals(status string) []knowmind.Goal {
	c.t.Helper()
	args := map[string]any{}
	if status != "" {
		args["status"] = status
	}
	var res ListGoalsResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_list_goals", args), &res)
	return res.Goals
}

func goalByID(goals []knowmind.Goal, id string) *knowmind.Goal {
	for i := range goals {
		if goals[i].ID == id {
			return &goals[i]
		}
	}
	return nil
}

// An event goal fires on the matching write of every write tool and not on
// others; the goal records each match; time goals come due; closing stops them.
func TestGoalsThroughMCP(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	words := c.setGoal(map[string]any{"text": "tell Lisa about the budget", "trigger": map[string]any{"words": []string{"budget", "Q3"}}})
	if words.Kind != knowmind.GoalEvent || words.Status != knowmind.GoalOpen || words.ID == "" {
		t.Fatalf("event goal %+v", words)
	}
	entity := c.setGoal(map[string]any{"text": "ask Acme about delivery", "trigger": map[string]any{"entity": map[string]any{"type": "organisation", "name": "Acme GmbH"}}})
	tag := c.setGoal(map[string]any{"text": "review security notes", "trigger": map[string]any{"tags": []string{"security"}}})
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	due := c.setGoal(map[string]any{"text": "send the report", "due_at": past})
	later := c.setGoal(map[string]any{"text": "renew the contract", "due_at": future})
	if due.Kind != knowmind.GoalTime || !due.Due || later.Due {
		t.Fatalf("time goals: due %+v later %+v", due, later)
	}

	// store_memory: not matching (only one of the two words), then matching.
	var sm StoreMemoryResult
	sm = StoreMemoryResult{}
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "Budget", "content": "The budget is fixed."}), &sm)
	if len(sm.PMMatches) != 0 {
		t.Fatalf("non-matching store fired %+v", sm.PMMatches)
	}
	sm = StoreMemoryResult{}
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "Budget Q3", "content": "The Q3 budget grew by 10%."}), &sm)
	if len(sm.PMMatches) != 1 || sm.PMMatches[0].GoalID != words.ID || sm.PMMatches[0].MemoryID != sm.ID {
		t.Fatalf("matching store: pm_matches %+v, want goal %s memory %s", sm.PMMatches, words.ID, sm.ID)
	}
	first := sm.ID
	// The same content again writes nothing and fires nothing.
	sm = StoreMemoryResult{}
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "Budget Q3", "content": "The Q3 budget grew by 10%."}), &sm)
	if !sm.Unchanged || len(sm.PMMatches) != 0 {
		t.Fatalf("unchanged store: %+v", sm)
	}

	// store_memories: tags.
	var sms StoreMemoriesResult
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memories", map[string]any{"memories": []map[string]any{
		{"title": "a", "content": "rotate keys monthly", "tags": []string{"Security"}},
		{"title": "b", "content": "lunch at noon", "tags": []string{"food"}},
	}}), &sms)
	if len(sms.PMMatches) != 1 || sms.PMMatches[0].GoalID != tag.ID || sms.PMMatches[0].MemoryID != sms.Results[0].ID {
		t.Fatalf("store_memories pm_matches %+v", sms.PMMatches)
	}

	// capture: the entity.
	res := c.capture(map[string]any{"text": "Die Acme GmbH liefert die Server bis zum 15. Mai."})
	found := false
	for _, m := range res.PMMatches {
		found = found || m.GoalID == entity.ID
	}
	if len(res.Stored) > 0 && !found {
		t.Fatalf("capture stored %+v but pm_matches %+v lacks the entity goal", res.Stored, res.PMMatches)
	}
	if len(res.Stored) == 0 {
		t.Fatalf("capture stored nothing: %+v", res)
	}

	// upload_document and update_fact: words.
	var up UploadDocumentResult
	structured(t, callTool(t, c.url, c.write, "knowmind_upload_document", map[string]any{"title": "Plan", "content": "Q3 plan: budget review in July."}), &up)
	if len(up.PMMatches) != 1 || up.PMMatches[0].GoalID != words.ID {
		t.Fatalf("upload pm_matches %+v", up.PMMatches)
	}
	var uf knowmind.UpdateFactResult
	structured(t, callTool(t, c.url, c.write, "knowmind_update_fact", map[string]any{"target_id": first, "new_title": "Budget Q3", "new_content": "The Q3 budget grew by 12%."}), &uf)
	if len(uf.PMMatches) != 1 || uf.PMMatches[0].GoalID != words.ID || uf.PMMatches[0].MemoryID != uf.NewMemoryID {
		t.Fatalf("update_fact pm_matches %+v", uf.PMMatches)
	}

	// The goal recorded its matches; due goals come first.
	open := c.goals("")
	if len(open) != 5 || open[0].ID != due.ID {
		t.Fatalf("open goals %+v, want 5 with the due one first", open)
	}
	g := goalByID(open, words.ID)
	if g.FiredCount != 3 || len(g.MatchedIDs) != 3 || g.LastFiredAt == nil {
		t.Fatalf("words goal after 3 matches: %+v", g)
	}

	// Closing: done, then 409 again, 404 unknown; a closed goal fires no more.
	var closed GoalResult
	structured(t, callTool(t, c.url, c.write, "knowmind_close_goal", map[string]any{"goal_id": words.ID}), &closed)
	if closed.Goal.Status != knowmind.GoalDone || closed.Goal.ClosedAt == nil {
		t.Fatalf("closed %+v", closed.Goal)
	}
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_close_goal", map[string]any{"goal_id": words.ID, "status": "cancelled"}), 409, "")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_close_goal", map[string]any{"goal_id": "nope"}), 404, "")
	sm = StoreMemoryResult{}
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "x", "content": "Q3 budget again, closed goal"}), &sm)
	if len(sm.PMMatches) != 0 {
		t.Fatalf("closed goal fired: %+v", sm.PMMatches)
	}
	if got := c.goals("done"); len(got) != 1 || got[0].ID != words.ID {
		t.Fatalf("done goals %+v", got)
	}

	// Expired event goals do not fire.
	c.setGoal(map[string]any{"text": "expired", "trigger": map[string]any{"words": []string{"zebra"}}, "expires_at": past})
	sm = StoreMemoryResult{}
	structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"title": "z", "content": "a zebra crossed"}), &sm)
	if len(sm.PMMatches) != 0 {
		t.Fatalf("expired goal fired: %+v", sm.PMMatches)
	}
}

func TestGoalParamErrors(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		param string
	}{
		{"knowmind_set_goal", map[string]any{"due_at": "2030-01-01T00:00:00Z"}, "text"},
		{"knowmind_set_goal", map[string]any{"text": "x"}, "due_at"},
		{"knowmind_set_goal", map[string]any{"text": "x", "due_at": "tomorrow"}, "due_at"},
		{"knowmind_set_goal", map[string]any{"text": "x", "due_at": "2030-01-01T00:00:00Z", "trigger": map[string]any{"words": []string{"a"}}}, "trigger"},
		{"knowmind_set_goal", map[string]any{"text": "x", "trigger": map[string]any{}}, "trigger"},
		{"knowmind_set_goal", map[string]any{"text": "x", "trigger": map[string]any{"words": []string{"--"}}}, "trigger.words"},
		{"knowmind_set_goal", map[string]any{"text": "x", "due_at": "2030-01-01T00:00:00Z", "expires_at": "2029-01-01T00:00:00Z"}, "expires_at"},
		{"knowmind_set_goal", map[string]any{"text": "x", "due_at": "2030-01-01T00:00:00Z", "expires_at": "soon"}, "expires_at"},
		{"knowmind_list_goals", map[string]any{"status": "closed"}, "status"},
		{"knowmind_list_goals", map[string]any{"limit": 501}, "limit"},
		{"knowmind_close_goal", map[string]any{}, "goal_id"},
		{"knowmind_close_goal", map[string]any{"goal_id": "x", "status": "open"}, "status"},
	} {
		wantRPCError(t, callTool(t, c.url, c.write, tc.tool, tc.args), -32602, tc.param)
	}
}

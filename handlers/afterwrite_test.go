package handlers

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Issue 36: every write tool that makes a fact current goes through graph's
// one after-write step, so each fires a matching event goal. The write tools
// come from the registry (tools/list, every tool not marked read-only): a new
// one fails this test until it is listed here as making facts current (with
// a call whose text matches the goal) or as writing none.
func TestEveryFactWriteFiresGoals(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeAdmin)
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		if out == nil {
			out = &map[string]any{}
		}
		structured(t, callTool(t, url, write, name, args), out)
	}
	var goal GoalResult
	call("knowmind_set_goal", map[string]any{"text": "Tell me about the airship", "trigger": map[string]any{"words": []string{"zeppelin"}}}, &goal)
	fired := func() int {
		t.Helper()
		var res ListGoalsResult
		call("knowmind_list_goals", map[string]any{}, &res)
		for _, g := range res.Goals {
			if g.ID == goal.Goal.ID {
				return g.FiredCount
			}
		}
		t.Fatalf("goal %s not listed", goal.Goal.ID)
		return 0
	}

	var mem StoreMemoryResult
	var note knowmind.NoteWriteResult
	// The facts each write makes current mention the Zeppelin; a tool's setup
	// (run before the count is taken) prepares what it needs.
	facts := map[string]struct {
		setup func()
		args  func() map[string]any
	}{
		"knowmind_store_memory": {nil, func() map[string]any {
			return map[string]any{"title": "Zeppelin", "content": "The Zeppelin lands at noon."}
		}},
		"knowmind_store_memories": {nil, func() map[string]any {
			return map[string]any{"memories": []any{map[string]any{"content": "A second Zeppelin is ordered."}}}
		}},
		"knowmind_upload_document": {nil, func() map[string]any {
			return map[string]any{"title": "Hangar", "content": "# Hangar\n\nThe hangar holds one Zeppelin."}
		}},
		"knowmind_update_fact": {func() {
			call("knowmind_store_memory", map[string]any{"content": "The airship lands at one."}, &mem)
		}, func() map[string]any {
			return map[string]any{"target_id": mem.ID, "new_title": "Landing", "new_content": "The Zeppelin lands at two."}
		}},
		"knowmind_capture": {func() {
			call("knowmind_set_capture_thresholds", map[string]any{"store_threshold": 0.1, "draft_threshold": 0.05}, nil)
		}, func() map[string]any {
			return map[string]any{"text": "Lisa Müller übernimmt die Zeppelin-Werft ab Montag."}
		}},
		"knowmind_review_draft": {func() {
			call("knowmind_set_capture_thresholds", map[string]any{"store_threshold": 1, "draft_threshold": 0.05}, nil)
			var c knowmind.CaptureResult
			call("knowmind_capture", map[string]any{"text": "Tom Schmidt fliegt mit dem Zeppelin nach Berlin."}, &c)
			if len(c.Drafts) == 0 {
				t.Fatalf("capture made no draft: %+v", c)
			}
			mem.ID = c.Drafts[0].ID
		}, func() map[string]any {
			return map[string]any{"draft_id": mem.ID, "action": "accept"}
		}},
		"knowmind_create_note": {nil, func() map[string]any {
			return map[string]any{"project": "main", "body": "# Luftschiff\n\nDer Zeppelin startet in Friedrichshafen."}
		}},
		"knowmind_create_notes": {nil, func() map[string]any {
			return map[string]any{"notes": []any{map[string]any{"project": "main", "body": "# Werft\n\nDie Zeppelin-Werft baut."}}}
		}},
		"knowmind_edit_note": {func() {
			call("knowmind_create_note", map[string]any{"project": "main", "body": "# Fahrplan\n\nAb Mittwoch."}, &note)
		}, func() map[string]any {
			return map[string]any{"id": note.ID, "versionToken": note.VersionToken, "op": "append", "content": "Mit dem Zeppelin."}
		}},
		"knowmind_rename_note": {func() {
			call("knowmind_create_note", map[string]any{"project": "main", "body": "# Reise\n\nNach Süden."}, &note)
		}, func() map[string]any {
			return map[string]any{"id": note.ID, "versionToken": note.VersionToken, "title": "Reise im Zeppelin"}
		}},
		"knowmind_remember_about_user": {nil, func() map[string]any {
			return map[string]any{"category": "preferences", "observation": "Mag Fahrten im Zeppelin."}
		}},
		"knowmind_remember_about_project": {nil, func() map[string]any {
			return map[string]any{"project": "main", "observation": "Der Zeppelin ist das Maskottchen."}
		}},
	}
	// Tools that write but make no fact current: relations, goals, settings,
	// places and the trash change no memory's text.
	noFacts := []string{"knowmind_link", "knowmind_unlink", "knowmind_link_note", "knowmind_link_many",
		"knowmind_delete_note", "knowmind_move_note", "knowmind_move_folder", "knowmind_rename_project",
		"knowmind_set_goal", "knowmind_close_goal", "knowmind_set_capture_thresholds", "knowmind_start_session"}

	r := send(t, url, write, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, toolsetsHeader, "all") // every toolset, not only the default
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %v %s", err, r.Body)
	}
	var writers []string
	for _, tl := range list.Tools {
		if !tl.Annotations.ReadOnly {
			writers = append(writers, tl.Name)
		}
	}
	slices.Sort(writers)
	checked := 0
	for _, name := range writers {
		f, ok := facts[name]
		if !ok {
			if !slices.Contains(noFacts, name) {
				t.Errorf("write tool %s is not classified: list it with a call that makes a fact current, or as writing none", name)
			}
			continue
		}
		if f.setup != nil {
			f.setup()
		}
		before := fired()
		var out map[string]any
		call(name, f.args(), &out)
		if after := fired(); after <= before {
			t.Errorf("%s made a Zeppelin fact current and fired no goal (fired_count %d → %d): %v", name, before, after, out)
		}
		checked++
	}
	if checked != len(facts) {
		t.Errorf("%d of the %d fact-writing tools are in tools/list", checked, len(facts))
	}
}

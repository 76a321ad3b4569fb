package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestCrossTenantScopes walks every tool that takes an id × every caller that may not see
// the id — a token limited to another project, tokens limited to the memory or the engine
// toolset (no notes), another tenant — and fails on any answer but 404 or -32002, on an
// answer that names what it hid, and on any change to tenant A. `make test` runs each id
// once; `make attack` (KNOWMIND_ATTACK=1) adds each id's other spellings.
func TestCrossTenantScopes(t *testing.T) {
	ctx := context.Background()
	cl := dgraphtest.Shared(t).Client
	srv := newTestServer(t, nil)
	url := srv.URL + mcpPath
	tenantA, tenantB := dgraphtest.TenantName(t), dgraphtest.TenantName(t)
	all := []knowmind.Scope{knowmind.ScopeAdmin}
	tokA := newToken(t, tenantA, all...)
	tokB := newToken(t, tenantB, all...)
	call := func(tok, name string, args map[string]any, out any) {
		t.Helper()
		structured(t, callTool(t, url, tok, name, args), out)
	}

	// Tenant A: a project "geheim" with two linked notes, a note in "main", A's private
	// memory note in "main", two memories (one linked to a secret note), a goal and a draft.
	if _, err := tenantOf(t, tenantA).CreateProject(ctx, "geheim", "Geheim"); err != nil {
		t.Fatal(err)
	}
	const marker = "zorbelquant"
	var secret, secret2, mainNote, private knowmind.NoteWriteResult
	call(tokA, "knowmind_create_note", map[string]any{"project": "geheim", "body": "# Plan " + marker + "\n\nDer Plan " + marker + " bleibt geheim."}, &secret2)
	call(tokA, "knowmind_create_note", map[string]any{"project": "geheim", "body": "# Akte " + marker + "\n\nSiehe [[Plan " + marker + "]]."}, &secret)
	call(tokA, "knowmind_create_note", map[string]any{"project": "main", "body": "# Offene Notiz\n\nFür alle im Projekt main."}, &mainNote)
	call(tokA, "knowmind_remember_about_project", map[string]any{"project": "main", "observation": "Privat " + marker + " nur für A."}, &private)
	var mem1, mem2 StoreMemoryResult
	call(tokA, "knowmind_store_memory", map[string]any{"title": "Kunde Nord", "content": "Der Kunde Nord zahlt pünktlich."}, &mem1)
	call(tokA, "knowmind_store_memory", map[string]any{"title": "Kunde Süd", "content": "Der Kunde Süd zahlt spät."}, &mem2)
	call(tokA, "knowmind_link", linkArgs(mem1.ID, secret.ID, "REFERENCES"), &LinkResult{})
	call(tokA, "knowmind_link", linkArgs(mem1.ID, mem2.ID, "RELATES_TO"), &LinkResult{})
	var goal GoalResult
	call(tokA, "knowmind_set_goal", map[string]any{"text": "Frist " + marker, "due_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, &goal)
	var capt knowmind.CaptureResult
	call(tokA, "knowmind_capture", map[string]any{"text": meetingNote, "source": "jour-fixe"}, &capt)

	limited := func(projects, toolsets []string) string {
		secret, _, err := cl.CreateLimitedToken(ctx, tenantA, all, projects, toolsets, "limited", nil)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	// B's own memory and note, for links that start on the caller's side.
	var memB StoreMemoryResult
	call(tokB, "knowmind_store_memory", map[string]any{"content": "B's own memory about quarterly figures."}, &memB)
	var noteB knowmind.NoteWriteResult
	call(tokB, "knowmind_create_note", map[string]any{"project": "main", "body": "# Notiz von B\n\nNur B."}, &noteB)

	hiddenNotes := []knowmind.NoteWriteResult{secret, secret2, private}
	everyNote := []knowmind.NoteWriteResult{secret, secret2, private, mainNote}
	type caller struct {
		name, tok string
		own       string                     // a memory the caller sees, for links from its side
		ownNote   string                     // a note the caller sees ("" without the notes toolset)
		hidden    []knowmind.NoteWriteResult // notes it may not see
		others    []string                   // further ids it may not see
	}
	callers := []caller{
		{"other project", limited([]string{"main"}, nil), mem1.ID, mainNote.ID, hiddenNotes, nil},
		{"memory toolset", limited(nil, []string{knowmind.ToolsetMemory}), mem1.ID, "", everyNote, nil},
		{"engine toolset", limited(nil, []string{knowmind.ToolsetEngine}), mem1.ID, "", everyNote, nil},
		{"other tenant", tokB, memB.ID, noteB.ID, everyNote, []string{mem1.ID, mem2.ID, goal.Goal.ID}},
	}
	for _, f := range append(capt.Stored, capt.Drafts...) {
		callers[3].others = append(callers[3].others, f.ID)
	}
	before := snapshotA(t, url, tokA, []string{mem1.ID, mem2.ID}, everyNote)

	spellings := func(id string) []string {
		if os.Getenv("KNOWMIND_ATTACK") == "" {
			return []string{id}
		}
		return []string{id, strings.ToUpper(id), " " + id + " ", id + "\n", "[[" + id + "]]"}
	}
	attempts, start := 0, time.Now()
	want := func(c caller, name string, args map[string]any, hiddenText []string) {
		t.Helper()
		attempts++
		r := callTool(t, url, c.tok, name, args)
		a, _ := json.Marshal(args)
		if name == "knowmind_link_many" && r.Error == nil && r.Status == http.StatusOK { // best-effort: the item carries the answer
			var res BatchResult
			structured(t, r, &res)
			if len(res.Results) == 1 && res.Results[0].Error != nil && res.Results[0].Error.Code == codeNotFound {
				return
			}
		}
		if r.Error == nil || (r.Error.Code != codeNotFound && r.Error.Code != codeScope) {
			t.Errorf("%s: %s %s answered %.400s, want 404 or -32002", c.name, name, a, r.Body)
			return
		}
		for _, s := range hiddenText {
			if strings.Contains(string(r.Body), s) && !strings.Contains(string(a), s) {
				t.Errorf("%s: %s %s names what it hides (%q): %.400s", c.name, name, a, s, r.Body)
			}
		}
	}
	for _, c := range callers {
		var ids []string
		var texts []string
		for _, n := range c.hidden {
			ids = append(ids, n.ID)
			texts = append(texts, n.Title, n.VersionToken)
		}
		ids = append(ids, c.others...)
		for _, hid := range ids {
			vt := "1-0000000000000000" // a well-formed token for ids that are no note
			if i := slices.IndexFunc(everyNote, func(n knowmind.NoteWriteResult) bool { return n.ID == hid }); i >= 0 {
				vt = everyNote[i].VersionToken
			}
			for _, id := range spellings(hid) {
				want(c, "knowmind_update_fact", map[string]any{"target_id": id, "new_title": "x", "new_content": "überschrieben"}, texts)
				want(c, "knowmind_link", linkArgs(c.own, id, "RELATES_TO"), texts)
				want(c, "knowmind_link", linkArgs(id, c.own, "RELATES_TO"), texts)
				if hid != mem1.ID {
					want(c, "knowmind_unlink", linkArgs(mem1.ID, id, "REFERENCES"), texts)
				}
				if hid != secret2.ID {
					want(c, "knowmind_unlink", linkArgs(id, secret2.ID, "REFERENCES"), texts)
				}
				want(c, "knowmind_list_relations", map[string]any{"memory_id": id}, texts)
				want(c, "knowmind_explore", map[string]any{"memory_id": id, "hops": 2}, texts)
				want(c, "knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": id}, texts)
				want(c, "knowmind_get_note", map[string]any{"id": id, "detailed": true}, texts)
				want(c, "knowmind_edit_note", map[string]any{"id": id, "versionToken": vt, "op": "append", "content": "fremd"}, texts)
				want(c, "knowmind_rename_note", map[string]any{"id": id, "versionToken": vt, "title": "Übernommen"}, texts)
				want(c, "knowmind_move_note", map[string]any{"id": id, "versionToken": vt, "path": "Fremd"}, texts)
				want(c, "knowmind_delete_note", map[string]any{"id": id, "versionToken": vt}, texts)
				want(c, "knowmind_close_goal", map[string]any{"goal_id": id}, texts)
				want(c, "knowmind_review_draft", map[string]any{"draft_id": id, "action": "accept"}, texts)
				if c.ownNote != "" {
					want(c, "knowmind_link_note", map[string]any{"from": c.ownNote, "to": id}, texts)
					want(c, "knowmind_link_many", map[string]any{"links": []map[string]any{{"from": c.ownNote, "to": id}}}, texts)
				}
				want(c, "knowmind_link_note", map[string]any{"from": id, "to": mainNote.ID}, texts)
			}
		}
		// By title: a hidden note's wiki ref, in its project and in the default one.
		for _, n := range c.hidden {
			for _, project := range []string{n.Project, "main"} {
				want(c, "knowmind_get_note", map[string]any{"id": "[[" + n.Title + "]]", "project": project}, texts)
			}
		}
		// What the caller may see answers, without the hidden: the relations and the
		// neighbourhood of the memory linked to a secret note, and the replay of today.
		for _, tool := range []struct {
			name string
			args map[string]any
		}{
			{"knowmind_list_relations", map[string]any{"memory_id": c.own}},
			{"knowmind_explore", map[string]any{"memory_id": c.own, "hops": 3}},
			{"knowmind_retrieve", map[string]any{"sort_by": "graph", "start_memory_id": c.own}},
			{"knowmind_replay", map[string]any{"timestamp": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}},
		} {
			attempts++
			r := callTool(t, url, c.tok, tool.name, tool.args)
			if r.Error != nil && r.Error.Code == codeScope {
				continue // outside the caller's toolsets
			}
			var out map[string]any
			structured(t, r, &out)
			for _, id := range ids {
				if strings.Contains(string(r.Result), id) {
					t.Errorf("%s: %s %v shows hidden %s: %.400s", c.name, tool.name, tool.args, id, r.Result)
				}
			}
		}
	}

	// What A itself may do still works: update_fact refuses A's own note with -32602 naming
	// target_id, A sees the edge to its secret note, and the edge survived every unlink.
	wantRPCError(t, callTool(t, url, tokA, "knowmind_update_fact", map[string]any{"target_id": secret.ID, "new_title": "x", "new_content": "y"}),
		jsonrpc.CodeInvalidParams, "target_id")
	var rels ListRelationsResult
	call(tokA, "knowmind_list_relations", map[string]any{"memory_id": mem1.ID}, &rels)
	if !slices.ContainsFunc(rels.Outgoing, func(e knowmind.OutEdge) bool { return e.To == secret.ID }) {
		t.Errorf("A lost its edge to the secret note: %+v", rels)
	}
	if after := snapshotA(t, url, tokA, []string{mem1.ID, mem2.ID}, everyNote); after != before {
		t.Errorf("A changed under the attempts:\nbefore %s\nafter  %s", before, after)
	}
	t.Logf("scope table: %d attempts by %d callers in %.0fs", attempts, len(callers), time.Since(start).Seconds())
}

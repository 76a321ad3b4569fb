package handlers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// storeArgs is a store_memory call's arguments.
func storeArgs(title, content string) map[string]any {
	return map[string]any{"title": title, "content": content}
}

// Issue 36, the Apollo example: a project linked four ways, then its deadline
// updated. The relations follow the current version — list_relations,
// explore and recall's hops on the new id see them, Lisa Meyer's incoming
// OWNED_BY points at it — and explore as of a time before the update shows
// the old wiring on the old version.
func TestRelationsFollowTheCurrentVersion(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	store := func(title, content string) string {
		t.Helper()
		var res StoreMemoryResult
		structured(t, callTool(t, url, write, "knowmind_store_memory", storeArgs(title, content)), &res)
		return res.ID
	}
	apollo := store("Project Apollo", "Project Apollo ships the new billing platform; deadline 30 June.")
	budget := store("Budget 2027", "The 2027 budget funds the billing platform.")
	incident := store("Outage March", "The March outage of the old billing system.")
	lisa := store("Lisa Meyer", "Lisa Meyer leads the platform team.")
	program := store("Modernisation programme", "The programme that renews every customer system.")
	var owned LinkResult
	for _, l := range []struct {
		to, rel string
		out     *LinkResult
	}{{budget, "DEPENDS_ON", nil}, {incident, "CAUSED_BY", nil}, {lisa, "OWNED_BY", &owned}, {program, "PART_OF", nil}} {
		args := linkArgs(apollo, l.to, l.rel)
		if l.rel == "OWNED_BY" {
			args["confidence"] = 0.8
			args["metadata"] = map[string]any{"reason": "named in the kick-off"}
		}
		var res LinkResult
		structured(t, callTool(t, url, write, "knowmind_link", args), &res)
		if l.out != nil {
			*l.out = res
		}
	}
	time.Sleep(20 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)

	var upd UpdateFactResult
	structured(t, callTool(t, url, write, "knowmind_update_fact", map[string]any{"target_id": apollo,
		"new_title": "Project Apollo", "new_content": "Project Apollo ships the new billing platform; deadline 30 September.",
		"update_reason": "deadline moved"}), &upd)
	newID := upd.NewMemoryID

	rels, _ := relationsOf(t, url, read, newID)
	var out []string
	for _, e := range rels.Outgoing {
		out = append(out, e.RelType+" "+e.To)
	}
	slices.Sort(out)
	want := []string{"CAUSED_BY " + incident, "DEPENDS_ON " + budget, "OWNED_BY " + lisa, "PART_OF " + program, graph.RelSupersedes + " " + apollo}
	slices.Sort(want)
	if !slices.Equal(out, want) {
		t.Fatalf("the new version's outgoing relations %v, want %v", out, want)
	}
	for _, e := range rels.Outgoing {
		if e.RelType != graph.RelSupersedes && (e.ValidFrom.Before(before) || e.EdgeID != graph.EdgeID(newID, e.RelType, e.To)) {
			t.Errorf("moved edge %+v: want valid_from at the update and the new version's edge id", e)
		}
	}
	lisaRels, _ := relationsOf(t, url, read, lisa)
	if len(lisaRels.Incoming) != 1 || lisaRels.Incoming[0].From != newID || lisaRels.Incoming[0].RelType != "OWNED_BY" {
		t.Fatalf("Lisa Meyer's incoming relations %+v, want OWNED_BY from the new version %s", lisaRels.Incoming, newID)
	}
	oldRels, _ := relationsOf(t, url, read, apollo)
	if len(oldRels.Outgoing) != 0 || len(oldRels.Incoming) != 1 || oldRels.Incoming[0].RelType != graph.RelSupersedes {
		t.Fatalf("the old version's open relations %+v, want only the SUPERSEDES from its successor", oldRels)
	}

	// The explorer: now the neighbours hang off the new version ...
	var now ExploreResult
	structured(t, callTool(t, url, read, "knowmind_explore", map[string]any{"memory_id": newID}), &now)
	if got := neighbours(now, newID); !slices.Equal(got, sortedOf(budget, incident, lisa, program, apollo)) {
		t.Fatalf("explore now: neighbours of the new version %v", got)
	}
	// ... and as of before the update off the old one, which is the centre then.
	var then ExploreResult
	structured(t, callTool(t, url, read, "knowmind_explore", map[string]any{"memory_id": newID, "as_of": before.Format(time.RFC3339Nano)}), &then)
	if then.Memory.ID != apollo || !slices.Equal(neighbours(then, apollo), sortedOf(budget, incident, lisa, program)) {
		t.Fatalf("explore as of before the update: centre %s, neighbours %v", then.Memory.ID, neighbours(then, apollo))
	}
	for _, e := range then.Edges {
		if e.From == lisa || e.To == lisa {
			if e.ID != owned.EdgeID {
				t.Errorf("the OWNED_BY edge as of before: id %s, want the link's %s", e.ID, owned.EdgeID)
			}
		}
	}

	// Recall's graph hops reach the current version from Lisa Meyer.
	var rec RecallResult
	structured(t, callTool(t, url, read, "knowmind_recall", map[string]any{"query": "Lisa Meyer leads", "k": 10, "hops": 1, "min_score": 0}), &rec)
	var hits []string
	for _, h := range rec.Hits {
		hits = append(hits, h.MemoryID)
	}
	if !slices.Contains(hits, newID) || slices.Contains(hits, apollo) {
		t.Fatalf("recall with hops from Lisa Meyer: %v, want the new version %s and not the old %s", hits, newID, apollo)
	}
}

// neighbours lists the ids linked to centre in an explore answer, sorted.
func neighbours(res ExploreResult, centre string) []string {
	var out []string
	for _, e := range res.Edges {
		switch centre {
		case e.From:
			out = append(out, e.To)
		case e.To:
			out = append(out, e.From)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedOf(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

// Issue 36: a document replaced by a new upload of its title is closed, not
// erased. It leaves the current views (recall, retrieve, list_recent, stats)
// and stays readable as of its time: replay, recall_at_time and explore with
// as_of before the replacement find it, its sections included.
func TestReplacedDocumentStaysInItsTime(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	write := newToken(t, tenant, knowmind.ScopeWrite)
	read := newToken(t, tenant, knowmind.ScopeRead)
	var v1, v2 UploadDocumentResult
	structured(t, callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": "Reiserichtlinie",
		"content": "# Reiserichtlinie\n\nDienstreisen über 500 Kilometer werden mit der Bahn erster Klasse gebucht.\n\n## Hotels\n\nHotels bis 120 Euro je Nacht."}), &v1)
	time.Sleep(20 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	structured(t, callTool(t, url, write, "knowmind_upload_document", map[string]any{"title": "Reiserichtlinie",
		"content": "# Reiserichtlinie\n\nDienstreisen werden immer mit dem Flugzeug gebucht.\n\n## Hotels\n\nHotels bis 150 Euro je Nacht."}), &v2)
	if !slices.Equal(v2.ReplacedDocumentIDs, []string{v1.ID}) {
		t.Fatalf("second upload replaced %v, want %s", v2.ReplacedDocumentIDs, v1.ID)
	}
	at := before.Format(time.RFC3339Nano)
	ids := func(ms []knowmind.RetrievedMemory) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	hitIDs := func(r RecallResult) []string {
		var out []string
		for _, h := range r.Hits {
			out = append(out, h.MemoryID)
		}
		return out
	}

	// Current views: only v2.
	var rec RecallResult
	structured(t, callTool(t, url, read, "knowmind_recall", map[string]any{"query": "Bahn erster Klasse", "min_score": 0}), &rec)
	if slices.Contains(hitIDs(rec), v1.ID) {
		t.Errorf("recall finds the replaced document: %v", hitIDs(rec))
	}
	var ret knowmind.RetrieveResult
	structured(t, callTool(t, url, read, "knowmind_retrieve", map[string]any{"sort_by": "chronological"}), &ret)
	if got := ids(ret.Memories); !slices.Equal(got, []string{v2.ID}) {
		t.Errorf("retrieve chronological %v, want only %s", got, v2.ID)
	}
	if items := recentOf(t, url, read); len(items) != 1 || items[0].ID != v2.ID {
		t.Errorf("list_recent %+v, want only %s", items, v2.ID)
	}
	if s := statsOf(t, url, read); s.Memories != 1 || s.Chunks != int64(v2.ChunksWritten) {
		t.Errorf("stats %+v, want 1 memory with %d chunks", s, v2.ChunksWritten)
	}

	// As of before the replacement: v1.
	var replay knowmind.RetrieveResult
	structured(t, callTool(t, url, read, "knowmind_replay", map[string]any{"timestamp": at}), &replay)
	if got := ids(replay.Memories); !slices.Equal(got, []string{v1.ID}) || replay.Memories[0].ValidTo == nil {
		t.Errorf("replay before the replacement %+v, want only %s with its valid_to", replay.Memories, v1.ID)
	}
	structured(t, callTool(t, url, read, "knowmind_recall_at_time", map[string]any{"query": "Bahn erster Klasse", "as_of": at}), &rec)
	if got := hitIDs(rec); len(got) == 0 || got[0] != v1.ID || slices.Contains(got, v2.ID) {
		t.Errorf("recall_at_time before the replacement %v, want %s first and not %s", got, v1.ID, v2.ID)
	}
	var then ExploreResult
	structured(t, callTool(t, url, read, "knowmind_explore", map[string]any{"memory_id": v2.ID, "as_of": at}), &then)
	if then.Memory.ID != v1.ID || len(then.Chunks) != v1.ChunksWritten || len(then.Versions) != 2 || then.RequestedID != v2.ID {
		t.Errorf("explore as of before: centre %s, %d chunks, versions %+v", then.Memory.ID, len(then.Chunks), then.Versions)
	}
	structured(t, callTool(t, url, read, "knowmind_explore", map[string]any{"memory_id": v1.ID}), &then)
	if then.Memory.ID != v1.ID || then.Memory.ValidTo == nil {
		t.Errorf("explore of the replaced id: %+v, want it closed", then.Memory)
	}
}

// Issue 36: a note is edited in place, and every edit keeps the former title
// and body as a revision; explore as of a time before the edit reads them.
func TestExploreNoteAsOfReadsItsRevision(t *testing.T) {
	c := newNotesClient(t)
	n := c.create(map[string]any{"project": "main", "body": "# Reiseplan\n\nAbfahrt am Montag mit der Bahn."})
	time.Sleep(20 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	c.edit(map[string]any{"id": n.ID, "versionToken": n.VersionToken, "op": "replace",
		"content": "# Reiseplan 2027\n\nAbfahrt am Dienstag mit dem Flugzeug."})

	var now, then ExploreResult
	structured(t, callTool(t, c.url, c.read, "knowmind_explore", map[string]any{"memory_id": n.ID}), &now)
	if now.Memory.Title != "Reiseplan 2027" || !strings.Contains(now.Memory.Content, "Flugzeug") {
		t.Fatalf("explore now: %q %q", now.Memory.Title, now.Memory.Content)
	}
	structured(t, callTool(t, c.url, c.read, "knowmind_explore", map[string]any{"memory_id": n.ID,
		"as_of": before.Format(time.RFC3339Nano)}), &then)
	if then.Memory.Title != "Reiseplan" || !strings.Contains(then.Memory.Content, "Bahn") || strings.Contains(then.Memory.Content, "Flugzeug") {
		t.Fatalf("explore as of before the edit: %q %q, want the former title and body", then.Memory.Title, then.Memory.Content)
	}
	if len(then.Nodes) == 0 || then.Nodes[0].Title != "Reiseplan" {
		t.Fatalf("the centre node as of before the edit: %+v", then.Nodes)
	}
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_explore", map[string]any{"memory_id": n.ID,
		"as_of": "2020-01-01T00:00:00Z"}), codeNotFound, "")
}

// A superseded version takes no new link, either way: relations follow the current version, and
// a link left on history would reach no current view. The 409 names the current version, which
// takes the link.
func TestLinkRefusesASupersededVersion(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	write := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	store := func(title, content string) string {
		t.Helper()
		var res StoreMemoryResult
		structured(t, callTool(t, url, write, "knowmind_store_memory", storeArgs(title, content)), &res)
		return res.ID
	}
	office := store("Büro", "Das Büro ist in Bielefeld.")
	lease := store("Mietvertrag", "Der Mietvertrag läuft bis 2028.")
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(lease, office, "REFERENCES")), &LinkResult{})
	var upd UpdateFactResult
	structured(t, callTool(t, url, write, "knowmind_update_fact", map[string]any{"target_id": office,
		"new_title": "Büro", "new_content": "Das Büro ist in Hamburg."}), &upd)
	// Unlinking the moved relation on the old version says where it went.
	r := callTool(t, url, write, "knowmind_unlink", linkArgs(lease, office, "REFERENCES"))
	wantRPCError(t, r, codeNotFound, "")
	if !strings.Contains(r.Error.Message, "superseded") || !strings.Contains(r.Error.Message, upd.NewMemoryID) {
		t.Errorf("unlink of the relation moved by the update: %s, want the current version named", r.Error.Message)
	}
	for _, c := range []struct{ from, to, param string }{{office, lease, "from_id"}, {lease, office, "to_id"}} {
		r := callTool(t, url, write, "knowmind_link", linkArgs(c.from, c.to, "DEPENDS_ON"))
		wantRPCError(t, r, codeConflict, c.param)
		if !strings.Contains(r.Error.Message, upd.NewMemoryID) {
			t.Errorf("link %s → %s: %s, want the current version named", c.from, c.to, r.Error.Message)
		}
	}
	var rels ListRelationsResult
	structured(t, callTool(t, url, write, "knowmind_list_relations", map[string]any{"memory_id": office}), &rels)
	if len(rels.Outgoing) != 0 || len(rels.Incoming) != 1 || rels.Incoming[0].RelType != "SUPERSEDES" {
		t.Errorf("the superseded version's relations: %+v, want its SUPERSEDES alone", rels)
	}
	structured(t, callTool(t, url, write, "knowmind_link", linkArgs(upd.NewMemoryID, lease, "DEPENDS_ON")), &LinkResult{})
}

// A note the caller may not see answers explore as of any time word for word as an id that never
// existed: "did not exist at" would tell a token of another project, or one without the notes
// toolset, that the id is a note of this tenant.
func TestExploreAsOfHidesHiddenNotes(t *testing.T) {
	c := newNotesClient(t)
	ctx := context.Background()
	if _, err := tenantOf(t, c.tenant).CreateProject(ctx, "geheim", "Geheim"); err != nil {
		t.Fatal(err)
	}
	n := c.create(map[string]any{"project": "geheim", "body": "# Akte\n\nNur für das Projekt geheim."})
	limited := func(projects, toolsets []string) string {
		secret, _, err := dgraphtest.Shared(t).Client.CreateLimitedToken(ctx, c.tenant, []knowmind.Scope{knowmind.ScopeRead},
			projects, toolsets, "limited", nil)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	const unknown = "00000000-0000-4000-8000-000000000000"
	for name, tok := range map[string]string{"other project": limited([]string{"main"}, nil),
		"memory toolset": limited(nil, []string{knowmind.ToolsetMemory})} {
		for _, asOf := range []string{"2020-01-01T00:00:00Z", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)} {
			hidden := callTool(t, c.url, tok, "knowmind_explore", map[string]any{"memory_id": n.ID, "as_of": asOf})
			missing := callTool(t, c.url, tok, "knowmind_explore", map[string]any{"memory_id": unknown, "as_of": asOf})
			if hidden.Error == nil || missing.Error == nil || hidden.Error.Code != missing.Error.Code ||
				strings.ReplaceAll(hidden.Error.Message, n.ID, unknown) != missing.Error.Message {
				t.Errorf("%s, as of %s: the hidden note answered %s, an unknown id %s", name, asOf, hidden.Body, missing.Body)
			}
		}
	}
	// The note's own project still hears why: the note did not exist yet.
	r := callTool(t, c.url, c.read, "knowmind_explore", map[string]any{"memory_id": n.ID, "as_of": "2020-01-01T00:00:00Z"})
	if r.Error == nil || !strings.Contains(r.Error.Message, "did not exist at") {
		t.Errorf("a visible note as of before it existed: %s", r.Body)
	}
}

// TestNotesHaveAPastInTimeTravel: a note edited in place and then moved is read as of a time
// by recall_at_time and replay as it stood then — the former title, folder and body before the
// edit, the new ones after it, the former folder before the move — and never the one for the
// other's time.
func TestNotesHaveAPastInTimeTravel(t *testing.T) {
	c := newNotesClient(t)
	n := c.create(map[string]any{"project": "main", "path": "reisen",
		"body": "# Reiseplan\n\nAbfahrt am Montag mit der Bahn nach Kopenhagen."})
	time.Sleep(30 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(30 * time.Millisecond)
	edited := c.edit(map[string]any{"id": n.ID, "versionToken": n.VersionToken, "op": "replace",
		"content": "# Reiseplan 2027\n\nAbfahrt am Dienstag mit dem Flugzeug nach Lissabon."})
	time.Sleep(30 * time.Millisecond)
	after := time.Now().UTC()
	time.Sleep(30 * time.Millisecond)
	var moved MoveNoteResult
	structured(t, callTool(t, c.url, c.write, "knowmind_move_note", map[string]any{"id": n.ID, "versionToken": edited.VersionToken,
		"path": "archiv"}), &moved)
	if moved.Revision != edited.Revision+1 {
		t.Fatalf("a move is a revision: %d after %d", moved.Revision, edited.Revision)
	}

	recallAt := func(query string, at time.Time) *RecallAtTimeHit {
		t.Helper()
		var res RecallAtTimeResult
		structured(t, callTool(t, c.url, c.read, "knowmind_recall_at_time", map[string]any{"query": query,
			"as_of": at.Format(time.RFC3339Nano)}), &res)
		for i := range res.Hits {
			if res.Hits[i].MemoryID == n.ID {
				return &res.Hits[i]
			}
		}
		return nil
	}
	if h := recallAt("Bahn nach Kopenhagen", before); h == nil || h.Title != "Reiseplan" || !strings.Contains(h.Content, "Kopenhagen") ||
		h.ValidTo == nil || h.ValidTo.Before(before) {
		t.Fatalf("recall_at_time before the edit, the former words: %+v, want the former title and body with its valid_to", h)
	}
	if h := recallAt("Flugzeug nach Lissabon", before); h != nil {
		t.Fatalf("recall_at_time before the edit found the later words: %+v", h)
	}
	if h := recallAt("Flugzeug nach Lissabon", after); h == nil || h.Title != "Reiseplan 2027" || !strings.Contains(h.Content, "Lissabon") {
		t.Fatalf("recall_at_time after the edit, the new words: %+v", h)
	}
	if h := recallAt("Bahn nach Kopenhagen", after); h != nil {
		t.Fatalf("recall_at_time after the edit found the former words: %+v", h)
	}

	replay := func(query string, at time.Time) *knowmind.RetrievedMemory {
		t.Helper()
		args := map[string]any{"timestamp": at.Format(time.RFC3339Nano)}
		if query != "" {
			args["query"] = query
		}
		var res ReplayResult
		structured(t, callTool(t, c.url, c.read, "knowmind_replay", args), &res)
		for i := range res.Memories {
			if res.Memories[i].ID == n.ID {
				return &res.Memories[i]
			}
		}
		return nil
	}
	for _, query := range []string{"", "Kopenhagen"} {
		m := replay(query, before)
		if m == nil || m.Kind != knowmind.KindNote || m.Title != "Reiseplan" || m.Path != "reisen" ||
			!strings.Contains(m.Content, "Bahn") || m.ValidTo == nil {
			t.Fatalf("replay %q before the edit: %+v, want the revision of then", query, m)
		}
	}
	if m := replay("Lissabon", before); m != nil {
		t.Fatalf("replay before the edit matched the later words: %+v", m)
	}
	for _, query := range []string{"", "Lissabon"} {
		m := replay(query, after)
		if m == nil || m.Title != "Reiseplan 2027" || m.Path != "reisen" || !strings.Contains(m.Content, "Flugzeug") || m.ValidTo == nil {
			t.Fatalf("replay %q after the edit, before the move: %+v, want the new body in the former folder", query, m)
		}
		m = replay(query, time.Now().UTC())
		if m == nil || m.Title != "Reiseplan 2027" || m.Path != "archiv" || !strings.Contains(m.Content, "Flugzeug") || m.ValidTo != nil {
			t.Fatalf("replay %q now: %+v, want the note as it is", query, m)
		}
	}
	if m := replay("Kopenhagen", after); m != nil {
		t.Fatalf("replay after the edit matched the former words: %+v", m)
	}
	if m := replay("", before.Add(-time.Hour)); m != nil {
		t.Fatalf("replay before the note existed: %+v", m)
	}
	// explore reads the same: the folder of then beside the title and body of then.
	for _, c2 := range []struct {
		at          time.Time
		title, path string
	}{{before, "Reiseplan", "reisen"}, {after, "Reiseplan 2027", "reisen"}, {time.Now().UTC(), "Reiseplan 2027", "archiv"}} {
		var ex ExploreResult
		structured(t, callTool(t, c.url, c.read, "knowmind_explore", map[string]any{"memory_id": n.ID, "as_of": c2.at.Format(time.RFC3339Nano)}), &ex)
		if ex.Memory.Title != c2.title || ex.Path != c2.path {
			t.Errorf("explore as of %s: title %q, path %q; want %q in %q", c2.at.Format(time.RFC3339Nano), ex.Memory.Title, ex.Path, c2.title, c2.path)
		}
	}
}

package handlers

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
)

func (c *notesClient) neighbours(args map[string]any) []string {
	c.t.Helper()
	var res ExploreResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_explore", args), &res)
	ids := []string{}
	for _, n := range res.Nodes[1:] {
		ids = append(ids, n.ID)
	}
	slices.Sort(ids)
	return ids
}

func linkIDs(links []knowmind.NoteLink) []string {
	ids := []string{}
	for _, l := range links {
		ids = append(ids, l.ID+l.Title)
	}
	slices.Sort(ids)
	return ids
}

// TestNotesEditClosesDroppedLinks: an edit that takes a [[link]] out of a body closes the edge
// the link made (gone from backlinks, relations and the explorer's neighbours) and drops a
// pending forward reference; the explorer as of before the edit still shows the edge; adding the
// link again reopens it.
func TestNotesEditClosesDroppedLinks(t *testing.T) {
	c := newNotesClient(t)
	preise := c.create(map[string]any{"project": "main", "body": "# Preisliste\n\nSchrauben 2 €."})
	plan := c.create(map[string]any{"project": "main", "body": "# Lieferplan\n\nMai."})
	angebot := c.create(map[string]any{"project": "main",
		"body": "# Angebot\n\nSiehe [[Preisliste]], [[Lieferplan|den Plan]] und [[Zukunft]]."})
	if !slices.Equal(angebot.Links, []string{"Preisliste", "Lieferplan"}) || !slices.Equal(angebot.PendingLinks, []string{"Zukunft"}) {
		t.Fatalf("create = %+v", angebot)
	}
	both := []string{plan.ID, preise.ID}
	slices.Sort(both)
	if got := c.neighbours(map[string]any{"memory_id": angebot.ID}); !slices.Equal(got, both) {
		t.Fatalf("neighbours before the edit = %v, want %v", got, both)
	}
	time.Sleep(20 * time.Millisecond)
	linked := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)

	// replace keeps [[lieferplan]] (another spelling of the same link) and drops the other two.
	res := c.edit(map[string]any{"id": angebot.ID, "versionToken": angebot.VersionToken, "op": "replace",
		"content": "# Angebot\n\nSiehe nur [[lieferplan]]."})
	if !slices.Equal(res.Unlinked, []string{"Preisliste", "Zukunft"}) {
		t.Fatalf("edit unlinked %v, want [Preisliste Zukunft]", res.Unlinked)
	}
	if in := c.get(preise.ID, true).Links.In; len(in) != 0 {
		t.Fatalf("Preisliste's backlinks after the edit: %+v", in)
	}
	if in := c.get(plan.ID, true).Links.In; len(in) != 1 || in[0].ID != angebot.ID {
		t.Fatalf("Lieferplan's backlinks after the edit: %+v", in)
	}
	links := c.get(angebot.ID, true).Links
	if got := linkIDs(links.Out); !slices.Equal(got, []string{plan.ID + "Lieferplan"}) || len(links.Pending) != 0 {
		t.Fatalf("Angebot's links after the edit: %+v", links)
	}
	var rels knowmind.RelationsResult
	structured(t, callTool(t, c.url, c.read, "knowmind_list_relations", map[string]any{"memory_id": angebot.ID}), &rels)
	if len(rels.Outgoing) != 1 || rels.Outgoing[0].To != plan.ID {
		t.Fatalf("relations after the edit: %+v", rels.Outgoing)
	}
	if got := c.neighbours(map[string]any{"memory_id": angebot.ID}); !slices.Equal(got, []string{plan.ID}) {
		t.Fatalf("neighbours after the edit = %v, want only Lieferplan", got)
	}
	// Closed, not deleted: as of before the edit the edge is there.
	if got := c.neighbours(map[string]any{"memory_id": angebot.ID, "as_of": linked.Format(time.RFC3339Nano)}); !slices.Equal(got, both) {
		t.Fatalf("neighbours as of before the edit = %v, want %v", got, both)
	}
	// A note of the dropped forward title links nothing now.
	zukunft := c.create(map[string]any{"project": "main", "body": "# Zukunft\n\nSpäter."})
	if in := c.get(zukunft.ID, true).Links.In; len(in) != 0 {
		t.Fatalf("a dropped forward reference resolved: %+v", in)
	}

	// findReplace deleting the last link closes it too; append brings Preisliste back (reopened).
	res = c.edit(map[string]any{"id": angebot.ID, "versionToken": res.VersionToken, "op": "findReplace", "find": " [[lieferplan]]", "content": ""})
	if !slices.Equal(res.Unlinked, []string{"lieferplan"}) || len(c.get(plan.ID, true).Links.In) != 0 {
		t.Fatalf("findReplace: unlinked %v, Lieferplan's backlinks %+v", res.Unlinked, c.get(plan.ID, true).Links.In)
	}
	res = c.edit(map[string]any{"id": angebot.ID, "versionToken": res.VersionToken, "op": "append", "content": "Preise: [[Preisliste]]."})
	if len(res.Unlinked) != 0 || !slices.Equal(res.Links, []string{"Preisliste"}) {
		t.Fatalf("append: %+v", res)
	}
	if in := c.get(preise.ID, true).Links.In; len(in) != 1 || in[0].ID != angebot.ID {
		t.Fatalf("Preisliste's backlinks after the link came back: %+v", in)
	}
}

// TestLinkToTitle: knowmind_link names a target note by to_title (the seed's toTitle): resolved
// now through titles and aliases, or a forward reference linked when the note appears; the
// parameter errors say which parameter.
func TestLinkToTitle(t *testing.T) {
	c := newNotesClient(t)
	link := func(args map[string]any) LinkResult {
		t.Helper()
		var res LinkResult
		structured(t, callTool(t, c.url, c.write, "knowmind_link", args), &res)
		return res
	}
	von := c.create(map[string]any{"project": "main", "body": "# Workshop März\n\nMit Müller."})
	kunde := c.create(map[string]any{"project": "main", "path": "Kunden", "body": "# Müller GmbH\n\nZahnräder."})

	res := link(map[string]any{"from_id": von.ID, "to_title": "müller gmbh", "rel_type": "FOR_CLIENT"})
	if res.ToID != kunde.ID || res.Pending || res.EdgeID == "" || res.InverseEdgeID == "" {
		t.Fatalf("link by title = %+v, want an edge to %s", res, kunde.ID)
	}
	if again := link(map[string]any{"from_id": von.ID, "to_id": kunde.ID, "rel_type": "FOR_CLIENT"}); again.EdgeID != res.EdgeID {
		t.Fatalf("the same link by id has edge %s, want %s", again.EdgeID, res.EdgeID)
	}
	if in := c.get(kunde.ID, true).Links.In; len(in) != 1 || in[0].ID != von.ID || in[0].RelType != "FOR_CLIENT" {
		t.Fatalf("Müller's backlinks: %+v", in)
	}

	// No note of the title yet: pending, resolved when it is created.
	res = link(map[string]any{"from_id": von.ID, "to_title": "Protokoll März", "rel_type": "REFERENCES"})
	if !res.Pending || res.EdgeID != "" || res.ToID != "" {
		t.Fatalf("link to a title no note has = %+v, want pending", res)
	}
	if p := c.get(von.ID, true).Links.Pending; len(p) != 1 || p[0].Title != "Protokoll März" {
		t.Fatalf("pending links %+v", p)
	}
	protokoll := c.create(map[string]any{"project": "main", "body": "# Protokoll März\n\nBeschlüsse."})
	if in := c.get(protokoll.ID, true).Links.In; len(in) != 1 || in[0].ID != von.ID {
		t.Fatalf("the forward link did not resolve: %+v", in)
	}

	// A second project's note of the same title is not a target.
	ten := tenantOf(t, c.tenant)
	if _, err := ten.CreateProject(t.Context(), "privat", "Privat"); err != nil {
		t.Fatal(err)
	}
	c.create(map[string]any{"project": "privat", "body": "# Nur privat\n\nX."})
	if res := link(map[string]any{"from_id": von.ID, "to_title": "Nur privat", "rel_type": "REFERENCES"}); !res.Pending {
		t.Fatalf("a title of another project resolved: %+v", res)
	}

	for name, tc := range map[string]struct {
		args  map[string]any
		code  int64
		param string
	}{
		"neither to_id nor to_title": {map[string]any{"from_id": von.ID, "rel_type": "REFERENCES"}, jsonrpc.CodeInvalidParams, "to_id"},
		"both":                       {map[string]any{"from_id": von.ID, "to_id": kunde.ID, "to_title": "Müller GmbH", "rel_type": "REFERENCES"}, jsonrpc.CodeInvalidParams, "to_title"},
		"blank to_title":             {map[string]any{"from_id": von.ID, "to_title": "  ", "rel_type": "REFERENCES"}, jsonrpc.CodeInvalidParams, "to_title"},
		"to_title too long":          {map[string]any{"from_id": von.ID, "to_title": strings.Repeat("x", knowmind.MaxTitleChars+1), "rel_type": "REFERENCES"}, jsonrpc.CodeInvalidParams, "to_title"},
		"from a memory, not a note":  {map[string]any{"from_id": "memory_nope", "to_title": "Müller GmbH", "rel_type": "REFERENCES"}, codeNotFound, ""},
	} {
		t.Run(name, func(t *testing.T) {
			wantRPCError(t, callTool(t, c.url, c.write, "knowmind_link", tc.args), tc.code, tc.param)
		})
	}
}

// TestCreateNoteReportsDroppedLinks: a link create_note could not make (SUPERSEDES, which only
// update_fact writes; a note of another project) comes back in linksDropped with its reason,
// and [[links]] past the cap are counted in linksTruncated; the note and its other links stand.
func TestCreateNoteReportsDroppedLinks(t *testing.T) {
	c := newNotesClient(t)
	if _, err := tenantOf(t, c.tenant).CreateProject(t.Context(), "andere", "Andere"); err != nil {
		t.Fatal(err)
	}
	target := c.create(map[string]any{"project": "main", "body": "# Ziel\n\nDas Ziel."})
	elsewhere := c.create(map[string]any{"project": "andere", "body": "# Anderswo\n\nIn einem anderen Projekt."})
	var body strings.Builder
	body.WriteString("# Viele Links\n\n[[Ziel]]")
	for i := range knowmind.MaxWikiLinksPerNote + 7 {
		fmt.Fprintf(&body, " [[Fehlt %d]]", i)
	}
	res := c.create(map[string]any{"project": "main", "body": body.String(), "links": []map[string]any{
		{"relType": "SUPERSEDES", "to": target.ID},
		{"relType": "RELATES_TO", "to": elsewhere.ID},
		{"relType": "RELATES_TO", "to": target.ID},
	}})
	if res.LinksTruncated != 8 { // 208 titles in the body, the cap links the first 200
		t.Errorf("linksTruncated = %d, want 8", res.LinksTruncated)
	}
	if len(res.LinksDropped) != 2 {
		t.Fatalf("linksDropped = %+v, want the SUPERSEDES link and the one to another project", res.LinksDropped)
	}
	if d := res.LinksDropped[0]; d.RelType != "SUPERSEDES" || d.To != target.ID || !strings.Contains(d.Reason, "SUPERSEDES") {
		t.Errorf("dropped SUPERSEDES link: %+v", d)
	}
	if d := res.LinksDropped[1]; d.RelType != "RELATES_TO" || d.To != elsewhere.ID || !strings.Contains(d.Reason, "project") {
		t.Errorf("dropped cross-project link: %+v", d)
	}
	if !slices.Contains(res.Links, target.ID) || !slices.Contains(res.Links, "Ziel") || len(res.PendingLinks) != knowmind.MaxWikiLinksPerNote-1 {
		t.Errorf("links %v, %d pending", res.Links, len(res.PendingLinks))
	}
	// An edit reports the same way.
	edited := c.edit(map[string]any{"id": res.ID, "versionToken": res.VersionToken, "op": "append", "content": " [[Noch einer]]"})
	if edited.LinksTruncated != 9 {
		t.Errorf("edit: linksTruncated = %d, want 9", edited.LinksTruncated)
	}
}

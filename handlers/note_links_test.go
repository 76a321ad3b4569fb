package handlers

import (
	"slices"
	"testing"
	"time"

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

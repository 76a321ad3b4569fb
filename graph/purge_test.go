package graph_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestPurgeErasesOnlyWhatEndedBeforeTheRetention: writes keep every superseded version,
// revision and trashed note; a purge with a cutoff before they ended erases nothing, a dry run
// counts without erasing, and a purge after them erases exactly those — the current versions,
// their moved relations, a fact closed without a successor and the current notes stay.
func TestPurgeErasesOnlyWhatEndedBeforeTheRetention(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	old := storeText(t, ten, "Das Büro ist in Bielefeld.")
	peer := storeText(t, ten, "Der Mietvertrag für das Büro.")
	if _, err := ten.Link(ctx, old, peer, "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	ended := storeText(t, ten, "Die Baustelle am Hauptbahnhof.")
	dgraphtest.Upsert(t, ten, fmt.Sprintf(`{ e as var(func: eq(Memory.id, %q)) }`, ended), nil,
		`uid(e) <Memory.valid_to> "2020-01-01T00:00:00Z" .`) // ended in the world, never superseded
	note := createNote(t, ten, "", "# Reiseplan\n\nMit der Bahn.")
	trashed := createNote(t, ten, "", "# Altlast\n\nVeraltet.")
	time.Sleep(30 * time.Millisecond)
	beforeWrites := time.Now().UTC()
	time.Sleep(30 * time.Millisecond)

	up, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: old, NewTitle: "Büro", NewContent: "Das Büro ist in Hamburg."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: note.ID, VersionToken: note.VersionToken, Op: knowmind.EditReplace,
		Content: "# Reiseplan\n\nMit dem Flugzeug.", Actor: notesAgent}); err != nil {
		t.Fatal(err)
	}
	if err := ten.TrashNote(ctx, notesScope, trashed.ID, "", notesAgent); err != nil {
		t.Fatal(err)
	}
	exists := func(id string) bool {
		t.Helper()
		var out struct{ M []struct{ UID string } }
		dgraphtest.Query(t, ten, `query q($id: string) { m(func: eq(Memory.id, $id)) { uid } }`, map[string]string{"$id": id}, &out)
		return len(out.M) > 0
	}
	if !exists(old) || !exists(trashed.ID) {
		t.Fatal("a write erased what it replaced")
	}

	if res, err := ten.Purge(ctx, beforeWrites, false); err != nil || res.Versions+res.Revisions+res.TrashedNotes != 0 {
		t.Fatalf("purge before anything ended: %+v %v, want nothing erased", res, err)
	}
	now := time.Now().UTC().Add(time.Second)
	dry, err := ten.Purge(ctx, now, true)
	if err != nil || dry.Versions != 1 || dry.Revisions != 1 || dry.TrashedNotes != 1 || !dry.DryRun {
		t.Fatalf("dry run: %+v %v, want 1 version, 1 revision, 1 trashed note", dry, err)
	}
	if !exists(old) || !exists(trashed.ID) {
		t.Fatal("the dry run erased something")
	}
	res, err := ten.Purge(ctx, now, false)
	if err != nil || res.Versions != 1 || res.Revisions != 1 || res.TrashedNotes != 1 {
		t.Fatalf("purge: %+v %v", res, err)
	}
	if exists(old) || exists(trashed.ID) {
		t.Fatal("the superseded version or the trashed note survived the purge")
	}
	if !exists(up.NewMemoryID) || !exists(ended) || !exists(peer) {
		t.Fatal("the purge erased a current version, a peer, or a fact closed without a successor")
	}
	rels, err := ten.ListRelations(ctx, up.NewMemoryID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels.Outgoing) != 1 || rels.Outgoing[0].RelType != "REFERENCES" || rels.Outgoing[0].To != peer || rels.Outgoing[0].ValidTo != nil {
		t.Fatalf("the current version's relations after the purge: %+v, want REFERENCES %s only (SUPERSEDES went with the old version)", rels.Outgoing, peer)
	}
	peerRels, err := ten.ListRelations(ctx, peer)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range peerRels.Incoming {
		if e.From == old {
			t.Fatalf("an edge from the erased version survived: %+v", e)
		}
	}
	n, err := ten.GetNote(ctx, notesScope, note.ID, "", false)
	if err != nil || n.Content != "# Reiseplan\n\nMit dem Flugzeug." {
		t.Fatalf("the current note after the purge: %+v %v", n, err)
	}
	if revs, err := ten.Revisions(ctx, notesScope, note.ID); err != nil || len(revs) != 0 {
		t.Fatalf("revisions after the purge: %+v %v", revs, err)
	}
	if again, err := ten.Purge(ctx, now, false); err != nil || again.Versions+again.Revisions+again.TrashedNotes != 0 {
		t.Fatalf("a second purge: %+v %v, want nothing left", again, err)
	}
}

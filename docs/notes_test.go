package docs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestNotesQueryShowsNoteRevisionsAndLinks runs queries/notes.dql (docs/notes.md) on notes
// written as the tools write them: the note, its two former bodies, its links both ways and a
// link still waiting for its title.
func TestNotesQueryShowsNoteRevisionsAndLinks(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	scope := knowmind.NoteScope{Principal: "tok:docs"}
	agent := knowmind.Actor{Principal: "tok:docs", Via: "knowmind_create_note"}
	kunde, err := ten.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: "main", Path: "Kunden/Müller", Class: knowmind.ClassUserDoc, Actor: agent,
		Body: "# Kundenakte Müller\n\nRahmenvertrag: [[Rahmenvertrag]]. Offen: [[Angebot 2027]]."})
	if err != nil {
		t.Fatal(err)
	}
	version := kunde.VersionToken
	for _, line := range []string{"Workshop am 12. März.", "Audit am 20. April."} {
		res, err := ten.EditNote(ctx, scope, knowmind.EditNoteInput{ID: kunde.ID, VersionToken: version, Op: knowmind.EditAppend, Content: line, Actor: agent})
		if err != nil {
			t.Fatal(err)
		}
		version = res.VersionToken
	}
	vertrag, err := ten.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: "main", Path: "Verträge", Class: knowmind.ClassUserDoc, Actor: agent,
		Body: "# Rahmenvertrag\n\nLaufzeit bis 2027, siehe [[Kundenakte Müller]]."})
	if err != nil {
		t.Fatal(err)
	}

	out := runQuery(t, dgraphtest.Conn(t, ten), "queries/notes.dql")
	raw, _ := json.Marshal(out["note"])
	var notes []struct {
		ID        string `json:"Memory.id"`
		Version   string `json:"Note.version"`
		Revisions []struct {
			Revision int    `json:"Revision.revision"`
			Body     string `json:"Revision.body"`
		} `json:"revisions"`
		LinksTo []struct {
			ID string `json:"Memory.id"`
		} `json:"links_to"`
		LinkedFrom []struct {
			ID string `json:"Memory.id"`
		} `json:"linked_from"`
		Pending []struct {
			Title string `json:"Forward.title"`
		} `json:"pending"`
	}
	if err := json.Unmarshal(raw, &notes); err != nil || len(notes) != 1 {
		t.Fatalf("note block: %s (%v)", raw, err)
	}
	n := notes[0]
	if n.ID != kunde.ID || n.Version != version || len(n.Revisions) != 2 || n.Revisions[0].Revision != 2 ||
		!strings.Contains(n.Revisions[0].Body, "Workshop") || strings.Contains(n.Revisions[1].Body, "Workshop") {
		t.Fatalf("note and revisions: %s", raw)
	}
	if len(n.LinksTo) != 1 || n.LinksTo[0].ID != vertrag.ID || len(n.LinkedFrom) != 1 || n.LinkedFrom[0].ID != vertrag.ID ||
		len(n.Pending) != 1 || n.Pending[0].Title != "Angebot 2027" {
		t.Fatalf("links: %s", raw)
	}
}

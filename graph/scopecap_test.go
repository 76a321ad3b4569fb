package graph_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestTimeQueriesScopeBeforeCap: recall_at_time and replay cap the revisions and notes they
// read; the caller's scope applies before the cap, so a token limited to one project finds its
// notes however many notes of another project hold the same words.
func TestTimeQueriesScopeBeforeCap(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	for _, p := range []string{"alpha", "beta"} {
		if _, err := ten.CreateProject(ctx, p, p); err != nil {
			t.Fatal(err)
		}
	}
	create := func(project, body string) knowmind.NoteWriteResult {
		t.Helper()
		res, err := ten.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: project, Body: body,
			Class: knowmind.ClassUserDoc, Actor: notesAgent})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	edit := func(n knowmind.NoteWriteResult, body string) {
		t.Helper()
		if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken,
			Op: knowmind.EditReplace, Content: body, Actor: notesAgent}); err != nil {
			t.Fatal(err)
		}
	}
	kept := create("alpha", "# Leuchtturm Nord\n\nDer Leuchtturm steht auf der Klippe am Hafen.")
	edited := create("alpha", "# Leuchtturm Süd\n\nDer Leuchtturm am Strand wird im Sommer gestrichen.")
	var others []knowmind.NoteWriteResult
	for i := range 4*knowmind.RetrieveMaxLimit + 60 {
		others = append(others, create("beta", fmt.Sprintf("# Leuchtturm %d\n\nDer Leuchtturm Nummer %d steht an der Küste.", i, i)))
	}
	time.Sleep(30 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(30 * time.Millisecond)
	for i, n := range others[:55] { // their revisions are stored before the alpha note's
		edit(n, fmt.Sprintf("# Turm %d\n\nAbgerissen und durch eine Boje ersetzt.", i))
	}
	edit(edited, "# Turm Süd\n\nAbgerissen und durch eine Boje ersetzt.")

	scope := knowmind.NoteScope{Projects: []string{"alpha"}, Principal: "tok:alpha"}
	sctx := knowmind.WithNoteScope(ctx, scope)
	asOf := before
	res, err := ten.RecallVisible(sctx, scope, knowmind.RecallQuery{Query: "Leuchtturm", K: 10, AsOf: &asOf, MinScore: knowmind.RecallMinScore})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Hits, func(h knowmind.RecallHit) bool { return h.MemoryID == edited.ID && h.ValidTo != nil }) {
		t.Errorf("recall_at_time as alpha: %+v, want the edited alpha note's former body", res.Hits)
	}
	rep, err := ten.Replay(sctx, knowmind.ReplayQuery{At: before, Query: "Leuchtturm", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range rep.Memories {
		ids = append(ids, m.ID)
	}
	if !slices.Contains(ids, kept.ID) || !slices.Contains(ids, edited.ID) || len(ids) != 2 {
		t.Errorf("replay as alpha: %v, want the alpha notes %s and %s", ids, kept.ID, edited.ID)
	}
}

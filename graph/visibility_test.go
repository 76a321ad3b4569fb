package graph_test

import (
	"context"
	"slices"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestVisibilityFromContext: the scope a call carries in its context limits every method that
// takes an id — a note of a project outside it, or any note for a scope without the notes
// toolset, is not found, and edges to it are left out — while a context without one (the
// service itself) sees the whole tenant. update_fact refuses notes either way.
func TestVisibilityFromContext(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	if _, err := ten.CreateProject(ctx, "geheim", "Geheim"); err != nil {
		t.Fatal(err)
	}
	secret, err := ten.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: "geheim", Body: "# Geheim\n\nText.",
		Class: knowmind.ClassUserDoc, Actor: notesAgent})
	if err != nil {
		t.Fatal(err)
	}
	open := createNote(t, ten, "", "# Offen\n\nText.")
	mem, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Kunde", Content: "Der Kunde zahlt."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Link(ctx, mem.ID, secret.ID, "REFERENCES"); err != nil { // no scope: the service links anything
		t.Fatal(err)
	}
	if _, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: open.ID, NewTitle: "x", NewContent: "y"}); knowmind.ErrorCode(err) != knowmind.EINVALID {
		t.Fatalf("update_fact of a note: %v, want EINVALID", err)
	}

	for name, scope := range map[string]knowmind.NoteScope{
		"project main": {Projects: []string{"main"}, Principal: "tok:other"},
		"memory only":  {Principal: "tok:other", Toolsets: []string{knowmind.ToolsetMemory}},
	} {
		sctx := knowmind.WithNoteScope(ctx, scope)
		notFound := func(what string, err error) {
			t.Helper()
			if knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
				t.Errorf("%s: %s = %v, want ENOTFOUND", name, what, err)
			}
		}
		_, err := ten.UpdateFact(sctx, knowmind.UpdateFactInput{TargetID: secret.ID, NewTitle: "x", NewContent: "y"})
		notFound("update_fact", err)
		_, err = ten.Link(sctx, open.ID, secret.ID, "RELATES_TO")
		notFound("link", err)
		_, err = ten.Unlink(sctx, mem.ID, secret.ID, "REFERENCES")
		notFound("unlink", err)
		_, err = ten.ListRelations(sctx, secret.ID)
		notFound("list_relations", err)
		_, err = ten.Explore(sctx, knowmind.ExploreQuery{MemoryID: secret.ID, Hops: 1})
		notFound("explore", err)
		rels, err := ten.ListRelations(sctx, mem.ID)
		if err != nil || len(rels.Outgoing) != 0 {
			t.Errorf("%s: relations of the memory %+v %v, want the edge to the secret note left out", name, rels, err)
		}
	}
	// The edge stands, and the service still sees it.
	rels, err := ten.ListRelations(ctx, mem.ID)
	if err != nil || !slices.ContainsFunc(rels.Outgoing, func(e knowmind.OutEdge) bool { return e.To == secret.ID }) {
		t.Fatalf("relations %+v %v", rels, err)
	}
}

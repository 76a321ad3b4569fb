package graph_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/schema"
)

// TestRevisionTextMigration: revisions written before they carried their searchable text get
// it once when the tenant is opened, so replay and recall_at_time find their words.
func TestRevisionTextMigration(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	n := createNote(t, ten, "", "# Reiseplan\n\nAbfahrt am Montag mit der Bahn nach Kopenhagen.")
	time.Sleep(30 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(30 * time.Millisecond)
	if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken, Op: knowmind.EditReplace,
		Content: "# Reiseplan\n\nAbfahrt am Dienstag mit dem Flugzeug nach Lissabon.", Actor: notesAgent}); err != nil {
		t.Fatal(err)
	}
	// The store as the version before wrote it: revisions without their text, schema 8.
	if _, err := dgraphtest.DG(t, ten).NewTxn().Do(ctx, &api.Request{
		Query: `{ r as var(func: has(Revision.body))  meta as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{
			{DelNquads: []byte("uid(r) <Revision.text> * .\nuid(r) <Revision.path> * .")},
			{SetNquads: []byte(`uid(meta) <Meta.schema_version> "8" .`)},
		},
		CommitNow: true,
	}); err != nil {
		t.Fatal(err)
	}
	replay := func(ten *graph.Tenant) []knowmind.RetrievedMemory {
		t.Helper()
		res, err := ten.Replay(ctx, knowmind.ReplayQuery{At: before, Query: "Kopenhagen", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return res.Memories
	}
	if ms := replay(ten); len(ms) != 0 {
		t.Fatalf("the old store's revision was found by its words: %+v", ms)
	}

	reopened := dgraphtest.Reopen(t, name)
	if v, err := graph.SchemaVersion(ctx, dgraphtest.DG(t, reopened)); err != nil || v != schema.Version {
		t.Fatalf("schema version after the migration: %d, %v", v, err)
	}
	ms := replay(reopened)
	if len(ms) != 1 || ms[0].ID != n.ID || !strings.Contains(ms[0].Content, "Bahn") || ms[0].ValidTo == nil {
		t.Fatalf("replay before the edit after the migration: %+v, want the former body", ms)
	}
	asOf := before
	res, err := reopened.Recall(ctx, knowmind.RecallQuery{Query: "Bahn nach Kopenhagen", K: 5, AsOf: &asOf, MinScore: knowmind.RecallMinScore})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].MemoryID != n.ID || !strings.Contains(res.Hits[0].Content, "Kopenhagen") {
		t.Fatalf("recall as of before the edit after the migration: %+v", res.Hits)
	}
}

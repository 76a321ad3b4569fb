package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/schema"
)

// Issue 13: recall reads a candidate's Memory.preview, not its content;
// memories stored before previews existed had none. Opening their tenant
// with this version writes one for each, once; and a note edit's preview
// follows the new text.
func TestPreviewBackfill(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Vorschau aus alter Zeit. ", 400) // 10,000 characters
	for _, c := range []string{"Kurz und alt.", long, "Noch eine alte Erinnerung."} {
		if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	note := createNote(t, ten, "", "# Vorher\n\nAlter Text.")
	// As a version before schema 5 left them: no previews, version 4 recorded.
	if _, err := dgraphtest.DG(t, ten).NewTxn().Do(ctx, &api.Request{
		Query: `{ m as var(func: has(Memory.preview))  meta as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{
			{DelNquads: []byte(`uid(m) <Memory.preview> * .`)},
			{SetNquads: []byte(`uid(meta) <Meta.schema_version> "4" .`)},
		},
		CommitNow: true,
	}); err != nil {
		t.Fatal(err)
	}
	if n := previews(t, ten); len(n) != 0 {
		t.Fatalf("previews left: %v", n)
	}

	reopened := dgraphtest.Reopen(t, name)
	got := previews(t, reopened)
	if len(got) != 4 {
		t.Fatalf("previews after reopening: %d of 4: %v", len(got), got)
	}
	for content, preview := range got {
		if preview != runes.Truncate(content, knowmind.RecallMaxContentChars) || preview == "" {
			t.Errorf("preview of %.40q: %.60q", content, preview)
		}
	}
	if v, err := graph.SchemaVersion(ctx, dgraphtest.DG(t, reopened)); err != nil || v != schema.Version {
		t.Fatalf("schema version after the backfill: %d, %v", v, err)
	}

	// An edit writes the preview of the new text.
	if _, err := reopened.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: note.ID, VersionToken: note.VersionToken,
		Op: knowmind.EditReplace, Content: "# Nachher\n\nNeuer Text.", Actor: notesAgent}); err != nil {
		t.Fatal(err)
	}
	for content, preview := range previews(t, reopened) {
		if strings.Contains(content, "Nachher") != strings.Contains(preview, "Nachher") {
			t.Errorf("after the edit: content %q, preview %q", content, preview)
		}
	}
}

// previews maps each memory's content to its preview (those that have one).
func previews(t *testing.T, ten *graph.Tenant) map[string]string {
	t.Helper()
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().Query(context.Background(), `{ m(func: has(Memory.preview)) { Memory.content Memory.preview } }`)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		M []struct {
			Content string `json:"Memory.content"`
			Preview string `json:"Memory.preview"`
		}
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, x := range out.M {
		m[x.Content] = x.Preview
	}
	return m
}

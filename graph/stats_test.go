package graph_test

import (
	"context"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

func TestStatsEmptyAndCounts(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	st, err := ten.Stats(ctx)
	if err != nil || st != (knowmind.Stats{}) {
		t.Fatalf("empty tenant: %+v, %v", st, err)
	}
	if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Eins."}); err != nil {
		t.Fatal(err)
	}
	if _, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: handbookV1}); err != nil {
		t.Fatal(err)
	}
	// A failed memory counts as a memory but has no chunk.
	withBrokenEmbedder(t, ten).StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Zwei."})
	st, err = ten.Stats(ctx)
	if err != nil || st != (knowmind.Stats{Memories: 3, Edges: 0, Chunks: 4}) {
		t.Fatalf("stats = %+v, %v", st, err)
	}
}

// edges is the number of current relations: a link counts once (not its
// materialised inverse), an unlinked one not at all.
func TestStatsEdgesCountCurrentRelationsOnce(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	var ids []string
	for _, c := range []string{"Workshop am 12. März.", "Müller GmbH ist Kundin.", "QM-Handbuch."} {
		r, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: c})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	edges := func() int64 {
		t.Helper()
		st, err := ten.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Edges
	}
	for _, l := range [][3]string{{ids[0], "FOR_CLIENT", ids[1]}, {ids[0], "REFERENCES", ids[2]}, {ids[1], "RELATES_TO", ids[2]}} {
		if _, err := ten.Link(ctx, l[0], l[2], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	if n := edges(); n != 3 {
		t.Fatalf("3 links (one symmetric): edges = %d, want 3", n)
	}
	if _, err := ten.Unlink(ctx, ids[0], ids[2], "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	if n := edges(); n != 2 {
		t.Fatalf("after one unlink: edges = %d, want 2 (closed edges are history, not relations)", n)
	}
}

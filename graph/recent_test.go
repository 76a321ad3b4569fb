package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

func TestListRecentNewestFirst(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	var ids []string
	for i := range 4 {
		res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: fmt.Sprint("Notiz ", i), Content: fmt.Sprint("Inhalt Nummer ", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	doc, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: handbookV1})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, doc.ID)

	items, err := ten.ListRecent(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0].ID != ids[4] || items[1].ID != ids[3] || items[2].ID != ids[2] {
		t.Fatalf("items = %+v", items)
	}
	d := items[0]
	if d.Title != "Handbuch" || d.Kind != knowmind.KindDocument || d.Status != knowmind.StatusIndexed ||
		d.IndexedChunks != 3 || d.CreatedAt.IsZero() || !d.UpdatedAt.Equal(d.CreatedAt) {
		t.Errorf("document item = %+v", d)
	}
	if items[1].Kind != knowmind.KindMemory || items[1].IndexedChunks != 1 || items[1].Title != "Notiz 3" {
		t.Errorf("memory item = %+v", items[1])
	}
	all, err := ten.ListRecent(ctx, graph.MaxRecent)
	if err != nil || len(all) != 5 {
		t.Fatalf("k=50: %d items, %v", len(all), err)
	}
	for _, k := range []int{0, -1, graph.MaxRecent + 1} {
		_, err := ten.ListRecent(ctx, k)
		wantError(t, err, knowmind.EINVALID, "", "k")
	}
}

// list_recent pages with a cursor through every entry once, newest first,
// even when several share a created_at; superseded versions carry valid_to.
func TestListRecentPages(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	same := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var nodes []map[string]any
	for i := range 5 { // five entries of one instant, as a batch import leaves them
		nodes = append(nodes, map[string]any{"uid": fmt.Sprint("_:m", i), "dgraph.type": "Memory",
			"Memory.id": fmt.Sprint("same-", i), "Memory.kind": knowmind.KindMemory, "Memory.title": fmt.Sprint("Gleichzeitig ", i),
			"Memory.status": knowmind.StatusIndexed, "Memory.created_at": same.Format(time.RFC3339Nano),
			"Memory.updated_at": same.Format(time.RFC3339Nano), "Memory.valid_from": same.Format(time.RFC3339Nano)})
	}
	dgraphtest.SetJSON(t, ten, nodes)
	old, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Anschrift", Content: "Hauptstraße 1."})
	if err != nil {
		t.Fatal(err)
	}
	upd, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: old.ID, NewTitle: "Anschrift neu", NewContent: "Industriestraße 7."})
	if err != nil {
		t.Fatal(err)
	}

	var ids []string
	var pages int
	validTo := map[string]*time.Time{}
	for cursor := ""; ; pages++ {
		p, err := ten.ListRecentPage(ctx, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 7 || len(p.Items) == 0 || len(p.Items) > 2 {
			t.Fatalf("page %d: %d items, total %d", pages, len(p.Items), p.Total)
		}
		for _, it := range p.Items {
			ids = append(ids, it.ID)
			validTo[it.ID] = it.ValidTo
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if pages != 3 || len(ids) != 7 || ids[0] != upd.NewMemoryID || ids[1] != old.ID {
		t.Fatalf("%d pages, ids %v; want 7 entries newest first in 4 pages", pages+1, ids)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("%s listed twice: %v", id, ids)
		}
		seen[id] = true
	}
	if validTo[old.ID] == nil || validTo[upd.NewMemoryID] != nil {
		t.Errorf("valid_to: old %v, current %v; want the superseded version closed, the current open", validTo[old.ID], validTo[upd.NewMemoryID])
	}
	for _, bad := range []string{"nonsense", "MjAyNnwx", strings.Repeat("A", 201)} {
		_, err := ten.ListRecentPage(ctx, 2, bad)
		wantError(t, err, knowmind.EINVALID, "", "cursor")
	}
}

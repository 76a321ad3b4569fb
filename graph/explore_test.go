package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// exploreGraph is a small client graph: a workshop for the client, the
// client's address (updated once) and a contract referencing the workshop.
type exploreGraph struct {
	client, workshop, address, newAddress, contract string
	beforeUpdate, beforeUnlink                      time.Time
}

func seedExploreGraph(t *testing.T, ten *graph.Tenant) exploreGraph {
	t.Helper()
	ctx := context.Background()
	store := func(title, content string, tags ...string) string {
		r, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: content, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return r.MemoryID
	}
	link := func(from, to, rel string) {
		if _, err := ten.Link(ctx, from, to, rel); err != nil {
			t.Fatal(err)
		}
	}
	var g exploreGraph
	cr, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Müller GmbH",
		Content: "Kunde Müller GmbH, Maschinenbau in Göttingen.", Tags: []string{"class:client"},
		Entities: []knowmind.CandidateEntity{{Type: "organisation", Name: "Müller GmbH"}, {Type: "place", Name: "Göttingen"}}})
	if err != nil {
		t.Fatal(err)
	}
	g.client = cr.MemoryID
	g.workshop = store("Workshop Qualitätssicherung", "Zweitägiger Workshop für die Müller GmbH.")
	g.address = store("Adresse Müller GmbH", "Hauptstraße 1, 37073 Göttingen")
	doc, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Rahmenvertrag Müller",
		Content: "# Leistungen\n\nDer Workshop umfasst zwei Tage Schulung.\n\n# Vergütung\n\nTagessatz 1.800 € zuzüglich Spesen."})
	if err != nil {
		t.Fatal(err)
	}
	g.contract = doc.MemoryID
	link(g.workshop, g.client, "FOR_CLIENT")
	link(g.address, g.client, "PART_OF")
	link(g.contract, g.workshop, "REFERENCES")
	time.Sleep(20 * time.Millisecond)
	g.beforeUpdate = time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	up, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: g.address, NewTitle: "Adresse Müller GmbH",
		NewContent: "Weender Landstraße 5, 37075 Göttingen", UpdateReason: "umgezogen"})
	if err != nil {
		t.Fatal(err)
	}
	g.newAddress = up.NewMemoryID
	time.Sleep(20 * time.Millisecond)
	g.beforeUnlink = time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	if _, err := ten.Unlink(ctx, g.contract, g.workshop, "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	return g
}

func nodeIDs(r knowmind.ExploreResult) []string {
	var ids []string
	for _, n := range r.Nodes {
		ids = append(ids, n.ID)
	}
	return ids
}

func hasEdge(r knowmind.ExploreResult, from, rel, to string) bool {
	return slices.ContainsFunc(r.Edges, func(e knowmind.ExploreEdge) bool {
		return e.From == from && e.RelType == rel && e.To == to
	})
}

func TestExplore(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	g := seedExploreGraph(t, ten)
	explore := func(id string, hops int, asOf *time.Time) knowmind.ExploreResult {
		t.Helper()
		r, err := ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: id, Hops: hops, AsOf: asOf})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("one hop, now: incoming links in their own direction, each once", func(t *testing.T) {
		r := explore(g.client, 1, nil)
		if r.Memory.ID != g.client || r.Memory.Title != "Müller GmbH" || !strings.Contains(r.Memory.Content, "Göttingen") {
			t.Fatalf("centre = %+v", r.Memory)
		}
		if got := nodeIDs(r); len(got) != 3 || got[0] != g.client || !slices.Contains(got, g.workshop) || !slices.Contains(got, g.newAddress) {
			t.Fatalf("nodes = %v, want the client, the workshop and the current address (its link moved with the update)", got)
		}
		for _, n := range r.Nodes {
			if n.ValidTo != nil || (n.Hop == 0) != (n.ID == g.client) {
				t.Fatalf("node %+v: nothing closed now, only the centre is hop 0", n)
			}
		}
		if len(r.Edges) != 2 || !hasEdge(r, g.workshop, "FOR_CLIENT", g.client) || r.Edges[0].InverseType != "HAS_WORKSHOP" {
			t.Fatalf("edges = %+v, want workshop FOR_CLIENT client (inverse HAS_WORKSHOP)", r.Edges)
		}
		if want := graph.EdgeID(g.workshop, "FOR_CLIENT", g.client); r.Edges[0].ID != want {
			t.Fatalf("edge id %s, want the id link returned (%s)", r.Edges[0].ID, want)
		}
		want := []knowmind.ExploreEntity{{Type: "organisation", ID: knowmind.EntitySlug("Müller GmbH"), Name: "Müller GmbH"},
			{Type: "place", ID: knowmind.EntitySlug("Göttingen"), Name: "Göttingen"}}
		if !slices.Equal(r.Entities, want) {
			t.Fatalf("entities = %+v, want %+v (key order)", r.Entities, want)
		}
		if w := explore(g.workshop, 1, nil); w.Entities == nil || len(w.Entities) != 0 {
			t.Fatalf("a memory naming no entity: entities %#v, want []", w.Entities)
		}
	})

	t.Run("two hops reach the address history; the unlinked contract is gone now", func(t *testing.T) {
		r := explore(g.client, 2, nil)
		ids := nodeIDs(r)
		if slices.Contains(ids, g.contract) {
			t.Fatalf("nodes %v hold the contract, whose link was closed", ids)
		}
		if !slices.Contains(ids, g.newAddress) || !hasEdge(r, g.newAddress, "PART_OF", g.client) || hasEdge(r, g.address, "PART_OF", g.client) {
			t.Fatalf("nodes %v / edges %+v: want the current address over PART_OF at hop 1", ids, r.Edges)
		}
		if !slices.Contains(ids, g.address) || !hasEdge(r, g.newAddress, "SUPERSEDES", g.address) {
			t.Fatalf("nodes %v: want the old address at hop 2 over SUPERSEDES", ids)
		}
	})

	t.Run("as of before the unlink the contract is there", func(t *testing.T) {
		r := explore(g.client, 2, &g.beforeUnlink)
		if !slices.Contains(nodeIDs(r), g.contract) || !hasEdge(r, g.contract, "REFERENCES", g.workshop) {
			t.Fatalf("nodes %v edges %+v: want the contract REFERENCES the workshop", nodeIDs(r), r.Edges)
		}
	})

	t.Run("version chain and the version valid as of a time", func(t *testing.T) {
		r := explore(g.newAddress, 1, nil)
		if len(r.Versions) != 2 || r.Versions[0].ID != g.address || r.Versions[1].ID != g.newAddress {
			t.Fatalf("versions = %+v, want old then new", r.Versions)
		}
		if r.Versions[0].ValidTo == nil || r.Versions[1].UpdateReason != "umgezogen" || r.Versions[1].ValidTo != nil {
			t.Fatalf("versions = %+v: old closed, new open with the reason", r.Versions)
		}
		if !strings.Contains(r.Memory.Content, "Weender") || !hasEdge(r, g.newAddress, "SUPERSEDES", g.address) {
			t.Fatalf("now: %q, edges %+v", r.Memory.Content, r.Edges)
		}
		old := explore(g.newAddress, 1, &g.beforeUpdate)
		if old.Memory.ID != g.address || old.RequestedID != g.newAddress || !strings.Contains(old.Memory.Content, "Hauptstraße") {
			t.Fatalf("as of before the update: centre %s (%q), requested %q", old.Memory.ID, old.Memory.Content, old.RequestedID)
		}
		if len(old.Versions) != 2 {
			t.Fatalf("the chain is the same whatever as_of: %+v", old.Versions)
		}
		if slices.Contains(nodeIDs(old), g.newAddress) || !slices.Contains(nodeIDs(old), g.client) {
			t.Fatalf("as of before the update: nodes %v, want the client and not the later version", nodeIDs(old))
		}
	})

	t.Run("a document shows its chunks in order", func(t *testing.T) {
		r := explore(g.contract, 1, nil)
		if r.Memory.Kind != knowmind.KindDocument || len(r.Chunks) != 2 {
			t.Fatalf("kind %s chunks %+v", r.Memory.Kind, r.Chunks)
		}
		if r.Chunks[0].Heading != "Leistungen" || !strings.Contains(r.Chunks[1].Text, "1.800 €") {
			t.Fatalf("chunks = %+v", r.Chunks)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: "mem_none", Hops: 1})
		if e := knowmind.AsError(err); e == nil || e.Code != knowmind.ENOTFOUND {
			t.Fatalf("unknown id: %v", err)
		}
		_, err = ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: g.client, Hops: 4})
		if e := knowmind.AsError(err); e == nil || e.Code != knowmind.EINVALID || e.Param != "hops" {
			t.Fatalf("hops 4: %v", err)
		}
	})
}

// BenchmarkExplore measures knowmind_explore's graph part on a tree of
// OWNS links written as link writes them (both directions, facets): 20
// neighbours, 3 each below them, 2 each below those (201 memories; three
// hops reach the ExploreMaxNodes cap).
func BenchmarkExplore(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	now := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339Nano)
	var nq strings.Builder
	node := func(name string) {
		fmt.Fprintf(&nq, "_:%[1]s <dgraph.type> \"Memory\" .\n_:%[1]s <Memory.id> \"%[1]s\" .\n_:%[1]s <Memory.kind> \"memory\" .\n"+
			"_:%[1]s <Memory.title> \"Title %[1]s\" .\n_:%[1]s <Memory.status> \"indexed\" .\n_:%[1]s <Memory.valid_from> %[2]q .\n", name, now)
	}
	owns := func(from, to string) {
		fmt.Fprintf(&nq, "_:%[1]s <OWNS> _:%[2]s (id=\"e\", created_at=%[3]s, valid_from=%[3]s, inverse=false) .\n"+
			"_:%[2]s <OWNED_BY> _:%[1]s (id=\"i\", created_at=%[3]s, valid_from=%[3]s, inverse=true) .\n", from, to, now)
	}
	node("c")
	for i := range 20 {
		a := fmt.Sprintf("a%d", i)
		node(a)
		owns("c", a)
		for j := range 3 {
			bn := fmt.Sprintf("%s_b%d", a, j)
			node(bn)
			owns(a, bn)
			for k := range 2 {
				cn := fmt.Sprintf("%s_c%d", bn, k)
				node(cn)
				owns(bn, cn)
			}
		}
	}
	dgraphtest.SetNquads(b, ten, nq.String())
	asOf := time.Now().UTC()
	for _, hops := range []int{1, 2, 3} {
		for _, at := range []*time.Time{nil, &asOf} {
			name := fmt.Sprintf("hops=%d/now", hops)
			if at != nil {
				name = fmt.Sprintf("hops=%d/as_of", hops)
			}
			b.Run(name, func(b *testing.B) {
				var nodes int
				for b.Loop() {
					r, err := ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: "c", Hops: hops, AsOf: at})
					if err != nil {
						b.Fatal(err)
					}
					nodes = len(r.Nodes)
				}
				b.ReportMetric(float64(nodes), "nodes")
			})
		}
	}
}

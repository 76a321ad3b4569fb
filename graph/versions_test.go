package graph_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/schema"
)

// update_fact moves the target's relations to the new version with their
// meta (confidence, created_by, reason) and direction; the old edges are
// closed at the instant of the update.
func TestUpdateFactMovesRelationsWithTheirMeta(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	a := storeText(t, ten, "Projekt Apollo, Frist 30. Juni.")
	lisa := storeText(t, ten, "Lisa Meyer leitet das Plattform-Team.")
	conf := 0.8
	if _, err := ten.LinkWith(ctx, a, lisa, "OWNED_BY", knowmind.EdgeMeta{Confidence: &conf, CreatedBy: "agent-7", Reason: "im Kick-off genannt"}); err != nil {
		t.Fatal(err)
	}
	upd, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: a, NewTitle: "Apollo", NewContent: "Projekt Apollo, Frist 30. September."})
	if err != nil {
		t.Fatal(err)
	}
	v, err := ten.GetMemory(ctx, a)
	if err != nil || v.ValidTo == nil {
		t.Fatalf("old version %+v, %v", v, err)
	}
	type edge struct {
		To         string     `json:"Memory.id"`
		ID         string     `json:"OWNED_BY|id"`
		ValidFrom  time.Time  `json:"OWNED_BY|valid_from"`
		ValidTo    *time.Time `json:"OWNED_BY|valid_to"`
		Inverse    bool       `json:"OWNED_BY|inverse"`
		Confidence float64    `json:"OWNED_BY|confidence"`
		CreatedBy  string     `json:"OWNED_BY|created_by"`
		Reason     string     `json:"OWNED_BY|reason"`
	}
	read := func(id string) []edge {
		var out struct {
			Q []struct {
				E []edge `json:"OWNED_BY"`
			}
		}
		dgraphtest.Query(t, ten, `query q($id: string) { q(func: eq(Memory.id, $id)) { OWNED_BY @facets { Memory.id } } }`,
			map[string]string{"$id": id}, &out)
		if len(out.Q) == 0 {
			return nil
		}
		return out.Q[0].E
	}
	oldEdges, newEdges := read(a), read(upd.NewMemoryID)
	if len(oldEdges) != 1 || oldEdges[0].ValidTo == nil || !oldEdges[0].ValidTo.Equal(*v.ValidTo) {
		t.Fatalf("old version's edge %+v, want it closed at %v", oldEdges, v.ValidTo)
	}
	if len(newEdges) != 1 {
		t.Fatalf("new version's edges %+v", newEdges)
	}
	n := newEdges[0]
	if n.To != lisa || n.ValidTo != nil || !n.ValidFrom.Equal(*v.ValidTo) || n.Inverse || n.Confidence != 0.8 ||
		n.CreatedBy != "agent-7" || n.Reason != "im Kick-off genannt" || n.ID != graph.EdgeID(upd.NewMemoryID, "OWNED_BY", lisa) {
		t.Fatalf("moved edge %+v", n)
	}
	var back struct {
		Q []struct {
			E []struct {
				ID      string     `json:"Memory.id"`
				ValidTo *time.Time `json:"OWNS|valid_to"`
				Inverse bool       `json:"OWNS|inverse"`
				Reason  string     `json:"OWNS|reason"`
			} `json:"OWNS"`
		}
	}
	dgraphtest.Query(t, ten, `query q($id: string) { q(func: eq(Memory.id, $id)) { OWNS @facets { Memory.id } } }`,
		map[string]string{"$id": lisa}, &back)
	open := 0
	for _, e := range back.Q[0].E {
		if e.ValidTo == nil {
			open++
			if e.ID != upd.NewMemoryID || !e.Inverse || e.Reason != "im Kick-off genannt" {
				t.Errorf("Lisa's open OWNS edge %+v, want the inverse to the new version", e)
			}
		}
	}
	if open != 1 || len(back.Q[0].E) != 2 {
		t.Fatalf("Lisa's OWNS edges %+v, want one closed (old version) and one open", back.Q[0].E)
	}
}

// A store written before relations followed their version: a chain
// v1 → v2 → v3 whose relations all hang off v1, as update_fact left them.
// Opening it moves them along the chain once — each at the instant its
// version was superseded — so each version holds them in its own time.
func TestVersionRelationsMigration(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	name := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	v1 := storeText(t, ten, "Apollo, Version eins.")
	v2 := storeText(t, ten, "Apollo, Version zwei.")
	v3 := storeText(t, ten, "Apollo, Version drei.")
	peer := storeText(t, ten, "Das Budget 2027.")
	if _, err := ten.Link(ctx, v1, peer, "DEPENDS_ON"); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now().UTC().Add(time.Second)
	t2 := t1.Add(time.Hour)
	// The history as update_fact wrote it before: versions closed, SUPERSEDES
	// both ways, relations left where they were.
	supersede := func(oldID, newID string, at time.Time) {
		stamp := at.Format(time.RFC3339Nano)
		dgraphtest.Upsert(t, ten, fmt.Sprintf(`{ o as var(func: eq(Memory.id, %q))  n as var(func: eq(Memory.id, %q)) }`, oldID, newID), nil,
			fmt.Sprintf("uid(o) <Memory.valid_to> %q .\nuid(n) <Memory.valid_from> %q .\n"+
				"uid(n) <SUPERSEDES> uid(o) (id=%q, created_at=%s, valid_from=%s, inverse=false) .\n"+
				"uid(o) <SUPERSEDED_BY> uid(n) (id=%q, created_at=%s, valid_from=%s, inverse=true) .",
				stamp, stamp, graph.EdgeID(newID, "SUPERSEDES", oldID), stamp, stamp, graph.EdgeID(oldID, "SUPERSEDED_BY", newID), stamp, stamp))
	}
	supersede(v1, v2, t1)
	supersede(v2, v3, t2)
	if _, err := dgraphtest.DG(t, ten).NewTxn().Do(ctx, &api.Request{
		Query:     `{ meta as var(func: eq(Meta.key, "knowmind")) }`,
		Mutations: []*api.Mutation{{SetNquads: []byte(`uid(meta) <Meta.schema_version> "7" .`)}},
		CommitNow: true,
	}); err != nil {
		t.Fatal(err)
	}

	reopened := dgraphtest.Reopen(t, name)
	if v, err := graph.SchemaVersion(ctx, dgraphtest.DG(t, reopened)); err != nil || v != schema.Version {
		t.Fatalf("schema version after the migration: %d, %v", v, err)
	}
	rels, err := reopened.ListRelations(ctx, v3)
	if err != nil {
		t.Fatal(err)
	}
	var dep *knowmind.OutEdge
	for i, e := range rels.Outgoing {
		if e.RelType == "DEPENDS_ON" {
			dep = &rels.Outgoing[i]
		}
	}
	if dep == nil || dep.To != peer || !dep.ValidFrom.Equal(t2) {
		t.Fatalf("v3's relations %+v: want DEPENDS_ON %s valid from %v", rels.Outgoing, peer, t2)
	}
	peerRels, err := reopened.ListRelations(ctx, peer)
	if err != nil || len(peerRels.Incoming) != 1 || peerRels.Incoming[0].From != v3 {
		t.Fatalf("the peer's incoming relations %+v, %v: want DEPENDS_ON from v3", peerRels.Incoming, err)
	}
	// Each version shows the relation in its own time.
	for _, tc := range []struct {
		at   time.Time
		want string
	}{{t1.Add(-time.Millisecond), v1}, {t1.Add(time.Minute), v2}, {t2.Add(time.Minute), v3}} {
		at := tc.at
		res, err := reopened.Explore(ctx, knowmind.ExploreQuery{MemoryID: v3, Hops: 1, AsOf: &at})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range res.Edges {
			if e.RelType == "DEPENDS_ON" {
				found = e.From == tc.want && e.To == peer
			}
		}
		if res.Memory.ID != tc.want || !found {
			t.Errorf("as of %v: centre %s, edges %+v; want DEPENDS_ON from %s", at, res.Memory.ID, res.Edges, tc.want)
		}
	}
	// Once: a second open finds nothing to move.
	third, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, Password: env.Password, Secret: env.Secret, Embedder: env.Embedder})
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if _, err := third.Tenant(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	if n := queryCount(t, reopened, `{ q(func: has(DEPENDS_ON)) { count(uid) } }`, nil); n != 3 {
		t.Errorf("%d versions hold a DEPENDS_ON edge, want 3 (two closed, one open)", n)
	}
}

func storeText(t *testing.T, ten *graph.Tenant, content string) string {
	t.Helper()
	res, err := ten.StoreMemory(context.Background(), knowmind.StoreMemoryInput{Content: content})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// TestEveryReplacedVersionGetsItsSupersedes: an upload that replaces several current documents
// of its title (one written by an older store or left failed beside the current one) links the
// new version to each with SUPERSEDES and moves the relations of all of them; a repeated
// replace adds one more link to the chain and the earlier links stay.
func TestEveryReplacedVersionGetsItsSupersedes(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	upload := func(title, content string) knowmind.StoreResult {
		t.Helper()
		res, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	d1 := upload("Reiserichtlinie", "# Reiserichtlinie\n\nDienstreisen mit der Bahn.")
	d2 := upload("Reiserichtlinie alt", "# Reiserichtlinie\n\nDienstreisen mit dem Auto.")
	dgraphtest.Upsert(t, ten, fmt.Sprintf(`{ d as var(func: eq(Memory.id, %q)) }`, d2.ID), nil,
		`uid(d) <Memory.title> "Reiserichtlinie" .`) // two current documents of one title
	peer := storeText(t, ten, "Das Reisebudget 2027.")
	if _, err := ten.Link(ctx, d1.ID, peer, "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Link(ctx, peer, d2.ID, "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	d3 := upload("Reiserichtlinie", "# Reiserichtlinie\n\nDienstreisen mit dem Flugzeug.")
	if got := slices.Sorted(slices.Values(d3.ReplacedDocumentIDs)); !slices.Equal(got, slices.Sorted(slices.Values([]string{d1.ID, d2.ID}))) {
		t.Fatalf("replaced %v, want %s and %s", d3.ReplacedDocumentIDs, d1.ID, d2.ID)
	}
	edges := func(id string) (out, in map[string][]string) {
		t.Helper()
		rels, err := ten.ListRelations(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out, in = map[string][]string{}, map[string][]string{}
		for _, e := range rels.Outgoing {
			if e.ValidTo == nil {
				out[e.RelType] = append(out[e.RelType], e.To)
			}
		}
		for _, e := range rels.Incoming {
			if e.ValidTo == nil {
				in[e.RelType] = append(in[e.RelType], e.From)
			}
		}
		for _, m := range []map[string][]string{out, in} {
			for k := range m {
				slices.Sort(m[k])
			}
		}
		return out, in
	}
	out, in := edges(d3.ID)
	if want := slices.Sorted(slices.Values([]string{d1.ID, d2.ID})); !slices.Equal(out["SUPERSEDES"], want) {
		t.Fatalf("%s SUPERSEDES %v, want both replaced versions %v", d3.ID, out["SUPERSEDES"], want)
	}
	if !slices.Equal(out["REFERENCES"], []string{peer}) || !slices.Equal(in["REFERENCES"], []string{peer}) {
		t.Fatalf("the relations of both replaced versions on the new one: out %v, in %v", out, in)
	}
	for _, old := range []string{d1.ID, d2.ID} {
		if out, in := edges(old); !slices.Equal(in["SUPERSEDES"], []string{d3.ID}) || len(out["REFERENCES"])+len(in["REFERENCES"]) != 0 {
			t.Fatalf("%s: open edges out %v in %v, want only %s SUPERSEDES it", old, out, in, d3.ID)
		}
	}

	d4 := upload("Reiserichtlinie", "# Reiserichtlinie\n\nDienstreisen nach Absprache.")
	if !slices.Equal(d4.ReplacedDocumentIDs, []string{d3.ID}) {
		t.Fatalf("repeated replace replaced %v, want %s", d4.ReplacedDocumentIDs, d3.ID)
	}
	out, _ = edges(d4.ID)
	if !slices.Equal(out["SUPERSEDES"], []string{d3.ID}) || !slices.Equal(out["REFERENCES"], []string{peer}) {
		t.Fatalf("%s after the repeated replace: %v", d4.ID, out)
	}
	if out, in := edges(d3.ID); len(out["SUPERSEDES"]) != 2 || !slices.Equal(in["SUPERSEDES"], []string{d4.ID}) {
		t.Fatalf("%s keeps its history links: out %v in %v", d3.ID, out, in)
	}
}

// TestUpdateFactMovesManyRelations: a version's relations move with it within the bound, all
// in the one transaction that makes the new version current; over the bound the update is
// refused with too_large and nothing changes. KNOWMIND_MOVE_RELATIONS sets how many (default
// 60; the README times 10,000).
func TestUpdateFactMovesManyRelations(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	n := 60
	if s := os.Getenv("KNOWMIND_MOVE_RELATIONS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	name := dgraphtest.TenantName(t)
	if _, err := env.Client.Tenant(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	bounded, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, Password: env.Password, Secret: env.Secret,
		Embedder: env.Embedder, MaxMovedRelations: n})
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Close()
	ten, err := bounded.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	// hub stores a memory holding count REFERENCES edges to peers of its own, written as link
	// writes them (the way back materialised), in batches.
	hub := func(label string, count int) string {
		t.Helper()
		id := storeText(t, ten, "Projekt "+label+", der Knoten mit vielen Beziehungen.")
		stamp := time.Now().UTC().Format(time.RFC3339Nano)
		for from := 0; from < count; from += 2000 {
			var nq strings.Builder
			for i := from; i < min(from+2000, count); i++ {
				peer := fmt.Sprintf("%s-peer-%d", label, i)
				fmt.Fprintf(&nq, "_:p%[1]d <Memory.id> %[2]q .\n_:p%[1]d <Memory.kind> \"memory\" .\n_:p%[1]d <Memory.status> \"indexed\" .\n"+
					"_:p%[1]d <Memory.title> %[2]q .\n_:p%[1]d <dgraph.type> \"Memory\" .\n"+
					"uid(h) <REFERENCES> _:p%[1]d (id=%[3]q, created_at=%[5]s, valid_from=%[5]s, inverse=false) .\n"+
					"_:p%[1]d <REFERENCED_BY> uid(h) (id=%[4]q, created_at=%[5]s, valid_from=%[5]s, inverse=true) .\n",
					i, peer, graph.EdgeID(id, "REFERENCES", peer), graph.EdgeID(peer, "REFERENCED_BY", id), stamp)
			}
			dgraphtest.Upsert(t, ten, fmt.Sprintf(`{ h as var(func: eq(Memory.id, %q)) }`, id), nil, nq.String())
		}
		return id
	}
	open := func(id string) (out, in int) {
		t.Helper()
		rels, err := ten.ListRelations(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range rels.Outgoing {
			if e.ValidTo == nil && e.RelType == "REFERENCES" {
				out++
			}
		}
		for _, e := range rels.Incoming {
			if e.ValidTo == nil && e.RelType == "REFERENCES" {
				in++
			}
		}
		return out, in
	}

	within := hub("within", n)
	start := time.Now()
	res, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: within, NewTitle: "Projekt within",
		NewContent: "Projekt within, neue Fassung."})
	if err != nil {
		t.Fatalf("update_fact with %d relations (the bound): %v", n, err)
	}
	t.Logf("update_fact moved %d relations in %v", n, time.Since(start).Round(time.Millisecond))
	if out, _ := open(res.NewMemoryID); out != n {
		t.Fatalf("the new version holds %d open REFERENCES, want %d", out, n)
	}
	if out, _ := open(within); out != 0 {
		t.Fatalf("the old version keeps %d open REFERENCES", out)
	}

	over := hub("over", n+1)
	_, err = ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: over, NewTitle: "Projekt over", NewContent: "Projekt over, neue Fassung."})
	if e := knowmind.AsError(err); e == nil || e.Reason != knowmind.ReasonTooLarge || !strings.Contains(e.Message, "unlink") {
		t.Fatalf("update_fact with %d relations: %v, want too_large saying what to do", n+1, err)
	}
	if out, _ := open(over); out != n+1 {
		t.Fatalf("the refused update changed the relations: %d open", out)
	}
	if _, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: over, NewTitle: "x", NewContent: "still current?"}); knowmind.AsError(err) == nil ||
		knowmind.AsError(err).Reason != knowmind.ReasonTooLarge {
		t.Fatalf("the refused version must still be current (refused again the same way): %v", err)
	}
}

package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/shapes"
)

// addMemory writes a bare Memory node the way StoreMemory leaves one, so
// these tests do not depend on the ingest path. kind is "memory".
func addMemory(t *testing.T, ten *graph.Tenant, id, memoryType string, tags ...string) {
	t.Helper()
	node := map[string]any{
		"uid": "_:m", "dgraph.type": "Memory",
		"Memory.id": id, "Memory.kind": knowmind.KindMemory, "Memory.title": "Title of " + id,
		"Memory.memory_type": memoryType, "Memory.status": knowmind.StatusIndexed,
	}
	if len(tags) > 0 {
		node["Memory.tags"] = tags
	}
	dgraphtest.SetJSON(t, ten, node)
}

// edgeState reads, in ONE query, the edge from --rel--> to and the edge
// to --inverse--> from with their facets (nil when absent) and how many rel
// edges from has in total (closed ones included).
type edgeState struct {
	Forward, Backward      map[string]any
	ForwardCount, BwdCount int
}

func readEdgePair(t *testing.T, ten *graph.Tenant, from, rel, to, inverse string) edgeState {
	t.Helper()
	q := fmt.Sprintf(`query q($from: string, $to: string) {
  a(func: eq(Memory.id, $from)) { e: %[1]s @filter(eq(Memory.id, $to)) @facets { Memory.id } n: count(%[1]s) }
  b(func: eq(Memory.id, $to)) { e: %[2]s @filter(eq(Memory.id, $from)) @facets { Memory.id } n: count(%[2]s) }
}`, rel, inverse)
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(context.Background(), q, map[string]string{"$from": from, "$to": to})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		A []struct {
			E []map[string]any
			N int
		}
		B []struct {
			E []map[string]any
			N int
		}
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	var s edgeState
	if len(out.A) > 0 {
		s.ForwardCount = out.A[0].N
		if len(out.A[0].E) > 0 {
			s.Forward = out.A[0].E[0]
		}
	}
	if len(out.B) > 0 {
		s.BwdCount = out.B[0].N
		if len(out.B[0].E) > 0 {
			s.Backward = out.B[0].E[0]
		}
	}
	return s
}

// isOpen says whether an edge read by readEdgePair is open; facets come back
// as "<alias>|<facet>" keys.
func isOpen(edge map[string]any) bool {
	if edge == nil {
		return false
	}
	_, closed := edge["e|valid_to"]
	return !closed
}

func wantCode(t *testing.T, err error, code string) *knowmind.Error {
	t.Helper()
	e := knowmind.AsError(err)
	if e == nil || e.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
	return e
}

func TestLinkListUnlink(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "workshop", knowmind.MemoryEpisodic)
	addMemory(t, ten, "mueller", knowmind.MemorySemantic, "class:client", "kunde")

	res, err := ten.Link(ctx, "workshop", "mueller", "FOR_CLIENT")
	if err != nil {
		t.Fatal(err)
	}
	want := knowmind.LinkResult{
		EdgeID:        graph.EdgeID("workshop", "FOR_CLIENT", "mueller"),
		InverseEdgeID: graph.EdgeID("mueller", "HAS_WORKSHOP", "workshop"),
	}
	if res != want || res.EdgeID == res.InverseEdgeID {
		t.Fatalf("link = %+v, want %+v", res, want)
	}

	// Both directions are real edges, written together, the inverse marked.
	s := readEdgePair(t, ten, "workshop", "FOR_CLIENT", "mueller", "HAS_WORKSHOP")
	if !isOpen(s.Forward) || !isOpen(s.Backward) {
		t.Fatalf("after link: %+v", s)
	}
	if s.Forward["e|inverse"] != false || s.Backward["e|inverse"] != true || s.Backward["e|id"] != want.InverseEdgeID {
		t.Fatalf("facets after link: %+v", s)
	}

	// Each end lists the link once: outgoing on the workshop, incoming on the client.
	ws, err := ten.ListRelations(ctx, "workshop")
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Outgoing) != 1 || len(ws.Incoming) != 0 {
		t.Fatalf("workshop relations = %+v", ws)
	}
	out := ws.Outgoing[0]
	if out.RelType != "FOR_CLIENT" || out.To != "mueller" || out.Title != "Title of mueller" || out.EdgeID != want.EdgeID ||
		out.CreatedAt.IsZero() || time.Since(out.CreatedAt) > time.Minute || out.ValidTo != nil {
		t.Fatalf("outgoing = %+v", out)
	}
	cl, err := ten.ListRelations(ctx, "mueller")
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Outgoing) != 0 || len(cl.Incoming) != 1 {
		t.Fatalf("client relations = %+v", cl)
	}
	in := cl.Incoming[0]
	if in.RelType != "FOR_CLIENT" || in.From != "workshop" || in.EdgeID != want.EdgeID || !in.CreatedAt.Equal(out.CreatedAt) {
		t.Fatalf("incoming = %+v", in)
	}

	// Unlink closes both edges; the record stays for point-in-time reads.
	un, err := ten.Unlink(ctx, "workshop", "mueller", "FOR_CLIENT")
	if err != nil || !un.Deleted {
		t.Fatalf("unlink = %+v, %v", un, err)
	}
	s = readEdgePair(t, ten, "workshop", "FOR_CLIENT", "mueller", "HAS_WORKSHOP")
	if s.Forward == nil || s.Backward == nil || isOpen(s.Forward) || isOpen(s.Backward) {
		t.Fatalf("after unlink both edges must be kept and closed: %+v", s)
	}
	if s.Forward["e|valid_to"] != s.Backward["e|valid_to"] {
		t.Fatalf("edge and inverse closed at different times: %+v", s)
	}
	for _, id := range []string{"workshop", "mueller"} {
		r, err := ten.ListRelations(ctx, id)
		if err != nil || len(r.Outgoing)+len(r.Incoming) != 0 {
			t.Fatalf("%s relations after unlink = %+v, %v", id, r, err)
		}
	}
	_, err = ten.Unlink(ctx, "workshop", "mueller", "FOR_CLIENT")
	wantCode(t, err, knowmind.ENOTFOUND)

	// Re-linking reopens the same record: same ids, same created_at, new valid_from.
	again, err := ten.Link(ctx, "workshop", "mueller", "FOR_CLIENT")
	if err != nil || again != want {
		t.Fatalf("relink = %+v, %v", again, err)
	}
	ws, err = ten.ListRelations(ctx, "workshop")
	if err != nil || len(ws.Outgoing) != 1 {
		t.Fatalf("after relink: %+v, %v", ws, err)
	}
	if !ws.Outgoing[0].CreatedAt.Equal(out.CreatedAt) || !ws.Outgoing[0].ValidFrom.After(out.ValidFrom) {
		t.Fatalf("reopened edge: created %v valid_from %v; first created %v valid_from %v",
			ws.Outgoing[0].CreatedAt, ws.Outgoing[0].ValidFrom, out.CreatedAt, out.ValidFrom)
	}
	s = readEdgePair(t, ten, "workshop", "FOR_CLIENT", "mueller", "HAS_WORKSHOP")
	if !isOpen(s.Forward) || !isOpen(s.Backward) || s.ForwardCount != 1 || s.BwdCount != 1 {
		t.Fatalf("after relink: %+v", s)
	}
}

func TestLinkIsIdempotent(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "a", knowmind.MemorySemantic)
	addMemory(t, ten, "b", knowmind.MemorySemantic)

	first, err := ten.Link(ctx, "a", "b", "REFERENCES")
	if err != nil {
		t.Fatal(err)
	}
	before := readEdgePair(t, ten, "a", "REFERENCES", "b", "REFERENCED_BY")
	second, err := ten.Link(ctx, "a", "b", "REFERENCES")
	if err != nil || second != first {
		t.Fatalf("second link = %+v, %v; first %+v", second, err, first)
	}
	after := readEdgePair(t, ten, "a", "REFERENCES", "b", "REFERENCED_BY")
	if after.ForwardCount != 1 || after.BwdCount != 1 {
		t.Fatalf("edge counts after two links = %d/%d, want 1/1", after.ForwardCount, after.BwdCount)
	}
	if after.Forward["e|valid_from"] != before.Forward["e|valid_from"] {
		t.Fatalf("second link rewrote the edge: %v -> %v", before.Forward, after.Forward)
	}

	// Linking the inverse is the same link seen from the other end.
	inv, err := ten.Link(ctx, "b", "a", "REFERENCED_BY")
	if err != nil || inv.EdgeID != first.InverseEdgeID || inv.InverseEdgeID != first.EdgeID {
		t.Fatalf("link of the inverse = %+v, %v; want the swapped ids of %+v", inv, err, first)
	}
}

func TestSymmetricRelation(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "a", knowmind.MemorySemantic)
	addMemory(t, ten, "b", knowmind.MemorySemantic)

	res, err := ten.Link(ctx, "a", "b", "RELATES_TO")
	if err != nil {
		t.Fatal(err)
	}
	if res.EdgeID != graph.EdgeID("a", "RELATES_TO", "b") || res.InverseEdgeID != graph.EdgeID("b", "RELATES_TO", "a") {
		t.Fatalf("symmetric ids = %+v", res)
	}
	s := readEdgePair(t, ten, "a", "RELATES_TO", "b", "RELATES_TO")
	if !isOpen(s.Forward) || !isOpen(s.Backward) {
		t.Fatalf("symmetric edges: %+v", s)
	}
	back, err := ten.Link(ctx, "b", "a", "RELATES_TO")
	if err != nil || back.EdgeID != res.InverseEdgeID {
		t.Fatalf("link b->a = %+v, %v", back, err)
	}
	rb, _ := ten.ListRelations(ctx, "b")
	if len(rb.Outgoing) != 0 || len(rb.Incoming) != 1 || rb.Incoming[0].RelType != "RELATES_TO" || rb.Incoming[0].From != "a" {
		t.Fatalf("b relations = %+v", rb)
	}
	// Unlinking from either end closes the pair.
	if _, err := ten.Unlink(ctx, "b", "a", "RELATES_TO"); err != nil {
		t.Fatal(err)
	}
	s = readEdgePair(t, ten, "a", "RELATES_TO", "b", "RELATES_TO")
	if isOpen(s.Forward) || isOpen(s.Backward) {
		t.Fatalf("after unlink: %+v", s)
	}
}

func TestLinkRejects(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "workshop", knowmind.MemoryEpisodic)
	addMemory(t, ten, "note", knowmind.MemorySemantic)
	addMemory(t, ten, "client", knowmind.MemorySemantic, "Class:Client")
	addMemory(t, ten, "v1", knowmind.MemorySemantic)
	addMemory(t, ten, "v2", knowmind.MemorySemantic)
	addMemory(t, ten, "v3", knowmind.MemorySemantic)
	addMemory(t, ten, "v4", knowmind.MemorySemantic)

	cases := []struct {
		name, from, to, rel string
		code, param         string // param for EINVALID / ENOTFOUND
		constraint          string // Data["constraint"] for ECONSTRAINT
		checkRel            string // Data["rel_type"]: which edge (or inverse) failed
	}{
		{"malformed rel_type", "workshop", "client", "for_client", knowmind.EINVALID, "rel_type", "", ""},
		{"empty rel_type", "workshop", "client", "", knowmind.EINVALID, "rel_type", "", ""},
		{"missing from_id", "", "client", "FOR_CLIENT", knowmind.EINVALID, "from_id", "", ""},
		{"missing to_id", "workshop", " ", "FOR_CLIENT", knowmind.EINVALID, "to_id", "", ""},
		{"self link", "workshop", "workshop", "RELATES_TO", knowmind.EINVALID, "to_id", "", ""},
		{"from_id too long", strings.Repeat("x", knowmind.MaxIDChars+1), "client", "FOR_CLIENT", knowmind.EINVALID, "from_id", "", ""},
		{"to_id too long", "workshop", strings.Repeat("x", knowmind.MaxIDChars+1), "FOR_CLIENT", knowmind.EINVALID, "to_id", "", ""},
		{"unknown rel_type", "workshop", "client", "FOR_PARTNER", knowmind.ECONSTRAINT, "", "rel_type", "FOR_PARTNER"},
		{"history", "v2", "v1", "SUPERSEDES", knowmind.ECONSTRAINT, "", "history", "SUPERSEDES"},
		{"history inverse", "v1", "v2", "SUPERSEDED_BY", knowmind.ECONSTRAINT, "", "history", "SUPERSEDED_BY"},
		{"unknown from_id", "nope", "client", "FOR_CLIENT", knowmind.ENOTFOUND, "from_id", "", ""},
		{"unknown to_id", "workshop", "nope", "FOR_CLIENT", knowmind.ENOTFOUND, "to_id", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ten.Link(ctx, c.from, c.to, c.rel)
			e := wantCode(t, err, c.code)
			if e.Code != knowmind.ECONSTRAINT && e.Param != c.param {
				t.Fatalf("param = %q, want %q (%v)", e.Param, c.param, err)
			}
			if e.Code == knowmind.ECONSTRAINT && (e.Data["constraint"] != c.constraint || e.Data["rel_type"] != c.checkRel) {
				t.Fatalf("data = %v, want constraint %s on %s (%v)", e.Data, c.constraint, c.checkRel, err)
			}
		})
	}
	if _, err := ten.ListRelations(ctx, strings.Repeat("x", knowmind.MaxIDChars+1)); knowmind.ErrorCode(err) != knowmind.EINVALID {
		t.Errorf("list relations of an over-long id: %v, want EINVALID", err)
	}
	// Nothing was written by the refused links.
	for _, id := range []string{"workshop", "client", "v1", "v2", "v3", "v4"} {
		r, err := ten.ListRelations(ctx, id)
		if err != nil || len(r.Outgoing)+len(r.Incoming) != 0 {
			t.Errorf("%s has relations after refused links: %+v, %v", id, r, err)
		}
	}
	// The spec's example: FOR_CLIENT onto a plain memory, no class needed.
	if _, err := ten.Link(ctx, "workshop", "note", "FOR_CLIENT"); err != nil {
		t.Fatal(err)
	}
}

// Class constraints come from a shape file such as shapes/examples/crm.yaml:
// EMPLOYS needs a source tagged class:client and a target tagged class:person.
func TestLinkClassConstraintsFromExampleShapes(t *testing.T) {
	ctx := context.Background()
	set, err := shapes.Load("../shapes/examples")
	if err != nil {
		t.Fatal(err)
	}
	c := dgraphtest.ClientWithShapes(t, set)
	ten, err := c.Tenant(ctx, dgraphtest.TenantName(t), true)
	if err != nil {
		t.Fatal(err)
	}
	addMemory(t, ten, "client", knowmind.MemorySemantic, "Class:Client")
	addMemory(t, ten, "person", knowmind.MemorySemantic, "class:person")
	addMemory(t, ten, "note", knowmind.MemorySemantic, "person")
	for _, c := range []struct{ from, to, rel, constraint, checkRel string }{
		{"client", "note", "EMPLOYS", "target_class", "EMPLOYS"},
		{"note", "person", "EMPLOYS", "source_class", "EMPLOYS"},
		{"client", "person", "EMPLOYED_BY", "source_class", "EMPLOYED_BY"},
	} {
		_, err := ten.Link(ctx, c.from, c.to, c.rel)
		e := wantCode(t, err, knowmind.ECONSTRAINT)
		if e.Data["constraint"] != c.constraint || e.Data["rel_type"] != c.checkRel || !strings.Contains(fmt.Sprint(e.Data["fix"]), "class:") {
			t.Errorf("%s %s %s: data %v, want %s naming the class tag", c.from, c.rel, c.to, e.Data, c.constraint)
		}
	}
	// The class tag is case-insensitive; a valid link goes through.
	if _, err := ten.Link(ctx, "client", "person", "EMPLOYS"); err != nil {
		t.Fatal(err)
	}
}

func TestUnlinkRejects(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "a", knowmind.MemorySemantic)
	addMemory(t, ten, "b", knowmind.MemorySemantic)
	if _, err := ten.Link(ctx, "a", "b", "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	writeHistoryEdge(t, ten, "b", "a") // after the link: a superseded version takes no new link

	_, err := ten.Unlink(ctx, "a", "b", "CAUSED_BY")
	wantCode(t, err, knowmind.ENOTFOUND)
	_, err = ten.Unlink(ctx, "b", "a", "REFERENCES") // exists only the other way round
	wantCode(t, err, knowmind.ENOTFOUND)
	_, err = ten.Unlink(ctx, "nope", "b", "REFERENCES")
	if e := wantCode(t, err, knowmind.ENOTFOUND); e.Param != "from_id" {
		t.Fatalf("param = %q", e.Param)
	}
	_, err = ten.Unlink(ctx, "a", "b", "NO_SUCH_REL")
	wantCode(t, err, knowmind.ECONSTRAINT)
	for _, rel := range []string{"SUPERSEDES", "SUPERSEDED_BY"} {
		_, err = ten.Unlink(ctx, "b", "a", rel)
		if e := wantCode(t, err, knowmind.ECONSTRAINT); e.Data["constraint"] != "history" {
			t.Fatalf("unlink %s: %v", rel, err)
		}
	}
	// The spec's list_relations example: incoming SUPERSEDES on the older version.
	r, err := ten.ListRelations(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Incoming) != 1 || r.Incoming[0].RelType != "SUPERSEDES" || r.Incoming[0].From != "b" ||
		len(r.Outgoing) != 1 || r.Outgoing[0].RelType != "REFERENCES" {
		t.Fatalf("relations of a = %+v", r)
	}
	_, err = ten.ListRelations(ctx, "nope")
	wantCode(t, err, knowmind.ENOTFOUND)
	_, err = ten.ListRelations(ctx, "")
	wantCode(t, err, knowmind.EINVALID)
}

func TestRelationsAcrossTenants(t *testing.T) {
	ctx := context.Background()
	a := dgraphtest.NewTenant(t)
	b := dgraphtest.NewTenant(t)
	addMemory(t, a, "of-a", knowmind.MemorySemantic)
	addMemory(t, a, "also-of-a", knowmind.MemorySemantic)
	addMemory(t, b, "of-b", knowmind.MemorySemantic)

	_, err := b.Link(ctx, "of-b", "of-a", "REFERENCES")
	if e := wantCode(t, err, knowmind.ENOTFOUND); e.Param != "to_id" {
		t.Fatalf("param = %q", e.Param)
	}
	_, err = b.Link(ctx, "of-a", "of-b", "REFERENCES")
	if e := wantCode(t, err, knowmind.ENOTFOUND); e.Param != "from_id" {
		t.Fatalf("param = %q", e.Param)
	}
	_, err = b.Link(ctx, "of-a", "also-of-a", "REFERENCES")
	wantCode(t, err, knowmind.ENOTFOUND)
	if _, err := a.Link(ctx, "of-a", "also-of-a", "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	_, err = b.Unlink(ctx, "of-a", "also-of-a", "REFERENCES")
	wantCode(t, err, knowmind.ENOTFOUND)
	_, err = b.ListRelations(ctx, "of-a")
	wantCode(t, err, knowmind.ENOTFOUND)
	if r, err := a.ListRelations(ctx, "of-a"); err != nil || len(r.Outgoing) != 1 {
		t.Fatalf("tenant a after b's attempts: %+v, %v", r, err)
	}
}

// Ten goroutines link and unlink the same pair at once; afterwards edge and
// inverse must agree (both open or both closed) and each exists once.
func TestConcurrentLinkUnlink(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "ws", knowmind.MemoryEpisodic)
	addMemory(t, ten, "cl", knowmind.MemorySemantic, "class:client")

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				var err error
				if (g+i)%2 == 0 {
					_, err = ten.Link(ctx, "ws", "cl", "FOR_CLIENT")
				} else {
					_, err = ten.Unlink(ctx, "ws", "cl", "FOR_CLIENT")
				}
				if err != nil && knowmind.ErrorCode(err) != knowmind.ENOTFOUND { // unlink of an already closed edge
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent link/unlink: %v", err)
	}
	s := readEdgePair(t, ten, "ws", "FOR_CLIENT", "cl", "HAS_WORKSHOP")
	if s.ForwardCount != 1 || s.BwdCount != 1 {
		t.Fatalf("edge counts = %d/%d, want 1/1", s.ForwardCount, s.BwdCount)
	}
	if isOpen(s.Forward) != isOpen(s.Backward) {
		t.Fatalf("edge and inverse disagree: %+v", s)
	}
	if !isOpen(s.Forward) && s.Forward["e|valid_to"] != s.Backward["e|valid_to"] {
		t.Fatalf("closed at different times: %+v", s)
	}
	if s.Forward["e|valid_from"] != s.Backward["e|valid_from"] {
		t.Fatalf("opened at different times: %+v", s)
	}
	t.Logf("final state: open=%v", isOpen(s.Forward))
}

// maxCountTenant is a tenant of a client whose shapes add HAS_PRIMARY (at most
// one per source) and its inverse PRIMARY_OF (at most one per target): the
// default domain's only max_count relations are version history, which link
// refuses.
func maxCountTenant(t *testing.T) *graph.Tenant {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "primary.yaml"), []byte(`domain: test
description: A relation with max_count for tests.
relations:
  - name: HAS_PRIMARY
    description: The source's one primary contact.
    source: ["*"]
    target: ["*"]
    inverse: PRIMARY_OF
    max_count: 1
  - name: PRIMARY_OF
    description: The source is the primary contact of the target.
    inverse: HAS_PRIMARY
    max_count: 1
`), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := shapes.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := dgraphtest.Shared(t)
	c, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: env.Embedder, Shapes: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ten, err := c.Tenant(context.Background(), dgraphtest.TenantName(t), true)
	if err != nil {
		t.Fatal(err)
	}
	return ten
}

func TestLinkMaxCount(t *testing.T) {
	ctx := context.Background()
	ten := maxCountTenant(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		addMemory(t, ten, id, knowmind.MemorySemantic)
	}
	if _, err := ten.Link(ctx, "a", "b", "HAS_PRIMARY"); err != nil {
		t.Fatal(err)
	}
	_, err := ten.Link(ctx, "a", "c", "HAS_PRIMARY")
	if e := wantCode(t, err, knowmind.ECONSTRAINT); e.Data["constraint"] != "max_count" || e.Data["rel_type"] != "HAS_PRIMARY" {
		t.Fatalf("second HAS_PRIMARY: %v", err)
	}
	_, err = ten.Link(ctx, "d", "b", "HAS_PRIMARY")
	if e := wantCode(t, err, knowmind.ECONSTRAINT); e.Data["constraint"] != "max_count" || e.Data["rel_type"] != "PRIMARY_OF" {
		t.Fatalf("second PRIMARY_OF: %v", err)
	}
}

// Concurrent links that together would break max_count: exactly one wins.
func TestConcurrentMaxCount(t *testing.T) {
	ctx := context.Background()
	ten := maxCountTenant(t)
	addMemory(t, ten, "new", knowmind.MemorySemantic)
	for i := range 10 {
		addMemory(t, ten, fmt.Sprintf("old%d", i), knowmind.MemorySemantic)
	}
	var wg sync.WaitGroup
	results := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ten.Link(ctx, "new", fmt.Sprintf("old%d", i), "HAS_PRIMARY")
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case knowmind.ErrorCode(err) == knowmind.ECONSTRAINT:
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	r, err := ten.ListRelations(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if won != 1 || len(r.Outgoing) != 1 {
		t.Fatalf("%d links succeeded, %d HAS_PRIMARY edges; want 1 and 1", won, len(r.Outgoing))
	}
}

// The analyst query in docs/queries/relations.dql runs and shows the edges
// through reverse traversal, current and at a point in time.
func TestDocsRelationsQuery(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "ws1", knowmind.MemoryEpisodic)
	addMemory(t, ten, "ws2", knowmind.MemoryEpisodic)
	addMemory(t, ten, "mueller", knowmind.MemorySemantic, "class:client")
	for _, ws := range []string{"ws1", "ws2"} {
		if _, err := ten.Link(ctx, ws, "mueller", "FOR_CLIENT"); err != nil {
			t.Fatal(err)
		}
	}
	between := time.Now().UTC()
	time.Sleep(10 * time.Millisecond)
	if _, err := ten.Unlink(ctx, "ws2", "mueller", "FOR_CLIENT"); err != nil {
		t.Fatal(err)
	}
	q, err := os.ReadFile("../docs/queries/relations.dql")
	if err != nil {
		t.Fatal(err)
	}
	run := func(id string, asOf time.Time) map[string][]map[string]any {
		resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(ctx, string(q),
			map[string]string{"$id": id, "$as_of": asOf.Format(time.RFC3339Nano)})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string][]map[string]any
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	peers := func(v any) []string {
		var ids []string
		list, _ := v.([]any)
		for _, e := range list {
			ids = append(ids, e.(map[string]any)["Memory.id"].(string))
		}
		return ids
	}

	out := run("mueller", time.Now())
	if got := peers(out["memory"][0]["workshops"]); len(got) != 1 || got[0] != "ws1" {
		t.Fatalf("current workshops via ~FOR_CLIENT = %v (%v)", got, out["memory"])
	}
	if c := out["clients"]; len(c) != 1 || c[0]["current_workshops"] != 1.0 || c[0]["all_ever"] != 2.0 {
		t.Fatalf("clients = %v", c)
	}
	if got := peers(run("ws2", between)["memory_at_time"][0]["FOR_CLIENT"]); len(got) != 1 || got[0] != "mueller" {
		t.Fatalf("ws2 at %v = %v, want mueller (the edge was open then)", between, got)
	}
	if at := run("ws2", time.Now())["memory_at_time"]; len(at) > 0 && at[0]["FOR_CLIENT"] != nil {
		t.Fatalf("ws2 now = %v, want no FOR_CLIENT (unlinked)", at)
	}
	if got := peers(run("ws1", time.Now())["memory"][0]["FOR_CLIENT"]); len(got) != 1 || got[0] != "mueller" {
		t.Fatalf("ws1 current FOR_CLIENT = %v", got)
	}
}

// writeHistoryEdge writes newID -SUPERSEDES-> oldID and its inverse straight
// into Dgraph, as knowmind_link did before it refused history edges.
func writeHistoryEdge(t *testing.T, ten *graph.Tenant, newID, oldID string) {
	t.Helper()
	dgraphtest.Upsert(t, ten, fmt.Sprintf(`{ n as var(func: eq(Memory.id, %q)) o as var(func: eq(Memory.id, %q)) }`, newID, oldID), nil,
		fmt.Sprintf("uid(n) <SUPERSEDES> uid(o) (id=%q, inverse=false) .\nuid(o) <SUPERSEDED_BY> uid(n) (id=%q, inverse=true) .",
			graph.EdgeID(newID, "SUPERSEDES", oldID), graph.EdgeID(oldID, "SUPERSEDED_BY", newID)))
}

// Issue 13: link refuses both history relations (SUPERSEDES would close any
// memory, and unlink refuses history edges, so nothing could undo it); nothing
// is written and both memories stay current.
func TestLinkRefusesHistory(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	addMemory(t, ten, "v1", "semantic")
	addMemory(t, ten, "v2", "semantic")
	for _, c := range []struct{ from, to, rel string }{{"v2", "v1", "SUPERSEDES"}, {"v1", "v2", "SUPERSEDED_BY"}} {
		_, err := ten.Link(ctx, c.from, c.to, c.rel)
		e := wantCode(t, err, knowmind.ECONSTRAINT)
		if e.Data["constraint"] != "history" || !strings.Contains(e.Message, "knowmind_update_fact") {
			t.Fatalf("link %s: %v, want constraint history naming knowmind_update_fact", c.rel, err)
		}
	}
	for _, id := range []string{"v1", "v2"} {
		m, err := ten.GetMemory(ctx, id)
		if err != nil || m.ValidTo != nil {
			t.Fatalf("%s after refused history links: %+v, %v", id, m, err)
		}
		if r, _ := ten.ListRelations(ctx, id); len(r.Outgoing)+len(r.Incoming) != 0 {
			t.Fatalf("%s has relations: %+v", id, r)
		}
	}
	if _, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: "v1", NewTitle: "v1b", NewContent: "still current"}); err != nil {
		t.Fatalf("update of v1: %v", err)
	}
}

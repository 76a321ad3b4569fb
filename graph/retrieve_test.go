package graph_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// fixedExtractor proposes each line of the text as one fact naming the given entity, with
// confidence 0.95 (stored) unless set (0.6: a draft).
type fixedExtractor struct {
	entity     knowmind.CandidateEntity
	confidence float64
}

func (fixedExtractor) Name() string { return "fixed" }

func (x fixedExtractor) Extract(_ context.Context, req knowmind.ExtractRequest) ([]knowmind.Candidate, error) {
	var out []knowmind.Candidate
	c := x.confidence
	if c == 0 {
		c = 0.95
	}
	for _, line := range strings.Split(req.Text, "\n") {
		out = append(out, knowmind.Candidate{Text: line, Confidence: c, Entities: []knowmind.CandidateEntity{x.entity}})
	}
	return out, nil
}

func ids(ms []knowmind.RetrievedMemory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// Replay before an update_fact shows the old version (with the valid_to it got later), after
// it the new one; the category, entity-type and query filters narrow it; profiles are current.
func TestReplayBeforeAndAfterUpdate(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	lisa := fixedExtractor{entity: knowmind.CandidateEntity{Type: "person", Name: "Lisa Müller"}}
	acme := fixedExtractor{entity: knowmind.CandidateEntity{Type: "organisation", Name: "Acme GmbH"}}
	c1, err := ten.Capture(ctx, knowmind.CaptureInput{Text: "Lisa leitet das Projekt Phoenix.", Category: "project-info"}, lisa)
	if err != nil || len(c1.Stored) != 1 {
		t.Fatalf("capture: %+v, %v", c1, err)
	}
	c2, err := ten.Capture(ctx, knowmind.CaptureInput{Text: "Acme liefert die Server im Mai.", Category: "customer"}, acme)
	if err != nil || len(c2.Stored) != 1 {
		t.Fatalf("capture: %+v, %v", c2, err)
	}
	time.Sleep(20 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	up, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: c2.Stored[0].ID, NewTitle: "Lieferung",
		NewContent: "Acme liefert die Server im Juni.", UpdateReason: "verschoben"})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()

	old, err := ten.Replay(ctx, knowmind.ReplayQuery{At: before, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(old.Memories); len(got) != 2 || got[0] != c2.Stored[0].ID || got[1] != c1.Stored[0].ID {
		t.Fatalf("replay before the update: %v, want [%s %s]", got, c2.Stored[0].ID, c1.Stored[0].ID)
	}
	if m := old.Memories[0]; m.ValidTo == nil || !m.ValidTo.After(before) || m.Category != "customer" ||
		m.EntityType != "organisation" || m.EntityID != "acme-gmbh" || !strings.Contains(m.Content, "im Mai") {
		t.Fatalf("old version as replayed: %+v", m)
	}
	if old.AsOf == nil || !old.AsOf.Equal(before) || old.ContextTokens <= 0 || old.Truncated || old.SortBy != "replay" {
		t.Fatalf("replay answer %+v", old)
	}
	now, err := ten.Replay(ctx, knowmind.ReplayQuery{At: after, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(now.Memories); len(got) != 2 || got[0] != up.NewMemoryID || slices.Contains(got, c2.Stored[0].ID) {
		t.Fatalf("replay after the update: %v (new %s)", got, up.NewMemoryID)
	}
	// Profiles show the current state (Lisa's fact; Acme's only if the new version names it).
	var lisaProfile *knowmind.SemanticProfile
	for i := range old.SemanticProfiles {
		if old.SemanticProfiles[i].ID == "lisa-mueller" {
			lisaProfile = &old.SemanticProfiles[i]
		}
	}
	if lisaProfile == nil || lisaProfile.FactCount != 1 || lisaProfile.Facts[0].MemoryID != c1.Stored[0].ID ||
		!strings.Contains(lisaProfile.Summary, "Lisa Müller (person): Lisa leitet das Projekt Phoenix.") {
		t.Fatalf("profiles %+v", old.SemanticProfiles)
	}

	for _, tc := range []struct {
		name string
		q    knowmind.ReplayQuery
		want []string
	}{
		{"category", knowmind.ReplayQuery{At: before, Category: "project-info"}, []string{c1.Stored[0].ID}},
		{"entity type", knowmind.ReplayQuery{At: before, EntityType: "organisation"}, []string{c2.Stored[0].ID}},
		{"query", knowmind.ReplayQuery{At: before, Query: "Server Lieferung"}, []string{c2.Stored[0].ID}},
		{"query and type", knowmind.ReplayQuery{At: before, Query: "Server", EntityType: "person"}, []string{}},
		{"before anything", knowmind.ReplayQuery{At: before.Add(-time.Hour)}, []string{}},
		{"limit", knowmind.ReplayQuery{At: after, Limit: 1}, []string{up.NewMemoryID}},
		// update_fact carries the category over to the new version.
		{"category after the update", knowmind.ReplayQuery{At: after, Category: "customer"}, []string{up.NewMemoryID}},
	} {
		if tc.q.Limit == 0 {
			tc.q.Limit = 50
		}
		r, err := ten.Replay(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ids(r.Memories); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if tc.name == "limit" && !r.Truncated {
			t.Errorf("limit 1 of 2 not truncated")
		}
	}
	_, err = ten.Replay(ctx, knowmind.ReplayQuery{At: after, Limit: 0})
	wantError(t, err, knowmind.EINVALID, "", "limit")
	_, err = ten.Replay(ctx, knowmind.ReplayQuery{At: after, Limit: 5, Category: strings.Repeat("x", 201)})
	wantError(t, err, knowmind.EINVALID, "", "category")
}

// Chronological lists current memories newest first; profile condenses each entity's facts.
func TestRetrieveChronologicalAndProfile(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	lisa := fixedExtractor{entity: knowmind.CandidateEntity{Type: "person", Name: "Lisa Müller"}}
	acme := fixedExtractor{entity: knowmind.CandidateEntity{Type: "organisation", Name: "Acme GmbH"}}
	a, err := ten.Capture(ctx, knowmind.CaptureInput{Text: "Lisa leitet Phoenix.\nLisa spricht Spanisch.", Category: "person-info"}, lisa)
	if err != nil || len(a.Stored) != 2 {
		t.Fatalf("capture %+v %v", a, err)
	}
	b, err := ten.Capture(ctx, knowmind.CaptureInput{Text: "Acme zahlt quartalsweise.", Category: "customer"}, acme)
	if err != nil || len(b.Stored) != 1 {
		t.Fatalf("capture %+v %v", b, err)
	}
	plain, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Kantine", Content: "Die Kantine schließt um 14 Uhr."})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ten.Chronological(ctx, knowmind.RetrieveQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(r.Memories); len(got) != 4 || got[0] != plain.ID || got[1] != b.Stored[0].ID {
		t.Fatalf("chronological %v", got)
	}
	if len(r.SemanticProfiles) != 2 || r.SemanticProfiles[0].ID != "lisa-mueller" || r.SemanticProfiles[0].FactCount != 2 {
		t.Fatalf("profiles %+v", r.SemanticProfiles)
	}
	r, err = ten.Chronological(ctx, knowmind.RetrieveQuery{Limit: 10, Entity: &knowmind.EntityRef{Type: "organisation", ID: "acme-gmbh"}})
	if err != nil || !slices.Equal(ids(r.Memories), []string{b.Stored[0].ID}) {
		t.Fatalf("chronological about acme: %v %v", ids(r.Memories), err)
	}

	p, err := ten.Profiles(ctx, knowmind.RetrieveQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SemanticProfiles) != 2 || p.SemanticProfiles[0].ID != "lisa-mueller" || len(p.SemanticProfiles[0].Facts) != 2 ||
		p.SemanticProfiles[1].ID != "acme-gmbh" || p.SemanticProfiles[1].Name != "Acme GmbH" {
		t.Fatalf("profiles %+v", p.SemanticProfiles)
	}
	if len(p.Memories) != 3 || slices.Contains(ids(p.Memories), plain.ID) {
		t.Fatalf("profile memories %v", ids(p.Memories))
	}
	p, err = ten.Profiles(ctx, knowmind.RetrieveQuery{Limit: 10, EntityType: "organisation"})
	if err != nil || len(p.SemanticProfiles) != 1 || p.SemanticProfiles[0].ID != "acme-gmbh" {
		t.Fatalf("organisation profiles %+v %v", p.SemanticProfiles, err)
	}
	p, err = ten.Profiles(ctx, knowmind.RetrieveQuery{Limit: 10, Category: "customer"})
	if err != nil || len(p.SemanticProfiles) != 1 || p.SemanticProfiles[0].ID != "acme-gmbh" {
		t.Fatalf("customer profiles %+v %v", p.SemanticProfiles, err)
	}
}

// Graph mode: depth 1 returns the start memory's neighbours, depth 3 the chain with depths;
// relation_types narrows the walk; an asymmetric relation is walked forwards only.
func TestRetrieveGraphDepths(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	var id []string
	for _, c := range []string{"A: der Ausfall", "B: das Update", "C: der Zeitdruck", "D: die Planung", "E: ein Nebenthema"} {
		r, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: c[:1], Content: c})
		if err != nil {
			t.Fatal(err)
		}
		id = append(id, r.ID)
	}
	link := func(from, to int, rel string) {
		if _, err := ten.Link(ctx, id[from], id[to], rel); err != nil {
			t.Fatal(err)
		}
	}
	link(0, 1, "CAUSED_BY")  // A caused by B
	link(1, 2, "CAUSED_BY")  // B caused by C
	link(2, 3, "CAUSED_BY")  // C caused by D
	link(4, 0, "RELATES_TO") // E relates to A (symmetric)

	depthOf := func(r knowmind.RetrieveResult) map[string]int {
		m := map[string]int{}
		for _, mem := range r.Memories {
			m[mem.ID] = *mem.Depth
		}
		return m
	}
	r1, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[0], MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := depthOf(r1); len(d) != 3 || d[id[0]] != 0 || d[id[1]] != 1 || d[id[4]] != 1 {
		t.Fatalf("depth 1: %v", d)
	}
	if len(r1.Relations) != 2 {
		t.Fatalf("depth 1 relations %+v", r1.Relations)
	}
	for _, rel := range r1.Relations {
		ok := (rel.SourceID == id[0] && rel.TargetID == id[1] && rel.Type == "CAUSED_BY") ||
			(rel.Type == "RELATES_TO" && (rel.SourceID == id[0] || rel.TargetID == id[0]))
		if !ok || rel.Depth != 1 || rel.Confidence != 1 || rel.CreatedBy == "" || rel.CreatedAt.IsZero() {
			t.Errorf("depth 1 relation %+v", rel)
		}
	}
	r3, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[0], MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d := depthOf(r3); len(d) != 5 || d[id[2]] != 2 || d[id[3]] != 3 {
		t.Fatalf("depth 3: %v", d)
	}
	if len(r3.Relations) != 4 {
		t.Fatalf("depth 3 relations %+v", r3.Relations)
	}
	for _, rel := range r3.Relations {
		if rel.SourceID == id[2] && (rel.TargetID != id[3] || rel.Type != "CAUSED_BY" || rel.Depth != 3) {
			t.Errorf("C→D relation %+v", rel)
		}
	}
	// From D the default walk follows the inverse (CAUSES) back up, reporting the links as made.
	rd, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[3], MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d := depthOf(rd); len(d) != 3 || d[id[2]] != 1 || d[id[1]] != 2 {
		t.Fatalf("from D: %v", d)
	}
	if rel := rd.Relations[0]; rel.SourceID != id[2] || rel.TargetID != id[3] || rel.Type != "CAUSED_BY" {
		t.Fatalf("from D, the first relation %+v", rel)
	}
	// Only caused_by (the seed's name), forwards: from D nothing, from A the chain without E.
	rc, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[3], MaxDepth: 5, RelationTypes: []string{"caused_by"}})
	if err != nil || len(rc.Memories) != 1 || len(rc.Relations) != 0 {
		t.Fatalf("caused_by from D: %+v %v", rc, err)
	}
	ra, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[0], MaxDepth: 5, RelationTypes: []string{"caused_by"}})
	if d := depthOf(ra); err != nil || len(d) != 4 || d[id[3]] != 3 {
		t.Fatalf("caused_by from A: %v %v", d, err)
	}
	rr, err := ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[0], MaxDepth: 5, RelationTypes: []string{"relates_to"}})
	if d := depthOf(rr); err != nil || len(d) != 2 || d[id[4]] != 1 {
		t.Fatalf("relates_to from A: %v %v", d, err)
	}
	_, err = ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: "mem_nope", MaxDepth: 2})
	wantError(t, err, knowmind.ENOTFOUND, "", "start_memory_id")
	_, err = ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[0], MaxDepth: 6})
	wantError(t, err, knowmind.EINVALID, "", "max_depth")
	_, err = ten.RetrieveGraph(ctx, knowmind.RetrieveQuery{StartMemoryID: id[0], MaxDepth: 2, RelationTypes: []string{"SUPERSEDES"}})
	wantError(t, err, knowmind.EINVALID, "", "relation_types")
}

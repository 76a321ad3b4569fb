package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

type supersedesEdge struct {
	ID        string    `json:"Memory.id"`
	EdgeID    string    `json:"SUPERSEDES|id"`
	CreatedAt time.Time `json:"SUPERSEDES|created_at"`
	ValidFrom time.Time `json:"SUPERSEDES|valid_from"`
	Inverse   bool      `json:"SUPERSEDES|inverse"`
}

type supersededByEdge struct {
	ID        string    `json:"Memory.id"`
	EdgeID    string    `json:"SUPERSEDED_BY|id"`
	ValidFrom time.Time `json:"SUPERSEDED_BY|valid_from"`
	Inverse   bool      `json:"SUPERSEDED_BY|inverse"`
}

// versionEdges reads a version's SUPERSEDES and SUPERSEDED_BY edges with facets.
func versionEdges(t *testing.T, ten *graph.Tenant, id string) (supersedes []supersedesEdge, supersededBy []supersededByEdge) {
	t.Helper()
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(context.Background(), `query q($id: string) {
  q(func: eq(Memory.id, $id)) {
    SUPERSEDES @facets { Memory.id }
    SUPERSEDED_BY @facets { Memory.id }
  }
}`, map[string]string{"$id": id})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Q []struct {
			S  []supersedesEdge   `json:"SUPERSEDES"`
			SB []supersededByEdge `json:"SUPERSEDED_BY"`
		}
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Q) == 0 {
		return nil, nil
	}
	return out.Q[0].S, out.Q[0].SB
}

func TestUpdateFactChain(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v1, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{
		Title: "Anschrift Müller GmbH", Content: "Müller GmbH, Hauptstraße 1, 32756 Detmold.",
		MemoryType: "reference", Tags: []string{"kunde", "adresse"}, Source: "crm",
	})
	if err != nil {
		t.Fatal(err)
	}
	up2, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "Anschrift Müller GmbH ab 01.06.2026",
		NewContent: "Müller GmbH, Industriestraße 7, 32756 Detmold.", UpdateReason: "Adresse geändert zum 01.06.2026"})
	if err != nil {
		t.Fatal(err)
	}
	if up2.OldMemoryID != v1.ID || up2.NewMemoryID == "" || up2.NewMemoryID == v1.ID ||
		up2.SupersedesEdge != graph.EdgeID(up2.NewMemoryID, "SUPERSEDES", v1.ID) {
		t.Fatalf("update 1 = %+v", up2)
	}
	up3, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: up2.NewMemoryID, NewTitle: "Anschrift Müller GmbH ab 01.09.2026",
		NewContent: "Müller GmbH, Am Hafen 3, 32756 Detmold."})
	if err != nil {
		t.Fatal(err)
	}

	m1, _ := ten.GetMemory(ctx, v1.ID)
	m2, _ := ten.GetMemory(ctx, up2.NewMemoryID)
	m3, _ := ten.GetMemory(ctx, up3.NewMemoryID)
	// Valid time: each version is valid until the next one starts, the same instant.
	if m1.ValidTo == nil || !m1.ValidTo.Equal(m2.ValidFrom) || m2.ValidTo == nil || !m2.ValidTo.Equal(m3.ValidFrom) || m3.ValidTo != nil {
		t.Fatalf("valid times: v1 %v–%v, v2 %v–%v, v3 %v–%v", m1.ValidFrom, m1.ValidTo, m2.ValidFrom, m2.ValidTo, m3.ValidFrom, m3.ValidTo)
	}
	// Transaction time: each version records when it was stored and keeps it.
	// v1's record is not rewritten by the update (only valid_to and updated_at).
	if !(m1.CreatedAt.Before(m2.CreatedAt) && m2.CreatedAt.Before(m3.CreatedAt)) || !m2.CreatedAt.Equal(m2.ValidFrom) ||
		!m1.UpdatedAt.Equal(*m1.ValidTo) {
		t.Errorf("created_at: %v, %v, %v; v1 updated_at %v", m1.CreatedAt, m2.CreatedAt, m3.CreatedAt, m1.UpdatedAt)
	}
	// The new version carries the new text and reason, the target's type, tags and source.
	if m2.Title != "Anschrift Müller GmbH ab 01.06.2026" || !strings.Contains(m2.Content, "Industriestraße 7") ||
		m2.UpdateReason != "Adresse geändert zum 01.06.2026" || m2.MemoryType != "reference" || m2.Source != "crm" ||
		len(m2.Tags) != 2 || m2.Kind != knowmind.KindMemory || m2.Status != knowmind.StatusIndexed || m2.Chunks != 1 {
		t.Errorf("v2 = %+v", m2)
	}
	// Nothing is deleted: v1 keeps its content and chunk.
	if m1.Content != "Müller GmbH, Hauptstraße 1, 32756 Detmold." || m1.Chunks != 1 || m1.Status != knowmind.StatusIndexed {
		t.Errorf("v1 after update = %+v", m1)
	}

	// Edges: v2 -SUPERSEDES-> v1 and v1 -SUPERSEDED_BY-> v2, with facets.
	s2, sb2 := versionEdges(t, ten, up2.NewMemoryID)
	if len(s2) != 1 || s2[0].ID != v1.ID || s2[0].EdgeID != up2.SupersedesEdge || s2[0].Inverse ||
		!s2[0].ValidFrom.Equal(m2.ValidFrom) || !s2[0].CreatedAt.Equal(m2.CreatedAt) {
		t.Errorf("v2 SUPERSEDES = %+v", s2)
	}
	if len(sb2) != 1 || sb2[0].ID != up3.NewMemoryID {
		t.Errorf("v2 SUPERSEDED_BY = %+v", sb2)
	}
	s1, sb1 := versionEdges(t, ten, v1.ID)
	if len(s1) != 0 || len(sb1) != 1 || sb1[0].ID != up2.NewMemoryID || !sb1[0].Inverse ||
		sb1[0].EdgeID != graph.EdgeID(v1.ID, "SUPERSEDED_BY", up2.NewMemoryID) {
		t.Errorf("v1 edges: SUPERSEDES %+v, SUPERSEDED_BY %+v", s1, sb1)
	}
	// Facets are datetimes, so point-in-time filters work on them.
	if n := queryCount(t, ten, `{ var(func: has(SUPERSEDES)) { s as SUPERSEDES @facets(le(valid_from, "2100-01-01T00:00:00Z")) } q(func: uid(s)) { count(uid) } }`, nil); n != 2 {
		t.Errorf("datetime facet filter matched %d SUPERSEDES targets, want 2", n)
	}

	// Updating an old version again is refused, naming the current one.
	for _, old := range []string{v1.ID, up2.NewMemoryID} {
		_, err = ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: old, NewTitle: "Fork", NewContent: "Ein Zweig der Historie."})
		e := knowmind.AsError(err)
		if e == nil || e.Code != knowmind.ECONFLICT || e.Data["current_version_id"] != up3.NewMemoryID || !strings.Contains(e.Message, up3.NewMemoryID) {
			t.Fatalf("update of superseded %s: %v, want ECONFLICT naming %s", old, err, up3.NewMemoryID)
		}
	}
	if n := countMemories(t, ten); n != 3 {
		t.Fatalf("%d memories, want 3 versions", n)
	}
	// Stats: 3 versions, 2 SUPERSEDES relations (their inverses not counted again), 3 chunks.
	st, err := ten.Stats(ctx)
	if err != nil || st != (knowmind.Stats{Memories: 3, Edges: 2, Chunks: 3}) {
		t.Fatalf("stats = %+v, %v", st, err)
	}
	// The old content is not the current fact: storing it again is new.
	again, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Müller GmbH, Hauptstraße 1, 32756 Detmold."})
	if err != nil || again.Unchanged {
		t.Fatalf("storing superseded content again = %+v, %v; want a new memory", again, err)
	}
}

func TestUpdateFactValidation(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v1, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Der Empfang ist ab 8 Uhr besetzt."})
	if err != nil {
		t.Fatal(err)
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name                string
		in                  knowmind.UpdateFactInput
		code, reason, param string
	}{
		{"target missing", knowmind.UpdateFactInput{NewTitle: "t", NewContent: "c"}, knowmind.EINVALID, "", "target_id"},
		{"target too long", knowmind.UpdateFactInput{TargetID: long(knowmind.MaxIDChars + 1), NewTitle: "t", NewContent: "c"}, knowmind.EINVALID, "", "target_id"},
		{"title missing", knowmind.UpdateFactInput{TargetID: v1.ID, NewContent: "c"}, knowmind.EINVALID, "", "new_title"},
		{"title blank", knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "  ", NewContent: "c"}, knowmind.EINVALID, "", "new_title"},
		{"title too long", knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: long(knowmind.MaxTitleChars + 1), NewContent: "c"}, knowmind.EINVALID, "", "new_title"},
		{"content missing", knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "t"}, knowmind.EINVALID, "", "new_content"},
		{"content too large", knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "t", NewContent: long(knowmind.MaxContentChars + 1)}, knowmind.EINTERNAL, knowmind.ReasonTooLarge, ""},
		{"reason too long", knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "t", NewContent: "c", UpdateReason: long(knowmind.MaxUpdateReasonChars + 1)}, knowmind.EINVALID, "", "update_reason"},
		{"unknown target", knowmind.UpdateFactInput{TargetID: "memory_unknown", NewTitle: "t", NewContent: "c"}, knowmind.ENOTFOUND, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ten.UpdateFact(ctx, tc.in)
			wantError(t, err, tc.code, tc.reason, tc.param)
		})
	}
	if n := countMemories(t, ten); n != 1 {
		t.Fatalf("%d memories after rejected updates, want 1", n)
	}
	if m, _ := ten.GetMemory(ctx, v1.ID); m.ValidTo != nil {
		t.Fatalf("target closed by a rejected update")
	}
}

// Concurrent updates of one version: exactly one wins, the others get
// ECONFLICT naming the winner; history does not fork.
func TestUpdateFactConcurrentOneWins(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v1, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Die Hotline ist bis 18 Uhr erreichbar."})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	var (
		wg   sync.WaitGroup
		res  [n]knowmind.UpdateFactResult
		errs [n]error
	)
	for i := range n {
		wg.Go(func() {
			res[i], errs[i] = ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "Hotline",
				NewContent: "Die Hotline ist bis " + string(rune('A'+i)) + " erreichbar."})
		})
	}
	wg.Wait()
	winner := ""
	for i := range n {
		if errs[i] == nil {
			if winner != "" {
				t.Fatalf("two updates of one version succeeded: %s and %s", winner, res[i].NewMemoryID)
			}
			winner = res[i].NewMemoryID
		}
	}
	if winner == "" {
		t.Fatalf("no update succeeded: %v", errs)
	}
	for i := range n {
		if errs[i] != nil {
			e := knowmind.AsError(errs[i])
			if e == nil || e.Code != knowmind.ECONFLICT || e.Data["current_version_id"] != winner {
				t.Errorf("loser %d: %v, want ECONFLICT naming %s", i, errs[i], winner)
			}
		}
	}
	if got := countMemories(t, ten); got != 2 {
		t.Fatalf("%d memories, want 2", got)
	}
	_, sb := versionEdges(t, ten, v1.ID)
	if len(sb) != 1 || sb[0].ID != winner {
		t.Fatalf("v1 SUPERSEDED_BY = %+v, want only %s", sb, winner)
	}
}

// A version marked superseded by a history edge alone (X SUPERSEDES v1, v1's
// valid_to untouched: knowmind_link wrote such edges before it refused them)
// cannot be updated: a second successor would fork the
// history. The conflict names X, v1's successor.
func TestUpdateFactOfLinkedSupersededVersion(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v1, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Der Empfang ist im Erdgeschoss."})
	if err != nil {
		t.Fatal(err)
	}
	x, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Der Empfang ist im ersten Stock."})
	if err != nil {
		t.Fatal(err)
	}
	writeHistoryEdge(t, ten, x.ID, v1.ID)
	_, err = ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "Empfang", NewContent: "Der Empfang ist im Keller."})
	if e := knowmind.AsError(err); e == nil || e.Code != knowmind.ECONFLICT || e.Data["current_version_id"] != x.ID {
		t.Fatalf("update of a version linked as superseded: %v, want ECONFLICT naming %s", err, x.ID)
	}
	if _, sb := versionEdges(t, ten, v1.ID); len(sb) != 1 || sb[0].ID != x.ID {
		t.Fatalf("v1 SUPERSEDED_BY = %+v, want only %s", sb, x.ID)
	}
	if n := countMemories(t, ten); n != 2 {
		t.Fatalf("%d memories, want 2", n)
	}
	// Its successor is current and can be updated.
	if _, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: x.ID, NewTitle: "Empfang", NewContent: "Der Empfang ist im Keller."}); err != nil {
		t.Fatal(err)
	}
}

// A failing embedder leaves the target current and writes nothing.
func TestUpdateFactEmbeddingFailsChangesNothing(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v1, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Parkplätze sind im Hof."})
	if err != nil {
		t.Fatal(err)
	}
	_, err = withBrokenEmbedder(t, ten).UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "Parken", NewContent: "Parkplätze sind an der Straße."})
	wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonIngestFailed, "")
	if m, _ := ten.GetMemory(ctx, v1.ID); m.ValidTo != nil {
		t.Fatal("target closed although the new version failed")
	}
	if n := countMemories(t, ten); n != 1 {
		t.Fatalf("%d memories, want 1", n)
	}
}

package cells_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/cells"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Two cells: two managed Dgraph clusters (zero + alpha each, on their own free ports and data
// dirs), each with its own guardian password and service secret.
var envs = map[string]*dgraphtest.Env{}

func TestMain(m *testing.M) {
	for _, cell := range []string{"cell-a", "cell-b"} {
		env, err := dgraphtest.Start(context.Background(), nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cells: start", cell, err)
			for _, e := range envs {
				e.Stop()
			}
			os.Exit(1)
		}
		envs[cell] = env
	}
	code := m.Run()
	for _, e := range envs {
		e.Stop()
	}
	os.Exit(code)
}

func router() *cells.Router {
	return cells.New(map[string]*graph.Client{"cell-a": envs["cell-a"].Client, "cell-b": envs["cell-b"].Client})
}

// Tenants spread over two cells are routed by tenant; one tenant is moved from its cell to the
// other (export, import, verify, switch) while recalls of it go on without a miss, its writes
// are refused as retryable during the read-only window only, and nothing acknowledged is lost.
func TestMoveTenantBetweenCellsWhileReading(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := router()
	tenants := make([]string, 4)
	ids := map[string][]string{} // tenant → memory ids, by word index
	words := []string{"Zahnradfabrik", "Getriebeoel", "Kupplungsscheibe", "Werkstattbuch", "Anhaengerkupplung", "Gabelstapler"}
	for i := range tenants {
		tenants[i] = dgraphtest.TenantName(t)
		cell := []string{"cell-a", "cell-b"}[i%2]
		if err := r.Place(ctx, tenants[i], cell); err != nil {
			t.Fatal(err)
		}
		for j, w := range words {
			err := r.Write(ctx, tenants[i], func(ten *graph.Tenant) error {
				res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: fmt.Sprintf("%s %d", w, i),
					Content: fmt.Sprintf("Die %s von Mandant %d steht im Lager %d.", w, i, j)})
				ids[tenants[i]] = append(ids[tenants[i]], res.MemoryID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	mover := tenants[0] // in cell-a
	// Its agents' credentials, one of them revoked.
	secret, _, err := envs["cell-a"].Client.CreateToken(ctx, mover, []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	revoked, revokedTok, err := envs["cell-a"].Client.CreateToken(ctx, mover, []knowmind.Scope{knowmind.ScopeRead}, "old agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := envs["cell-a"].Client.RevokeToken(ctx, revokedTok.ID); err != nil {
		t.Fatal(err)
	}
	// History travels: a document replaced, a relation linked.
	err = r.Write(ctx, mover, func(ten *graph.Tenant) error {
		if _, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: "# Wartung\n\nDas Getriebe wird jaehrlich geprueft."}); err != nil {
			return err
		}
		if _, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: "# Wartung\n\nDas Getriebe wird halbjaehrlich geprueft."}); err != nil {
			return err
		}
		_, err := ten.Link(ctx, ids[mover][0], ids[mover][1], "DEPENDS_ON")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each cell holds only its own tenants.
	for _, ten := range tenants {
		p, _ := r.Placement(ten)
		other := map[string]string{"cell-a": "cell-b", "cell-b": "cell-a"}[p.Cell]
		if _, err := envs[other].Client.Tenant(ctx, ten, false); err == nil {
			t.Fatalf("tenant %s of %s exists in %s too", ten, p.Cell, other)
		}
	}

	// Readers recall the mover's memories in a loop; a writer keeps storing.
	var reads, misses, readErrs, refused atomic.Int64
	var acked []string
	var ackMu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			j := i % len(words)
			err := r.Read(ctx, mover, func(ten *graph.Tenant) error {
				res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: words[j], K: 5})
				if err != nil {
					return err
				}
				if !slices.ContainsFunc(res.Hits, func(h knowmind.RecallHit) bool { return h.MemoryID == ids[mover][j] }) {
					misses.Add(1)
				}
				return nil
			})
			reads.Add(1)
			if err != nil {
				readErrs.Add(1)
				t.Logf("read: %v", err)
			}
		}
	})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			title := fmt.Sprintf("Nachtrag %03d", i)
			err := r.Write(ctx, mover, func(ten *graph.Tenant) error {
				_, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: fmt.Sprintf("Nachtrag %d zur Inventur.", i)})
				return err
			})
			var ke *knowmind.Error
			switch {
			case err == nil:
				ackMu.Lock()
				acked = append(acked, title)
				ackMu.Unlock()
			case errors.As(err, &ke) && ke.Code == knowmind.EUNAVAILABLE:
				refused.Add(1)
			default:
				t.Errorf("write %d: %v", i, err)
			}
		}
	})
	time.Sleep(500 * time.Millisecond)
	dumps := t.TempDir()
	rep, err := r.Move(ctx, mover, "cell-b", dumps)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("move %s → %s: %d records, %d tokens; export %s, import %s, verify %s; read-only %s",
		rep.From, rep.To, rep.Records, rep.Tokens, rep.Export.Round(time.Millisecond), rep.Import.Round(time.Millisecond),
		rep.Verify.Round(time.Millisecond), rep.ReadOnly.Round(time.Millisecond))
	t.Logf("during the move: %d recalls (%d missed, %d failed), %d writes acknowledged, %d refused as read-only",
		reads.Load(), misses.Load(), readErrs.Load(), len(acked), refused.Load())
	if readErrs.Load() > 0 || misses.Load() > 0 || reads.Load() < 10 {
		t.Errorf("reads during the move: %d, %d failed, %d missed; want every one answered", reads.Load(), readErrs.Load(), misses.Load())
	}
	if refused.Load() == 0 || len(acked) == 0 {
		t.Errorf("writes: %d acknowledged, %d refused; want both (before/after the window and during it)", len(acked), refused.Load())
	}
	// The export files hold the whole tenant: readable by the service's user only.
	files, _ := os.ReadDir(dumps)
	for _, f := range files {
		if info, err := f.Info(); err != nil || info.Mode().Perm()&0o077 != 0 {
			t.Errorf("export file %s: mode %v, %v; want no access for group or others", f.Name(), info.Mode().Perm(), err)
		}
	}
	if len(files) == 0 {
		t.Error("the move left no export file to check")
	}
	if p, _ := r.Placement(mover); p.Cell != "cell-b" || p.ReadOnly {
		t.Fatalf("placement after the move: %+v", p)
	}

	// Everything acknowledged is in the target cell, and writes work there.
	err = r.Write(ctx, mover, func(ten *graph.Tenant) error {
		_, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Nach dem Umzug", Content: "Erster Eintrag in der neuen Zelle."})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	moved, err := envs["cell-b"].Client.Tenant(ctx, mover, false)
	if err != nil {
		t.Fatal(err)
	}
	recent, err := moved.ListRecentPage(ctx, 50, "")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, it := range recent.Items {
		have[it.Title] = true
	}
	ackMu.Lock()
	for _, a := range append(slices.Clone(acked), "Nach dem Umzug") {
		if !have[a] {
			t.Errorf("acknowledged write %q is not in the target cell", a)
		}
	}
	ackMu.Unlock()
	// The tokens came along: the agent's works in the target cell, the revoked one does not.
	if rep.Tokens != 2 {
		t.Errorf("move copied %d tokens, want 2", rep.Tokens)
	}
	if tok, err := envs["cell-b"].Client.VerifyToken(ctx, secret); err != nil || tok.Tenant != mover {
		t.Errorf("the agent's token in the target cell: %+v, %v", tok, err)
	}
	if _, err := envs["cell-b"].Client.VerifyToken(ctx, revoked); err == nil {
		t.Errorf("the revoked token works in the target cell")
	}
	// The relation came along.
	rels, err := moved.ListRelations(ctx, ids[mover][0])
	if err != nil {
		t.Fatal(err)
	}
	if len(rels.Outgoing) != 1 || rels.Outgoing[0].RelType != "DEPENDS_ON" || rels.Outgoing[0].To != ids[mover][1] {
		t.Errorf("relations of the moved memory in the target cell: %+v, want its DEPENDS_ON", rels)
	}
	// The other tenants did not move and still answer.
	for _, ten := range tenants[1:] {
		err := r.Read(ctx, ten, func(tt *graph.Tenant) error {
			res, err := tt.Recall(ctx, knowmind.RecallQuery{Query: words[2], K: 5})
			if err == nil && !slices.ContainsFunc(res.Hits, func(h knowmind.RecallHit) bool { return h.MemoryID == ids[ten][2] }) {
				err = fmt.Errorf("recall misses %s", ids[ten][2])
			}
			return err
		})
		if err != nil {
			t.Errorf("tenant %s: %v", ten, err)
		}
	}
	if got := r.Tenants("cell-b"); len(got) != 3 {
		t.Errorf("cell-b holds %v, want 3 tenants", got)
	}
}

// A tenant's notes move with it: projects (one renamed), notes with their revisions, links
// (one closed by an edit) and pending links, private memory, the trash. In the target cell every
// note reads as in the source (get_note detailed, revisions, version token), the former body is
// found as of its time, and a token limited to one project sees exactly that project there.
func TestMoveCarriesNotes(t *testing.T) {
	ctx := context.Background()
	r := router()
	tenant := dgraphtest.TenantName(t)
	if err := r.Place(ctx, tenant, "cell-a"); err != nil {
		t.Fatal(err)
	}
	scope := knowmind.NoteScope{Principal: "tok:test"}
	actor := knowmind.Actor{Principal: "tok:test", Via: "test"}
	var ids []string
	var before time.Time
	err := r.Write(ctx, tenant, func(ten *graph.Tenant) error {
		if _, err := ten.CreateProject(ctx, "lager-alt", "Lager"); err != nil {
			return err
		}
		if _, err := ten.RenameProject(ctx, scope, "lager-alt", "lager", ""); err != nil {
			return err
		}
		for _, n := range []struct{ project, path, body string }{
			{"main", "", "# Lagerplan\n\nRegal 4 ist voll, siehe [[Inventur]] und [[Bestellung]]."},
			{"main", "Listen", "# Inventur\n\nJeden Freitag."},
			{"lager", "Halle 2", "---\ntyp: plan\n---\n# Halle 2\n\nStapler parken links."},
		} {
			res, err := ten.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: n.project, Path: n.path, Body: n.body,
				Class: knowmind.ClassUserDoc, Actor: actor})
			if err != nil {
				return err
			}
			ids = append(ids, res.ID)
		}
		first, err := ten.GetNote(ctx, scope, ids[0], "", false)
		if err != nil {
			return err
		}
		time.Sleep(30 * time.Millisecond)
		before = time.Now().UTC()
		time.Sleep(30 * time.Millisecond)
		if _, err := ten.EditNote(ctx, scope, knowmind.EditNoteInput{ID: ids[0], VersionToken: first.VersionToken, Op: knowmind.EditReplace,
			Content: "# Lagerplan\n\nRegal 5 ist frei, siehe [[Bestellung]].", Actor: actor}); err != nil {
			return err
		}
		mem, err := ten.Remember(ctx, scope, knowmind.ClassAgentMemory, "lager", "notes", "Halle 2 schliesst um 18 Uhr.", actor)
		if err != nil {
			return err
		}
		ids = append(ids, mem.ID)
		gone, err := ten.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: "main", Body: "# Entwurf\n\nAlt.", Class: knowmind.ClassUserDoc, Actor: actor})
		if err != nil {
			return err
		}
		return ten.TrashNote(ctx, scope, gone.ID, "", actor)
	})
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := envs["cell-a"].Client.CreateProjectToken(ctx, tenant, []knowmind.Scope{knowmind.ScopeRead}, []string{"lager"}, "lager agent", nil)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := r.Move(ctx, tenant, "cell-b", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("moved %d records, %d tokens; read-only %s", rep.Records, rep.Tokens, rep.ReadOnly.Round(time.Millisecond))
	if p, _ := r.Placement(tenant); p.Cell != "cell-b" || p.ReadOnly {
		t.Fatalf("placement after the move: %+v", p)
	}
	source, err := envs["cell-a"].Client.Tenant(ctx, tenant, false) // kept until its retention ends
	if err != nil {
		t.Fatal(err)
	}
	moved, err := envs["cell-b"].Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		want, err := source.GetNote(ctx, scope, id, "", true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := moved.GetNote(ctx, scope, id, "", true)
		if err != nil {
			t.Fatalf("note %s in the target cell: %v", id, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("note %s in the target cell:\n got %+v\nwant %+v", id, got, want)
		}
		wantRevs, _ := source.Revisions(ctx, scope, id)
		gotRevs, err := moved.Revisions(ctx, scope, id)
		if err != nil || !reflect.DeepEqual(gotRevs, wantRevs) {
			t.Errorf("revisions of %s in the target cell: %+v, %v; want %+v", id, gotRevs, err, wantRevs)
		}
	}
	if revs, _ := moved.Revisions(ctx, scope, ids[0]); len(revs) != 1 || !strings.Contains(revs[0].Content, "Regal 4") {
		t.Errorf("the edited note's former body in the target cell: %+v", revs)
	}
	res, err := moved.Recall(ctx, knowmind.RecallQuery{Query: "Regal 4 voll", K: 5, AsOf: &before, MinScore: knowmind.RecallMinScore})
	if err != nil || !slices.ContainsFunc(res.Hits, func(h knowmind.RecallHit) bool { return h.MemoryID == ids[0] }) {
		t.Errorf("the former body as of its time in the target cell: %+v, %v", res.Hits, err)
	}
	if trash, err := moved.ListTrash(ctx); err != nil || len(trash) != 1 {
		t.Errorf("the trash in the target cell: %+v, %v", trash, err)
	}

	// The project-limited token sees exactly its project in the target cell.
	tok, err := envs["cell-b"].Client.VerifyToken(ctx, secret)
	if err != nil || !slices.Equal(tok.Projects, []string{"lager"}) {
		t.Fatalf("the project token in the target cell: %+v, %v", tok, err)
	}
	limited := knowmind.NoteScope{Principal: "tok:test", Projects: tok.Projects}
	projects, err := moved.ListProjects(ctx, limited)
	if err != nil || len(projects) != 1 || projects[0].Handle != "lager" || !slices.Equal(projects[0].Aliases, []string{"lager-alt"}) {
		t.Errorf("projects the limited token sees in the target cell: %+v, %v", projects, err)
	}
	if _, err := moved.GetNote(ctx, limited, ids[2], "", false); err != nil {
		t.Errorf("its project's note: %v", err)
	}
	if _, err := moved.GetNote(ctx, limited, ids[0], "", false); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Errorf("a note of another project through the limited token: %v, want not found", err)
	}
}

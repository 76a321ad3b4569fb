package graph_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestExportImportCarriesNotes fills a tenant with everything notes hold — projects (one renamed,
// so with a former handle), shared notes in folders with front matter and tags, a private agent
// memory and a user profile, an edit that keeps the former body as a revision and closes a
// dropped wiki link, a rename (an alias), a typed link, a link waiting for a title, a trashed
// note and a principal's visit — exports it, imports the file into a new tenant and compares:
// an export of the copy equals the original's record for record, get_note (detailed) answers
// the same for every note with the same version token, the former body is found as of its time
// and not now, a project-limited scope sees exactly its project, and the pending link resolves
// when its note is created in the copy.
func TestExportImportCarriesNotes(t *testing.T) {
	ctx := context.Background()
	src := dgraphtest.NewTenant(t)
	if _, err := src.CreateProject(ctx, "kunden-alt", "Kunden"); err != nil {
		t.Fatal(err)
	}
	if _, err := src.RenameProject(ctx, notesScope, "kunden-alt", "kunden", ""); err != nil {
		t.Fatal(err)
	}
	create := func(project, path, body string) knowmind.NoteWriteResult {
		t.Helper()
		res, err := src.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: project, Path: path, Body: body,
			Class: knowmind.ClassUserDoc, Actor: notesAgent})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	beta := create("main", "Technik", "# Beta\n\nDie Schnittstelle spricht JSON.")
	alpha := create("main", "", "---\ntype: konzept\nstatus: entwurf\ntags: [plan, q3]\n---\n# Alpha\n\nDie Abfahrt ist am Montag mit der Bahn nach Kopenhagen, siehe [[Beta]] und [[Gamma]].")
	kunde := create("kunden", "Müller", "# Müller GmbH\n\nKunde seit 2021.")
	if _, err := src.LinkNote(ctx, notesScope, kunde.ID, knowmind.LinkSpec{ToTitle: "Müller Vertrag"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.LinkNote(ctx, notesScope, beta.ID, knowmind.LinkSpec{To: alpha.ID, RelType: "RELATES_TO"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	before := time.Now().UTC()
	time.Sleep(30 * time.Millisecond)
	// The edit drops [[Beta]]: its edge is closed, the former body kept as revision 1.
	edited, err := src.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: alpha.ID, VersionToken: alpha.VersionToken, Op: knowmind.EditReplace,
		Content: "---\ntype: konzept\ntags: [plan]\n---\n# Alpha\n\nDie Abfahrt ist am Dienstag mit dem Flugzeug nach Lissabon, siehe [[Gamma]].", Actor: notesAgent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.RenameNote(ctx, notesScope, beta.ID, beta.VersionToken, "Beta Schnittstelle", notesAgent); err != nil {
		t.Fatal(err)
	}
	trashed := create("main", "", "# Alt\n\nWird gelöscht.")
	if err := src.TrashNote(ctx, notesScope, trashed.ID, "", notesAgent); err != nil {
		t.Fatal(err)
	}
	agent, err := src.Remember(ctx, notesScope, knowmind.ClassAgentMemory, "kunden", "notes", "Müller will Angebote per Post.", notesAgent)
	if err != nil {
		t.Fatal(err)
	}
	profile, err := src.Remember(ctx, notesScope, knowmind.ClassUserProfile, "", "sprache", "Schreibt lieber Deutsch.", notesAgent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.StartSession(ctx, notesScope, "main"); err != nil { // a visit
		t.Fatal(err)
	}
	memory, err := src.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Kontakt", Content: "Frau Müller ist die Ansprechpartnerin."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Link(ctx, memory.ID, kunde.ID, "REFERENCES"); err != nil { // a memory linked to a note
		t.Fatal(err)
	}

	path, recs := exportJSONL(t, src)
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[r.Type]++
	}
	want := map[string]int{"project": 2, "note": 6, "memory": 1, "revision": 2, "forward": 2, "visit": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("export holds %d %s records, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	if kinds["relation"] != 3 { // alpha -> beta (closed by the edit), beta -> alpha, memory -> kunde
		t.Errorf("export holds %d relations, want the 3 links of notes", kinds["relation"])
	}

	dst := dgraphtest.NewTenant(t)
	f, err := bulk.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := importFile(t, dst, f, 4) // several batches: projects and notes cross batch ends
	if sum.Written != len(recs) {
		t.Fatalf("import wrote %d of %d records", sum.Written, len(recs))
	}
	_, again := exportJSONL(t, dst)
	if diff := recordDiff(recs, again); diff != "" {
		t.Fatalf("the copy exports differently: %s", diff)
	}
	// Written again (as an import interrupted before its cursor committed does): nothing new.
	var entries, after []knowmind.Record
	for _, r := range recs {
		if knowmind.AfterEntries(r.Type) {
			after = append(after, r)
		} else {
			entries = append(entries, r)
		}
	}
	for _, write := range []struct {
		recs []knowmind.Record
		fn   func(context.Context, []knowmind.Record, knowmind.BatchCursor) ([]knowmind.ItemResult, error)
	}{{entries, dst.WriteEntries}, {after, dst.WriteRelations}} {
		res, err := write.fn(ctx, write.recs, knowmind.BatchCursor{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Status != knowmind.ItemUnchanged {
				t.Errorf("written again, %s record %d: %+v", write.recs[i].Type, i, r)
			}
		}
	}

	for _, id := range []string{alpha.ID, beta.ID, kunde.ID, agent.ID, profile.ID} {
		w, err := src.GetNote(ctx, notesScope, id, "", true)
		if err != nil {
			t.Fatal(err)
		}
		g, err := dst.GetNote(ctx, notesScope, id, "", true)
		if err != nil {
			t.Fatalf("note %s after import: %v", id, err)
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("note %s after import:\n got %+v\nwant %+v", id, g, w)
		}
	}
	// The agent's version token still matches: an edit with it succeeds in the copy.
	if _, err := dst.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: alpha.ID, VersionToken: edited.VersionToken, Op: knowmind.EditAppend,
		Content: "Nachtrag.", Actor: notesAgent}); err != nil {
		t.Fatalf("edit with the token read before the move: %v", err)
	}
	// The former body as of its time, and not now.
	found := func(ten *graph.Tenant, at *time.Time) bool {
		t.Helper()
		res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: "Bahn nach Kopenhagen", K: 5, AsOf: at, MinScore: knowmind.RecallMinScore})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Hits, func(h knowmind.RecallHit) bool { return h.MemoryID == alpha.ID })
	}
	if !found(dst, &before) || found(dst, nil) {
		t.Errorf("the former body: found as of before the edit %v, now %v; want true, false", found(dst, &before), found(dst, nil))
	}
	// A scope limited to one project sees its notes, not the other's (by its former handle too).
	limited := knowmind.NoteScope{Principal: notesScope.Principal, Projects: []string{"kunden-alt"}}
	if _, err := dst.GetNote(ctx, limited, kunde.ID, "", false); err != nil {
		t.Errorf("a token of the renamed project's former handle: %v", err)
	}
	if _, err := dst.GetNote(ctx, limited, beta.ID, "", false); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Errorf("a note of another project: %v, want not found", err)
	}
	// The trashed note is in the copy's trash, and its title is free.
	if n, err := dst.GetNote(ctx, notesScope, trashed.ID, "", false); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Errorf("trashed note after import: %+v %v", n, err)
	}
	if _, err := dst.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: "main", Body: "# Alt\n\nNeu.", Class: knowmind.ClassUserDoc, Actor: notesAgent}); err != nil {
		t.Errorf("the trashed note's title in the copy: %v", err)
	}
	// The pending link resolves when its note appears in the copy.
	vertrag, err := dst.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: "kunden", Body: "# Müller Vertrag\n\nLaufzeit 2 Jahre.",
		Class: knowmind.ClassUserDoc, Actor: notesAgent})
	if err != nil {
		t.Fatal(err)
	}
	k, err := dst.GetNote(ctx, notesScope, kunde.ID, "", true)
	if err != nil || len(k.Links.Pending) != 0 || !slices.ContainsFunc(k.Links.Out, func(l knowmind.NoteLink) bool { return l.ID == vertrag.ID }) {
		t.Errorf("the pending link after its note was created in the copy: %+v, %v", k.Links, err)
	}
}

// TestImportRefusesBadNoteRecords: note records are checked as the tools check notes; a bad one
// fails alone, naming its field.
func TestImportRefusesBadNoteRecords(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	now := time.Now().UTC()
	note := func(mod func(*knowmind.Record)) knowmind.Record {
		r := knowmind.Record{Type: knowmind.RecordNote, ID: "n1", Title: "Eins", Content: "# Eins\n\nText.", Status: knowmind.StatusIndexed,
			CreatedAt: &now, Note: &knowmind.NoteFields{Project: "main", Class: knowmind.ClassUserDoc, Version: "1-00", Revision: 1}}
		mod(&r)
		return r
	}
	cases := []struct {
		name  string
		rec   knowmind.Record
		param string
	}{
		{"no note fields", note(func(r *knowmind.Record) { r.Note = nil }), "note"},
		{"unknown class", note(func(r *knowmind.Record) { r.Note.Class = "secret" }), "class"},
		{"path with ..", note(func(r *knowmind.Record) { r.Note.Path = "a/../b" }), "path"},
		{"bad status", note(func(r *knowmind.Record) { r.Status = "failed" }), "status"},
		{"no version", note(func(r *knowmind.Record) { r.Note.Version = "" }), "version"},
		{"huge frontmatter", note(func(r *knowmind.Record) { r.Note.Frontmatter = string(make([]byte, knowmind.MaxFrontmatterChars+1)) }), "frontmatter"},
		{"project handle", note(func(r *knowmind.Record) { r.Note.Project = "Main Projekt" }), "project"},
		{"bad revision", knowmind.Record{Type: knowmind.RecordRevision, Revision: &knowmind.RevisionRecord{Note: "n1", Revision: 0}}, "revision"},
		{"bad forward", knowmind.Record{Type: knowmind.RecordForward, Forward: &knowmind.ForwardRecord{From: "n1", Project: "main", Title: "X", Rel: "not a rel"}}, "forward"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			write := ten.WriteEntries
			if knowmind.AfterEntries(c.rec.Type) {
				write = ten.WriteRelations
			}
			res, err := write(ctx, []knowmind.Record{c.rec}, knowmind.BatchCursor{})
			if err != nil {
				t.Fatal(err)
			}
			var kerr *knowmind.Error
			if res[0].Status != knowmind.ItemFailed || !asError(res[0].Err, &kerr) || kerr.Param != c.param {
				t.Fatalf("result %+v, want failed naming %q", res[0], c.param)
			}
		})
	}
	if n, err := ten.NoteCount(ctx); err != nil || n != 0 {
		t.Fatalf("notes after refused records: %d, %v", n, err)
	}
}

func asError(err error, target **knowmind.Error) bool {
	e, ok := err.(*knowmind.Error)
	*target = e
	return ok
}

// recordDiff compares two exports as multisets of records; "" when equal.
func recordDiff(want, got []knowmind.Record) string {
	count := map[string]int{}
	for _, r := range got {
		b, _ := json.Marshal(r)
		count[string(b)]++
	}
	for _, r := range want {
		b, _ := json.Marshal(r)
		if count[string(b)] == 0 {
			return "missing " + string(b)
		}
		count[string(b)]--
	}
	for line, n := range count {
		if n > 0 {
			return "extra " + line
		}
	}
	return ""
}

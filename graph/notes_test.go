package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

var (
	notesScope = knowmind.NoteScope{Principal: "tok:test"}
	notesAgent = knowmind.Actor{Principal: "tok:test", Via: "test"}
)

func createNote(t testing.TB, ten *graph.Tenant, path, body string) knowmind.NoteWriteResult {
	t.Helper()
	res, err := ten.CreateNote(context.Background(), notesScope, knowmind.CreateNoteInput{Project: "main", Path: path, Body: body,
		Class: knowmind.ClassUserDoc, Actor: notesAgent})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRenameKeepsOldTitleAsAlias: an edit that changes the title keeps the old one as an alias,
// so [[Old title]] still resolves, and links waiting for the new title resolve.
func TestRenameKeepsOldTitleAsAlias(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	waiting := createNote(t, ten, "", "# Index\n\nSiehe [[Angebot 2027]].")
	n := createNote(t, ten, "Angebote", "# Angebot Entwurf\n\nText.")
	res, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken,
		Op: knowmind.EditFindReplace, Find: "# Angebot Entwurf", Content: "# Angebot 2027", Actor: notesAgent})
	if err != nil || res.Title != "Angebot 2027" {
		t.Fatalf("rename: %+v %v", res, err)
	}
	got, err := ten.GetNote(ctx, notesScope, "[[angebot entwurf]]", "", true)
	if err != nil || got.ID != n.ID || !slices.Equal(got.Aliases, []string{"Angebot Entwurf"}) {
		t.Fatalf("old title: %+v %v", got, err)
	}
	idx, err := ten.GetNote(ctx, notesScope, waiting.ID, "", true)
	if err != nil || len(idx.Links.Pending) != 0 || len(idx.Links.Out) != 1 || idx.Links.Out[0].ID != n.ID {
		t.Fatalf("the forward link must resolve on rename: %+v %v", idx.Links, err)
	}
	// The new title is taken in its folder now; in another folder it is free.
	if _, err := ten.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: "main", Path: "Angebote", Body: "# ANGEBOT 2027",
		Class: knowmind.ClassUserDoc, Actor: notesAgent}); knowmind.ErrorCode(err) != knowmind.ECONFLICT {
		t.Fatalf("same title, same folder: %v", err)
	}
	createNote(t, ten, "Archiv", "# Angebot 2027\n\nAlt.")

	// A replace that brings frontmatter replaces the note's.
	if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: res.VersionToken, Op: knowmind.EditReplace,
		Content: "---\ntype: angebot\nstatus: offen\n---\n# Angebot 2027\n\nNeu.", Actor: notesAgent}); err != nil {
		t.Fatal(err)
	}
	got, err = ten.GetNote(ctx, notesScope, n.ID, "", false)
	if err != nil || got.Type != "angebot" || got.Frontmatter["status"] != "offen" || got.Content != "# Angebot 2027\n\nNeu." {
		t.Fatalf("after replace with frontmatter: %+v %v", got, err)
	}
}

// TestTrashReleasesTitleAndEmptyDeletes: a trashed note's title is free; restoring it then is
// refused; emptying the trash deletes it with its revisions and edges.
func TestTrashReleasesTitleAndEmptyDeletes(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	a := createNote(t, ten, "", "# Alpha\n\nErste Fassung, siehe [[Beta]].")
	b := createNote(t, ten, "", "# Beta\n\nText.")
	if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: a.ID, VersionToken: a.VersionToken, Op: knowmind.EditAppend,
		Content: "Zweite.", Actor: notesAgent}); err != nil {
		t.Fatal(err)
	}
	if err := ten.TrashNote(ctx, notesScope, a.ID, "", notesAgent); err != nil {
		t.Fatal(err)
	}
	again := createNote(t, ten, "", "# Alpha\n\nNeu.")
	if err := ten.RestoreNote(ctx, a.ID, notesAgent); knowmind.ErrorCode(err) != knowmind.ECONFLICT {
		t.Fatalf("restore over a new note of its title: %v", err)
	}
	if err := ten.TrashNote(ctx, notesScope, again.ID, "", notesAgent); err != nil {
		t.Fatal(err)
	}
	gone, err := ten.EmptyTrash(ctx)
	if err != nil || len(gone) != 2 {
		t.Fatalf("empty trash: %v %v", gone, err)
	}
	rels, err := ten.ListRelations(ctx, b.ID)
	if err != nil || len(rels.Incoming) != 0 || len(rels.Outgoing) != 0 {
		t.Fatalf("edges into deleted notes must go: %+v %v", rels, err)
	}
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().Query(ctx, `{ r(func: type(Revision)) { count(uid) } c(func: has(Chunk.position)) { count(uid) } }`)
	if err != nil || string(resp.Json) != `{"r":[{"count":0}],"c":[{"count":1}]}` {
		t.Fatalf("revisions and chunks left: %s %v", resp.Json, err)
	}
}

// BenchmarkNoteWrite measures create_note and one CAS edit (append) of a ~1,500-character
// German note on the harness' Dgraph and embedder, through graph (no HTTP).
func BenchmarkNoteWrite(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	para := "Die Müller GmbH fertigt Zahnräder in Detmold und bestellt jedes Quartal Prüfmittel für die Qualitätssicherung. "
	body := "# Kundenakte %d\n\n"
	for range 13 {
		body += para
	}
	b.ResetTimer()
	for i := range b.N {
		n := createNote(b, ten, "Kunden", fmt.Sprintf(body, i))
		if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken,
			Op: knowmind.EditAppend, Content: "Nachtrag.", Actor: notesAgent}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchNotes measures knowmind_search's graph call (recall k 25, visibility, snippets)
// on 300 short German and English notes of one project, through graph (no HTTP).
func BenchmarkSearchNotes(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	topics := []string{"Zahnräder", "Prüfmittel", "Wartungsvertrag", "Schulung", "invoice", "shipping", "audit", "Lieferant", "Reklamation", "forecast"}
	for i := range 300 {
		t1, t2 := topics[i%len(topics)], topics[(i*7+3)%len(topics)]
		createNote(b, ten, fmt.Sprintf("Ordner%d", i%12), fmt.Sprintf("# Notiz %d\n\nKunde %d: %s und %s, Stand Woche %d. Details zu %s folgen.", i, i, t1, t2, i%52, t1))
	}
	b.ResetTimer()
	for i := range b.N {
		hits, _, err := ten.SearchNotes(ctx, notesScope, knowmind.SearchQuery{Query: topics[i%len(topics)] + " Kunde Details", Limit: 10})
		if err != nil || len(hits) == 0 {
			b.Fatalf("%v %v", hits, err)
		}
	}
}

// TestFrontmatterBounded: a note's properties are bounded in keys and in YAML size, on create
// and on edit, with -32602 naming the parameter; at the bound they are stored.
func TestFrontmatterBounded(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	keys := func(n, size int) string {
		var b strings.Builder
		b.WriteString("---\n")
		for i := range n {
			fmt.Fprintf(&b, "k%d: %s\n", i, strings.Repeat("x", size))
		}
		return b.String() + "---\n"
	}
	ok := createNote(t, ten, "", keys(knowmind.MaxFrontmatterKeys, 10)+"# Am Rand\n\nText.")
	for name, c := range map[string]struct{ body, param string }{
		"too many keys": {keys(knowmind.MaxFrontmatterKeys+1, 1) + "# Viele\n", "body"},
		"too long":      {keys(2, knowmind.MaxFrontmatterChars/2) + "# Lang\n", "body"},
	} {
		_, err := ten.CreateNote(ctx, notesScope, knowmind.CreateNoteInput{Project: "main", Body: c.body, Class: knowmind.ClassUserDoc, Actor: notesAgent})
		var ke *knowmind.Error
		if !errors.As(err, &ke) || ke.Code != knowmind.EINVALID || ke.Param != c.param {
			t.Errorf("create, %s: %v, want -32602 on %s", name, err, c.param)
		}
	}
	_, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: ok.ID, VersionToken: ok.VersionToken, Op: knowmind.EditReplace,
		Content: keys(knowmind.MaxFrontmatterKeys+1, 1) + "# Am Rand\n", Actor: notesAgent})
	var ke *knowmind.Error
	if !errors.As(err, &ke) || ke.Code != knowmind.EINVALID || ke.Param != "content" {
		t.Errorf("edit with too many keys: %v, want -32602 on content", err)
	}
	got, err := ten.GetNote(ctx, notesScope, ok.ID, "", false)
	if err != nil || len(got.Frontmatter) != knowmind.MaxFrontmatterKeys {
		t.Errorf("note at the bound: %d properties, %v", len(got.Frontmatter), err)
	}
}

// TestEditFrontmatterTagsReplaceTags: a replace whose front matter lists tags sets the note's
// tags to that list (old ones gone), as create takes them; one without tags: keeps them.
func TestEditFrontmatterTagsReplaceTags(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	n := createNote(t, ten, "", "---\ntags: [alt, bleibt]\n---\n# Getaggt\n\nText.")
	res, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken, Op: knowmind.EditReplace,
		Content: "---\ntags: [bleibt, neu]\n---\n# Getaggt\n\nText.", Actor: notesAgent})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ten.GetNote(ctx, notesScope, n.ID, "", false)
	if slices.Sort(got.Tags); err != nil || !slices.Equal(got.Tags, []string{"bleibt", "neu"}) {
		t.Fatalf("tags after the edit: %v %v", got.Tags, err)
	}
	if _, err := ten.EditNote(ctx, notesScope, knowmind.EditNoteInput{ID: n.ID, VersionToken: res.VersionToken, Op: knowmind.EditAppend,
		Content: "Mehr.", Actor: notesAgent}); err != nil {
		t.Fatal(err)
	}
	got, err = ten.GetNote(ctx, notesScope, n.ID, "", false)
	if slices.Sort(got.Tags); err != nil || !slices.Equal(got.Tags, []string{"bleibt", "neu"}) {
		t.Fatalf("tags after an append: %v %v", got.Tags, err)
	}
}

package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// exportJSONL exports ten into a file and returns its path and its records (header excluded).
func exportJSONL(t *testing.T, ten *graph.Tenant) (string, []knowmind.Record) {
	t.Helper()
	var buf bytes.Buffer
	w, err := bulk.NewWriter(&buf, ten.Name)
	if err != nil {
		t.Fatal(err)
	}
	var recs []knowmind.Record
	if err := ten.Export(context.Background(), func(r knowmind.Record) error {
		recs = append(recs, r)
		return w.Write(r)
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, recs
}

func importFile(t *testing.T, ten *graph.Tenant, src bulk.Source, batch int) bulk.Summary {
	t.Helper()
	sum, err := bulk.Import(context.Background(), src, ten, bulk.Options{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sum.Failures {
		t.Errorf("import refused %s (%s): %v", f.Where, f.ID, f.Err)
	}
	return sum
}

// A tenant with history (an updated fact), a document, a failed memory and open and closed
// relations is exported, imported into a new tenant and compared: the same stats, the same
// relations of every memory, the same recall, and an export of the copy equal to the original's.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := dgraphtest.NewTenant(t)
	store := func(title, content string, tags ...string) string {
		r, err := src.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: content, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	a := store("Kunde Müller", "Die Firma Müller GmbH ist Kunde seit 2021 und bestellt Schrauben.", "class:client")
	placed, err := src.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Workshop Q3",
		Content: "Workshop zur Einarbeitung neuer Mitarbeiter im dritten Quartal.", Sequence: "onboarding", Position: new(4)})
	if err != nil {
		t.Fatal(err)
	}
	b := placed.ID // a place in a sequence travels with the memory
	c := store("Deploy procedure", "Deploy with make release, then check the health endpoint of every alpha.")
	d := store("Old fact", "The office is in Berlin.")
	upd, err := src.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: d, NewTitle: "New fact", NewContent: "The office is in Hamburg since May.", UpdateReason: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := src.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch",
		Content: "# Einleitung\n\nDieses Handbuch beschreibt die Qualitätssicherung.\n\n# Prüfung\n\nJede Lieferung wird stichprobenartig geprüft."})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][3]string{{b, a, "FOR_CLIENT"}, {c, doc.ID, "REFERENCES"}, {a, c, "RELATES_TO"}} {
		if _, err := src.Link(ctx, l[0], l[1], l[2]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Unlink(ctx, a, c, "RELATES_TO"); err != nil { // a closed edge, kept as history
		t.Fatal(err)
	}
	half := 0.5 // what a link records travels with it
	if _, err := src.LinkWith(ctx, c, a, "DEPENDS_ON", knowmind.EdgeMeta{Confidence: &half, CreatedBy: "tok_1", Reason: "needs the client"}); err != nil {
		t.Fatal(err)
	}
	if _, err := withBrokenEmbedder(t, src).StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "never indexed"}); err == nil {
		t.Fatal("the broken embedder stored a memory")
	}

	// Goals (a due time goal, an event goal that fired) and drafts (open, accepted).
	due := time.Now().Add(-time.Hour).UTC()
	if _, err := src.SetGoal(ctx, knowmind.Goal{Text: "send the report", Kind: knowmind.GoalTime, DueAt: &due}); err != nil {
		t.Fatal(err)
	}
	watch, err := src.SetGoal(ctx, knowmind.Goal{Text: "watch the office", Kind: knowmind.GoalEvent,
		Trigger: &knowmind.GoalTrigger{Words: []string{"office"}}})
	if err != nil {
		t.Fatal(err)
	}
	if ms, err := src.MatchGoals(ctx, []knowmind.WrittenMemory{{ID: upd.NewMemoryID, Text: "The office is in Hamburg since May."}}); err != nil || len(ms) != 1 {
		t.Fatalf("goal matches %+v, %v", ms, err)
	}
	lisa := fixedExtractor{entity: knowmind.CandidateEntity{Type: "person", Name: "Lisa Müller"}, confidence: 0.6}
	cap, err := src.Capture(ctx, knowmind.CaptureInput{Text: "Lisa zieht nach Hamburg.\nLisa spricht Spanisch.", Category: "person-info"}, lisa)
	if err != nil || len(cap.Drafts) != 2 {
		t.Fatalf("capture drafts %+v, %v", cap, err)
	}
	accepted, err := src.ReviewDraft(ctx, knowmind.ReviewInput{DraftID: cap.Drafts[1].ID, Action: knowmind.ReviewAccept, Reviewer: "tok_1"})
	if err != nil || accepted.MemoryID == "" {
		t.Fatalf("review %+v, %v", accepted, err)
	}

	path, recs := exportJSONL(t, src)
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[r.Type]++
	}
	if kinds["memory"] != 7 || kinds["document"] != 1 || kinds["relation"] != 5 || kinds["goal"] != 2 || kinds["draft"] != 2 {
		t.Fatalf("export holds %v, want 7 memories, 1 document, 5 relations (4 links and the SUPERSEDES), 2 goals, 2 drafts", kinds)
	}

	// The accepted fact carries what the engine recorded: its entity, extractor, reviewer.
	for _, r := range recs {
		if r.ID == accepted.MemoryID {
			if g := r.Engine; g == nil || g.Extractor == "" || g.ReviewedBy != "tok_1" || g.Category != "person-info" ||
				len(g.Entities) != 1 || g.Entities[0].Name != "Lisa Müller" {
				t.Fatalf("the accepted fact's engine fields in the export: %+v", g)
			}
		}
	}

	dst := dgraphtest.NewTenant(t)
	f, err := bulk.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := importFile(t, dst, f, 3) // several batches
	if sum.Written != len(recs) || sum.Done != len(recs) {
		t.Fatalf("import wrote %d of %d records (done %d)", sum.Written, len(recs), sum.Done)
	}

	if m, err := dst.GetMemory(ctx, b); err != nil || m.Sequence != "onboarding" || m.Position == nil || *m.Position != 4 {
		t.Fatalf("place after import: %q %v, %v", m.Sequence, m.Position, err)
	}
	want, err := src.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || want.Edges != 4 {
		t.Fatalf("stats after import %+v, want %+v (4 current links; the unlinked one is history)", got, want)
	}
	for _, id := range []string{a, b, c, d, upd.NewMemoryID, doc.ID} {
		w, err := src.ListRelations(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		g, err := dst.ListRelations(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("relations of %s after import:\n%+v\nwant\n%+v", id, g, w)
		}
	}
	for _, q := range []string{"Qualitätssicherung Lieferung", "where is the office", "Workshop Kunde", "deploy health"} {
		w, err := src.Recall(ctx, knowmind.RecallQuery{Query: q, K: 5, Hops: 2})
		if err != nil {
			t.Fatal(err)
		}
		g, err := dst.Recall(ctx, knowmind.RecallQuery{Query: q, K: 5, Hops: 2})
		if err != nil {
			t.Fatal(err)
		}
		// The same memories in the same order with the same scores. (A document's hit shows its
		// best chunk; two chunks that tie may be shown either way, as their uids differ.)
		if len(w.Hits) == 0 || !slices.Equal(hitKeys(g.Hits), hitKeys(w.Hits)) {
			t.Errorf("recall %q after import:\n%q\nwant\n%q", q, hitKeys(g.Hits), hitKeys(w.Hits))
		}
	}
	// The goals and drafts came across whole: the fired goal with its match, the accepted
	// draft pointing at its memory, the open one at its entity (the event goal fires in the
	// copy: checked below, after the copy's export).
	goals, err := dst.ListGoals(ctx, "", 10)
	if err != nil || len(goals) != 2 || !goals[0].Due {
		t.Fatalf("goals after import %+v, %v", goals, err)
	}
	if g := goals[1]; g.ID != watch.ID || g.FiredCount != 1 || !slices.Equal(g.MatchedIDs, []string{upd.NewMemoryID}) {
		t.Fatalf("event goal after import %+v", g)
	}
	open, err := dst.ListDrafts(ctx, knowmind.DraftOpen, 10)
	if err != nil || len(open) != 1 || open[0].ID != cap.Drafts[0].ID || open[0].Category != "person-info" ||
		!slices.Equal(open[0].Entities, []knowmind.EntityRef{{Type: "person", ID: "lisa-mueller"}}) {
		t.Fatalf("open drafts after import %+v, %v", open, err)
	}
	done, err := dst.ListDrafts(ctx, knowmind.DraftAccepted, 10)
	if err != nil || len(done) != 1 || done[0].MemoryID != accepted.MemoryID || done[0].ReviewedBy != "tok_1" {
		t.Fatalf("accepted drafts after import %+v, %v", done, err)
	}

	if ents, err := dst.ListEntities(ctx, "person", 10); err != nil || len(ents) != 1 || ents[0].Name != "Lisa Müller" || ents[0].Facts != 1 {
		t.Errorf("entities after import: %+v, %v; want Lisa Müller with her fact", ents, err)
	}
	_, again := exportJSONL(t, dst)
	sortRecords(recs)
	sortRecords(again)
	if !reflect.DeepEqual(again, recs) {
		a, _ := json.MarshalIndent(again, "", " ")
		b, _ := json.MarshalIndent(recs, "", " ")
		t.Errorf("export of the copy differs:\n%s\nwant\n%s", a, b)
	}

	if ms, err := dst.MatchGoals(ctx, []knowmind.WrittenMemory{{ID: "x", Text: "a new office"}}); err != nil || len(ms) != 1 || ms[0].GoalID != watch.ID {
		t.Fatalf("imported goal does not fire: %+v, %v", ms, err)
	}

	// The same file again: the cursor says everything is committed, nothing is read.
	sum = importFile(t, dst, f, 3)
	if sum.Resumed != len(recs) || sum.Written+sum.Unchanged != 0 {
		t.Errorf("second import of the same file: %+v, want all %d resumed", sum.Progress, len(recs))
	}
	// The same records in another order (another source, another cursor; relations first in the
	// file): every record is unchanged, nothing doubles.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	slices.Reverse(lines)
	other := filepath.Join(t.TempDir(), "copy.jsonl")
	os.WriteFile(other, []byte(strings.Join(lines, "\n")), 0o600)
	f2, err := bulk.OpenJSONL(other)
	if err != nil {
		t.Fatal(err)
	}
	sum = importFile(t, dst, f2, 100)
	if sum.Unchanged != len(recs) || sum.Written != 0 {
		t.Errorf("import of a copy: %+v, want all %d records unchanged", sum.Progress, len(recs))
	}
	if got, _ := dst.Stats(ctx); got != want {
		t.Errorf("stats after importing a copy %+v, want %+v", got, want)
	}
}

func hitKeys(hits []knowmind.RecallHit) []string {
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = fmt.Sprintf("%s %s %q %.4f", h.MemoryID, h.Kind, h.Title, h.Score)
		if h.Kind == knowmind.KindMemory {
			keys[i] += " " + h.Content
		}
	}
	return keys
}

func engineID(r knowmind.Record) string {
	switch {
	case r.Goal != nil:
		return r.Goal.ID
	case r.Draft != nil:
		return r.Draft.ID
	}
	return ""
}

func sortRecords(recs []knowmind.Record) {
	slices.SortFunc(recs, func(a, b knowmind.Record) int {
		return strings.Compare(a.Type+a.ID+a.From+a.RelType+a.To+engineID(a), b.Type+b.ID+b.From+b.RelType+b.To+engineID(b))
	})
}

// An Obsidian-style vault: every note a document, every [[wiki link]] between notes a
// REFERENCES relation; importing it again changes nothing.
func TestImportMarkdownVault(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"Kunden/Müller GmbH.md": "---\ntags: [client]\n---\n# Müller GmbH\n\nKunde seit 2021, Ansprechpartnerin ist Frau Weber. Siehe [[Angebot 2026]].",
		"Angebot 2026.md":       "# Angebot\n\nSchraubensortiment für [[Müller GmbH|Müller]], gültig bis Juni. Vorlage: [[Vorlagen/Angebot]].",
		"Notizen.md":            "Lose Gedanken ohne Links, außer [[Gibt es nicht]].",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ten := dgraphtest.NewTenant(t)
	vault, err := bulk.OpenMarkdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := importFile(t, ten, vault, 2)
	if sum.Written != 5 || vault.UnresolvedLinks() != 2 {
		t.Fatalf("vault import %+v, unresolved %d; want 3 notes + 2 links, 2 unresolved", sum.Progress, vault.UnresolvedLinks())
	}
	stats, err := ten.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Memories != 3 || stats.Edges != 2 || stats.Chunks < 3 {
		t.Errorf("stats %+v, want 3 documents, 2 links", stats)
	}
	hits, err := ten.Recall(ctx, knowmind.RecallQuery{Query: "Ansprechpartnerin Weber", K: 3, Hops: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits.Hits) == 0 || hits.Hits[0].Title != "Müller GmbH" || hits.Hits[0].Kind != knowmind.KindDocument {
		t.Fatalf("recall %+v", hits.Hits)
	}
	rels, err := ten.ListRelations(ctx, hits.Hits[0].MemoryID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels.Outgoing) != 1 || rels.Outgoing[0].Title != "Angebot 2026" || rels.Outgoing[0].RelType != "REFERENCES" ||
		len(rels.Incoming) != 1 || rels.Incoming[0].Title != "Angebot 2026" {
		t.Errorf("relations of the client note %+v", rels)
	}
	m, err := ten.GetMemory(ctx, hits.Hits[0].MemoryID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Source != "Kunden/Müller GmbH.md" || !slices.Equal(m.Tags, []string{"client"}) || strings.Contains(m.Content, "tags:") {
		t.Errorf("note as stored %+v", m)
	}
	// Importing the vault again after adding a note writes the note and its link; the others are unchanged.
	os.WriteFile(filepath.Join(dir, "Neu.md"), []byte("Eine neue Notiz zu [[Notizen]]."), 0o600)
	vault, err = bulk.OpenMarkdown(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum = importFile(t, ten, vault, 100)
	if sum.Written != 2 || sum.Unchanged != 5 { // the new note and its link; 3 notes and 2 links were there
		t.Errorf("re-import with one new note %+v", sum.Progress)
	}
	if got, _ := ten.Stats(ctx); got.Memories != 4 || got.Edges != 3 {
		t.Errorf("stats after re-import %+v, want 4 documents and 3 links", got)
	}
}

package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

const handbookV1 = `# Einarbeitung

Neue Mitarbeitende erhalten am ersten Tag ihren Schlüssel beim Empfang.

## Erste Woche

Die erste Woche begleitet eine Patin oder ein Pate. Am Freitag folgt ein Feedbackgespräch.

## Schulungen

Die QM-Schulung ist innerhalb von vier Wochen zu absolvieren.
`

type storedChunk struct {
	Text     string `json:"text"`
	Position int    `json:"Chunk.position"`
	Heading  string `json:"Chunk.heading"`
}

// chunksOf reads a document's chunks in position order.
func chunksOf(t *testing.T, ten *graph.Tenant, id string) []storedChunk {
	t.Helper()
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(context.Background(),
		`query q($id: string) { q(func: eq(Memory.id, $id)) { Memory.chunks(orderasc: Chunk.position) { text: Chunk.text@. Chunk.position Chunk.heading } } }`,
		map[string]string{"$id": id})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Q []struct {
			Chunks []storedChunk `json:"Memory.chunks"`
		}
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Q) == 0 {
		return nil
	}
	return out.Q[0].Chunks
}

// vectorHit returns the Memory.id of the nearest chunk to text.
func vectorHit(t *testing.T, ten *graph.Tenant, text string) string {
	t.Helper()
	ctx := context.Background()
	vec, err := dgraphtest.Shared(t).Embedder.EmbedQuery(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(ctx, `query q($v: float32vector) {
  var(func: similar_to(Chunk.embedding, 5, $v)) { e as Chunk.embedding  s as math(e dot $v) }
  q(func: uid(s), orderdesc: val(s), first: 1) { ~Memory.chunks { Memory.id } }
}`, map[string]string{"$v": graph.VectorString(vec)})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Q []struct {
			M []struct {
				ID string `json:"Memory.id"`
			} `json:"~Memory.chunks"`
		}
	}
	json.Unmarshal(resp.Json, &out)
	if len(out.Q) == 0 || len(out.Q[0].M) == 0 {
		return ""
	}
	return out.Q[0].M[0].ID
}

func TestUploadDocumentChunksByHeading(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	res, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Einarbeitungs-Handbuch v3", Content: handbookV1, Source: "handbuch.md"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != knowmind.StatusIndexed || res.ChunksWritten != 3 || res.ReplacedDocumentIDs == nil || len(res.ReplacedDocumentIDs) != 0 {
		t.Fatalf("result = %+v", res)
	}
	if js, _ := json.Marshal(res); !strings.Contains(string(js), `"replaced_document_ids":[]`) {
		t.Errorf("upload result JSON lacks an empty replaced_document_ids: %s", js)
	}
	got := chunksOf(t, ten, res.ID)
	wantHeadings := []string{"Einarbeitung", "Einarbeitung > Erste Woche", "Einarbeitung > Schulungen"}
	if len(got) != 3 {
		t.Fatalf("chunks = %+v", got)
	}
	for i, c := range got {
		if c.Position != i || c.Heading != wantHeadings[i] ||
			!strings.HasPrefix(c.Text, "Einarbeitungs-Handbuch v3 > "+wantHeadings[i]+"\n\n") {
			t.Errorf("chunk %d = %+v", i, c)
		}
	}
	m, err := ten.GetMemory(ctx, res.ID)
	if err != nil || m.Kind != knowmind.KindDocument || m.Source != "handbuch.md" || m.Chunks != 3 || m.MemoryType != "" {
		t.Fatalf("document = %+v, %v", m, err)
	}
	if hit := vectorHit(t, ten, "QM-Schulung innerhalb von vier Wochen"); hit != res.ID {
		t.Errorf("vector search hit %q, want %q", hit, res.ID)
	}
}

func TestUploadDocumentValidation(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	for _, tc := range []struct {
		name                string
		in                  knowmind.UploadDocumentInput
		code, reason, param string
	}{
		{"content missing", knowmind.UploadDocumentInput{Title: "t"}, knowmind.EINTERNAL, knowmind.ReasonContentRequired, ""},
		{"content blank", knowmind.UploadDocumentInput{Content: "\n\n"}, knowmind.EINTERNAL, knowmind.ReasonContentRequired, ""},
		{"content too large", knowmind.UploadDocumentInput{Content: strings.Repeat("a", knowmind.MaxContentChars+1)}, knowmind.EINTERNAL, knowmind.ReasonTooLarge, ""},
		{"title too long", knowmind.UploadDocumentInput{Content: "x", Title: strings.Repeat("t", knowmind.MaxTitleChars+1)}, knowmind.EINVALID, "", "title"},
		{"source too long", knowmind.UploadDocumentInput{Content: "x", Source: strings.Repeat("s", knowmind.MaxSourceChars+1)}, knowmind.EINVALID, "", "source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ten.UploadDocument(ctx, tc.in)
			wantError(t, err, tc.code, tc.reason, tc.param)
		})
	}
	if n := countMemories(t, ten); n != 0 {
		t.Fatalf("%d memories after rejected uploads, want 0", n)
	}
}

// A new upload of a title replaces the old document only once it is fully
// ingested: the old one is closed (valid_to) and superseded by the new one,
// never erased; its id is returned. Uploading the same content again changes
// nothing.
func TestUploadDocumentReplacesSameTitle(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	title := "Einarbeitungs-Handbuch"
	v1, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: handbookV1})
	if err != nil {
		t.Fatal(err)
	}
	// A memory of the same title is not a document: never replaced.
	mem, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: "Eine Notiz zum Handbuch."})
	if err != nil {
		t.Fatal(err)
	}
	same, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: handbookV1 + "\n\n"})
	if err != nil || !same.Unchanged || same.ID != v1.ID || len(same.ReplacedDocumentIDs) != 0 {
		t.Fatalf("same content again = %+v, %v", same, err)
	}

	v2content := strings.Replace(handbookV1, "vier Wochen", "sechs Wochen", 1) + "\n## Urlaub\n\nUrlaub wird im Portal beantragt.\n"
	v2, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: v2content})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Unchanged || v2.ID == v1.ID || !slices.Equal(v2.ReplacedDocumentIDs, []string{v1.ID}) || v2.ChunksWritten != 4 {
		t.Fatalf("v2 = %+v", v2)
	}
	old, err := ten.GetMemory(ctx, v1.ID)
	if err != nil || old.ValidTo == nil || old.Chunks != 3 {
		t.Fatalf("old version after replacement: %+v, %v; want it closed with its 3 chunks", old, err)
	}
	if _, err := ten.GetMemory(ctx, mem.ID); err != nil {
		t.Fatalf("memory of the same title: %v", err)
	}
	if n := countChunks(t, ten); n != 4+1+3 {
		t.Fatalf("%d chunks, want v2's 4 + the memory's 1 + the closed version's 3", n)
	}
	if n := queryCount(t, ten, fmt.Sprintf(`{ var(func: eq(Memory.id, %q)) { s as SUPERSEDES @filter(eq(Memory.id, %q)) }  q(func: uid(s)) { count(uid) } }`, v2.ID, v1.ID), nil); n != 1 {
		t.Fatalf("v2 -SUPERSEDES-> v1: %d edges", n)
	}
	// It left the current views: list_recent and stats.
	recent, err := ten.ListRecent(ctx, 10)
	if err != nil || len(recent) != 2 || recent[0].ID != v2.ID || recent[0].IndexedChunks != 4 || recent[0].Kind != knowmind.KindDocument || recent[0].ValidTo != nil {
		t.Fatalf("list_recent = %+v, %v", recent, err)
	}
	if s, err := ten.Stats(ctx); err != nil || s.Memories != 2 || s.Chunks != 5 {
		t.Fatalf("stats = %+v, %v; want v2 and the memory, 5 chunks", s, err)
	}
}

// The relations of a replaced document move to the new one at the instant of
// the upload, outgoing and incoming; the old edges are closed, not erased.
func TestUploadDocumentReplacementMovesEdges(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	v1, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Protokoll", Content: "Version eins des Protokolls."})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Eine Notiz, die auf das Protokoll verweist."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Link(ctx, mem.ID, v1.ID, "REFERENCES"); err != nil {
		t.Fatal(err)
	}
	v2, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Protokoll", Content: "Version zwei des Protokolls."})
	if err != nil {
		t.Fatal(err)
	}
	rels, err := ten.ListRelations(ctx, mem.ID)
	if err != nil || len(rels.Outgoing) != 1 || rels.Outgoing[0].To != v2.ID || rels.Outgoing[0].RelType != "REFERENCES" {
		t.Fatalf("the memory's relations after the upload = %+v, %v; want REFERENCES to v2", rels, err)
	}
	rels, err = ten.ListRelations(ctx, v1.ID)
	if err != nil || len(rels.Outgoing) != 0 || len(rels.Incoming) != 1 || rels.Incoming[0].RelType != graph.RelSupersedes {
		t.Fatalf("the old version's open relations = %+v, %v; want only v2's SUPERSEDES", rels, err)
	}
	// Closed, not erased: the old edges are still stored with valid_to.
	if n := queryCount(t, ten, `{ q(func: has(REFERENCES)) { count(uid) } }`, nil); n != 1 {
		t.Errorf("%d REFERENCES sources, want the memory", n)
	}
	if n := queryCount(t, ten, fmt.Sprintf(`{ var(func: eq(Memory.id, %q)) { r as REFERENCED_BY @facets(le(valid_to, "9999-12-31T23:59:59Z")) }  q(func: uid(r)) { count(uid) } }`, v1.ID), nil); n != 1 {
		t.Errorf("the old version keeps %d closed REFERENCED_BY edges, want 1", n)
	}
}

// If the new version cannot be ingested, the old one stays intact and
// searchable; the failed one is kept, marked failed. The next successful
// upload replaces both.
func TestUploadDocumentFailedReuploadKeepsOld(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	title := "Einarbeitungs-Handbuch"
	v1, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: handbookV1})
	if err != nil {
		t.Fatal(err)
	}
	broken := withBrokenEmbedder(t, ten)
	failed, err := broken.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: handbookV1 + "\nNeu: Parkplätze.\n"})
	wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonIngestFailed, "")
	if failed.Status != knowmind.StatusFailed || failed.ID == "" || len(failed.ReplacedDocumentIDs) != 0 {
		t.Fatalf("failed upload result = %+v", failed)
	}
	old, err := ten.GetMemory(ctx, v1.ID)
	if err != nil || old.Status != knowmind.StatusIndexed || old.Chunks != 3 {
		t.Fatalf("old version after failed re-upload: %+v, %v", old, err)
	}
	if got := chunksOf(t, ten, v1.ID); len(got) != 3 {
		t.Fatalf("old version has %d chunks, want 3", len(got))
	}
	if hit := vectorHit(t, ten, "Schlüssel beim Empfang am ersten Tag"); hit != v1.ID {
		t.Errorf("vector search hit %q, want the old version %q", hit, v1.ID)
	}
	if n := queryCount(t, ten, `{ q(func: anyoftext(Chunk.text@de, "Schlüssel")) { count(uid) } }`, nil); n != 1 {
		t.Errorf("full-text search finds %d chunks of the old version, want 1", n)
	}
	kept, err := ten.GetMemory(ctx, failed.ID)
	if err != nil || kept.Status != knowmind.StatusFailed || kept.Chunks != 0 || kept.Kind != knowmind.KindDocument {
		t.Fatalf("failed version as kept: %+v, %v", kept, err)
	}

	v3, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: handbookV1 + "\nNeu: Parkplätze.\n"})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(v3.ReplacedDocumentIDs)
	want := []string{v1.ID, failed.ID}
	slices.Sort(want)
	if !slices.Equal(v3.ReplacedDocumentIDs, want) {
		t.Fatalf("replaced = %v, want %v", v3.ReplacedDocumentIDs, want)
	}
	if n := countMemories(t, ten); n != 3 {
		t.Fatalf("%d memories after the successful upload, want 3 (two closed)", n)
	}
	if n := queryCount(t, ten, `{ q(func: has(Memory.id)) @filter(NOT has(Memory.valid_to)) { count(uid) } }`, nil); n != 1 {
		t.Fatalf("%d current memories after the successful upload, want 1", n)
	}
}

func TestUploadDocumentUntitled(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	a, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Content: "Erstes Dokument ohne Titel."})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Content: "Zweites Dokument ohne Titel."})
	if err != nil || b.ID == a.ID || len(b.ReplacedDocumentIDs) != 0 {
		t.Fatalf("second untitled = %+v, %v; untitled documents replace nothing", b, err)
	}
	again, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Content: "Erstes  Dokument ohne Titel."})
	if err != nil || !again.Unchanged || again.ID != a.ID {
		t.Fatalf("same untitled content = %+v, %v", again, err)
	}
}

// BenchmarkUploadDocument measures upload_document end to end with the
// default (hash) embedder against the harness's local Dgraph: one writer
// uploading distinct Markdown documents of 20 sections (a heading and two
// paragraphs of about 60 words each, about 900 characters per section, so
// one chunk per section: 20 chunks, ~18 KB per document), each under a new
// title. Reports chunks/s.
func BenchmarkUploadDocument(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	para := "Die Einarbeitung neuer Mitarbeitender folgt einem festen Ablauf: Begrüßung durch die Leitung, " +
		"Übergabe von Schlüssel und Zugangsdaten, Vorstellung im Team und eine Führung durch alle Abteilungen. " +
		"Offene Fragen werden in der Patenschaft geklärt, die Dokumentation liegt im Intranet bereit."
	i, chunks := 0, 0
	for ; b.Loop(); i++ {
		var doc strings.Builder
		fmt.Fprintf(&doc, "# Handbuch %d\n\n", i)
		for s := range 20 {
			fmt.Fprintf(&doc, "## Abschnitt %d.%d\n\n%s (%d.%d)\n\n%s\n\n", i, s, para, i, s, para)
		}
		res, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: fmt.Sprint("Handbuch ", i), Content: doc.String()})
		if err != nil {
			b.Fatal(err)
		}
		chunks += res.ChunksWritten
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(float64(chunks)/float64(i), "chunks/doc")
}

package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/chunk"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/search"
)

// storedChunkChars sums the characters a tenant holds in chunk texts and headings.
func storedChunkChars(t *testing.T, ten *graph.Tenant) (chars, chunks, longestHeading int) {
	t.Helper()
	var out struct {
		C []struct {
			DE      string `json:"de"`
			EN      string `json:"en"`
			Heading string `json:"Chunk.heading"`
		}
	}
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().Query(context.Background(),
		`{ c(func: has(Chunk.position)) { de: Chunk.text@de en: Chunk.text Chunk.heading } }`)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	for _, c := range out.C {
		chars += utf8.RuneCountInString(c.DE) + utf8.RuneCountInString(c.EN) + utf8.RuneCountInString(c.Heading)
		longestHeading = max(longestHeading, utf8.RuneCountInString(c.Heading))
	}
	return chars, len(out.C), longestHeading
}

// The attack of issue 13: one heading of 20,000 characters over 500 tiny
// sections wrote the heading into every chunk twice (20 MB from 24 KB). Now
// it is refused as too_large before anything is embedded or written.
func TestChunkAmplificationRefused(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	content := "# " + strings.Repeat("a", 20_000) + "\n" + strings.Repeat("## b\nx\n\n", 500)
	start := time.Now()
	_, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "amplified", Content: content})
	wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonTooLarge, "")
	_, err = ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: content})
	wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonTooLarge, "")
	if n := countMemories(t, ten); n != 0 {
		t.Fatalf("%d memories written for refused content", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refusing took %s", d)
	}

	// More sections than MaxChunks: refused too, whatever their headings.
	many := strings.Repeat("## s\nword word word word word word word word word word\n\n", knowmind.MaxChunks+1)
	_, err = ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "many", Content: many})
	wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonTooLarge, "")
}

// A long heading over sections with real bodies is stored, cut: every chunk
// carries at most chunk.MaxHeadingPathChars of heading, and the chunks hold at
// most knowmind.MaxChunkExpansion times the content.
func TestLongHeadingsStoredCut(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	body := strings.Repeat("Die Wartung der Anlage erfolgt quartalsweise durch den Service. ", 15)
	var b strings.Builder
	b.WriteString("# " + strings.Repeat("Überschrift ", 2_000) + "\n\n")
	for i := range 20 {
		b.WriteString("## " + strings.Repeat("Abschnitt ", 50) + string(rune('A'+i)) + "\n\n" + body + "\n\n")
	}
	content := b.String()
	res, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: strings.Repeat("T", knowmind.MaxTitleChars), Content: content})
	if err != nil {
		t.Fatal(err)
	}
	if res.ChunksWritten != 20 {
		t.Fatalf("chunks written = %d, want 20", res.ChunksWritten)
	}
	chars, chunks, longest := storedChunkChars(t, ten)
	if chunks != 20 || longest > chunk.MaxHeadingPathChars {
		t.Fatalf("%d chunks, longest heading %d characters (max %d)", chunks, longest, chunk.MaxHeadingPathChars)
	}
	if limit := knowmind.MaxChunkExpansion * utf8.RuneCountInString(content); chars > limit {
		t.Fatalf("chunks hold %d characters for %d of content (limit %d)", chars, utf8.RuneCountInString(content), limit)
	}
	t.Logf("content %d characters, chunks %d characters", utf8.RuneCountInString(content), chars)
}

// Recall reads no Memory.content (up to 1,000,000 characters): its candidate query reads uids,
// and a second query reads the stored preview of the hits it returns.
func TestRecallDoesNotReadWholeContents(t *testing.T) {
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	ten := dgraphtest.NewTenant(t)
	const memories, filler = 30, 200_000
	now := time.Now().UTC().Format(time.RFC3339)
	var nodes []map[string]any
	for i := range memories {
		marker := fmt.Sprintf("Zebraquark Wartungsvertrag %d.", i)
		content := marker + " " + strings.Repeat("füller ", filler/7)
		vecs, err := env.Embedder.EmbedPassages(ctx, []string{marker})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{
			"dgraph.type": "Memory", "Memory.id": fmt.Sprintf("big-%d", i), "Memory.kind": "memory",
			"Memory.title": fmt.Sprintf("big %d", i), "Memory.content": content, "Memory.status": "indexed",
			"Memory.preview":    runes.Truncate(content, knowmind.RecallMaxContentChars),
			"Memory.created_at": now, "Memory.updated_at": now, "Memory.valid_from": now,
			"Memory.chunks": []map[string]any{{"dgraph.type": "Chunk", "Chunk.text@de": marker,
				"Chunk.position": 0, "Chunk.embedding": graph.VectorString(vecs[0])}},
		}
		nodes = append(nodes, m)
	}
	dgraphtest.SetJSON(t, ten, nodes)

	q := knowmind.RecallQuery{Query: "Zebraquark Wartungsvertrag", K: knowmind.RecallMaxK, Hops: 1}
	req, err := ten.PrepareRecall(ctx, q, search.Default())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(ctx, req.DQL, req.Vars)
	if err != nil {
		t.Fatal(err)
	}
	// Before: 30 contents of 200,000 characters, over 6 MB.
	if n := len(resp.Json); n > 200_000 {
		t.Fatalf("recall's candidate query moved %d bytes for %d candidates", n, memories)
	}
	res, err := ten.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != knowmind.RecallMaxK {
		t.Fatalf("%d hits, want %d", len(res.Hits), knowmind.RecallMaxK)
	}
	for _, h := range res.Hits {
		n := utf8.RuneCountInString(h.Content)
		if n > knowmind.RecallMaxContentChars || n < knowmind.RecallMaxContentChars-10 ||
			!strings.HasPrefix(h.Content, "Zebraquark") || !strings.HasSuffix(h.Content, "…") {
			t.Fatalf("hit %s content has %d characters (want the first %d), starts %q", h.MemoryID, n, knowmind.RecallMaxContentChars, h.Content[:20])
		}
	}
	t.Logf("candidate query %d bytes", len(resp.Json))
}

// Issue 13: a replaced version is closed and superseded by the new document,
// not deleted with its SUPERSEDES/SUPERSEDED_BY edges (which would break the
// chain of update_fact followed by an upload of the new title: update_fact on
// the old version would answer 409 "no successor"); every version stays, and
// the chain leads to the newest.
func TestReplacingAVersionedDocumentKeepsItsHistory(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	d1, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: "# Urlaub\n\nAntrag beim Team-Lead."})
	if err != nil {
		t.Fatal(err)
	}
	u, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: d1.ID, NewTitle: "Handbuch 2026", NewContent: "# Urlaub\n\nAntrag im Portal."})
	if err != nil {
		t.Fatal(err)
	}
	d2 := u.NewMemoryID
	d3, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch 2026", Content: "# Urlaub\n\nAntrag im neuen Portal."})
	if err != nil {
		t.Fatal(err)
	}
	if len(d3.ReplacedDocumentIDs) != 1 || d3.ReplacedDocumentIDs[0] != d2 {
		t.Fatalf("replaced %v, want [%s]", d3.ReplacedDocumentIDs, d2)
	}
	// A plain document of the title is closed too, never erased.
	plain, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Checkliste", Content: "Schlüssel abholen."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Checkliste", Content: "Schlüssel und Laptop abholen."}); err != nil {
		t.Fatal(err)
	}
	if m, err := ten.GetMemory(ctx, plain.ID); err != nil || m.ValidTo == nil {
		t.Fatalf("plain replaced document: %+v, %v; want it closed", m, err)
	}
	// Replacing the newest version again extends the chain.
	d4, err := ten.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch 2026", Content: "# Urlaub\n\nAntrag per App."})
	if err != nil {
		t.Fatal(err)
	}

	// Every version is there; only the newest is current.
	for _, id := range []string{d1.ID, d2, d3.ID, d4.ID} {
		m, err := ten.GetMemory(ctx, id)
		if err != nil {
			t.Fatalf("version %s: %v", id, err)
		}
		if (m.ValidTo == nil) != (id == d4.ID) {
			t.Fatalf("version %s valid_to %v", id, m.ValidTo)
		}
	}
	// The chain: each older version names its successor, and updating any of them names the newest.
	for _, pair := range [][2]string{{d1.ID, d2}, {d2, d3.ID}, {d3.ID, d4.ID}} {
		if _, sb := versionEdges(t, ten, pair[0]); len(sb) != 1 || sb[0].ID != pair[1] {
			t.Fatalf("%s SUPERSEDED_BY %+v, want %s", pair[0], sb, pair[1])
		}
	}
	for _, old := range []string{d1.ID, d2, d3.ID} {
		_, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: old, NewTitle: "Handbuch 2026", NewContent: "fork"})
		if e := knowmind.AsError(err); e == nil || e.Code != knowmind.ECONFLICT || e.Data["current_version_id"] != d4.ID {
			t.Fatalf("update of old version %s: %v, want ECONFLICT naming %s", old, err, d4.ID)
		}
	}
	// History edges can be neither removed nor forged.
	for _, rel := range []string{"SUPERSEDES", "SUPERSEDED_BY"} {
		if _, err := ten.Unlink(ctx, d4.ID, d3.ID, rel); knowmind.ErrorCode(err) != knowmind.ECONSTRAINT {
			t.Fatalf("unlink %s: %v", rel, err)
		}
		if _, err := ten.Link(ctx, plain.ID, d4.ID, rel); knowmind.ErrorCode(err) != knowmind.ECONSTRAINT {
			t.Fatalf("link %s: %v", rel, err)
		}
	}
}

// Issue 13: document uploads serialised on one global array of 64 locks
// shared by all tenants, and waited for them ignoring cancellation. Now a
// lock is per tenant and title, and a waiter gives up when its call ends.
func TestUploadsWaitOnlyForTheirOwnTitle(t *testing.T) {
	ctx := context.Background()
	a, b := dgraphtest.NewTenant(t), dgraphtest.NewTenant(t)
	unlock, err := a.HoldTitleLock(ctx, "Handbuch")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	// The title of b that shared a's lock in the old array (fnv-32a of namespace and title, mod 64).
	slot := func(ns uint64, title string) uint32 {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d\x00%s", ns, title)
		return h.Sum32() % 64
	}
	collide := ""
	for i := 0; collide == ""; i++ {
		if title := fmt.Sprintf("Titel %d", i); slot(b.Namespace, title) == slot(a.Namespace, "Handbuch") {
			collide = title
		}
	}
	for _, title := range []string{"Handbuch", collide} {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		start := time.Now()
		_, err := b.UploadDocument(cctx, knowmind.UploadDocumentInput{Title: title, Content: "Inhalt von " + title})
		cancel()
		if err != nil || time.Since(start) > 10*time.Second {
			t.Fatalf("another tenant's upload of %q while a holds its lock: %v after %s", title, err, time.Since(start))
		}
	}
	// The same tenant and title waits, and stops waiting when its call ends; nothing is written.
	cctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = a.UploadDocument(cctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: "Wartet."})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("upload waiting for its title: %v after %s, want the deadline's error at once", err, time.Since(start))
	}
	if n := countMemories(t, a); n != 0 {
		t.Fatalf("%d memories written by the cancelled upload", n)
	}
	unlock()
	unlock = nil
	if _, err := a.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: "Handbuch", Content: "Wartet nicht mehr."}); err != nil {
		t.Fatal(err)
	}
}

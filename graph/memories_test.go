package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// queryCount runs a DQL block named q that returns count(uid) and gives the number.
func queryCount(t testing.TB, ten *graph.Tenant, query string, vars map[string]string) int {
	t.Helper()
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(context.Background(), query, vars)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out struct{ Q []struct{ Count int } }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Q) == 0 {
		return 0
	}
	return out.Q[0].Count
}

func countMemories(t testing.TB, ten *graph.Tenant) int {
	return queryCount(t, ten, `{ q(func: has(Memory.id)) { count(uid) } }`, nil)
}

func countChunks(t testing.TB, ten *graph.Tenant) int {
	return queryCount(t, ten, `{ q(func: has(Chunk.position)) { count(uid) } }`, nil)
}

// brokenEmbedder is the default embedder (same ID, so the tenant accepts
// it) whose passages always fail, as a model server that went away.
type brokenEmbedder struct{ graph.Embedder }

func (brokenEmbedder) EmbedPassages(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("model server unreachable")
}

// withBrokenEmbedder opens ten's namespace through a second service client
// whose embedder fails.
func withBrokenEmbedder(t *testing.T, ten *graph.Tenant) *graph.Tenant {
	t.Helper()
	c := openWith(t, brokenEmbedder{dgraphtest.Shared(t).Embedder})
	broken, err := c.Tenant(context.Background(), ten.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	return broken
}

func wantError(t *testing.T, err error, code, reason, param string) {
	t.Helper()
	e := knowmind.AsError(err)
	if e == nil || e.Code != code || e.Reason != reason || e.Param != param {
		t.Fatalf("err = %#v (%v), want code %q reason %q param %q", e, err, code, reason, param)
	}
}

func TestStoreMemoryValidation(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	ok := "Alle Service-Mitarbeitenden absolvieren die QM-Schulung jährlich."
	long := func(n int) string { return strings.Repeat("x", n) }
	tags := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("tag", i)
		}
		return out
	}
	for _, tc := range []struct {
		name                string
		in                  knowmind.StoreMemoryInput
		code, reason, param string
	}{
		{"content missing", knowmind.StoreMemoryInput{Title: "t"}, knowmind.EINTERNAL, knowmind.ReasonContentRequired, ""},
		{"content blank", knowmind.StoreMemoryInput{Content: " \n\t "}, knowmind.EINTERNAL, knowmind.ReasonContentRequired, ""},
		{"content too large", knowmind.StoreMemoryInput{Content: strings.Repeat("ä", knowmind.MaxContentChars+1)}, knowmind.EINTERNAL, knowmind.ReasonTooLarge, ""},
		{"too large wins over other errors", knowmind.StoreMemoryInput{Content: long(knowmind.MaxContentChars + 1), MemoryType: "x"}, knowmind.EINTERNAL, knowmind.ReasonTooLarge, ""},
		{"memory_type unknown", knowmind.StoreMemoryInput{Content: ok, MemoryType: "opinion"}, knowmind.EINVALID, "", "memory_type"},
		{"title too long", knowmind.StoreMemoryInput{Content: ok, Title: long(knowmind.MaxTitleChars + 1)}, knowmind.EINVALID, "", "title"},
		{"source too long", knowmind.StoreMemoryInput{Content: ok, Source: long(knowmind.MaxSourceChars + 1)}, knowmind.EINVALID, "", "source"},
		{"too many tags", knowmind.StoreMemoryInput{Content: ok, Tags: tags(knowmind.MaxTags + 1)}, knowmind.EINVALID, "", "tags"},
		{"empty tag", knowmind.StoreMemoryInput{Content: ok, Tags: []string{"qm", " "}}, knowmind.EINVALID, "", "tags"},
		{"tag too long", knowmind.StoreMemoryInput{Content: ok, Tags: []string{long(knowmind.MaxTagChars + 1)}}, knowmind.EINVALID, "", "tags"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ten.StoreMemory(ctx, tc.in)
			wantError(t, err, tc.code, tc.reason, tc.param)
		})
	}
	// Exactly at the limits is fine; the content limit counts characters, not bytes.
	res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: strings.Repeat("ä ", knowmind.MaxContentChars/2),
		Title: long(knowmind.MaxTitleChars), Tags: tags(knowmind.MaxTags), MemoryType: " Episodic "})
	if err != nil || res.Status != knowmind.StatusIndexed {
		t.Fatalf("content at the limit: %+v, %v", res, err)
	}
	if n := countMemories(t, ten); n != 1 {
		t.Fatalf("%d memories after the rejected stores and one good one, want 1", n)
	}
	m, err := ten.GetMemory(ctx, res.ID)
	if err != nil || m.MemoryType != knowmind.MemoryEpisodic {
		t.Fatalf("memory_type normalised: %+v, %v", m.MemoryType, err)
	}
}

func TestStoreMemoryWritesChunkAndVector(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	in := knowmind.StoreMemoryInput{
		Title:      "QM-Schulung Pflicht",
		Content:    "Alle Service-Mitarbeitenden absolvieren die QM-Schulung jährlich.",
		MemoryType: "procedural",
		Tags:       []string{"qm", "schulung", "qm"},
		Source:     "internal-handbook",
	}
	res, err := ten.StoreMemory(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.ID == "" || res.MemoryID != res.ID || res.Title != in.Title || res.Status != knowmind.StatusIndexed ||
		res.ChunksWritten != 1 || res.EmbeddingProvider != "knowmind-hash" || res.Unchanged || res.ReplacedDocumentIDs != nil {
		t.Fatalf("result = %+v", res)
	}
	js, _ := json.Marshal(res)
	if strings.Contains(string(js), "replaced_document_ids") || strings.Contains(string(js), "unchanged") {
		t.Errorf("store_memory result JSON has upload/unchanged fields: %s", js)
	}

	m, err := ten.GetMemory(ctx, res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != knowmind.KindMemory || m.Content != in.Content || m.MemoryType != "procedural" || m.Source != in.Source ||
		m.Status != knowmind.StatusIndexed || m.Chunks != 1 || m.ValidTo != nil || m.CreatedAt.IsZero() ||
		!m.ValidFrom.Equal(m.CreatedAt) || len(m.Tags) != 2 || m.ContentSHA != graph.ContentSHA(in.Content) {
		t.Fatalf("memory = %+v", m)
	}

	// German text is stored with @de and found by the German full-text
	// analyser (stemming: "Schulungen" finds "Schulung"); the title is part
	// of the chunk text.
	if n := queryCount(t, ten, `{ q(func: anyoftext(Chunk.text@de, "Schulungen Pflicht")) { count(uid) } }`, nil); n != 1 {
		t.Errorf("German full-text search found %d chunks, want 1", n)
	}
	// The vector is the embedder's: a query with the same text finds it first.
	emb := dgraphtest.Shared(t).Embedder
	vec, _ := emb.EmbedQuery(ctx, "QM-Schulung jährlich für Service-Mitarbeitende")
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($v: float32vector) { q(func: similar_to(Chunk.embedding, 1, $v)) { ~Memory.chunks { Memory.id } } }`,
		map[string]string{"$v": graph.VectorString(vec)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Json), res.ID) {
		t.Errorf("vector search: %s, want %s", resp.Json, res.ID)
	}
}

func TestStoreMemoryEnglishIsUntagged(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "The onboarding of new employees starts with a tour of the office."}); err != nil {
		t.Fatal(err)
	}
	if n := queryCount(t, ten, `{ q(func: anyoftext(Chunk.text, "employee onboarded")) { count(uid) } }`, nil); n != 1 {
		t.Errorf("English full-text search found %d chunks, want 1", n)
	}
}

// Same content, however it is spaced, is the same memory: nothing is
// written again. Same title with other content is a new memory.
func TestStoreMemoryIdempotentAndAppendOnly(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	first, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Adresse", Content: "Müller GmbH,  Hauptstraße 1,\n32756 Detmold."})
	if err != nil {
		t.Fatal(err)
	}
	again, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Andere Überschrift", Content: "  Müller GmbH, Hauptstraße 1, 32756 Detmold. "})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Unchanged || again.ID != first.ID || again.Title != "Adresse" || again.Status != knowmind.StatusIndexed || again.ChunksWritten != 0 {
		t.Fatalf("second store = %+v, want unchanged %s", again, first.ID)
	}
	other, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Adresse", Content: "Müller GmbH, Industriestraße 7, 32756 Detmold."})
	if err != nil || other.Unchanged || other.ID == first.ID {
		t.Fatalf("same title, other content = %+v, %v; want a new memory", other, err)
	}
	if n := countMemories(t, ten); n != 2 {
		t.Fatalf("%d memories, want 2", n)
	}
	if n := countChunks(t, ten); n != 2 {
		t.Fatalf("%d chunks, want 2", n)
	}
}

func TestStoreMemoryConcurrentIdenticalMakeOne(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	in := knowmind.StoreMemoryInput{Title: "Tarif", Content: "Der Tarif Business umfasst fünf Plätze und kostet 49 Euro im Monat."}
	const n = 20
	var (
		wg      sync.WaitGroup
		results [n]knowmind.StoreResult
		errs    [n]error
	)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = ten.StoreMemory(ctx, in) })
	}
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("store %d: %v", i, errs[i])
		}
		if results[i].ID != results[0].ID {
			t.Fatalf("store %d returned %s, store 0 %s", i, results[i].ID, results[0].ID)
		}
		if !results[i].Unchanged {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d stores report a new memory, want 1", created)
	}
	if got := countMemories(t, ten); got != 1 {
		t.Fatalf("%d memories after %d concurrent identical stores, want 1", got, n)
	}
	if got := countChunks(t, ten); got != 1 {
		t.Fatalf("%d chunks, want 1", got)
	}
}

// A failed embedding is kept as a failed memory with its error, returns
// ingest_failed naming it, and leaves nothing searchable. Storing the same
// content once the embedder works again indexes it as a new memory.
func TestStoreMemoryEmbeddingFailsKeepsFailed(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	broken := withBrokenEmbedder(t, ten)
	in := knowmind.StoreMemoryInput{Title: "Notiz", Content: "Das Kundengespräch mit Müller ist am Dienstag."}
	res, err := broken.StoreMemory(ctx, in)
	wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonIngestFailed, "")
	kerr := knowmind.AsError(err)
	if strings.Contains(kerr.Message, "unreachable") {
		t.Errorf("client message leaks the internal error: %q", kerr.Message)
	}
	if res.Status != knowmind.StatusFailed || res.ID == "" || kerr.Data["id"] != res.ID {
		t.Fatalf("result = %+v, error data = %v", res, kerr.Data)
	}
	resp, err := dgraphtest.DG(t, ten).NewReadOnlyTxn().QueryWithVars(ctx,
		`query q($id: string) { q(func: eq(Memory.id, $id)) { Memory.status Memory.error Memory.content n: count(Memory.chunks) } }`,
		map[string]string{"$id": res.ID})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Q []struct {
			Status  string `json:"Memory.status"`
			Error   string `json:"Memory.error"`
			Content string `json:"Memory.content"`
			N       int    `json:"n"`
		}
	}
	json.Unmarshal(resp.Json, &out)
	if len(out.Q) != 1 || out.Q[0].Status != knowmind.StatusFailed || !strings.Contains(out.Q[0].Error, "model server unreachable") ||
		out.Q[0].Content != in.Content || out.Q[0].N != 0 {
		t.Fatalf("failed memory as stored: %s", resp.Json)
	}
	if n := queryCount(t, ten, `{ q(func: has(Chunk.embedding)) { count(uid) } }`, nil); n != 0 {
		t.Fatalf("%d vectors after a failed ingest, want 0", n)
	}
	recent, err := ten.ListRecent(ctx, 10)
	if err != nil || len(recent) != 1 || recent[0].Status != knowmind.StatusFailed || recent[0].IndexedChunks != 0 {
		t.Fatalf("list_recent shows %+v, %v", recent, err)
	}

	retried, err := ten.StoreMemory(ctx, in)
	if err != nil || retried.Unchanged || retried.ID == res.ID || retried.Status != knowmind.StatusIndexed {
		t.Fatalf("store after repair = %+v, %v; want a new indexed memory", retried, err)
	}
}

// A long memory is chunked like a document.
// A write that returned an error after its commit was sent (the request's
// context ended during the commit) may be stored all the same: the failure
// path then reports the stored entry instead of adding a second, failed node
// with the same id. An entry that is not stored is recorded failed, once.
func TestRecordFailedAfterCommitWritesNoDuplicate(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	content := "Die Kantine öffnet um halb zwölf."
	stored, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: content})
	if err != nil {
		t.Fatal(err)
	}
	byID := func(id string) int {
		return queryCount(t, ten, `query q($id: string) { q(func: eq(Memory.id, $id)) { count(uid) } }`, map[string]string{"$id": id})
	}
	res, err := ten.RecordFailedFor(ctx, stored.ID, knowmind.KindMemory, content, errors.New("commit: context canceled"))
	if err != nil || res.ID != stored.ID || res.Status != knowmind.StatusIndexed {
		t.Fatalf("failure path of a committed write = %+v, %v; want it reported indexed", res, err)
	}
	if n := byID(stored.ID); n != 1 {
		t.Fatalf("%d nodes with id %s, want 1", n, stored.ID)
	}
	if m, err := ten.GetMemory(ctx, stored.ID); err != nil || m.Status != knowmind.StatusIndexed {
		t.Fatalf("stored memory now %+v, %v", m, err)
	}

	lost := "00000000-0000-4000-8000-00000000f00d"
	for range 2 {
		_, err := ten.RecordFailedFor(ctx, lost, knowmind.KindMemory, "Nie geschrieben.", errors.New("write: unavailable"))
		wantError(t, err, knowmind.EINTERNAL, knowmind.ReasonIngestFailed, "")
	}
	if m, err := ten.GetMemory(ctx, lost); err != nil || m.Status != knowmind.StatusFailed || byID(lost) != 1 {
		t.Fatalf("failed record = %+v, %v (%d nodes)", m, err, byID(lost))
	}
}

func TestStoreMemoryLongIsChunked(t *testing.T) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(t)
	para := strings.Repeat("Ein Absatz über die Einarbeitung neuer Mitarbeiter mit vielen Details. ", 10)
	content := strings.Join([]string{para, para + "zwei", para + "drei", para + "vier"}, "\n\n")
	res, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Lang", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	if res.ChunksWritten < 2 || countChunks(t, ten) != res.ChunksWritten {
		t.Fatalf("chunks_written = %d, stored %d", res.ChunksWritten, countChunks(t, ten))
	}
}

func TestGetMemoryNotFound(t *testing.T) {
	ten := dgraphtest.NewTenant(t)
	_, err := ten.GetMemory(context.Background(), "no-such-id")
	wantError(t, err, knowmind.ENOTFOUND, "", "")
}

// BenchmarkStoreMemory measures store_memory end to end with the default
// (hash) embedder against the harness's local Dgraph: one writer storing
// distinct German memories of about 40 words (about 300 characters, one
// chunk each) into one tenant. Reports memories/s.
func BenchmarkStoreMemory(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	base := "Die Service-Mitarbeitenden der Müller GmbH absolvieren jährlich die QM-Schulung; " +
		"der Termin wird mit dem Kunden abgestimmt, das Protokoll liegt im Handbuch und die " +
		"Teilnahme wird in der Personalakte vermerkt. Offene Punkte klärt die Leitung bis Monatsende."
	i := 0
	for ; b.Loop(); i++ {
		if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{
			Title: fmt.Sprint("Notiz ", i), Content: fmt.Sprintf("%s Vorgang %d.", base, i),
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "memories/s")
}

package graph_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/search"
)

// recallFixture stores memories in a fresh tenant and recalls from it.
type recallFixture struct {
	t   *testing.T
	ctx context.Context
	ten *graph.Tenant
}

func newRecallFixture(t *testing.T) *recallFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return &recallFixture{t: t, ctx: ctx, ten: dgraphtest.NewTenant(t)}
}

func (f *recallFixture) store(title, content string) string {
	f.t.Helper()
	res, err := f.ten.StoreMemory(f.ctx, knowmind.StoreMemoryInput{Title: title, Content: content, Source: "test"})
	if err != nil {
		f.t.Fatalf("store %q: %v", title, err)
	}
	return res.MemoryID
}

// storeHops stores the hops scenario's hub, 1-hop and 2-hop memories (dgraphtest.HopsScenario),
// unlinked and without its noise.
func (f *recallFixture) storeHops() (hub, mid, far string) {
	f.t.Helper()
	sc := dgraphtest.HopsScenario
	return f.store(sc.Hub.Title, sc.Hub.Content), f.store(sc.Mid.Title, sc.Mid.Content), f.store(sc.Far.Title, sc.Far.Content)
}

func (f *recallFixture) link(from, to, rel string) {
	f.t.Helper()
	if _, err := f.ten.Link(f.ctx, from, to, rel); err != nil {
		f.t.Fatalf("link %s -%s-> %s: %v", from, rel, to, err)
	}
}

func (f *recallFixture) recall(q knowmind.RecallQuery) knowmind.RecallResult {
	f.t.Helper()
	return f.recallWith(q, search.Default())
}

// with returns the tools' search options changed by set.
func with(set func(p *search.Plan, w *search.Weights)) search.Options {
	o := search.Default()
	set(&o.Plan, &o.Weights)
	return o
}

func (f *recallFixture) recallWith(q knowmind.RecallQuery, o search.Options) knowmind.RecallResult {
	f.t.Helper()
	res, err := f.ten.RecallWith(f.ctx, q, o)
	if err != nil {
		f.t.Fatalf("recall %+v: %v", q, err)
	}
	for i, h := range res.Hits {
		if h.Score < 0 || h.Score > 1 || (i > 0 && h.Score > res.Hits[i-1].Score) {
			f.t.Fatalf("scores not in 0..1 and falling: %+v", res.Hits)
		}
	}
	return res
}

func hitIDs(res knowmind.RecallResult) []string {
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.MemoryID
	}
	return ids
}

func TestRecallGermanStemming(t *testing.T) {
	f := newRecallFixture(t)
	want := f.store("Einarbeitungs-Verantwortliche Q2 2026",
		"Anna Müller ist Ansprechpartnerin für die Einarbeitung neuer Service-Mitarbeitender, vertreten durch Tomasz Kowalski.")
	f.store("Kantine", "Die Kantine im Erdgeschoss öffnet um halb zwölf und schließt um vierzehn Uhr.")
	f.store("Parkplätze", "Parkplätze für Besucher gibt es hinter dem Gebäude, Zufahrt über die Lindenstraße.")

	// Text alone: only Dgraph's German analyser (and BM25 with the same stems) can match the
	// plural against the singular.
	res := f.recallWith(knowmind.RecallQuery{Query: "Einarbeitungen", K: 5}, with(func(p *search.Plan, _ *search.Weights) { p.Vector = false }))
	if ids := hitIDs(res); !slices.Equal(ids, []string{want}) {
		t.Fatalf("text-only recall of 'Einarbeitungen' = %v, want only %s", res.Hits, want)
	}
	// All signals: it is the best hit, with the spec's fields.
	res = f.recall(knowmind.RecallQuery{Query: "Wer ist Ansprechpartnerin für die Einarbeitungen?", K: 5, Hops: 2})
	if len(res.Hits) == 0 || res.Hits[0].MemoryID != want {
		t.Fatalf("recall = %+v, want %s first", res.Hits, want)
	}
	top := res.Hits[0]
	if top.Title != "Einarbeitungs-Verantwortliche Q2 2026" || !strings.HasPrefix(top.Content, "Anna Müller ist") ||
		top.Source != "test" || top.Kind != knowmind.KindMemory || top.ValidFrom != nil {
		t.Fatalf("top hit = %+v", top)
	}
	if res.Rerank != "none" {
		t.Fatalf("rerank = %q, want none (no reranker configured)", res.Rerank)
	}
}

func TestRecallHopsReachLinkedMemories(t *testing.T) {
	f := newRecallFixture(t)
	sc := dgraphtest.HopsScenario
	hub, mid, far := f.storeHops()
	for _, s := range sc.Noise { // each outranks far on its own
		f.store("", s)
	}
	f.link(hub, mid, "RELATES_TO")
	f.link(mid, far, "REFERENCES")

	q := sc.Query
	res0 := f.recall(knowmind.RecallQuery{Query: q, K: 3, Hops: 0})
	if len(res0.Hits) == 0 || res0.Hits[0].MemoryID != hub {
		t.Fatalf("hops=0: %+v, want %s first", res0.Hits, hub)
	}
	if slices.Contains(hitIDs(res0), far) {
		t.Fatalf("hops=0 returned the 2-hop memory: %+v", res0.Hits)
	}
	res2 := f.recall(knowmind.RecallQuery{Query: q, K: 3, Hops: 2})
	t.Logf("hops=2: %+v", res2.Hits)
	ids := hitIDs(res2)
	if !slices.Equal(ids, []string{hub, mid, far}) {
		t.Fatalf("hops=2: %v, want hub, 1-hop, 2-hop", ids)
	}
	if !(res2.Hits[1].Score < res2.Hits[0].Score && res2.Hits[2].Score < res2.Hits[1].Score) {
		t.Fatalf("neighbours not scored below the hit that reached them: %+v", res2.Hits)
	}
	res1 := f.recall(knowmind.RecallQuery{Query: q, K: 3, Hops: 1})
	if slices.Contains(hitIDs(res1), far) || !slices.Contains(hitIDs(res1), mid) {
		t.Fatalf("hops=1: %+v, want the 1-hop memory and not the 2-hop one", res1.Hits)
	}
}

// The hops ask Dgraph only for the relation predicates that hold an edge in the tenant, and a
// link's first edge of a type is followed by the very next recall (the cache of linked
// relations is dropped by the write, not only after its recheck period).
func TestRecallHopsFollowOnlyLinkedRelations(t *testing.T) {
	f := newRecallFixture(t)
	sc := dgraphtest.HopsScenario
	hub, mid, far := f.storeHops()
	q := knowmind.RecallQuery{Query: sc.Query, K: 3, Hops: 2}
	asks := func() string {
		t.Helper()
		req, err := f.ten.PrepareRecall(f.ctx, q, search.Default())
		if err != nil {
			t.Fatal(err)
		}
		return req.DQL
	}
	if dql := asks(); strings.Contains(dql, "hop1") {
		t.Fatalf("no edge in the tenant, yet the request expands:\n%s", dql)
	}
	f.recall(q) // hops without an edge to follow: answered, not refused
	f.link(hub, mid, "RELATES_TO")
	if dql := asks(); !strings.Contains(dql, "<RELATES_TO>") || strings.Contains(dql, "<REFERENCES>") || strings.Contains(dql, "<OWNS>") {
		t.Fatalf("after a RELATES_TO link the hops should follow it alone:\n%s", dql)
	}
	f.link(mid, far, "REFERENCES") // within the recheck period of the last question
	if dql := asks(); !strings.Contains(dql, "<REFERENCES>") || !strings.Contains(dql, "<REFERENCED_BY>") {
		t.Fatalf("the first REFERENCES link is not followed at once:\n%s", dql)
	}
	if ids := hitIDs(f.recall(q)); !slices.Equal(ids, []string{hub, mid, far}) {
		t.Fatalf("hops=2: %v, want hub, 1-hop, 2-hop", ids)
	}
}

func TestRecallAtTimeFollowsUpdateFact(t *testing.T) {
	f := newRecallFixture(t)
	old := f.store("Tarif Müller GmbH", "Müller GmbH läuft auf Tarif Starter mit zwei Plätzen.")
	f.store("Urlaub", "Betriebsferien sind in den ersten beiden Augustwochen.")
	before := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	upd, err := f.ten.UpdateFact(f.ctx, knowmind.UpdateFactInput{TargetID: old,
		NewTitle: "Tarif Müller GmbH ab Juni", NewContent: "Müller GmbH läuft auf Tarif Business mit fünf Plätzen.",
		UpdateReason: "Upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC().Add(time.Second)
	q := "Tarif Müller GmbH"

	// Current recall: only the new version, ever.
	cur := f.recall(knowmind.RecallQuery{Query: q, K: 5, Hops: 2})
	if ids := hitIDs(cur); !slices.Contains(ids, upd.NewMemoryID) || slices.Contains(ids, old) {
		t.Fatalf("recall = %v, want the new version %s and never the old %s", ids, upd.NewMemoryID, old)
	}
	// At a time before the update: the old version, with its validity.
	then := f.recall(knowmind.RecallQuery{Query: q, K: 5, Hops: 2, AsOf: &before})
	if ids := hitIDs(then); len(ids) == 0 || ids[0] != old || slices.Contains(ids, upd.NewMemoryID) {
		t.Fatalf("recall_at_time(before) = %+v, want the old version only", then.Hits)
	}
	if h := then.Hits[0]; h.ValidFrom == nil || h.ValidTo == nil || !h.ValidFrom.Before(before) || !h.ValidTo.After(before) {
		t.Fatalf("old version validity = %v .. %v", h.ValidFrom, h.ValidTo)
	}
	// After it: the new version, still valid (no valid_to).
	now := f.recall(knowmind.RecallQuery{Query: q, K: 5, Hops: 2, AsOf: &after})
	if ids := hitIDs(now); len(ids) == 0 || ids[0] != upd.NewMemoryID || slices.Contains(ids, old) {
		t.Fatalf("recall_at_time(after) = %+v, want the new version only", now.Hits)
	}
	if h := now.Hits[0]; h.ValidFrom == nil || h.ValidTo != nil {
		t.Fatalf("new version validity = %v .. %v", h.ValidFrom, h.ValidTo)
	}
	// Long before anything was stored: nothing.
	early := before.Add(-24 * time.Hour)
	if res := f.recall(knowmind.RecallQuery{Query: q, K: 5, AsOf: &early}); len(res.Hits) != 0 {
		t.Fatalf("recall_at_time(yesterday) = %+v, want none", res.Hits)
	}
}

func TestRecallHonoursK(t *testing.T) {
	f := newRecallFixture(t)
	for _, s := range []string{"Rot", "Grün", "Blau", "Gelb", "Weiß", "Schwarz", "Orange"} {
		f.store("Farbe "+s, "Die Farbe "+s+" steht im Corporate-Design-Handbuch.")
	}
	for _, k := range []int{1, 3, 7} {
		if res := f.recall(knowmind.RecallQuery{Query: "Farbe Corporate Design", K: k, Hops: 2}); len(res.Hits) != k {
			t.Fatalf("k=%d: %d hits", k, len(res.Hits))
		}
	}
	if res := f.recall(knowmind.RecallQuery{Query: "Farbe Corporate Design", K: 25}); len(res.Hits) != 7 {
		t.Fatalf("k=25 over 7 memories: %d hits", len(res.Hits))
	}
}

func TestRecallNeverReturnsFailedIngests(t *testing.T) {
	f := newRecallFixture(t)
	// A failed ingest as ingest records it: the node with status failed and no chunks.
	mu := `_:m <Memory.id> "failed-1" .
_:m <Memory.kind> "memory" .
_:m <Memory.title> "Kaputt" .
_:m <Memory.content> "Zebrastreifen vor dem Haupteingang" .
_:m <Memory.status> "failed" .
_:m <Memory.valid_from> "2020-01-01T00:00:00Z" .
_:m <Memory.chunks> _:c .
_:c <Chunk.text@de> "Zebrastreifen vor dem Haupteingang" .
_:m <dgraph.type> "Memory" .`
	dgraphtest.SetNquads(t, f.ten, mu)
	ok := f.store("Eingang", "Der Haupteingang ist ab sieben Uhr geöffnet.")
	res := f.recall(knowmind.RecallQuery{Query: "Zebrastreifen Haupteingang", K: 5, Hops: 2})
	if ids := hitIDs(res); !slices.Equal(ids, []string{ok}) {
		t.Fatalf("recall = %+v, want only %s", res.Hits, ok)
	}
}

func TestRecallValidation(t *testing.T) {
	ten := dgraphtest.NewTenant(t)
	for _, tc := range []struct {
		name  string
		q     knowmind.RecallQuery
		param string
	}{
		{"empty query", knowmind.RecallQuery{Query: "  ", K: 5, Hops: 2}, "query"},
		{"k zero", knowmind.RecallQuery{Query: "x", K: 0, Hops: 2}, "k"},
		{"k 26", knowmind.RecallQuery{Query: "x", K: 26, Hops: 2}, "k"},
		{"hops -1", knowmind.RecallQuery{Query: "x", K: 5, Hops: -1}, "hops"},
		{"hops 4", knowmind.RecallQuery{Query: "x", K: 5, Hops: 4}, "hops"},
		{"query too long", knowmind.RecallQuery{Query: strings.Repeat("x", knowmind.RecallMaxQueryChars+1), K: 5}, "query"},
		{"min_score 1.5", knowmind.RecallQuery{Query: "x", K: 5, MinScore: 1.5}, "min_score"},
		{"min_score -0.1", knowmind.RecallQuery{Query: "x", K: 5, MinScore: -0.1}, "min_score"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ten.Recall(context.Background(), tc.q)
			e := knowmind.AsError(err)
			if e == nil || e.Code != knowmind.EINVALID || e.Param != tc.param {
				t.Fatalf("err = %v, want EINVALID naming %q", err, tc.param)
			}
		})
	}
}

func TestRecallTextStatsFollowIngest(t *testing.T) {
	f := newRecallFixture(t)
	if f.ten.TextStatsLoaded() {
		t.Fatal("statistics loaded before the first recall")
	}
	// store_memory's conflict check asks recall for the nearest current memories
	// (conflicts.go, nearestCurrent): the first store loads them from a scan.
	f.store("Eins", "Die Lieferung kommt am Montag.")
	if !f.ten.TextStatsLoaded() {
		t.Fatal("statistics not loaded by the first store's conflict check")
	}
	if st := f.ten.TextStats("de", "lieferung"); st.Docs != 1 || st.DF["lieferung"] != 1 {
		t.Fatalf("after the first store: %+v", st)
	}
	f.store("Zwei", "Die Lieferung kommt am Dienstag.")
	f.recall(knowmind.RecallQuery{Query: "Lieferung", K: 5})
	if st := f.ten.TextStats("de", "lieferung"); st.Docs != 2 || st.DF["lieferung"] != 2 {
		t.Fatalf("after load: %+v", st)
	}

	// Every ingest path keeps them current in this process.
	third := f.store("Drei", "Die Lieferung kommt am Mittwoch, die Rechnung später.")
	doc := func(content string) knowmind.StoreResult {
		res, err := f.ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Lieferbedingungen", Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	doc("# Lieferung\n\nDie Lieferung erfolgt frei Haus.\n\n# Zahlung\n\nZahlung binnen 14 Tagen.")
	doc("# Lieferung\n\nDie Lieferung erfolgt ab Werk.") // replaces the first version
	if _, err := f.ten.UpdateFact(f.ctx, knowmind.UpdateFactInput{TargetID: third, NewTitle: "Drei", NewContent: "Die Lieferung kommt am Donnerstag."}); err != nil {
		t.Fatal(err)
	}
	incremental := f.ten.TextStats("de", "lieferung", "rechnung", "zahlung")
	heldVectors := f.ten.HeldVectors()

	if err := f.ten.RebuildTextStats(f.ctx); err != nil {
		t.Fatal(err)
	}
	scanned := f.ten.TextStats("de", "lieferung", "rechnung", "zahlung")
	// The exact vector search's copy too: four memories (one superseded version among them) of
	// one chunk, a document of one and the replaced document's two chunks (closed, kept).
	if rescanned := f.ten.HeldVectors(); len(heldVectors) != 7 || !maps.EqualFunc(heldVectors, rescanned, slices.Equal) {
		t.Fatalf("vectors kept by the hooks: %d chunks; a rescan: %d chunks (or other vectors)", len(heldVectors), len(rescanned))
	}
	t.Logf("incremental %+v, rescanned %+v", incremental, scanned)
	if incremental.Docs != scanned.Docs || incremental.TotalLen != scanned.TotalLen ||
		incremental.DF["lieferung"] != scanned.DF["lieferung"] || incremental.DF["rechnung"] != scanned.DF["rechnung"] ||
		incremental.DF["zahlung"] != scanned.DF["zahlung"] {
		t.Fatalf("statistics kept by the hooks differ from a rescan:\n%+v\n%+v", incremental, scanned)
	}
	// Superseded versions and replaced documents stay in the corpus (recall_at_time searches them).
	if scanned.DF["rechnung"] != 1 || scanned.DF["zahlung"] != 1 {
		t.Fatalf("rescanned DF: %+v", scanned.DF)
	}
}

// Recall's vector candidates come from the service's exact search when it holds the vectors:
// the DQL names the best chunk by uid (VX) and HNSW runs as a narrow safety net without the
// full-text pools; switched off, HNSW and the pools do it alone.
func TestRecallUsesExactVectorSearch(t *testing.T) {
	f := newRecallFixture(t)
	f.store("Rampe", "Das Lager öffnet an der Rampe um sechs Uhr.")
	f.store("Kantine", "Die Kantine bietet mittags drei Gerichte an.")
	f.recall(knowmind.RecallQuery{Query: "Rampe", K: 1}) // loads statistics and vectors
	held := f.ten.HeldVectors()
	if len(held) != 2 {
		t.Fatalf("held %d chunk vectors, want 2", len(held))
	}
	req, err := f.ten.PrepareRecall(f.ctx, knowmind.RecallQuery{Query: "Wann öffnet das Lager an der Rampe?", K: 1}, search.Default())
	if err != nil {
		t.Fatal(err)
	}
	// The service scores them: no HNSW, no vectors read, no pools.
	if !strings.Contains(req.DQL, "VX as var(func: uid(0x") || strings.Contains(req.DQL, "similar_to") ||
		strings.Contains(req.DQL, "Chunk.embedding") ||
		strings.Contains(req.DQL, "PD as var") || strings.Contains(req.DQL, "PE as var") {
		t.Fatalf("recall DQL without the exact candidates:\n%s", req.DQL)
	}
	for uid := range held {
		if !strings.Contains(req.DQL, fmt.Sprintf("%#x", uid)) {
			t.Errorf("chunk %#x (one of two, k=1 over-fetches 100) is not among the exact candidates", uid)
		}
	}
	res := f.recallWith(knowmind.RecallQuery{Query: "Wann öffnet das Lager an der Rampe?", K: 1}, with(func(p *search.Plan, _ *search.Weights) { p.Text = false }))
	if len(res.Hits) != 1 || res.Hits[0].Title != "Rampe" {
		t.Fatalf("vector-only recall: %+v", res.Hits)
	}
	req, err = f.ten.PrepareRecall(f.ctx, knowmind.RecallQuery{Query: "Wann öffnet das Lager an der Rampe?", K: 1},
		with(func(p *search.Plan, _ *search.Weights) { p.DgraphVectorScores = true }))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.DQL, "VX as var(func: uid(0x") || !strings.Contains(req.DQL, "ef: 200)") {
		t.Fatalf("recall DQL re-scoring in Dgraph:\n%s", req.DQL)
	}
	if res := f.recallWith(knowmind.RecallQuery{Query: "Wann öffnet das Lager an der Rampe?", K: 1},
		with(func(p *search.Plan, _ *search.Weights) { p.Text, p.DgraphVectorScores = false, true })); len(res.Hits) != 1 || res.Hits[0].Title != "Rampe" {
		t.Fatalf("vector-only recall re-scored in Dgraph: %+v", res.Hits)
	}
	req, err = f.ten.PrepareRecall(f.ctx, knowmind.RecallQuery{Query: "Wann öffnet das Lager an der Rampe?", K: 1},
		with(func(p *search.Plan, _ *search.Weights) { p.ExactVectors = false }))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(req.DQL, "VX as var") || !strings.Contains(req.DQL, "ef: 2000)") || !strings.Contains(req.DQL, "PD as var") {
		t.Fatalf("recall DQL without the exact search:\n%s", req.DQL)
	}
}

func TestRecallDocumentHitShowsBestChunk(t *testing.T) {
	f := newRecallFixture(t)
	body := "# Anreise\n\nDas Hotel liegt direkt am Bahnhof.\n\n# Verpflegung\n\nFrühstück gibt es von sechs bis zehn Uhr im Wintergarten.\n\n# Abreise\n\nCheck-out bis elf Uhr."
	res, err := f.ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Hotelinfo", Content: body, Source: "hotel.md"})
	if err != nil {
		t.Fatal(err)
	}
	f.store("Kantine", "Die Kantine öffnet um halb zwölf.")
	got := f.recall(knowmind.RecallQuery{Query: "Wann gibt es Frühstück im Wintergarten?", K: 2})
	if len(got.Hits) == 0 || got.Hits[0].MemoryID != res.MemoryID {
		t.Fatalf("recall = %+v, want the document first", got.Hits)
	}
	if h := got.Hits[0]; h.Kind != knowmind.KindDocument || !strings.Contains(h.Content, "Frühstück gibt es") ||
		strings.Contains(h.Content, "Bahnhof") || h.Source != "hotel.md" {
		t.Fatalf("document hit = %+v, want the Verpflegung section as content", h)
	}
}

// A document reached through the graph (no chunk of its own matched) shows its first section:
// the details request picks it by position (eq(Chunk.position, 0), not an ordering, which costs
// Dgraph milliseconds per request at 100k).
func TestRecallDocumentNeighbourShowsFirstSection(t *testing.T) {
	f := newRecallFixture(t)
	body := "# Anreise\n\nDas Hotel liegt direkt am Bahnhof.\n\n# Verpflegung\n\nMorgens gibt es Brötchen im Wintergarten.\n\n# Abreise\n\nCheck-out bis elf Uhr."
	doc, err := f.ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Hotelinfo", Content: body, Source: "hotel.md"})
	if err != nil {
		t.Fatal(err)
	}
	trip := f.store("Dienstreise Hamburg", "Die Dienstreise nach Hamburg dauert drei Tage.")
	f.link(trip, doc.MemoryID, "REFERENCES")
	got := f.recall(knowmind.RecallQuery{Query: "Wie lange dauert die Dienstreise nach Hamburg?", K: 2, Hops: 1})
	if len(got.Hits) != 2 || got.Hits[0].MemoryID != trip || got.Hits[1].MemoryID != doc.MemoryID {
		t.Fatalf("recall = %+v, want the trip, then the document it references", got.Hits)
	}
	if h := got.Hits[1]; h.Kind != knowmind.KindDocument || !strings.Contains(h.Content, "Bahnhof") || strings.Contains(h.Content, "Brötchen") {
		t.Fatalf("document neighbour = %+v, want its first section as content", h)
	}
}

func TestRecallFollowsOnlyEdgesValidThen(t *testing.T) {
	f := newRecallFixture(t)
	hub := f.store("Projekt Atlas", "Projekt Atlas migriert das Lager auf die neue Software.")
	peer := f.store("Lieferant", "Der Lieferant sitzt in Bielefeld und liefert Scanner.")
	f.link(hub, peer, "DEPENDS_ON")
	linked := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	if _, err := f.ten.Unlink(f.ctx, hub, peer, "DEPENDS_ON"); err != nil {
		t.Fatal(err)
	}
	q := knowmind.RecallQuery{Query: "Projekt Atlas Lager", K: 2, Hops: 1}
	textOnly := with(func(p *search.Plan, _ *search.Weights) { p.Vector = false })
	if ids := hitIDs(f.recallWith(q, textOnly)); slices.Contains(ids, peer) {
		t.Fatalf("recall followed an unlinked edge: %v", ids)
	}
	q.AsOf = &linked
	if ids := hitIDs(f.recallWith(q, textOnly)); !slices.Equal(ids, []string{hub, peer}) {
		t.Fatalf("recall_at_time while linked = %v, want hub then its neighbour", ids)
	}
}

// keywordReranker stands in for a cross-encoder: passages holding its keyword are relevant.
type keywordReranker struct{ keyword string }

func (k keywordReranker) Name() string { return "test-reranker" }

func (k keywordReranker) Score(_ context.Context, _ string, passages []string) ([]float64, error) {
	out := make([]float64, len(passages))
	for i, p := range passages {
		out[i] = 0.1
		if strings.Contains(p, k.keyword) {
			out[i] = 0.9
		}
	}
	return out, nil
}

func TestRecallRerank(t *testing.T) {
	env := dgraphtest.Shared(t)
	ctx := context.Background()
	client, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, User: "groot",
		Password: env.Password, Secret: env.Secret, Embedder: env.Embedder, Reranker: keywordReranker{"Zebrastreifen"}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if client.RerankerName() != "test-reranker" {
		t.Fatalf("reranker name = %q", client.RerankerName())
	}
	ten, err := client.Tenant(ctx, dgraphtest.TenantName(t), true)
	if err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	strong := f.store("Verkehr Eingang", "Verkehr am Eingang: Verkehr, Verkehr und nochmals Verkehr vor dem Eingang.")
	relevant := f.store("Überweg", "Vor dem Eingang gibt es einen Zebrastreifen für den Verkehr.")
	neighbour := f.store("Hausmeister", "Der Hausmeister heißt Herr Krause.")
	f.link(relevant, neighbour, "RELATES_TO")

	q := knowmind.RecallQuery{Query: "Verkehr am Eingang", K: 3, Hops: 1}
	res := f.recall(q)
	if res.Rerank != "test-reranker" || len(res.Hits) != 3 || res.Hits[0].MemoryID != relevant || res.Hits[0].Score != 0.9 {
		t.Fatalf("reranked = %+v, want the Zebrastreifen memory first with the reranker's score", res)
	}
	for _, h := range res.Hits {
		if h.MemoryID == neighbour && h.Score > 0.45 {
			t.Fatalf("graph neighbour %+v scored above half its hit's reranked score", h)
		}
	}
	// Switched off, the fused order stands and the answer says so.
	if res := f.recallWith(q, with(func(p *search.Plan, _ *search.Weights) { p.Rerank = false })); res.Rerank != "none" || res.Hits[0].MemoryID != strong {
		t.Fatalf("not reranked = %+v, want the fused order (%s first) and rerank none", res, strong)
	}
}

// Scores are absolute (issue 24): a question the workspace does not answer scores below the
// documented floor (knowmind.RecallMinScore), so the tools' default floor leaves no hit; a
// question it answers still scores high, with the right memory first.
func TestRecallScoresAreAbsolute(t *testing.T) {
	f := newRecallFixture(t)
	audit := f.store("Internes Audit ISO 9001", "Das interne Audit nach ISO 9001 führt die QM-Beauftragte Petra Schulz jährlich im Oktober durch.")
	reklamation := f.store("Reklamationsprozess", "Kundenreklamationen werden binnen 48 Stunden im 8D-Report erfasst und an die Qualitätssicherung gemeldet.")
	for _, s := range []string{
		"Prüfmittel werden halbjährlich kalibriert; die Kalibrierscheine liegen im QM-Handbuch.",
		"Lieferantenbewertung: Liefertreue, Qualität und Preis werden jedes Quartal bewertet.",
		"Korrekturmaßnahmen werden im CAPA-System verfolgt und nach drei Monaten auf Wirksamkeit geprüft.",
		"Die Managementbewertung findet einmal im Jahr mit der Geschäftsführung statt.",
		"Fehlerquote der Montagelinie 2: Zielwert unter 0,5 Prozent.",
		"Schulungsnachweise zur Qualitätsrichtlinie werden in der Personalakte abgelegt.",
	} {
		f.store("", s)
	}
	for _, q := range []string{"Wetter morgen in Tokio", "Wie wird das Wetter morgen in Tokio?"} {
		res := f.recall(knowmind.RecallQuery{Query: q, K: 10, Hops: 2})
		t.Logf("%q: %+v", q, scoresOf(res))
		for _, h := range res.Hits {
			if h.Score >= knowmind.RecallMinScore {
				t.Fatalf("off-topic %q: %q scores %v, at or above the floor %v", q, h.Title, h.Score, knowmind.RecallMinScore)
			}
		}
		if res := f.recall(knowmind.RecallQuery{Query: q, K: 10, Hops: 2, MinScore: knowmind.RecallMinScore}); len(res.Hits) != 0 {
			t.Fatalf("off-topic %q with the floor: %+v, want no hit", q, res.Hits)
		}
	}
	for q, want := range map[string]string{
		"Wer führt das interne Audit nach ISO 9001 durch?": audit,
		"Wie schnell werden Kundenreklamationen erfasst?":  reklamation,
	} {
		res := f.recall(knowmind.RecallQuery{Query: q, K: 10, Hops: 2, MinScore: knowmind.RecallMinScore})
		t.Logf("%q: %+v", q, scoresOf(res))
		if len(res.Hits) == 0 || res.Hits[0].MemoryID != want || res.Hits[0].Score < 0.5 {
			t.Fatalf("on-topic %q: %+v, want %s first scoring 0.5 or more", q, res.Hits, want)
		}
	}
	// min_score is a floor for the caller too.
	res := f.recall(knowmind.RecallQuery{Query: "Wer führt das interne Audit nach ISO 9001 durch?", K: 10, MinScore: 0.99})
	for _, h := range res.Hits {
		if h.Score < 0.99 {
			t.Fatalf("min_score 0.99 let %+v through", h)
		}
	}
}

func scoresOf(res knowmind.RecallResult) []string {
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = fmt.Sprintf("%.3f %s", h.Score, h.Title)
	}
	return out
}

// The time a question names (timeq) ranks memories whose time (valid_from: when stored, or
// capture's occurred_at) falls into it above those of other times.
func TestRecallTimeNamedInQuestion(t *testing.T) {
	f := newRecallFixture(t)
	march := f.store("Teammeeting", "Im Teammeeting wurde das Budget für den Relaunch besprochen.")
	may := f.store("Teammeeting", "Im Teammeeting wurde das Budget für den Relaunch erneut besprochen.")
	for id, when := range map[string]string{march: "2026-03-14T10:00:00Z", may: "2026-05-02T10:00:00Z"} {
		dgraphtest.Upsert(t, f.ten, fmt.Sprintf(`{ m as var(func: eq(Memory.id, %q)) }`, id), nil,
			fmt.Sprintf(`uid(m) <Memory.valid_from> %q .`, when))
	}
	for q, want := range map[string]string{
		"Was wurde am 14. März 2026 im Teammeeting zum Budget besprochen?": march,
		"Budget im Teammeeting im Mai 2026":                                may,
		"Teammeeting Budget 2026-05-02":                                    may,
	} {
		res := f.recall(knowmind.RecallQuery{Query: q, K: 2})
		if ids := hitIDs(res); len(ids) != 2 || ids[0] != want {
			t.Fatalf("%q: %v, want %s first", q, scoresOf(res), want)
		}
	}
}

// The service's own text search (the default) proposes exactly the chunks and BM25 scores that
// Dgraph's full-text step gave when its budget does not bind (a small tenant): the same hits
// with the same scores, documents, German and English, a superseded version and a memory the
// hooks added after the load included — while its request holds no anyoftext and reads no text.
func TestRecallServedTextMatchesDgraphText(t *testing.T) {
	f := newRecallFixture(t)
	f.store("Rampe", "Das Lager öffnet an der Rampe um sechs Uhr, die Lieferung kommt später.")
	old := f.store("Lieferung", "Die Lieferung kommt am Montag an die Rampe.")
	f.store("Kantine", "Die Kantine bietet mittags drei Gerichte an.")
	f.store("Deadline", "The quarterly report deadline moved to Friday afternoon.")
	if _, err := f.ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: "Lieferbedingungen",
		Content: "# Lieferung\n\nDie Lieferung erfolgt frei Haus an die Rampe.\n\n# Zahlung\n\nZahlung binnen 14 Tagen nach Lieferung."}); err != nil {
		t.Fatal(err)
	}
	f.recall(knowmind.RecallQuery{Query: "Rampe", K: 1}) // loads the index
	if _, err := f.ten.UpdateFact(f.ctx, knowmind.UpdateFactInput{TargetID: old, NewTitle: "Lieferung", NewContent: "Die Lieferung kommt am Dienstag an die Rampe."}); err != nil {
		t.Fatal(err)
	}
	late := f.store("Nachtrag", "Die Zahlung der Lieferung erfolgt per Lastschrift.") // after the load: the hooks add it

	req, err := f.ten.PrepareRecall(f.ctx, knowmind.RecallQuery{Query: "Lieferung Rampe", K: 5, Hops: 2}, search.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.DQL, "TX as var(func: uid(0x") || !strings.Contains(req.DQL, "SX as var(func: uid(0x") ||
		strings.Contains(req.DQL, "anyoftext") || strings.Contains(req.DQL, "Chunk.text") {
		t.Fatalf("served text request:\n%s", req.DQL)
	}
	now := time.Now().UTC()
	for _, q := range []knowmind.RecallQuery{
		{Query: "Lieferung Rampe", K: 10},
		{Query: "Wann kommt die Lieferung?", K: 10, Hops: 2},
		{Query: "Zahlung Lastschrift", K: 10, Hops: 1},
		{Query: "report deadline", K: 10},
		{Query: "Lieferung Montag", K: 10, AsOf: &now},
	} {
		// The PPMI+SVD model's pool and concept signal belong to the served plan only; this
		// tenant is below semMinDocs anyway.
		for _, vector := range []bool{true, false} {
			a := with(func(p *search.Plan, _ *search.Weights) { p.Vector = vector })
			served := f.recallWith(q, a)
			a.Plan.DgraphText = true
			dgraph := f.recallWith(q, a)
			if len(served.Hits) == 0 || !slices.EqualFunc(served.Hits, dgraph.Hits, func(x, y knowmind.RecallHit) bool {
				return x.MemoryID == y.MemoryID && x.Score == y.Score && x.Content == y.Content
			}) {
				t.Errorf("%q (vector %v): served %+v\nDgraph's text step %+v", q.Query, vector, served.Hits, dgraph.Hits)
			}
		}
	}
	// The semantic and title scores computed while the first request is in flight are those
	// computed after it.
	for _, q := range []knowmind.RecallQuery{{Query: "Wann kommt die Lieferung an die Rampe?", K: 10, Hops: 2}, {Query: "Lieferbedingungen Zahlung", K: 10}} {
		ahead := f.recall(q)
		after := f.recallWith(q, with(func(p *search.Plan, _ *search.Weights) { p.ScoreAfter = true }))
		if len(ahead.Hits) < 3 || !reflect.DeepEqual(ahead.Hits, after.Hits) {
			t.Errorf("%q: scored ahead %+v\nscored after the answer %+v", q.Query, ahead.Hits, after.Hits)
		}
	}
	if res := f.recallWith(knowmind.RecallQuery{Query: "Lastschrift", K: 3}, with(func(p *search.Plan, _ *search.Weights) { p.Vector = false })); len(res.Hits) != 1 || res.Hits[0].MemoryID != late {
		t.Fatalf("a memory stored after the load: %+v", res.Hits)
	}
}

// The title field: of two memories whose text holds the query's words alike, the one whose
// title the query names ranks first — which the text alone (the title is also the chunk's
// first line) does not decide, as the other's text is shorter.
func TestRecallTitleField(t *testing.T) {
	f := newRecallFixture(t)
	named := f.store("Werkstatt", "Das Getriebe wurde gestern Nachmittag gründlich geprüft, die Kupplung ebenfalls.")
	other := f.store("Lager", "Werkstatt: das Getriebe wurde geprüft, die Kupplung auch.")
	q := knowmind.RecallQuery{Query: "Werkstatt Getriebe Kupplung", K: 2}
	if ids := hitIDs(f.recallWith(q, with(func(_ *search.Plan, w *search.Weights) { w.Title = 0 }))); len(ids) != 2 || ids[0] != other {
		t.Fatalf("without the title field: %v, want %s (the shorter text) first", ids, other)
	}
	res := f.recall(q)
	if ids := hitIDs(res); len(ids) != 2 || ids[0] != named {
		t.Fatalf("with the title field: %v, want %s (titled Werkstatt) first", scoresOf(res), named)
	}
	// A query word no title holds does not count against the title: the same with a word
	// only the texts hold.
	q.Query = "Werkstatt Getriebe Kupplung geprüft"
	if ids := hitIDs(f.recall(q)); len(ids) != 2 || ids[0] != named {
		t.Fatalf("%q: %v, want %s first", q.Query, ids, named)
	}
}

// A graph neighbour whose own title matches the query gains the title factor too (below its
// hit): of two replies linked to the question turn, the one by the person the query names
// ranks first; with the factor on direct hits only they score alike.
func TestRecallTitleNeighbours(t *testing.T) {
	f := newRecallFixture(t)
	ask := f.store("Caroline", "Melanie, how do you unwind after a long shift at the bakery?")
	reply := f.store("Melanie", "Pottery class and long runs along the river, every week.")
	aside := f.store("Caroline", "That sounds lovely, I should try something like it.")
	for _, filler := range []string{"The bus to the market was late again this morning.",
		"We painted the fence blue over the weekend.", "The new library opens in the spring."} {
		f.store("Melanie", filler)
	}
	f.link(ask, reply, "RELATES_TO")
	f.link(ask, aside, "RELATES_TO")
	q := knowmind.RecallQuery{Query: "How does Melanie unwind after a shift?", K: 10, Hops: 1}
	score := func(res knowmind.RecallResult) map[string]float64 {
		out := map[string]float64{}
		for _, h := range res.Hits {
			out[h.MemoryID] = h.Score
		}
		return out
	}
	off := score(f.recallWith(q, with(func(_ *search.Plan, w *search.Weights) { w.TitleNeighbours = false })))
	if off[ask] == 0 || off[reply] == 0 || off[reply] != off[aside] {
		t.Fatalf("factor on direct hits only: ask %v, reply %v, aside %v; want both replies alike", off[ask], off[reply], off[aside])
	}
	on := score(f.recall(q))
	if !(on[reply] > on[aside] && on[reply] < on[ask]) || on[aside] != off[aside] {
		t.Fatalf("factor on neighbours too: ask %v, reply %v, aside %v; want the reply by Melanie above the aside, below the question", on[ask], on[reply], on[aside])
	}
}

// A relative time in the question ("gestern", "vor einem Monat", "letzte Woche") is resolved
// against the time of asking — RecallQuery.AskedAt, else as_of, else now — and ranks the
// memory of that time first, as a written date does.
func TestRecallRelativeTimeInQuestion(t *testing.T) {
	f := newRecallFixture(t)
	march, january := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 20, 10, 0, 0, 0, time.UTC)
	store := func(content string, at time.Time) string {
		res, err := f.ten.StoreMemory(f.ctx, knowmind.StoreMemoryInput{Title: "Teammeeting", Content: content, OccurredAt: &at})
		if err != nil {
			t.Fatal(err)
		}
		return res.MemoryID
	}
	recent := store("Im Teammeeting wurde das Budget für den Relaunch besprochen.", march)
	older := store("Im Teammeeting wurde das Budget für den Relaunch erneut besprochen.", january)
	asOf := time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		q    knowmind.RecallQuery
		want string
	}{
		{knowmind.RecallQuery{Query: "Was wurde gestern im Teammeeting zum Budget besprochen?", AskedAt: march.Add(24 * time.Hour)}, recent},
		{knowmind.RecallQuery{Query: "Was wurde vor einem Monat im Teammeeting zum Budget besprochen?", AskedAt: time.Date(2026, 2, 22, 9, 0, 0, 0, time.UTC)}, older},
		{knowmind.RecallQuery{Query: "What was discussed about the budget in the Teammeeting two months ago?", AsOf: &asOf}, older},
		{knowmind.RecallQuery{Query: "Budget im Teammeeting letzte Woche", AsOf: &asOf}, recent},
	} {
		c.q.K = 2
		res := f.recall(c.q)
		if ids := hitIDs(res); len(ids) != 2 || ids[0] != c.want {
			t.Errorf("%q asked %v as of %v: %v, want %s first", c.q.Query, c.q.AskedAt, c.q.AsOf, scoresOf(res), c.want)
		}
		off := with(func(_ *search.Plan, w *search.Weights) { w.RelativeDates = false })
		plain := f.recallWith(c.q, off)
		if c.want == older && hitIDs(plain)[0] == older {
			t.Errorf("%q: %v ranks the older first without the relative time too; the test shows nothing", c.q.Query, scoresOf(plain))
		}
	}
	// Asked now (the tools): "gestern" is the day before today.
	yesterday := time.Now().Add(-24 * time.Hour)
	now := store("Das Budget für den Relaunch wurde im Teammeeting vertagt.", yesterday)
	res := f.recall(knowmind.RecallQuery{Query: "Was wurde gestern im Teammeeting zum Budget besprochen?", K: 3})
	if ids := hitIDs(res); len(ids) == 0 || ids[0] != now {
		t.Errorf("asked now: %v, want %s first", scoresOf(res), now)
	}
}

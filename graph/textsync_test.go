package graph_test

import (
	"context"
	"fmt"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// replicaFixture is one tenant as two service replicas on the same Dgraph see it: a through
// the harness's client, b through a second client with the same secret.
type replicaFixture struct {
	t    *testing.T
	ctx  context.Context
	a, b *graph.Tenant
}

func newReplicaFixture(t *testing.T) *replicaFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	a := dgraphtest.NewTenant(t)
	b, err := openWith(t, dgraphtest.Shared(t).Embedder).Tenant(ctx, a.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	return &replicaFixture{t: t, ctx: ctx, a: a, b: b}
}

func (f *replicaFixture) store(ten *graph.Tenant, title, content string) string {
	f.t.Helper()
	res, err := ten.StoreMemory(f.ctx, knowmind.StoreMemoryInput{Title: title, Content: content})
	if err != nil {
		f.t.Fatalf("store %q: %v", title, err)
	}
	return res.MemoryID
}

func (f *replicaFixture) upload(ten *graph.Tenant, title, content string) knowmind.StoreResult {
	f.t.Helper()
	res, err := ten.UploadDocument(f.ctx, knowmind.UploadDocumentInput{Title: title, Content: content})
	if err != nil {
		f.t.Fatalf("upload %q: %v", title, err)
	}
	return res
}

// erase deletes a memory and its chunks from Dgraph behind ten's back, as emptying the trash
// on another replica does (no tool replaces anything by deletion).
func (f *replicaFixture) erase(ten *graph.Tenant, id string) {
	f.t.Helper()
	if _, err := dgraphtest.DG(f.t, ten).NewTxn().Do(f.ctx, &api.Request{
		Query:     `query q($id: string) { m as var(func: eq(Memory.id, $id)) { c as Memory.chunks } }`,
		Vars:      map[string]string{"$id": id},
		Mutations: []*api.Mutation{{DelNquads: []byte("uid(c) * * .\nuid(m) * * .")}},
		CommitNow: true,
	}); err != nil {
		f.t.Fatalf("erase %s: %v", id, err)
	}
}

// syncByRecall recalls on ten, which starts a sync when one is due, and waits for the sync.
func (f *replicaFixture) syncByRecall(ten *graph.Tenant) {
	f.t.Helper()
	if _, err := ten.Recall(f.ctx, knowmind.RecallQuery{Query: "Lieferung Wartung", K: 3}); err != nil {
		f.t.Fatal(err)
	}
	if err := ten.WaitTextSync(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

// df is the German document frequency of each word in ten's statistics, keyed by the word.
func df(ten *graph.Tenant, words ...string) (bm25.Stats, map[string]int64) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = bm25.Analyze("de", w)[0]
	}
	st := ten.TextStats("de", terms...)
	out := map[string]int64{}
	for i, w := range words {
		out[w] = st.DF[terms[i]]
	}
	return st, out
}

// matchesRescan checks that ten's statistics, as kept by hooks and syncs, are exactly what a
// rescan of the store gives.
func (f *replicaFixture) matchesRescan(ten *graph.Tenant) {
	f.t.Helper()
	kept := map[string]bm25.Stats{"de": ten.TextStats("de"), "": ten.TextStats("")}
	keptTitles := map[string]bm25.Stats{"de": ten.TitleStats("de"), "": ten.TitleStats("")}
	if keptTitles["de"].Docs+keptTitles[""].Docs == 0 {
		f.t.Errorf("the title field holds nothing")
	}
	keptMemories := ten.TextStatsMemories()
	keptVectors := ten.HeldVectors()
	// The word vectors (package wordvec) follow the same hooks and syncs: probe them with the
	// vocabulary, each term against the others.
	var vocab [][]string
	for _, k := range kept {
		for term := range k.DF {
			vocab = append(vocab, []string{term})
		}
	}
	slices.SortFunc(vocab, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	vocab = vocab[:min(len(vocab), 60)]
	keptDocs, keptWords := ten.WordDocs(), make([][]float64, len(vocab))
	for i, q := range vocab {
		keptWords[i] = ten.WordSimilarity(q, vocab)
	}
	if len(vocab) > 1 && !slices.ContainsFunc(keptWords, func(s []float64) bool {
		return slices.ContainsFunc(s, func(v float64) bool { return v != 0 && v < 0.999 })
	}) {
		f.t.Errorf("word vectors say nothing of %d terms", len(vocab))
	}
	if err := ten.RebuildTextStats(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	if n := ten.WordDocs(); n != keptDocs || n != kept["de"].Docs+kept[""].Docs {
		f.t.Errorf("word vectors counted %d chunks; a rescan counts %d, the statistics hold %d", keptDocs, n, kept["de"].Docs+kept[""].Docs)
	}
	for i, q := range vocab {
		if got := ten.WordSimilarity(q, vocab); !slices.Equal(got, keptWords[i]) {
			f.t.Errorf("word vectors of %q kept %v, a rescan gives %v", q[0], keptWords[i], got)
			break
		}
	}
	// The exact vector search's copy follows the same hooks and syncs.
	if scanned := ten.HeldVectors(); len(scanned) == 0 || !maps.EqualFunc(keptVectors, scanned, slices.Equal) {
		f.t.Errorf("vectors held: %d chunks; a rescan reads %d chunks (or other vectors)", len(keptVectors), len(scanned))
	}
	if n := ten.TextStatsMemories(); n != keptMemories {
		f.t.Errorf("statistics hold %d memories, a rescan finds %d", keptMemories, n)
	}
	for lang, k := range keptTitles {
		s := ten.TitleStats(lang)
		if k.Docs != s.Docs || k.TotalLen != s.TotalLen || !maps.Equal(k.DF, s.DF) {
			f.t.Errorf("title field %q kept %d docs, %d tokens, DF %v; a rescan gives %d, %d, %v", lang,
				k.Docs, k.TotalLen, k.DF, s.Docs, s.TotalLen, s.DF)
		}
	}
	for lang, k := range kept {
		s := ten.TextStats(lang)
		if k.Docs != s.Docs || k.TotalLen != s.TotalLen || !maps.Equal(k.DF, s.DF) {
			f.t.Errorf("corpus %q kept %d docs, %d tokens, %d terms; a rescan gives %d, %d, %d", lang,
				k.Docs, k.TotalLen, len(k.DF), s.Docs, s.TotalLen, len(s.DF))
		}
	}
}

// A replica's statistics follow the other replica's memories and document re-uploads once a
// recall has started a sync.
func TestTextStatsSyncSeesOtherReplica(t *testing.T) {
	defer graph.SetTextSyncInterval(0)()
	f := newReplicaFixture(t)
	f.store(f.a, "Montag", "Die Lieferung kommt am Montag.")
	f.syncByRecall(f.a) // loads the statistics
	before, _ := df(f.a, "Lieferung")

	f.store(f.b, "Werk", "Die Zahnradfabrik liefert die Teile morgen früh.")
	first := f.upload(f.b, "Handbuch", "# Wartung\n\nDas Getriebe wird jedes Jahr von der Werkstatt geprüft.")
	if _, got := df(f.a, "Zahnradfabrik", "Getriebe"); got["Zahnradfabrik"] != 0 || got["Getriebe"] != 0 {
		t.Fatalf("replica a knows b's words before a sync: %v", got)
	}
	f.syncByRecall(f.a)
	st, got := df(f.a, "Zahnradfabrik", "Getriebe")
	if got["Zahnradfabrik"] != 1 || got["Getriebe"] != 1 || st.Docs != before.Docs+2 {
		t.Fatalf("after a sync: docs %d (before %d), DF %v", st.Docs, before.Docs, got)
	}
	// The sync brought b's titles into the title field, one document per chunk.
	werk, handbuch := bm25.Analyze("de", "Werk")[0], bm25.Analyze("de", "Handbuch")[0]
	if ts := f.a.TitleStats("de", werk, handbuch); ts.DF[werk] != 1 || ts.DF[handbuch] != 1 {
		t.Fatalf("title field after a sync: %v", ts.DF)
	}

	// b replaces its document: the closed version stays (recall_at_time reads it), the new one
	// joins a's statistics.
	if res := f.upload(f.b, "Handbuch", "# Wartung\n\nDie Kupplung wird jedes Jahr von der Werkstatt geprüft."); len(res.ReplacedDocumentIDs) != 1 {
		t.Fatalf("re-upload replaced %v", res.ReplacedDocumentIDs)
	}
	f.syncByRecall(f.a)
	st, got = df(f.a, "Getriebe", "Kupplung", "Werkstatt")
	if got["Getriebe"] != 1 || got["Kupplung"] != 1 || got["Werkstatt"] != 2 || st.Docs != before.Docs+3 {
		t.Fatalf("after the re-upload and a sync: docs %d (before %d), DF %v", st.Docs, before.Docs, got)
	}
	// The old version erased on b's side leaves a's statistics.
	f.erase(f.b, first.ID)
	f.syncByRecall(f.a)
	st, got = df(f.a, "Getriebe", "Kupplung", "Werkstatt")
	if got["Getriebe"] != 0 || got["Kupplung"] != 1 || got["Werkstatt"] != 1 || st.Docs != before.Docs+2 {
		t.Fatalf("after the erasure and a sync: docs %d (before %d), DF %v", st.Docs, before.Docs, got)
	}
	f.matchesRescan(f.a)
}

// Writes this replica commits while a sync runs — after its snapshot — are neither removed by
// the sync's id diff nor undone by it.
func TestTextStatsSyncKeepsLocalWrites(t *testing.T) {
	f := newReplicaFixture(t)
	f.store(f.a, "Eins", "Die Lieferung kommt am Montag.")
	f.upload(f.a, "Lager", "# Lager\n\nDas Lager öffnet an der Rampe.")
	old := f.upload(f.b, "Handbuch", "# Wartung\n\nDas Getriebe wird jedes Jahr geprüft.")
	// a's first store already loaded the statistics (its conflict check recalls the nearest
	// memories), before b's upload; a load now makes a hold b's document.
	if err := f.a.RebuildTextStats(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, got := df(f.a, "Getriebe"); got["Getriebe"] != 1 {
		t.Fatalf("DF after the load %v, want b's document held", got)
	}
	// b erases its document and stores another, so a's counts disagree and the sync diffs all ids.
	f.erase(f.b, old.ID)
	f.upload(f.b, "Handbuch", "# Wartung\n\nDie Kupplung wird jedes Jahr geprüft.")

	var stages []string
	restore := graph.SetTextSyncHook(func(stage string) {
		stages = append(stages, stage)
		switch stage {
		case "window": // the snapshot is fixed: these are newer
			f.store(f.a, "Zwei", "Die Lieferung kommt am Dienstag mit dem Anhänger.")
			f.upload(f.a, "Lager", "# Lager\n\nDas Lager öffnet am Hof.")
		case "diff":
			f.store(f.a, "Drei", "Die Lieferung kommt am Mittwoch mit dem Gabelstapler.")
		}
	})
	res, err := f.a.SyncTextStats(f.ctx, false)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sync: %+v, stages %v", res, stages)
	if !res.Diffed || res.Removed != 1 || res.Added != 1 {
		t.Fatalf("sync %+v: want a diff that removes b's erased document and adds its new one", res)
	}
	_, got := df(f.a, "Anhänger", "Gabelstapler", "Hof", "Rampe", "Getriebe", "Kupplung")
	// Rampe: a's replaced Lager document is closed, not erased.
	want := map[string]int64{"Anhänger": 1, "Gabelstapler": 1, "Hof": 1, "Rampe": 1, "Getriebe": 0, "Kupplung": 1}
	if !maps.Equal(got, want) {
		t.Fatalf("DF after the sync %v, want %v", got, want)
	}
	f.matchesRescan(f.a)
}

// When nothing was deleted, a sync only reads the count and the window: this replica's own
// writes during it do not make the counts disagree.
func TestTextStatsSyncWithoutDeletionsNeedsNoDiff(t *testing.T) {
	f := newReplicaFixture(t)
	f.store(f.a, "Eins", "Die Lieferung kommt am Montag.")
	f.syncByRecall(f.a)
	f.store(f.b, "Zwei", "Die Lieferung kommt am Dienstag mit dem Anhänger.")
	restore := graph.SetTextSyncHook(func(stage string) {
		if stage == "window" {
			f.store(f.a, "Drei", "Die Lieferung kommt am Mittwoch mit dem Gabelstapler.")
		}
	})
	res, err := f.a.SyncTextStats(f.ctx, false)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if res.Diffed || res.Added != 1 || res.Window != 2 {
		t.Fatalf("sync %+v: want b's memory added from a window of two, no diff", res)
	}
	if res, err = f.a.SyncTextStats(f.ctx, false); err != nil || res.Diffed || res.Added != 0 {
		t.Fatalf("second sync %+v, %v: want nothing to do", res, err)
	}
	f.matchesRescan(f.a)
}

// BenchmarkTextStatsSync measures a sync of a tenant holding KNOWMIND_SYNC_BENCH_N (default
// 5000) memories of one chunk each, written an hour ago: "nochange" is the sync every recall
// starts once a minute when nothing happened (three counts), "diff" one that
// lists and compares all ids, as after a deletion by another replica.
//
//	go test ./graph/ -run '^$' -bench TextStatsSync -benchtime 20x
func BenchmarkTextStatsSync(b *testing.B) {
	ten, n := textBenchTenant(b)
	ctx := context.Background()
	start := time.Now()
	if err := ten.RebuildTextStats(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("full scan (RebuildTextStats) of %d memories: %s", n, time.Since(start).Round(time.Millisecond))
	if got := ten.TextStatsMemories(); got != n {
		b.Fatalf("statistics hold %d memories, want %d", got, n)
	}
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "nochange", true: "diff"}[full]
		b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
			for b.Loop() {
				res, err := ten.SyncTextStats(ctx, full)
				if err != nil || res.Added != 0 || res.Removed != 0 || res.Diffed != full {
					b.Fatalf("sync %+v, %v", res, err)
				}
			}
		})
	}
}

// BenchmarkTextStatsSyncAfterImport measures the syncs that follow a bulk import: the tenant's
// KNOWMIND_SYNC_BENCH_N (default 5000) memories were all created just now, so all are in every
// sync's window (created and updated) until they leave it minutes later. The first sync after
// the load is logged apart: the load read the content shas, so that sync need not read every
// memory again.
//
//	KNOWMIND_SYNC_BENCH_N=20000 go test ./graph/ -run '^$' -bench TextStatsSyncAfterImport -benchtime 3x
func BenchmarkTextStatsSyncAfterImport(b *testing.B) {
	n := textBenchN(b)
	ten := dgraphtest.NewTenant(b)
	ctx := context.Background()
	start := time.Now()
	loadTextOnlyAt(b, ten, n, time.Now())
	b.Logf("imported %d memories in %s", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := ten.RebuildTextStats(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("full scan (RebuildTextStats): %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	res, err := ten.SyncTextStats(ctx, false)
	if err != nil || res.Added != 0 || res.Removed != 0 {
		b.Fatalf("first sync %+v, %v", res, err)
	}
	b.Logf("first sync after the load: %+v in %s", res, time.Since(start).Round(time.Millisecond))
	b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
		for b.Loop() {
			res, err := ten.SyncTextStats(ctx, false)
			if err != nil || res.Added != 0 || res.Removed != 0 || res.Changed != 0 {
				b.Fatalf("sync %+v, %v", res, err)
			}
		}
	})
}

// Indexed nodes that the id map cannot hold (here a second node with an existing Memory.id,
// which no ingest writes but a hand-made import could) make the counts disagree for good: one
// diff learns that, later syncs do not diff again.
func TestTextStatsSyncLearnsUncountableNodes(t *testing.T) {
	f := newReplicaFixture(t)
	id := f.store(f.a, "Eins", "Die Lieferung kommt am Montag.")
	f.syncByRecall(f.a)
	dgraphtest.SetJSON(t, f.b, map[string]any{"uid": "_:dup", "dgraph.type": "Memory", "Memory.id": id,
		"Memory.status": knowmind.StatusIndexed, "Memory.created_at": time.Now().UTC().Format(time.RFC3339Nano)})
	for i, wantDiff := range []bool{true, false} {
		res, err := f.a.SyncTextStats(f.ctx, false)
		if err != nil || res.Diffed != wantDiff || res.Added != 0 || res.Removed != 0 {
			t.Fatalf("sync %d: %+v, %v; want diffed %v and nothing changed", i+1, res, err, wantDiff)
		}
	}
}

// A note edited on another replica: the sync re-reads the chunks of memories updated in its
// window, so the old body's words leave this replica's statistics and the new ones arrive (the
// counts agree, so no id diff would notice).
func TestTextStatsSyncSeesEditsOfOtherReplica(t *testing.T) {
	f := newReplicaFixture(t)
	scope := knowmind.NoteScope{Principal: "tok:b"}
	actor := knowmind.Actor{Principal: "tok:b", Via: "test"}
	f.store(f.a, "Eins", "Die Lieferung kommt am Montag.")
	n, err := f.b.CreateNote(f.ctx, scope, knowmind.CreateNoteInput{Project: "main", Body: "# Getriebe\n\nDas Getriebe wird jedes Jahr geprüft.",
		Class: knowmind.ClassUserDoc, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	// a's first store already loaded the statistics (its conflict check recalls the nearest
	// memories), before b wrote the note: load them again, the note included.
	if err := f.a.RebuildTextStats(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, got := df(f.a, "Getriebe"); got["Getriebe"] != 1 {
		t.Fatalf("DF before the edit %v", got)
	}
	// The load read the content shas: a sync right after it reads nothing again (after a bulk
	// import, everything would be in its window).
	if res, err := f.a.SyncTextStats(f.ctx, false); err != nil || res.Changed != 0 {
		t.Fatalf("first sync after the load %+v, %v", res, err)
	}
	if _, err := f.b.EditNote(f.ctx, scope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken, Op: knowmind.EditReplace,
		Content: "# Kupplung\n\nDie Kupplung wird jedes Jahr geprüft.", Actor: actor}); err != nil {
		t.Fatal(err)
	}
	res, err := f.a.SyncTextStats(f.ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	_, got := df(f.a, "Getriebe", "Kupplung")
	if want := map[string]int64{"Getriebe": 0, "Kupplung": 1}; !maps.Equal(got, want) || res.Changed != 1 || res.Diffed {
		t.Fatalf("sync %+v: DF after b's edit %v, want %v, one memory read again, no diff", res, got, want)
	}
	// Read once: the next sync, and one after this replica's own edit (its hook knows the sha),
	// read nothing again.
	if res, err := f.a.SyncTextStats(f.ctx, false); err != nil || res.Changed != 0 {
		t.Fatalf("second sync %+v, %v: want nothing read again", res, err)
	}
	cur, err := f.a.GetNote(f.ctx, scope, n.ID, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.EditNote(f.ctx, scope, knowmind.EditNoteInput{ID: n.ID, VersionToken: cur.VersionToken, Op: knowmind.EditAppend,
		Content: "Auch die Bremse.", Actor: actor}); err != nil {
		t.Fatal(err)
	}
	if res, err := f.a.SyncTextStats(f.ctx, false); err != nil || res.Changed != 0 {
		t.Fatalf("sync after a local edit %+v, %v: want nothing read again (the hook holds it)", res, err)
	}
	if _, got := df(f.a, "Bremse"); got["Bremse"] != 1 {
		t.Fatalf("DF after the local edit %v", got)
	}
	f.matchesRescan(f.a)
}

// countingClient is a second replica's client that counts its DQL queries.
func countingClient(t *testing.T, queries *atomic.Int64) *graph.Client {
	t.Helper()
	env := dgraphtest.Shared(t)
	c, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: env.Embedder,
		ObserveRPC: func(method string, _ time.Duration, _ error) {
			if method == "Query" {
				queries.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Other replicas' writes many listing pages long are synced in a number of queries that does
// not grow with the window's pages: a window that is a small part of the tenant is listed in one
// query, a bulk import (a window as big as much of the tenant) by listing every indexed memory
// once. Each page of a window listed page by page evaluates the whole window again, so after a
// 100k import a sync took longer than its time limit, failed, and started over from the same
// window a minute later.
func TestTextStatsSyncBulkImportFewQueries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a := dgraphtest.NewTenant(t)
	var queries atomic.Int64
	b, err := countingClient(t, &queries).Tenant(ctx, a.Name, false)
	if err != nil {
		t.Fatal(err)
	}
	const page = 10
	batch := func(n int) []textMemory {
		out := make([]textMemory, n)
		for i := range out {
			out[i] = textMemory{id: uuid.NewString(), lang: "de", chunks: []string{fmt.Sprintf("Lieferung Nummer wort%d kommt.", i)}}
		}
		return out
	}
	writeTextMemories(t, a, batch(200)) // an hour ago: outside every window
	if err := b.RebuildTextStats(ctx); err != nil {
		t.Fatal(err)
	}
	defer graph.SetTextSyncPage(page)()

	held := 200
	for _, step := range []struct {
		name           string
		imported       int
		maxQueries     int64
		wantDiffedFull bool
	}{
		// The counts, one listing of both windows (created, updated), one fetch.
		{"small window", 40, 3, false},
		// The counts, every indexed memory in pages, one fetch.
		{"bulk import", 200, 1 + (440/page + 1) + 1, true},
		// Still in the window: the same listing, nothing to fetch.
		{"bulk import again", 0, 1 + (440/page + 1), true},
	} {
		if step.imported > 0 {
			writeTextMemoriesAt(t, a, batch(step.imported), time.Now())
		}
		queries.Store(0)
		res, err := b.SyncTextStats(ctx, false)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		n := queries.Load()
		t.Logf("%s: %+v in %d queries", step.name, res, n)
		if res.Added != step.imported || res.Removed != 0 || res.Changed != 0 || res.Diffed != step.wantDiffedFull {
			t.Errorf("%s: sync %+v, want %d added, nothing else, diffed %v", step.name, res, step.imported, step.wantDiffedFull)
		}
		if n > step.maxQueries {
			t.Errorf("%s: %d queries, want at most %d", step.name, n, step.maxQueries)
		}
		held += step.imported
		if got := b.TextStatsMemories(); got != held {
			t.Fatalf("%s: statistics hold %d memories, want %d", step.name, got, held)
		}
	}
}

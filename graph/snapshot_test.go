package graph_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/snapshot"
)

// openIndexClient opens a client on the package's Dgraph that keeps its index snapshots in dir,
// as serve does in data-dir/index.
func openIndexClient(t *testing.T, dir string, analysis bm25.Analysis) *graph.Client {
	t.Helper()
	env := dgraphtest.Shared(t)
	c, err := graph.Open(context.Background(), graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP,
		Password: env.Password, Secret: env.Secret, Embedder: env.Embedder, IndexDir: dir, Analysis: analysis})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// snapshotRun is one process's life on a tenant: open a client, recall, close it (which writes
// the snapshot).
type snapshotRun struct {
	t    *testing.T
	dir  string
	name string
}

func (r snapshotRun) recall(query string, analysis bm25.Analysis) (knowmind.RecallResult, map[string]int) {
	r.t.Helper()
	c := openIndexClient(r.t, r.dir, analysis)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ten, err := c.Tenant(ctx, r.name, false)
	if err != nil {
		r.t.Fatal(err)
	}
	res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: query, K: 5, Hops: 1})
	if err != nil {
		r.t.Fatal(err)
	}
	return res, c.SnapshotLoads()
}

func hitList(res knowmind.RecallResult) string {
	out := ""
	for _, h := range res.Hits {
		out += fmt.Sprintf("%s %.6f; ", h.MemoryID, h.Score)
	}
	return out
}

// A tenant's derived indexes survive the process: a new client answers the first recall from the
// snapshot the last one left, identically, catches up a write made while no service ran, and
// rebuilds from Dgraph when the file is corrupt, cut short or of another analysis.
func TestIndexSnapshotRestart(t *testing.T) {
	env := dgraphtest.Shared(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	first := openIndexClient(t, dir, bm25.Analysis{})
	name := dgraphtest.TenantName(t)
	ten, err := first.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	var ids []string
	for i := range 24 {
		ids = append(ids, f.store(fmt.Sprintf("Lager %d", i), fmt.Sprintf("Das Lager %d liegt in Halle %d; die Wartung der Regale übernimmt Team %d.", i, i%5, i%3)))
	}
	f.store("Zugang", "Der Zugang zur Halle 3 braucht eine Schlüsselkarte vom Empfang.")
	const query = "Wer übernimmt die Wartung der Regale in Halle 3?"
	ten.BuildSemanticModel()
	want := f.recall(knowmind.RecallQuery{Query: query, K: 5, Hops: 1})
	first.Close()
	path := filepath.Join(dir, strconv.FormatUint(ten.Namespace, 10), "index.snap")
	key := graph.SnapshotKey(env.Secret)
	tag, _, err := snapshot.ReadFile(path, key)
	if err != nil || tag.Memories != 25 || tag.Tenant != name {
		t.Fatalf("snapshot after close: %+v, %v", tag, err)
	}

	run := snapshotRun{t: t, dir: dir, name: name}
	got, loads := run.recall(query, bm25.Analysis{})
	if loads[graph.SnapshotLoaded] != 1 || len(loads) != 1 {
		t.Fatalf("snapshot loads %v, want one loaded", loads)
	}
	t.Logf("before: %s\nafter: %s", hitList(want), hitList(got))
	if hitList(got) != hitList(want) || len(want.Hits) == 0 {
		t.Fatalf("from the snapshot: %s\nbefore the restart: %s", hitList(got), hitList(want))
	}

	// A write while no service with this index ran (another client, without snapshots).
	other, err := env.Client.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	late, err := other.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Brandschutz",
		Content: "Die Brandschutzübung in Halle 3 findet am Freitag statt.", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	got, loads = run.recall("Brandschutzübung Freitag", bm25.Analysis{})
	if loads[graph.SnapshotLoaded] != 1 || len(got.Hits) == 0 || got.Hits[0].MemoryID != late.MemoryID {
		t.Fatalf("write while down: loads %v, hits %s, want %s first", loads, hitList(got), late.MemoryID)
	}
	if tag, _, err := snapshot.ReadFile(path, key); err != nil || tag.Memories != 26 {
		t.Fatalf("snapshot after the catch-up: %+v, %v", tag, err)
	}

	// A torn temporary file beside the snapshot (kill -9 during a write) is ignored.
	if err := os.WriteFile(path+".tmp", []byte("knowmind-index\n\x01\x03ta"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, loads = run.recall(query, bm25.Analysis{}); loads[graph.SnapshotLoaded] != 1 {
		t.Fatalf("torn temporary file: loads %v", loads)
	}

	// Corrupt, cut short, another analysis: rebuilt from Dgraph, answering as before, and a
	// good snapshot is written again.
	for _, c := range []struct {
		name     string
		spoil    func(b []byte) []byte
		analysis bm25.Analysis
		result   string
	}{
		{"other analysis", func(b []byte) []byte { return b }, bm25.Analysis{NoCompounds: true}, graph.SnapshotStale},
		{"flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b }, bm25.Analysis{}, graph.SnapshotCorrupt},
		{"cut short", func(b []byte) []byte { return b[:len(b)*2/3] }, bm25.Analysis{}, graph.SnapshotCorrupt},
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, c.spoil(b), 0o600); err != nil {
			t.Fatal(err)
		}
		got, loads := run.recall(query, c.analysis)
		t.Logf("%s: loads %v", c.name, loads)
		if loads[c.result] != 1 || loads[graph.SnapshotLoaded] != 0 {
			t.Fatalf("%s: loads %v, want %s", c.name, loads, c.result)
		}
		if len(got.Hits) == 0 {
			t.Fatalf("%s: no hits after the rebuild", c.name)
		}
		if _, _, err := snapshot.ReadFile(path, key); err != nil {
			t.Fatalf("%s: no good snapshot after the rebuild: %v", c.name, err)
		}
	}
	if _, loads = run.recall(query, bm25.Analysis{}); loads[graph.SnapshotLoaded] != 1 {
		t.Fatalf("after the rebuilds: loads %v", loads)
	}

	// The store holds other chunks for a memory at the content sha the snapshot knows (as after
	// a namespace was imported again): the sample check refuses the snapshot.
	slices.Sort(ids)
	var m struct {
		M []struct {
			UID string `json:"uid"`
		} `json:"m"`
	}
	dgraphtest.Query(t, other, `query q($id: string) { m(func: eq(Memory.id, $id)) { uid } }`, map[string]string{"$id": ids[0]}, &m)
	if len(m.M) != 1 {
		t.Fatalf("memory %s: %+v", ids[0], m)
	}
	dgraphtest.SetNquads(t, other, fmt.Sprintf(`<%s> <Memory.chunks> _:c .
_:c <dgraph.type> "Chunk" .
_:c <Chunk.position> "9" .
_:c <Chunk.text> "Regale in Halle 3" .`, m.M[0].UID))
	if _, loads = run.recall(query, bm25.Analysis{}); loads[graph.SnapshotUnreconcil] != 1 {
		t.Fatalf("other chunks in the store: loads %v, want unreconciled", loads)
	}
	if _, loads = run.recall(query, bm25.Analysis{}); loads[graph.SnapshotLoaded] != 1 {
		t.Fatalf("after the rebuild: loads %v", loads)
	}
}

// The memory budget keeps the open tenants' caches under it by dropping the least recently used
// tenant's to its snapshot; that tenant's next recall reads the snapshot back and answers as
// before.
func TestIndexMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const query = "Wer übernimmt die Wartung der Regale in Halle 3?"

	// Three tenants of the same shape, written and recalled once without a budget.
	setup := openIndexClient(t, dir, bm25.Analysis{})
	var names []string
	want := map[string]string{}
	largest := 0
	for n := range 3 {
		name := dgraphtest.TenantName(t)
		ten, err := setup.Tenant(ctx, name, true)
		if err != nil {
			t.Fatal(err)
		}
		f := &recallFixture{t: t, ctx: ctx, ten: ten}
		for i := range 24 {
			f.store(fmt.Sprintf("Lager %d-%d", n, i), fmt.Sprintf("Das Lager %d liegt in Halle %d; die Wartung der Regale übernimmt Team %d.", i, (i+n)%5, i%3))
		}
		ten.BuildSemanticModel()
		want[name] = hitList(f.recall(knowmind.RecallQuery{Query: query, K: 5, Hops: 1}))
		largest = max(largest, ten.IndexBytes())
		names = append(names, name)
	}
	setup.Close()

	env := dgraphtest.Shared(t)
	budget := int64(largest) * 5 / 2
	c, err := graph.Open(ctx, graph.Config{Alphas: env.Alphas, AlphasHTTP: env.HTTP, Password: env.Password,
		Secret: env.Secret, Embedder: env.Embedder, IndexDir: dir, IndexMemoryBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tenants := map[string]*graph.Tenant{}
	recall := func(name string) {
		t.Helper()
		ten, err := c.Tenant(ctx, name, false)
		if err != nil {
			t.Fatal(err)
		}
		tenants[name] = ten
		res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: query, K: 5, Hops: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := hitList(res); got != want[name] {
			t.Fatalf("tenant %s: %s, want %s", name, got, want[name])
		}
		c.WaitIndexBudget()
		if total := c.IndexBytes(); int64(total) > budget {
			t.Fatalf("after recalling %s: %d bytes held, budget %d", name, total, budget)
		}
	}
	for _, name := range names {
		recall(name)
	}
	loaded := func() []bool {
		var out []bool
		for _, name := range names {
			out = append(out, tenants[name].TextStatsLoaded())
		}
		return out
	}
	if got := loaded(); !slices.Equal(got, []bool{false, true, true}) || c.IndexEvictions() != 1 {
		t.Fatalf("loaded %v, evictions %d: want the first tenant dropped, budget %d, largest %d", got, c.IndexEvictions(), budget, largest)
	}
	// The dropped tenant comes back from its snapshot; now the second is the least recently used.
	recall(names[0])
	if got := loaded(); !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("loaded %v after the first came back", got)
	}
	if loads := c.SnapshotLoads(); loads[graph.SnapshotLoaded] != 4 || len(loads) != 1 {
		t.Fatalf("snapshot loads %v, want 4 loaded", loads)
	}
}

// The budget never drops a tenant under a running recall: its statistics would vanish half-way.
func TestBudgetKeepsATenantUnderARecall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := openIndexClient(t, t.TempDir(), bm25.Analysis{})
	defer c.Close()
	ten, err := c.Tenant(ctx, dgraphtest.TenantName(t), true)
	if err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	for i := range 6 {
		f.store(fmt.Sprintf("Lager %d", i), fmt.Sprintf("Das Lager %d liegt in Halle %d; die Regale wartet Team %d.", i, i%3, i%2))
	}
	q := knowmind.RecallQuery{Query: "Wer wartet die Regale in Halle 1?", K: 3, Hops: 1}
	want := hitList(f.recall(q))
	if want == "" {
		t.Fatal("no hits before the eviction")
	}
	release := ten.HoldRecall()
	if ten.Evict() {
		t.Fatal("the caches were dropped under a running recall")
	}
	if ten.IndexBytes() == 0 {
		t.Fatal("the caches are empty under a running recall")
	}
	release()
	if !ten.Evict() {
		t.Fatal("the caches were kept with no recall running")
	}
	if got := hitList(f.recall(q)); got != want {
		t.Fatalf("after the eviction: %s, want %s", got, want)
	}
}

// TestIndexSnapshotOfAnotherTenantIsRefused: snapshot files are named by namespace only, so a
// file of another tenant put where this tenant's belongs (a restored backup, a copied index
// dir, a namespace number reused) must be refused by its tag and rebuilt from Dgraph: the
// tenant never answers from another tenant's terms or vectors.
func TestIndexSnapshotOfAnotherTenantIsRefused(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := openIndexClient(t, dir, bm25.Analysis{})
	mine, theirs := dgraphtest.TenantName(t), dgraphtest.TenantName(t)+"-x"
	paths := map[string]string{}
	var secret string
	for _, name := range []string{mine, theirs} {
		ten, err := c.Tenant(ctx, name, true)
		if err != nil {
			t.Fatal(err)
		}
		f := &recallFixture{t: t, ctx: ctx, ten: ten}
		if name == mine {
			f.store("Obst", "Der Apfelbaum im Garten trägt im Herbst.")
		} else {
			secret = f.store("Zebra", "Das Geheimprojekt Zebra startet im Oktober in Halle 7.")
		}
		f.recall(knowmind.RecallQuery{Query: "Apfelbaum Zebra", K: 5})
		paths[name] = filepath.Join(dir, strconv.FormatUint(ten.Namespace, 10), "index.snap")
	}
	c.Close()
	b, err := os.ReadFile(paths[theirs])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths[mine], b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, loads := snapshotRun{t: t, dir: dir, name: mine}.recall("Geheimprojekt Zebra Halle 7", bm25.Analysis{})
	if loads[graph.SnapshotStale] != 1 || loads[graph.SnapshotLoaded] != 0 {
		t.Fatalf("another tenant's snapshot: loads %v, want it refused as stale", loads)
	}
	for _, h := range got.Hits {
		if h.MemoryID == secret || h.Title == "Zebra" {
			t.Fatalf("the tenant answered from another tenant's snapshot: %s", hitList(got))
		}
	}
	if tag, _, err := snapshot.ReadFile(paths[mine], graph.SnapshotKey(dgraphtest.Shared(t).Secret)); err != nil || tag.Tenant != mine {
		t.Fatalf("after the rebuild: %+v, %v; want a snapshot of %s", tag, err, mine)
	}
}

// Opening a snapshot reads the store while the file is decoded (the sample, the catch-up's
// counts and windows). Those reads count as the catch-up's only when nothing was written
// meanwhile: a write through this service during the open is queued, installed and found by
// the first recall; a write elsewhere during the open is found once the watermark is read
// again, like any other replica's write. The catch-up read the watermark, so the first recall
// after an open does not read it again.
func TestSnapshotOpenWithWritesDuringTheDecode(t *testing.T) {
	env := dgraphtest.Shared(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	defer graph.SetWatermarkInterval(time.Minute)()
	name := dgraphtest.TenantName(t)
	first := openIndexClient(t, dir, bm25.Analysis{})
	ten, err := first.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	for i := range 22 {
		f.store(fmt.Sprintf("Lager %d", i), fmt.Sprintf("Das Lager %d liegt in Halle %d; die Regale wartet Team %d.", i, i%4, i%3))
	}
	q := knowmind.RecallQuery{Query: "Wer wartet die Regale in Halle 2?", K: 5, Hops: 1}
	want := hitList(f.recall(q))
	first.Close()

	// Nothing written during the open: the same hits, and no watermark read by the recall.
	c := openIndexClient(t, dir, bm25.Analysis{})
	ten, err = c.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := hitList((&recallFixture{t: t, ctx: ctx, ten: ten}).recall(q)); got != want || want == "" {
		t.Fatalf("from the snapshot: %s, want %s", got, want)
	}
	if checks, waits := ten.WatermarkChecks(); checks != 0 || waits != 0 {
		t.Fatalf("the first recall after the open read the watermark: %d checks, %d waits", checks, waits)
	}
	c.Close()

	// Written during the open: through this service (queued) and through another client.
	c = openIndexClient(t, dir, bm25.Analysis{})
	defer c.Close()
	ten, err = c.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	other, err := env.Client.Tenant(ctx, name, false)
	if err != nil {
		t.Fatal(err)
	}
	var here, elsewhere knowmind.StoreResult
	var hookErr error
	stored := make(chan error, 1)
	defer graph.SetSnapshotOpenHook(func(tenant string) {
		if tenant != name || hookErr != nil || elsewhere.MemoryID != "" {
			return
		}
		if elsewhere, hookErr = other.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Lieferung",
			Content: "Die Lieferung der Ersatzteile kommt am Montag an Tor 4.", Source: "test"}); hookErr != nil {
			return
		}
		// Through the service: its index hook queues the write; the store's own conflict check
		// then waits for the open, so it goes on in the background.
		go func() {
			var err error
			here, err = ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "Brandschutz",
				Content: "Die Brandschutzübung in Halle 2 findet am Freitag statt.", Source: "test"})
			stored <- err
		}()
		for ten.TextPendingOps() == 0 {
			select {
			case err := <-stored: // failed before it was queued
				stored <- err
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})()
	f = &recallFixture{t: t, ctx: ctx, ten: ten}
	got := f.recall(knowmind.RecallQuery{Query: "Brandschutzübung Freitag", K: 3})
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	if here.MemoryID == "" || len(got.Hits) == 0 || got.Hits[0].MemoryID != here.MemoryID {
		t.Fatalf("written through the service during the open: hits %s, want %s first", hitList(got), here.MemoryID)
	}
	if loads := c.SnapshotLoads(); loads[graph.SnapshotLoaded] != 1 || len(loads) != 1 {
		t.Fatalf("snapshot loads %v, want one loaded", loads)
	}
	graph.SetWatermarkInterval(10 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	got = f.recall(knowmind.RecallQuery{Query: "Lieferung Ersatzteile Tor 4", K: 3})
	if len(got.Hits) == 0 || got.Hits[0].MemoryID != elsewhere.MemoryID {
		t.Fatalf("written elsewhere during the open: hits %s, want %s first", hitList(got), elsewhere.MemoryID)
	}
}

// A partial semantic model (its link read failed) goes into the snapshot as partial: the next
// process serves it until its first recall rebuilds it with links, and that whole model is
// written although the text index did not change, so the process after reads it whole from the
// file without reading a link.
func TestIndexSnapshotPartialSemanticModel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := dgraphtest.TenantName(t)
	q := knowmind.RecallQuery{Query: "kiln and glaze", K: 5}

	// Process 1: every link read fails.
	failing := &failLinks{fail: func(int) bool { return true }}
	restore := graph.SetSemLinksHook(failing.hook)
	first := openIndexClient(t, dir, bm25.Analysis{})
	ten, err := first.Tenant(ctx, name, true)
	if err != nil {
		t.Fatal(err)
	}
	f := &recallFixture{t: t, ctx: ctx, ten: ten}
	storeLinkedTopics(f)
	f.recall(q)
	plain, _ := ten.BuildSemanticState(false)
	ten.DropSemanticModel()
	f.recall(q) // builds the model, partial
	if _, partial, _ := ten.SemanticModel(); !partial {
		t.Fatal("built while the links fail: not partial")
	}
	if err := ten.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	first.Close()
	restore()

	// open starts a process on the snapshot and loads the tenant's index from it, without a recall.
	open := func() (*graph.Client, *graph.Tenant) {
		t.Helper()
		c := openIndexClient(t, dir, bm25.Analysis{})
		ten, err := c.Tenant(ctx, name, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := ten.LoadTextIndex(ctx); err != nil {
			t.Fatal(err)
		}
		if loads := c.SnapshotLoads(); loads[graph.SnapshotLoaded] != 1 {
			t.Fatalf("snapshot loads %v, want one loaded", loads)
		}
		return c, ten
	}
	reads := &failLinks{}
	defer graph.SetSemLinksHook(reads.hook)()

	// Process 2: the partial model serves until the first recall's repair.
	second, ten := open()
	m, partial, _ := ten.SemanticModel()
	if !partial || m == nil || !reflect.DeepEqual(m.State(), plain) || reads.count() != 0 {
		t.Fatalf("read back: partial %v, the model without links %v, %d link pages read", partial, m != nil && reflect.DeepEqual(m.State(), plain), reads.count())
	}
	// A write now records the partial model as what the file holds: the repair's write below is
	// then due to the repair alone.
	if err := ten.WriteSnapshot(); err != nil {
		t.Fatal(err)
	}
	f = &recallFixture{t: t, ctx: ctx, ten: ten}
	f.recall(q) // starts the repair
	m, partial, _ = ten.SemanticModel()
	want, _ := ten.BuildSemanticState(true)
	if partial || !reflect.DeepEqual(m.State(), want) || reflect.DeepEqual(want, plain) {
		t.Fatalf("after the first recall: partial %v, the model with links %v", partial, reflect.DeepEqual(m.State(), want))
	}
	// The repair writes the snapshot itself (the text index did not change), not only at a close.
	path := filepath.Join(dir, strconv.FormatUint(ten.Namespace, 10), "index.snap")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, sections, err := snapshot.ReadFile(path, graph.SnapshotKey(dgraphtest.Shared(t).Secret))
		if err != nil {
			t.Fatal(err)
		}
		if _, partial, err := graph.DecodeSemanticSection(sections["semantic"]); err == nil && !partial {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot still holds a partial model 30 s after the repair: %v", err)
		}
	}

	// Process 3 (beside process 2, which has not closed): the whole model, from the file.
	defer second.Close()
	pages := reads.count()
	third, ten := open()
	defer third.Close()
	m, partial, _ = ten.SemanticModel()
	if partial || m == nil || !reflect.DeepEqual(m.State(), want) || reads.count() != pages {
		t.Fatalf("read back after the repair: partial %v, the model with links %v, %d link pages read",
			partial, m != nil && reflect.DeepEqual(m.State(), want), reads.count()-pages)
	}
}

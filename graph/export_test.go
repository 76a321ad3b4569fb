package graph

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/semvec"
)

// TextStats exposes a tenant's BM25 statistics to the external tests (loading them first).
func (t *Tenant) TextStats(lang string, terms ...string) bm25.Stats {
	return t.text.ix.Stats(t.Name, lang, terms...)
}

// TitleStats exposes the statistics of a tenant's title field (textIndex.titles).
func (t *Tenant) TitleStats(lang string, terms ...string) bm25.Stats {
	return t.text.titles.Stats(t.Name, lang, terms...)
}

// TextStatsLoaded reports whether this process has loaded the tenant's statistics.
func (t *Tenant) TextStatsLoaded() bool {
	t.text.mu.Lock()
	defer t.text.mu.Unlock()
	return t.text.state == textLoaded
}

// TextStatsMemories is how many indexed memories the tenant's statistics hold.
func (t *Tenant) TextStatsMemories() int {
	t.text.mu.Lock()
	defer t.text.mu.Unlock()
	return len(t.text.memories)
}

// SetTextSyncInterval sets how old the last sync may get before a recall starts the next one,
// until restore is called.
func SetTextSyncInterval(d time.Duration) (restore func()) {
	old := textSyncInterval
	textSyncInterval = d
	return func() { textSyncInterval = old }
}

// SetTextSyncHook has hook called at the stages of every sync ("window", "diff"; see
// textSyncTestHook), until restore is called.
func SetTextSyncHook(hook func(stage string)) (restore func()) {
	old := textSyncTestHook
	textSyncTestHook = hook
	return func() { textSyncTestHook = old }
}

// SetTextSyncPage sets how many memories one listing query of a sync reads, until restore is
// called.
func SetTextSyncPage(n int) (restore func()) {
	old := syncPage
	syncPage = n
	return func() { syncPage = old }
}

// WaitTextSync waits until no sync of the tenant's statistics is running.
func (t *Tenant) WaitTextSync(ctx context.Context) error {
	for {
		t.text.mu.Lock()
		running := t.text.syncing
		t.text.mu.Unlock()
		if running == nil {
			return nil
		}
		select {
		case <-running:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TextSyncResult is what one sync changed.
type TextSyncResult struct {
	Window, Added, Changed, Removed int
	Diffed                          bool
}

// SyncTextStats runs a sync now, after any that is running; full diffs all ids even when the
// counts agree.
func (t *Tenant) SyncTextStats(ctx context.Context, full bool) (TextSyncResult, error) {
	res, err := t.text.syncNow(ctx, t, full)
	return TextSyncResult{Window: res.window, Added: res.added, Changed: res.changed, Removed: res.removed, Diffed: res.diffed}, err
}

// RecordFailedFor runs an ingest's failure path for the entry with this id, as after a write that
// returned an error (which may have committed all the same).
func (t *Tenant) RecordFailedFor(ctx context.Context, id, kind, content string, cause error) (knowmind.StoreResult, error) {
	e := newEntry(kind, "", content)
	e.id = id
	_ = e.split()
	return t.recordFailed(ctx, e, cause)
}

// SessionLogin sends a login through the client under the tenant's session, as dgo does to renew
// an expired access JWT with its refresh JWT.
func (t *Tenant) SessionLogin(ctx context.Context, in *api.LoginRequest) (*api.Response, error) {
	return t.session.Login(ctx, in)
}

// VectorIndexDQL is the index line reembed restores.
const VectorIndexDQL = vectorIndexDQL

// TextStatsLoads counts the completed loads of the tenant's statistics in this process (the
// first recall's, RebuildTextStats's, WarmTextStats's).
func (t *Tenant) TextStatsLoads() uint64 {
	t.text.mu.Lock()
	defer t.text.mu.Unlock()
	return t.text.gen
}

// SetSemLinksPage sets how many linked memories one page of the semantic model's link read
// holds, until restore is called.
func SetSemLinksPage(n int) (restore func()) {
	old := semLinksPage
	semLinksPage = n
	return func() { semLinksPage = old }
}

// SetTextScanPage sets how many memories one scan query of a load reads, until restore is called.
func SetTextScanPage(n int) (restore func()) {
	old := scanPage
	scanPage = n
	return func() { scanPage = old }
}

// SetTextLoadHook has hook called with the tenant's name after each page a load reads (see
// textLoadTestHook), until restore is called.
func SetTextLoadHook(hook func(tenant string)) (restore func()) {
	old := textLoadTestHook
	textLoadTestHook = hook
	return func() { textLoadTestHook = old }
}

// TextLoadPhases is how long each phase of SequentialTextLoad took.
type TextLoadPhases struct {
	Read, Analyse, Count time.Duration
	Chunks, Memories     int
}

// SequentialTextLoad is the straightforward load the pipelined one replaced and must equal: read
// every page, then analyse every chunk, then count them, one after another in this goroutine,
// into an Index of its own (under the tenant's name). It times each phase.
func (t *Tenant) SequentialTextLoad(ctx context.Context) (*bm25.Index, TextLoadPhases, error) {
	var ph TextLoadPhases
	start := time.Now()
	var docs []bm25.Source
	err := scanTexts(ctx, t, func(page []scannedMemory) bool {
		for _, m := range page {
			docs = append(docs, m.Sources()...)
			ph.Memories++
		}
		return true
	})
	if err != nil {
		return nil, ph, err
	}
	ph.Read, ph.Chunks = time.Since(start), len(docs)
	start = time.Now()
	tokens := make([][]string, len(docs))
	lengths := make([]int, len(docs))
	for i, d := range docs {
		tokens[i], lengths[i] = t.analyzeDoc(d.Lang, d.Text)
	}
	ph.Analyse = time.Since(start)
	start = time.Now()
	var b bm25.Builder
	for i, d := range docs {
		b.AddRefLen(d.ID, d.Lang, 0, tokens[i], lengths[i])
	}
	var ix bm25.Index
	ix.Replace(t.Name, &b)
	ph.Count = time.Since(start)
	return &ix, ph, nil
}

// HeldVectors is the tenant's copy of its chunk vectors for the exact search, by chunk uid.
func (t *Tenant) HeldVectors() map[uint64][]float32 {
	s := &t.text.vec
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[uint64][]float32, len(s.uids))
	for i, uid := range s.uids {
		out[uid] = s.vecs.Vector(i, nil)
	}
	return out
}

// HoldTitleLock takes the lock an upload of title takes in the tenant, as a
// long upload would hold it.
func (t *Tenant) HoldTitleLock(ctx context.Context, title string) (unlock func(), err error) {
	return t.c.titleLocks.lock(ctx, t.Namespace, title)
}

// WordSimilarity scores texts against query under the tenant's co-occurrence word vectors;
// WordDocs is how many chunks they counted.
func (t *Tenant) WordSimilarity(query []string, texts [][]string) []float64 {
	return t.text.words.Similarity(query, texts)
}

func (t *Tenant) WordDocs() int64 { return t.text.words.Docs() }

// SemanticBuilt reports whether the tenant's semantic model (with links) has been built.
func (t *Tenant) SemanticBuilt() bool {
	s := &t.text.sem
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model != nil
}

// SemanticState waits for a running build of the tenant's semantic model (graph/semantic.go)
// and returns the chunk uids it holds (sorted) and whether it was built from the text index as
// it is now.
func (t *Tenant) SemanticState() (refs []uint64, current bool) {
	s := &t.text.sem
	s.mu.Lock()
	for s.building {
		done := s.done
		s.mu.Unlock()
		<-done
		s.mu.Lock()
	}
	m, gen, chg := s.model, s.gen, s.chg
	s.mu.Unlock()
	refs = m.Refs()
	slices.Sort(refs)
	g, c := t.text.ix.Version(t.Name)
	return refs, m != nil && g == gen && c == chg
}

// TextRefs returns the chunk uids the tenant's text index holds, sorted.
func (t *Tenant) TextRefs() []uint64 {
	var refs []uint64
	t.text.ix.Each(t.Name, func(ref uint64, _ []string) { refs = append(refs, ref) })
	slices.Sort(refs)
	return refs
}

// SetSemanticRebuildEvery sets how often the semantic model may be rebuilt (and no bound by
// the builds' time), until restore is called.
func SetSemanticRebuildEvery(d time.Duration) (restore func()) {
	old, share := semRebuildEvery, semRebuildShare
	semRebuildEvery, semRebuildShare = d, 0
	return func() { semRebuildEvery, semRebuildShare = old, share }
}

// SemanticLinks returns what a build of the semantic model reads as the chunks' context: for
// each chunk, the chunks of the memories its memory links to.
func (t *Tenant) SemanticLinks(ctx context.Context) (map[uint64][]uint64, error) {
	return t.semLinks(ctx)
}

// TextPendingOps is how many hook calls wait for the running load of the tenant's statistics.
func (t *Tenant) TextPendingOps() int {
	t.text.mu.Lock()
	defer t.text.mu.Unlock()
	return len(t.text.pending)
}

// IndexBytes exposes the estimate of a tenant's derived caches (budget.go).
func (t *Tenant) IndexBytes() int { return t.indexBytes() }

// BuildSemanticModel builds the tenant's semantic model (with links) now, so that a test's recall
// does not use one built from fewer memories (a rebuild waits semRebuildEvery).
func (t *Tenant) BuildSemanticModel() {
	m, gen, chg, partial := t.semBuild(true)
	s := &t.text.sem
	s.mu.Lock()
	s.model, s.gen, s.chg, s.built = m, gen, chg, time.Now()
	s.notePartial(t, partial)
	s.mu.Unlock()
}

// SetSemLinksHook has hook called before each page of the semantic model's link read with the
// relation and the page's size; an error it returns fails the page (semLinksTestHook), until
// restore is called.
func SetSemLinksHook(hook func(relation string, size int) error) (restore func()) {
	old := semLinksTestHook
	semLinksTestHook = hook
	return func() { semLinksTestHook = old }
}

// SemLinksRetries is how many repairs a partial semantic model gets in a row.
const SemLinksRetries = semLinksRetries

// SetSemLinksRetry sets how long a partial semantic model serves before its first repair (each
// further one waits twice as long), until restore is called.
func SetSemLinksRetry(d time.Duration) (restore func()) {
	old := semLinksRetry
	semLinksRetry = d
	return func() { semLinksRetry = old }
}

// SemanticModel waits for a running build of the tenant's semantic model (with links) and
// returns it, whether it is partial (built without the links it asked for) and how many
// repairs were started since the last whole build.
func (t *Tenant) SemanticModel() (m *semvec.Model, partial bool, repairs int) {
	s := &t.text.sem
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.building {
		done := s.done
		s.mu.Unlock()
		<-done
		s.mu.Lock()
	}
	return s.model, s.partial, s.repairs
}

// DropSemanticModel drops the tenant's semantic model (with links) as the memory budget does, so
// that the next recall builds it again, in its own goroutine.
func (t *Tenant) DropSemanticModel() {
	t.SemanticModel() // not during a build
	s := &t.text.sem
	s.mu.Lock()
	s.model, s.gen, s.chg, s.partial, s.repairs, s.repairAt = nil, 0, 0, false, 0, time.Time{}
	s.mu.Unlock()
}

// BuildSemanticState builds a semantic model from the tenant's text index as it is now (with
// links, or without) and returns its state, leaving the tenant's own model alone.
func (t *Tenant) BuildSemanticState(links bool) (state semvec.State, partial bool) {
	m, _, _, partial := t.semBuild(links)
	return m.State(), partial
}

// LoadTextIndex loads the tenant's text index (from its snapshot when there is one) without a
// recall, so without building the semantic model.
func (t *Tenant) LoadTextIndex(ctx context.Context) error { return t.text.ensure(ctx, t) }

// WriteSnapshot writes the tenant's snapshot now, whether or not its caches changed since the
// last write.
func (t *Tenant) WriteSnapshot() error {
	t.text.mu.Lock()
	t.text.snap.from = time.Time{}
	t.text.mu.Unlock()
	return t.writeSnapshot()
}

// SetWatermarkInterval sets how old the last check of a tenant's change watermark may get before
// a ranked read checks again, until restore is called.
func SetWatermarkInterval(d time.Duration) (restore func()) {
	old := watermarkInterval
	watermarkInterval = d
	return func() { watermarkInterval = old }
}

// WatermarkChecks reports how many times the tenant read its change watermark before ranked
// reads, and how many ranked reads waited for such a check.
func (t *Tenant) WatermarkChecks() (checks, waits int) {
	t.text.mu.Lock()
	defer t.text.mu.Unlock()
	return t.text.watch.checks, t.text.watch.waits
}

// CheckWatermark reads the tenant's change watermark as a check before a recall does, and
// reports whether it differs from the one the last sync read.
func (t *Tenant) CheckWatermark(ctx context.Context) (changed bool, err error) {
	x := &t.text
	x.mu.Lock()
	since, mark := x.syncedFrom.Add(-textSyncSlack), x.watch.mark
	known := x.watch.marked && x.watch.markGen == x.gen && x.watch.markSince.Equal(since)
	x.mu.Unlock()
	txn := t.dg.NewReadOnlyTxn()
	defer txn.Discard(ctx)
	w, err := readWatermark(ctx, txn, since)
	return !known || w != mark, err
}

// SchemaVersion reads the recorded schema version of a namespace (0 if none).
func SchemaVersion(ctx context.Context, dg *dgo.Dgraph) (int, error) {
	rec, err := schemaRecord(ctx, dg)
	return rec.version, err
}

// ListRecent returns the k most recently created memories and documents,
// newest first; k outside 1..MaxRecent is EINVALID.
func (t *Tenant) ListRecent(ctx context.Context, k int) ([]knowmind.RecentItem, error) {
	p, err := t.ListRecentPage(ctx, k, "")
	return p.Items, err
}

// DropVectorIndex and RestoreVectorIndex are the tenant methods' work on a raw client.
func DropVectorIndex(ctx context.Context, dg *dgo.Dgraph) error { return dropVectorIndex(ctx, dg) }

func RestoreVectorIndex(ctx context.Context, dg *dgo.Dgraph, background bool) error {
	return restoreVectorIndex(ctx, dg, background)
}

// HoldRecall marks a recall as running on the tenant's caches until the returned func is called.
func (t *Tenant) HoldRecall() (release func()) {
	t.text.readers.Add(1)
	return func() { t.text.readers.Add(-1) }
}

// Evict drops the tenant's caches as the memory budget does; false: left alone.
func (t *Tenant) Evict() bool { return t.evict() }

// syncNow runs a sync in the caller's goroutine, after any that is running, and returns what it
// changed (tests and benchmarks).
func (x *textIndex) syncNow(ctx context.Context, t *Tenant, full bool) (textSyncResult, error) {
	for {
		x.mu.Lock()
		if x.state != textLoaded {
			x.mu.Unlock()
			return textSyncResult{}, errors.New("statistics not loaded")
		}
		if running := x.syncing; running != nil {
			x.mu.Unlock()
			select {
			case <-running:
				continue
			case <-ctx.Done():
				return textSyncResult{}, ctx.Err()
			}
		}
		run := x.beginSyncLocked(full)
		x.mu.Unlock()
		return x.runSync(ctx, t, run)
	}
}

// SetSnapshotOpenHook has hook called when a snapshot is read and checked, before it is
// installed and caught up (snapshotOpenTestHook), until restore is called.
func SetSnapshotOpenHook(hook func(tenant string)) (restore func()) {
	old := snapshotOpenTestHook
	snapshotOpenTestHook = hook
	return func() { snapshotOpenTestHook = old }
}

// DecodeSemanticSection reads the flags of a snapshot's semantic section: whether its model was
// built from the snapshot's text index and whether it lacks its links.
func DecodeSemanticSection(b []byte) (current, partial bool, err error) {
	_, current, partial, err = decodeSemantic(b)
	return current, partial, err
}

package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"

	"github.com/knowmind/knowmind/textdoc"
)

// Reconciling a tenant's BM25 statistics with Dgraph, so that writes of other service replicas
// (which the ingest hooks of this process never see) reach them too. See textindex.go for what
// the statistics hold.
//
// A sync is started by a ranked read whose check finds the tenant's change watermark moved
// (watermark.go; that read waits for it, briefly), or that finds the last sync older than
// textSyncInterval (in the background); one runs at a time per tenant. It reads everything in
// one read-only transaction, so all its answers are one snapshot of the store. It first counts
// the indexed memories and those in its window (syncCountQuery), then:
//
//  1. Additions: the memories created since the previous sync (or load) began, less
//     textSyncSlack, are listed through Memory.created_at's index; the indexed ones this
//     process does not hold are fetched with their chunks and added. created_at is stamped
//     before the write commits (an ingest embeds and may retry its transaction), and by the
//     writer's clock: the slack covers that lag and the clocks' skew. A memory's status never
//     changes after its commit (an ingest writes it indexed or failed, whole), so created_at is
//     the only time that matters.
//  2. Changes: the indexed memories whose Memory.updated_at is in the same window (a note
//     edited, renamed or restored elsewhere keeps its id and count, so neither 1 nor 3 sees it)
//     are read again when this process holds them and the Memory.content_sha listed differs
//     from the one it last read them at (a load reads the shas too, so a sync after a load
//     re-reads only what changed since). The hooks' own writes during the sync win, as for
//     additions.
//  3. Deletions: the store's count of indexed memories is compared with the number held. Only
//     when they differ (a document replaced elsewhere, or anything step 1 could not see) are all
//     indexed memories listed and diffed: held but gone is removed, stored but missing added.
//
// Both windows are listed in one query, unpaged (each page would evaluate the whole window
// again), as long as they are a fraction of the tenant (syncWindowLimit). Windows bigger than
// that — a bulk import by this replica or another, for the minutes it stays in the window —
// are not listed at all: the listing of every indexed memory of step 3, in pages, serves all
// three steps, comparing content shas for step 2. Either way a sync's queries and memory are
// bounded by the tenant's size, and it finishes in about the time a full listing takes.
//
// The hooks of this process keep running during a sync. What they do after the snapshot was
// taken must win over the snapshot, so while a sync runs the index records the memories they add
// and remove (syncAdded, syncRemoved): the sync never removes the former nor adds the latter. A
// memory the hooks added before the sync began was committed before its snapshot, so if the
// snapshot lacks it, it was deleted. A load (RebuildTextStats) during a sync makes the sync's
// result stale; it is dropped.

// textSyncInterval is how old the last sync of a tenant may get before a ranked read starts the
// next one whatever the watermark says: the time within which a write the watermark cannot
// see (watermark.go) reaches this replica's statistics. A variable so that tests can shorten it.
var textSyncInterval = 60 * time.Second

const (
	// textSyncSlack widens the additions window back from the previous sync's start.
	textSyncSlack = 5 * time.Minute
	// textSyncTimeout bounds one sync; a failed one is retried by a later recall, from the
	// same window start.
	textSyncTimeout = 2 * time.Minute
	// fetchBatch is how many memories' chunk texts one fetch reads.
	fetchBatch = 200
)

// syncPage is how many memories one page of the full listing (syncListQuery) reads: about 1.5 MB
// of JSON. A variable so that tests can page a small tenant.
var syncPage = 10_000

// textSyncTestHook, when set by a test, is called at the named points of a sync, with the index
// unlocked: "window" once the store's count and the additions window are read (the snapshot is
// fixed from here on), "diff" once the full id listing is read.
var textSyncTestHook func(stage string)

// errSyncStale reports a sync whose statistics were reloaded while it ran.
var errSyncStale = errors.New("statistics were reloaded during the sync")

// textSyncResult is what a sync changed, for the log and the tests.
type textSyncResult struct {
	window  int       // indexed memories in the additions window
	added   int       // memories added
	changed int       // held memories read again (updated elsewhere)
	removed int       // memories removed
	diffed  bool      // the counts differed: all ids were listed
	mark    watermark // the store's watermark for the next window, in the sync's snapshot
}

// syncRun is one sync's parameters, fixed when it starts.
type syncRun struct {
	gen     uint64    // the load generation it reconciles
	started time.Time // becomes syncedFrom when it succeeds
	since   time.Time // start of the additions window
	full    bool      // diff all ids even if the counts agree (tests, benchmarks)
	done    chan struct{}
	ahead   *syncAhead // its first reads, done before it began (nil: it reads them itself)
}

// syncAhead is a sync's first reads — the counts and, when they are listed, the windows — in the
// read-only transaction the sync goes on in. They depend on nothing held, only on the window's
// start, so a snapshot being opened has them read while its file is decoded (snapshotopen.go).
// A sync may take them over only when the hooks applied nothing between the reads and the
// sync's start (they are then a sync that began at started, the reads' own start).
type syncAhead struct {
	txn             *dgo.Txn
	started, since  time.Time
	counts          syncCounted
	mark            watermark
	windowed        bool
	window, updated map[string]listedMemory
	err             error
}

// readAhead does a sync's first reads for a window from since, started at started (which the
// sync that takes them over records as its own start).
func (t *Tenant) readAhead(ctx context.Context, started, since time.Time, full bool) *syncAhead {
	a := &syncAhead{txn: t.dg.NewReadOnlyTxn(), started: started, since: since}
	a.counts, a.mark, a.err = syncCounts(ctx, a.txn, since, started.Add(-textSyncSlack))
	if a.err != nil {
		return a
	}
	// Windows that are much of the tenant (a bulk import, here or by another replica) are not
	// listed: the listing of every indexed memory serves all three steps at about the same
	// cost, in pages.
	a.windowed = !full && a.counts.created+a.counts.updated <= syncWindowLimit(a.counts.stored)
	if a.windowed && a.counts.created+a.counts.updated > 0 {
		a.window, a.updated, a.err = syncWindows(ctx, a.txn, since, a.counts)
	}
	return a
}

func (x *textIndex) beginSyncLocked(full bool) syncRun {
	run := syncRun{gen: x.gen, started: time.Now(), since: x.syncedFrom.Add(-textSyncSlack), full: full,
		done: make(chan struct{})}
	x.syncing, x.syncTried = run.done, run.started
	x.syncAdded, x.syncRemoved = map[string]bool{}, map[string]bool{}
	return run
}

// runSync does the sync and its bookkeeping: on success the next window starts at this sync's
// start; on failure it stays where it was, so nothing is skipped.
func (x *textIndex) runSync(ctx context.Context, t *Tenant, run syncRun) (textSyncResult, error) {
	res, err := x.sync(ctx, t, run)
	x.mu.Lock()
	if err == nil && x.gen == run.gen {
		x.syncedFrom = run.started
		x.watch.mark, x.watch.markGen, x.watch.markSince, x.watch.marked = res.mark, run.gen, nextWindow(run), true
	}
	x.syncing, x.syncAdded, x.syncRemoved, x.watch.news = nil, nil, nil, false
	close(run.done)
	x.mu.Unlock()
	took := time.Since(run.started).Round(time.Millisecond)
	switch {
	case errors.Is(err, errSyncStale):
		t.c.log.Debug("bm25 statistics sync dropped", "tenant", t.Name, "reason", err)
	case err != nil:
		t.c.log.Warn("bm25 statistics sync failed", "tenant", t.Name, "took", took, "err", err)
	default:
		t.c.log.Debug("bm25 statistics synced", "tenant", t.Name, "window", res.window, "added", res.added, "changed", res.changed,
			"removed", res.removed, "diffed", res.diffed, "took", took)
	}
	if err != nil {
		return res, fmt.Errorf("sync full-text statistics of tenant %q: %w", t.Name, err)
	}
	if res.added+res.changed+res.removed > 0 {
		t.snapshotSoon()
	}
	return res, nil
}

// syncCountQuery counts the indexed memories (n), and those of them created (w) and updated (u)
// since $since, through created_at's and updated_at's indexes, and reads the change watermark
// of the next window, starting at $next (watermarkBlocks). Counting is cheap next to listing;
// the counts decide what the sync lists.
const syncCountQuery = `query q($since: string, $next: string) {` + watermarkBlocks + `
  w(func: ge(Memory.created_at, $since)) @filter(eq(Memory.status, "indexed")) { count(uid) }
  u(func: ge(Memory.updated_at, $since)) @filter(eq(Memory.status, "indexed")) { count(uid) }
}`

// syncWindowQuery lists the indexed memories created (w, step 1) and updated (u, step 2) since
// $since, whole: each window is evaluated once. A window is not paged: every page would evaluate
// it again (a ge over created_at's hour index reads and compares every value of the boundary
// hour), which made a page cost as much as the whole window. The caller only sends it for
// windows a fraction of the tenant (syncWindowLimit); first bounds the answer all the same.
const syncWindowQuery = `query q($since: string) {
  w(func: ge(Memory.created_at, $since), first: %[1]d) @filter(eq(Memory.status, "indexed")) { uid Memory.id Memory.content_sha }
  u(func: ge(Memory.updated_at, $since), first: %[1]d) @filter(eq(Memory.status, "indexed")) { uid Memory.id Memory.content_sha }
}`

// syncListQuery lists a page of every indexed memory, in uid order: the status index's list is
// read again per page, which costs little next to the values read.
const syncListQuery = `{
  m(func: eq(Memory.status, "indexed"), first: %d%s) { uid Memory.id Memory.content_sha }
}`

// syncFetchQuery reads the chunk texts (and vectors, or whether one is stored: %[2]s) of the
// listed memories, as scanTextQuery does.
const syncFetchQuery = `{
  m(func: uid(%[1]s)) {
    Memory.id
    Memory.title
    Memory.sequence
    Memory.position
    Memory.chunks { uid  p: Chunk.position  de: Chunk.text@de  en: Chunk.text%[2]s }
  }
}`

// readChunks reads the chunks of the memories with these uids (syncFetchQuery) through txn.
func (t *Tenant) readChunks(ctx context.Context, txn *dgo.Txn, uids string) ([]scannedMemory, error) {
	resp, err := txn.Query(ctx, fmt.Sprintf(syncFetchQuery, uids, t.vectorFields()))
	if err != nil {
		return nil, fmt.Errorf("read chunk texts: %w", err)
	}
	var out struct {
		M []scannedMemory `json:"m"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, fmt.Errorf("read chunk texts: %w", err)
	}
	return out.M, nil
}

type listedMemory struct {
	UID string `json:"uid"`
	ID  string `json:"Memory.id"`
	SHA string `json:"Memory.content_sha"`
}

func afterClause(uid string) string {
	if uid == "" {
		return ""
	}
	return ", after: " + uid
}

func (x *textIndex) sync(ctx context.Context, t *Tenant, run syncRun) (textSyncResult, error) {
	var res textSyncResult
	// One read-only transaction: every query below reads the same snapshot.
	a := run.ahead
	if a == nil {
		a = t.readAhead(ctx, run.started, run.since, run.full)
	}
	txn := a.txn
	defer txn.Discard(ctx)
	if a.err != nil {
		return res, a.err
	}
	// res.mark is what the next check compares with: the next window's watermark, in this
	// snapshot.
	counts, windowed, window, updated := a.counts, a.windowed, a.window, a.updated
	res.mark, res.window = a.mark, counts.created
	if textSyncTestHook != nil {
		textSyncTestHook("window")
	}

	if windowed {
		// 1. Additions.
		n, err := x.fetch(ctx, t, txn, run.gen, window, false)
		res.added += n
		if err != nil {
			return res, err
		}
		// 2. Changes.
		if res.changed, err = x.fetch(ctx, t, txn, run.gen, updated, true); err != nil {
			return res, err
		}

		// 3. Deletions, if the counts say there are any. The hooks' additions since the
		// snapshot are not in its count (those before it are in the window); their removals are
		// counted as if after it — if not, the counts differ and the diff, which is exact,
		// sorts it out.
		x.mu.Lock()
		if !x.loadedAsLocked(run.gen) {
			x.mu.Unlock()
			return res, errSyncStale
		}
		held := len(x.memories) + len(x.syncRemoved) + x.countOffset
		for id := range x.syncAdded {
			if _, inWindow := window[id]; !inWindow {
				if _, ok := x.memories[id]; ok {
					held--
				}
			}
		}
		x.mu.Unlock()
		if held == counts.stored {
			return res, nil
		}
	}

	res.diffed = true
	all, err := syncList(ctx, txn)
	if err != nil {
		return res, err
	}
	// Nodes the count sees but the id map cannot (two nodes with one Memory.id, none at all)
	// would make every later sync diff again: the snapshot says how many there are.
	offset := counts.stored - len(all)
	if textSyncTestHook != nil {
		textSyncTestHook("diff")
	}
	x.mu.Lock()
	if !x.loadedAsLocked(run.gen) {
		x.mu.Unlock()
		return res, errSyncStale
	}
	x.countOffset = offset
	for id := range x.memories {
		if _, ok := all[id]; ok || x.syncAdded[id] {
			continue
		}
		x.removeMemoryLocked(t.Name, id)
		res.removed++
	}
	x.mu.Unlock()
	n, err := x.fetch(ctx, t, txn, run.gen, all, false)
	res.added += n
	if err != nil || windowed {
		return res, err
	}
	// The updated window was not listed: every memory's content sha stands in for it.
	res.changed, err = x.fetch(ctx, t, txn, run.gen, all, true)
	return res, err
}

// nextWindow is where the window of the sync after run starts, if run succeeds.
func nextWindow(run syncRun) time.Time {
	return run.started.Add(-textSyncSlack)
}

// loadedAsLocked tells whether the statistics are still those of load generation gen: a sync
// begun under it may change them.
func (x *textIndex) loadedAsLocked(gen uint64) bool {
	return x.state == textLoaded && x.gen == gen
}

// syncCounted is what syncCountQuery counts.
type syncCounted struct {
	stored, created, updated int
}

// syncWindowMax bounds the memories one syncWindowQuery lists (both windows together).
const syncWindowMax = 50_000

// syncWindowLimit is how many memories both windows may hold together for a sync of a tenant of
// stored indexed memories to list them (syncWindowQuery) rather than every indexed memory
// (syncListQuery): a window entry costs Dgraph a few times a listed one, and one answer must
// stay small whatever the tenant's size; windows within a page are listed in any case.
func syncWindowLimit(stored int) int {
	return max(syncPage, min(stored/2, syncWindowMax))
}

func syncCounts(ctx context.Context, txn *dgo.Txn, since, next time.Time) (syncCounted, watermark, error) {
	vars := map[string]string{"$since": since.UTC().Format(time.RFC3339Nano), "$next": next.UTC().Format(time.RFC3339Nano)}
	resp, err := txn.QueryWithVars(ctx, syncCountQuery, vars)
	if err != nil {
		return syncCounted{}, watermark{}, fmt.Errorf("count new memories: %w", err)
	}
	var out struct {
		watermarkAnswer
		W, U counted
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return syncCounted{}, watermark{}, fmt.Errorf("count new memories: %w", err)
	}
	return syncCounted{stored: out.N.value(), created: out.W.value(), updated: out.U.value()}, out.watermark(), nil
}

// syncWindows lists the indexed memories created and those updated since since, by Memory.id.
func syncWindows(ctx context.Context, txn *dgo.Txn, since time.Time, counts syncCounted) (created, updated map[string]listedMemory, err error) {
	vars := map[string]string{"$since": since.UTC().Format(time.RFC3339Nano)}
	limit := max(counts.created, counts.updated, 1)
	resp, err := txn.QueryWithVars(ctx, fmt.Sprintf(syncWindowQuery, limit), vars)
	if err != nil {
		return nil, nil, fmt.Errorf("list new memories: %w", err)
	}
	var out struct{ W, U []listedMemory }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, nil, fmt.Errorf("list new memories: %w", err)
	}
	return byID(out.W), byID(out.U), nil
}

func byID(listed []listedMemory) map[string]listedMemory {
	out := make(map[string]listedMemory, len(listed))
	for _, m := range listed {
		if m.ID != "" {
			out[m.ID] = m
		}
	}
	return out
}

// syncList lists every indexed memory, in pages of syncPage.
func syncList(ctx context.Context, txn *dgo.Txn) (map[string]listedMemory, error) {
	ids := map[string]listedMemory{}
	after := ""
	for {
		resp, err := txn.Query(ctx, fmt.Sprintf(syncListQuery, syncPage, afterClause(after)))
		if err != nil {
			return nil, fmt.Errorf("list indexed memories: %w", err)
		}
		var out struct {
			M []listedMemory `json:"m"`
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return nil, fmt.Errorf("list indexed memories: %w", err)
		}
		for _, m := range out.M {
			if m.ID != "" {
				ids[m.ID] = m
			}
		}
		if len(out.M) < syncPage {
			return ids, nil
		}
		after = out.M[len(out.M)-1].UID
	}
}

// analysedDoc is a chunk ready for bm25.Index.Add, with its vector when held (textdoc.Doc).
type analysedDoc = textdoc.Doc

// fetch reads the listed memories' chunks and adds them: with changed false those this process
// does not hold and whose removal the hooks have not reported during the sync; with changed true
// those it holds at another content sha than the listing's (step 2), which it replaces unless
// the hooks wrote them during the sync. The texts are read and analysed without the lock; the
// check is repeated under it, since the hooks may have written some meanwhile.
func (x *textIndex) fetch(ctx context.Context, t *Tenant, txn *dgo.Txn, gen uint64, listed map[string]listedMemory, changed bool) (int, error) {
	wanted := func(m listedMemory) bool {
		_, held := x.memories[m.ID]
		if !changed {
			return !held && !x.syncRemoved[m.ID]
		}
		return held && !x.syncAdded[m.ID] && !x.syncRemoved[m.ID] && m.SHA != x.shas[m.ID]
	}
	x.mu.Lock()
	if !x.loadedAsLocked(gen) {
		x.mu.Unlock()
		return 0, errSyncStale
	}
	var uids []string
	for _, m := range listed {
		if wanted(m) {
			uids = append(uids, m.UID)
		}
	}
	x.mu.Unlock()

	added := 0
	recompute := t.recomputeVectors()
	for start := 0; start < len(uids); start += fetchBatch {
		batch := uids[start:min(start+fetchBatch, len(uids))]
		memories, err := t.readChunks(ctx, txn, strings.Join(batch, ", "))
		if err != nil {
			return added, err
		}
		docs := make([][]analysedDoc, len(memories))
		for i, m := range memories {
			docs[i] = m.Analyse(ctx, t.c.log, recompute, t.analyzeDoc)
		}
		x.mu.Lock()
		if !x.loadedAsLocked(gen) {
			x.mu.Unlock()
			return added, errSyncStale
		}
		for i, m := range memories {
			if !wanted(listed[m.ID]) {
				continue
			}
			x.addMemoryLocked(t.Name, m.ID, docs[i])
			x.setSHALocked(m.ID, listed[m.ID].SHA)
			added++
		}
		x.mu.Unlock()
	}
	return added, nil
}

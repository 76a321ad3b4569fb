package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
)

// Reconciling a tenant's BM25 statistics with Dgraph, so that writes of other service replicas
// (which the ingest hooks of this process never see) reach them too. See textindex.go for what
// the statistics hold.
//
// A sync is started by a recall that finds the last one older than textSyncInterval; it runs in
// the background (recall never waits for it), one at a time per tenant. It reads everything in
// one read-only transaction, so all its answers are one snapshot of the store:
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
//     from the one the sync last read them at (none known: read once). The hooks' own writes
//     during the sync win, as for additions.
//  3. Deletions: the store's count of indexed memories is compared with the number held. Only
//     when they differ (a document replaced elsewhere, or anything step 1 could not see) are all
//     indexed Memory.id listed and diffed: held but gone is removed, stored but missing added.
//
// The hooks of this process keep running during a sync. What they do after the snapshot was
// taken must win over the snapshot, so while a sync runs the index records the memories they add
// and remove (syncAdded, syncRemoved): the sync never removes the former nor adds the latter. A
// memory the hooks added before the sync began was committed before its snapshot, so if the
// snapshot lacks it, it was deleted. A load (RebuildTextStats) during a sync makes the sync's
// result stale; it is dropped.

// textSyncInterval is how old the last sync of a tenant may get before a recall starts the
// next one: the time within which other replicas' writes reach this one's statistics. A
// variable so that tests can shorten it.
var textSyncInterval = 60 * time.Second

const (
	// textSyncSlack widens the additions window back from the previous sync's start.
	textSyncSlack = 5 * time.Minute
	// textSyncTimeout bounds one sync; a failed one is retried by a later recall, from the
	// same window start.
	textSyncTimeout = 2 * time.Minute
	// syncPage is how many memory ids one listing query reads; fetchBatch how many memories'
	// chunk texts one fetch reads.
	syncPage   = 2000
	fetchBatch = 200
)

// textSyncTestHook, when set by a test, is called at the named points of a sync, with the index
// unlocked: "window" once the store's count and the additions window are read (the snapshot is
// fixed from here on), "diff" once the full id listing is read.
var textSyncTestHook func(stage string)

// errSyncStale reports a sync whose statistics were reloaded while it ran.
var errSyncStale = errors.New("statistics were reloaded during the sync")

// textSyncResult is what a sync changed, for the log and the tests.
type textSyncResult struct {
	window  int  // indexed memories in the additions window
	added   int  // memories added
	changed int  // held memories read again (updated elsewhere)
	removed int  // memories removed
	diffed  bool // the counts differed: all ids were listed
}

// syncRun is one sync's parameters, fixed when it starts.
type syncRun struct {
	gen     uint64    // the load generation it reconciles
	started time.Time // becomes syncedFrom when it succeeds
	since   time.Time // start of the additions window
	full    bool      // diff all ids even if the counts agree (tests, benchmarks)
	done    chan struct{}
}

// maybeSync starts a background sync of the tenant's statistics if they are loaded, none is
// running and the last one started more than textSyncInterval ago. It never blocks on Dgraph.
func (x *textIndex) maybeSync(ctx context.Context, t *Tenant) {
	x.mu.Lock()
	if x.state != textLoaded || x.syncing != nil || time.Since(x.syncTried) < textSyncInterval {
		x.mu.Unlock()
		return
	}
	run := x.beginSyncLocked(false)
	x.mu.Unlock()
	// The sync outlives the recall that started it, within its own time limit.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), textSyncTimeout)
	go func() {
		defer cancel()
		_, _ = x.runSync(ctx, t, run) // logged there; a later recall retries
	}()
}

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
	}
	x.syncing, x.syncAdded, x.syncRemoved = nil, nil, nil
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
	return res, nil
}

// syncWindowQuery counts the indexed memories and lists a page of those created since $since.
// The window's root is created_at's index, not the status: a window is small, the status list
// is the whole corpus. Failed ones are dropped by the caller.
const syncWindowQuery = `query q($since: string) {
  n(func: eq(Memory.status, "indexed")) { count(uid) }
  w(func: ge(Memory.created_at, $since), first: %d%s) { uid Memory.id Memory.status Memory.content_sha }
}`

// syncUpdatedQuery lists a page of the memories updated since $since (step 2), through
// updated_at's index.
const syncUpdatedQuery = `query q($since: string) {
  w(func: ge(Memory.updated_at, $since), first: %d%s) { uid Memory.id Memory.status Memory.content_sha }
}`

// syncIDsQuery lists a page of indexed memories' ids, in uid order.
const syncIDsQuery = `{
  m(func: eq(Memory.status, "indexed"), first: %d%s) { uid Memory.id }
}`

// syncFetchQuery reads the chunk texts (and vectors, %[2]s) of the listed memories (as
// scanTextQuery does).
const syncFetchQuery = `{
  m(func: uid(%[1]s)) {
    Memory.id
    Memory.chunks { uid  p: Chunk.position  de: Chunk.text@de  en: Chunk.text%[2]s }
  }
}`

type listedMemory struct {
	UID    string `json:"uid"`
	ID     string `json:"Memory.id"`
	Status string `json:"Memory.status"`
	SHA    string `json:"Memory.content_sha"`
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
	txn := t.dg.NewReadOnlyTxn()
	defer txn.Discard(ctx)

	stored, window, err := syncWindow(ctx, txn, syncWindowQuery, run.since)
	if err != nil {
		return res, err
	}
	res.window = len(window)
	if textSyncTestHook != nil {
		textSyncTestHook("window")
	}

	// 1. Additions.
	n, err := x.fetch(ctx, t, txn, run.gen, window, false)
	res.added += n
	if err != nil {
		return res, err
	}

	// 2. Changes.
	_, updated, err := syncWindow(ctx, txn, syncUpdatedQuery, run.since)
	if err != nil {
		return res, err
	}
	if res.changed, err = x.fetch(ctx, t, txn, run.gen, updated, true); err != nil {
		return res, err
	}

	// 3. Deletions, if the counts say there are any. The hooks' additions since the snapshot
	// are not in its count (those before it are in the window); their removals are counted as
	// if after it — if not, the counts differ and the diff, which is exact, sorts it out.
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
	if held == stored && !run.full {
		return res, nil
	}

	res.diffed = true
	all, err := syncIDs(ctx, txn)
	if err != nil {
		return res, err
	}
	// Nodes the count sees but the id map cannot (two nodes with one Memory.id, none at all)
	// would make every later sync diff again: the snapshot says how many there are.
	offset := stored - len(all)
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
	n, err = x.fetch(ctx, t, txn, run.gen, all, false)
	res.added += n
	return res, err
}

// loadedAsLocked tells whether the statistics are still those of load generation gen: a sync
// begun under it may change them.
func (x *textIndex) loadedAsLocked(gen uint64) bool {
	return x.state == textLoaded && x.gen == gen
}

// syncWindow reads the store's count of indexed memories (syncWindowQuery) and the indexed ones
// created (syncWindowQuery) or updated (syncUpdatedQuery) since since.
func syncWindow(ctx context.Context, txn *dgo.Txn, query string, since time.Time) (int, map[string]listedMemory, error) {
	count := -1
	window := map[string]listedMemory{}
	vars := map[string]string{"$since": since.UTC().Format(time.RFC3339Nano)}
	after := ""
	for {
		resp, err := txn.QueryWithVars(ctx, fmt.Sprintf(query, syncPage, afterClause(after)), vars)
		if err != nil {
			return 0, nil, fmt.Errorf("list new memories: %w", err)
		}
		var out struct {
			N []struct {
				Count int `json:"count"`
			} `json:"n"`
			W []listedMemory `json:"w"`
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return 0, nil, fmt.Errorf("list new memories: %w", err)
		}
		if count < 0 {
			count = 0
			if len(out.N) > 0 {
				count = out.N[0].Count
			}
		}
		for _, m := range out.W {
			if m.Status == "indexed" && m.ID != "" {
				window[m.ID] = m
			}
		}
		if len(out.W) < syncPage {
			return count, window, nil
		}
		after = out.W[len(out.W)-1].UID
	}
}

// syncIDs lists every indexed memory.
func syncIDs(ctx context.Context, txn *dgo.Txn) (map[string]listedMemory, error) {
	ids := map[string]listedMemory{}
	after := ""
	for {
		resp, err := txn.Query(ctx, fmt.Sprintf(syncIDsQuery, syncPage, afterClause(after)))
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

// analysedDoc is a chunk ready for bm25.Index.Add, with its vector when held (vec.vec nil:
// none).
type analysedDoc struct {
	id, lang string
	uid      uint64 // the chunk's uid (0: not known), what recall's text search returns
	tokens   []string
	vec      chunkVector
}

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
	for start := 0; start < len(uids); start += fetchBatch {
		batch := uids[start:min(start+fetchBatch, len(uids))]
		resp, err := txn.Query(ctx, fmt.Sprintf(syncFetchQuery, strings.Join(batch, ", "), t.vectorFields()))
		if err != nil {
			return added, fmt.Errorf("read chunk texts: %w", err)
		}
		var out struct {
			M []scannedMemory `json:"m"`
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return added, fmt.Errorf("read chunk texts: %w", err)
		}
		docs := make([][]analysedDoc, len(out.M))
		for i, m := range out.M {
			docs[i] = m.analyse(t.c.log)
		}
		x.mu.Lock()
		if !x.loadedAsLocked(gen) {
			x.mu.Unlock()
			return added, errSyncStale
		}
		for i, m := range out.M {
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

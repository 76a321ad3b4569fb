package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/dgo/v240"
)

// A change watermark per tenant: how a replica learns within about a second that another
// replica wrote, without reconciling the whole tenant (docs/scale.md, "Replicas that agree
// within seconds").
//
// Every write path stamps Memory.updated_at (a new memory, an edit, a trash, a document's
// closing when it is replaced), and that predicate is indexed. So before a ranked read, when the
// last check of the tenant is older than watermarkInterval, one query (watermarkQuery) reads the
// tenant's watermark: the newest updated_at, how many memories were updated since the sync
// window's start and how many are indexed. Each sync reads the same watermark in its own
// snapshot, so it is what the statistics reflect; a check that reads another one starts a sync
// (textsync.go) of that window, and the read that made the check waits for it, within
// freshWait. Reads that arrive meanwhile wait for the same check and sync, so a read that
// begins more than watermarkInterval after another replica's write was acknowledged finds it.
//
// What each part of the watermark catches:
//   - latest: every write whose stamp is newer than all the sync saw — the common case, and the
//     only part that sees a memory edited twice within the window;
//   - updated: a write stamped before latest but committed after the sync read it (a stamp is
//     taken before the commit, and another writer's later stamp may commit first), when its
//     memory was not already in the window;
//   - indexed: memories erased behind the service's back (no tool erases an indexed memory).
//
// A write stamped before the newest one seen, committed after it, to a memory already updated
// within the window changes none of the three: the periodic sync (textSyncInterval) still
// reconciles it. This replica's own writes change the watermark too, so a check after them
// starts a sync that finds nothing to read (the hooks already did it): a windowed listing.

// watermarkInterval is how old the last check of a tenant's watermark may get before a ranked
// read checks again. A variable so that tests can shorten or lengthen it.
var watermarkInterval = time.Second

// watermarkAhead is the share of watermarkInterval after which a ranked read starts the next
// check in the background and goes on without it: the last check still covers the read, and
// under a steady stream of reads the checks run ahead of need, so no read waits for one. A
// check reads every memory stamped in the hour its window starts in (updated_at's index is by
// the hour): after a bulk load tens of milliseconds of the alpha's CPU, which the read that
// made it would wait for (docs/dgraph-notes.md, DQL).
func watermarkAhead() time.Duration { return watermarkInterval * 3 / 4 }

const (
	// freshWait bounds how long a ranked read waits for a check and the sync it started; a
	// longer sync (a bulk import's window, a full id diff) goes on in the background.
	freshWait = time.Second
	// watermarkTimeout bounds the check's query.
	watermarkTimeout = time.Second
)

// watermark is what watermarkQuery reads: the state of the tenant's memories a sync covered.
type watermark struct {
	latest  time.Time // newest Memory.updated_at at or after the window's start
	updated int       // memories with Memory.updated_at at or after the window's start
	indexed int       // memories with status indexed
}

// watermarkQuery reads the watermark of the window starting at $next through updated_at's and
// status's indexes: what a check costs. The window starts where the next sync's will, so that
// the set it counts only grows. A sync reads the same blocks in its count query
// (syncCountQuery).
const watermarkQuery = `query q($next: string) {` + watermarkBlocks + `
}`

const watermarkBlocks = `
  n(func: eq(Memory.status, "indexed")) { count(uid) }
  M as var(func: ge(Memory.updated_at, $next))
  mu(func: uid(M)) { count(uid) }
  latest(func: uid(M), orderdesc: Memory.updated_at, first: 1) { Memory.updated_at }`

// watermarkAnswer is the JSON of watermarkBlocks.
type watermarkAnswer struct {
	N, MU  counted
	Latest []struct {
		UpdatedAt time.Time `json:"Memory.updated_at"`
	}
}

// counted is the JSON of a block holding count(uid).
type counted []struct {
	Count int `json:"count"`
}

func (c counted) value() int {
	if len(c) == 0 {
		return 0
	}
	return c[0].Count
}

func (a watermarkAnswer) watermark() watermark {
	w := watermark{updated: a.MU.value(), indexed: a.N.value()}
	if len(a.Latest) > 0 {
		w.latest = a.Latest[0].UpdatedAt.UTC()
	}
	return w
}

func readWatermark(ctx context.Context, txn *dgo.Txn, next time.Time) (watermark, error) {
	vars := map[string]string{"$next": next.UTC().Format(time.RFC3339Nano)}
	resp, err := txn.QueryWithVars(ctx, watermarkQuery, vars)
	if err != nil {
		return watermark{}, fmt.Errorf("read change watermark: %w", err)
	}
	var out watermarkAnswer
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return watermark{}, fmt.Errorf("read change watermark: %w", err)
	}
	return out.watermark(), nil
}

// freshness is a tenant's watermark state, guarded by textIndex.mu.
type freshness struct {
	checked  time.Time     // start of the last check
	checking chan struct{} // non-nil while a check runs; closed when it ends
	// covered is the start of the last check that read the watermark and ended: a read begun
	// within watermarkInterval of it needs no other.
	covered time.Time
	// checks counts the watermark reads, waits the ranked reads that waited for one.
	checks, waits int
	// mark is the watermark the last successful sync read, valid for load generation markGen
	// and the window starting at markSince.
	mark      watermark
	markGen   uint64
	markSince time.Time
	marked    bool
	news      bool // the running sync was started by a check that found a change
}

// fresh brings the tenant's statistics up to date with other replicas' writes before a ranked
// read: when the last check is older than watermarkInterval it reads the watermark and, if it
// changed, syncs and waits for the sync (within freshWait); when it is older than
// watermarkAhead it starts the next check in the background and goes on; when the last sync is
// older than textSyncInterval it starts one in the background whatever the watermark says. A
// read that finds a check running waits for it within freshWait unless the check before it
// still covers the read, and one that finds a sync with news running waits for that. Errors
// only delay the news: they are logged, and the read goes on with what the statistics hold.
func (x *textIndex) fresh(ctx context.Context, t *Tenant) {
	deadline := time.Now().Add(freshWait)
	for {
		x.mu.Lock()
		if x.state != textLoaded {
			x.mu.Unlock()
			return
		}
		if x.syncing != nil {
			running, news := x.syncing, x.watch.news
			x.mu.Unlock()
			if news {
				waitUntil(ctx, running, deadline)
			}
			return
		}
		if running := x.watch.checking; running != nil {
			if time.Since(x.watch.covered) < watermarkInterval {
				x.mu.Unlock()
				return // a check running ahead of need: the one before covers this read
			}
			x.watch.waits++
			x.mu.Unlock()
			if !waitUntil(ctx, running, deadline) {
				return
			}
			continue // the check may have started a sync with news: wait for that too
		}
		due := time.Since(x.syncTried) >= textSyncInterval
		age := time.Since(x.watch.checked)
		switch {
		case !due && age < watermarkAhead():
			x.mu.Unlock()
		case !due && age < watermarkInterval && time.Since(x.watch.covered) < watermarkInterval:
			checking := x.beginCheckLocked()
			x.mu.Unlock()
			// The check outlives the read that started it, within its own time limit.
			go x.check(context.WithoutCancel(ctx), t, checking, false, time.Time{})
		default:
			checking := x.beginCheckLocked()
			x.watch.waits++
			x.mu.Unlock()
			x.check(ctx, t, checking, due, deadline)
		}
		return
	}
}

// beginCheckLocked marks a check as running from now. Called with x.mu held.
func (x *textIndex) beginCheckLocked() chan struct{} {
	checking := make(chan struct{})
	x.watch.checked, x.watch.checking = time.Now(), checking
	return checking
}

// check reads the watermark (unless a sync is due anyway) and starts a sync when it changed or
// is due, waiting until deadline for one that has news (a zero deadline: not at all). checking
// is beginCheckLocked's; check closes it.
func (x *textIndex) check(ctx context.Context, t *Tenant, checking chan struct{}, due bool, deadline time.Time) {
	x.mu.Lock()
	started := x.watch.checked
	since := x.syncedFrom.Add(-textSyncSlack)
	known := x.watch.marked && x.watch.markGen == x.gen && x.watch.markSince.Equal(since)
	mark := x.watch.mark
	x.mu.Unlock()

	news, read := !known, false
	if known && !due {
		// Not best-effort: the read must see every write acknowledged before it began.
		cctx, cancel := context.WithTimeout(ctx, watermarkTimeout)
		txn := t.dg.NewReadOnlyTxn()
		w, err := readWatermark(cctx, txn, since)
		_ = txn.Discard(cctx)
		cancel()
		if err != nil {
			t.c.log.Debug("change watermark not read", "tenant", t.Name, "err", err)
		}
		news, read = err == nil && w != mark, err == nil
	}

	var done chan struct{}
	x.mu.Lock()
	if read {
		x.watch.checks++
		if started.After(x.watch.covered) {
			x.watch.covered = started
		}
	}
	if (news || due) && x.state == textLoaded && x.syncing == nil {
		run := x.beginSyncLocked(false)
		x.watch.news = news
		done = run.done
		// The sync outlives the read that started it, within its own time limit.
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), textSyncTimeout)
		go func() {
			defer scancel()
			_, _ = x.runSync(sctx, t, run) // logged there; a later read retries
		}()
	}
	x.watch.checking = nil
	close(checking)
	x.mu.Unlock()
	if news && done != nil && !deadline.IsZero() {
		waitUntil(ctx, done, deadline)
	}
}

// waitUntil waits until done is closed (true), deadline passes or ctx ends (false).
func waitUntil(ctx context.Context, done <-chan struct{}, deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

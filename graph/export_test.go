package graph

import (
	"context"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bm25"
)

// TextStats exposes a tenant's BM25 statistics to the external tests (loading them first).
func (t *Tenant) TextStats(lang string, terms ...string) bm25.Stats {
	return t.text.ix.Stats(t.Name, lang, terms...)
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
	Window, Added, Removed int
	Diffed                 bool
}

// SyncTextStats runs a sync now, after any that is running; full diffs all ids even when the
// counts agree.
func (t *Tenant) SyncTextStats(ctx context.Context, full bool) (TextSyncResult, error) {
	res, err := t.text.syncNow(ctx, t, full)
	return TextSyncResult{Window: res.window, Added: res.added, Removed: res.removed, Diffed: res.diffed}, err
}

// RecordFailedFor runs an ingest's failure path for the entry with this id, as after a write that
// returned an error (which may have committed all the same).
func (t *Tenant) RecordFailedFor(ctx context.Context, id, kind, content string, cause error) (knowmind.StoreResult, error) {
	e := newEntry(kind, "", content)
	e.id = id
	e.split()
	return t.recordFailed(ctx, e, cause)
}

// SessionLogin sends a login through the client under the tenant's session, as dgo does to renew
// an expired access JWT with its refresh JWT.
func (t *Tenant) SessionLogin(ctx context.Context, in *api.LoginRequest) (*api.Response, error) {
	return t.session.Login(ctx, in)
}

// VectorIndexDQL is the index line reembed restores.
const VectorIndexDQL = vectorIndexDQL

package graph

import (
	"context"

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

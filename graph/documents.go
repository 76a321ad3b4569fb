package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// A document is a memory of kind "document": its content is split into
// chunks (see package chunk for the sizes), one vector each. Documents are
// upserted per title: a new upload of a title replaces the current
// documents of that title.
//
// Replacing never erases: the replaced documents are closed (valid_to = the
// instant of the upload) and superseded by the new one (new -SUPERSEDES->
// old, as knowmind_update_fact writes it), and their open relations move to
// the new document at that instant (versions.go), all in the transaction
// that writes the new document. So the replaced version leaves every current
// view and stays readable as of its time (replay, recall_at_time, explore
// with as_of), its chunks included. If the new one cannot be embedded or
// written, nothing of the old one is touched and the new one is kept with
// status failed (a later successful upload of the title replaces it too).

// findSameDocumentQuery finds a current, indexed document with this title
// and content: uploading it again changes nothing. Untitled documents are
// compared with untitled ones.
const findSameDocumentQuery = `query q($title: string, $sha: string) {
  same(func: eq(Memory.content_sha, $sha)) @filter(eq(Memory.kind, "document") AND eq(Memory.title, $title) AND eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)) {
    uid Memory.id Memory.title Memory.status
  }
}`

const findSameUntitledDocumentQuery = `query q($sha: string) {
  same(func: eq(Memory.content_sha, $sha)) @filter(eq(Memory.kind, "document") AND NOT has(Memory.title) AND eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)) {
    uid Memory.id Memory.title Memory.status
  }
}`

// uploadUntitledDocumentUpsert writes an untitled document unless the same
// one exists; untitled documents replace nothing.
const uploadUntitledDocumentUpsert = `query q($sha: string) {
  same(func: eq(Memory.content_sha, $sha)) @filter(eq(Memory.kind, "document") AND NOT has(Memory.title) AND eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)) {
    s as uid Memory.id Memory.title Memory.status
  }
}`

// uploadDocumentUpsert is the upsert for a titled document: "same" decides
// whether anything is written, "old" are the current documents of the title
// (failed ones included), which the new one supersedes.
const uploadDocumentUpsert = `query q($title: string, $sha: string) {
  same(func: eq(Memory.content_sha, $sha)) @filter(eq(Memory.kind, "document") AND eq(Memory.title, $title) AND eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)) {
    s as uid Memory.id Memory.title Memory.status
  }
  old(func: eq(Memory.title, $title)) @filter(eq(Memory.kind, "document") AND NOT has(Memory.valid_to)) { uid Memory.id }
}`

// supersedeVersions closes the replaced documents (valid_to = now, as
// update_fact closes its target), links the new document to each: new
// -SUPERSEDES-> old and its inverse, with the facets update_fact writes, and
// moves their open relations to the new document. Re-setting Memory.id
// (@upsert) makes the write conflict with a concurrent update_fact or link of
// the same version.
func (t *Tenant) supersedeVersions(ctx context.Context, txn *dgo.Txn, newID, newUID string, versions []dgMemory) error {
	if len(versions) == 0 {
		return nil
	}
	now := time.Now().UTC()
	stamp := now.Format(time.RFC3339Nano)
	var nq strings.Builder
	refs := make([]versionRef, 0, len(versions))
	for _, v := range versions {
		refs = append(refs, versionRef{UID: v.UID, ID: v.ID})
		fmt.Fprintf(&nq, "<%s> <Memory.id> %q .\n<%s> <Memory.valid_to> %q .\n<%s> <Memory.updated_at> %q .\n",
			v.UID, v.ID, v.UID, stamp, v.UID, stamp)
		fmt.Fprintf(&nq, "<%[1]s> <%[3]s> <%[2]s> (id=%[5]q, created_at=%[7]s, valid_from=%[7]s, inverse=false) .\n"+
			"<%[2]s> <%[4]s> <%[1]s> (id=%[6]q, created_at=%[7]s, valid_from=%[7]s, inverse=true) .\n",
			newUID, v.UID, RelSupersedes, RelSupersededBy,
			EdgeID(newID, RelSupersedes, v.ID), EdgeID(v.ID, RelSupersededBy, newID), stamp)
	}
	if _, err := txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(nq.String())}); err != nil {
		return err
	}
	_, err := t.moveRelations(ctx, txn, refs, versionRef{UID: newUID, ID: newID}, true, now, now)
	return err
}

// titleLocks serialise uploads of one title of one tenant within this
// process. Dgraph's conflict detection alone does not: two first uploads of
// a new title write no common key (Memory.title is not @upsert), so both
// would commit. One lock per (namespace, title) in use, dropped when nobody
// holds or awaits it: a tenant's uploads never wait for another tenant's, and
// a waiter whose call ends (cancelled, past its deadline) stops waiting.
type titleLocks struct {
	mu    sync.Mutex
	locks map[uploadKey]*titleLock
}

type uploadKey struct {
	namespace uint64
	title     string
}

type titleLock struct {
	held chan struct{} // holds one value while locked
	refs int           // holders and waiters
}

// lock waits for the title's lock or for ctx to end; unlock releases it.
func (l *titleLocks) lock(ctx context.Context, namespace uint64, title string) (unlock func(), err error) {
	key := uploadKey{namespace, title}
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[uploadKey]*titleLock{}
	}
	tl := l.locks[key]
	if tl == nil {
		tl = &titleLock{held: make(chan struct{}, 1)}
		l.locks[key] = tl
	}
	tl.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if tl.refs--; tl.refs == 0 {
			delete(l.locks, key)
		}
		l.mu.Unlock()
	}
	select {
	case tl.held <- struct{}{}:
		return func() { <-tl.held; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// UploadDocument ingests a longer text as a document (see above for the
// upsert per title and failure rules). The result lists the replaced
// documents' ids (never nil, empty when none). Same title and content as a
// current document returns it with Unchanged.
func (t *Tenant) UploadDocument(ctx context.Context, in knowmind.UploadDocumentInput) (knowmind.StoreResult, error) {
	defer t.relationsWritten() // it may write a relation's first edge: recall asks again (linkedrelations.go)
	content, err := checkContent(in.Content)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	title, err := checkText("title", in.Title, knowmind.MaxTitleChars, false)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	source, err := checkText("source", in.Source, knowmind.MaxSourceChars, false)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	e := newEntry(knowmind.KindDocument, title, content)
	e.source = source

	var found struct{ Same []dgMemory }
	q, vars := findSameDocumentQuery, map[string]string{"$title": title, "$sha": e.sha}
	if title == "" {
		q, vars = findSameUntitledDocumentQuery, map[string]string{"$sha": e.sha}
	}
	if err := t.queryVars(ctx, q, vars, &found); err != nil {
		return knowmind.StoreResult{}, fmt.Errorf("upload document: look up content: %w", err)
	}
	if len(found.Same) > 0 {
		res := t.unchanged(found.Same[0])
		res.ReplacedDocumentIDs = []string{}
		return res, nil
	}

	started := time.Now()
	if err := e.split(); err != nil {
		return knowmind.StoreResult{}, err
	}
	if err := t.embed(ctx, e); err != nil {
		return t.recordFailedDocument(ctx, e, err)
	}
	body, err := json.Marshal(e.node("m", nowString(), knowmind.StatusIndexed, ""))
	if err != nil {
		return t.recordFailedDocument(ctx, e, err)
	}
	req := &api.Request{Mutations: []*api.Mutation{{Cond: `@if(eq(len(s), 0))`, SetJson: body}}}
	if title == "" {
		req.Query = uploadUntitledDocumentUpsert
		req.Vars = map[string]string{"$sha": e.sha}
	} else {
		req.Query = uploadDocumentUpsert
		req.Vars = map[string]string{"$title": title, "$sha": e.sha}
		unlock, err := t.c.titleLocks.lock(ctx, t.Namespace, title)
		if err != nil {
			return knowmind.StoreResult{}, fmt.Errorf("upload document: wait for the title's other upload: %w", err)
		}
		defer unlock()
	}
	var out struct {
		Same []dgMemory
		Old  []dgMemory
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Same, out.Old = nil, nil
		resp, err := txn.Do(ctx, req)
		if err != nil {
			return err
		}
		e.committed("m", resp.Uids)
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		if len(out.Same) > 0 {
			return nil
		}
		return t.supersedeVersions(ctx, txn, e.id, resp.Uids["m"], out.Old)
	})
	if kerr := knowmind.AsError(err); kerr != nil && kerr.Reason == knowmind.ReasonTooLarge {
		return knowmind.StoreResult{}, err // refused before anything was written (checkMovable)
	}
	if err != nil {
		return t.recordFailedDocument(ctx, e, fmt.Errorf("write document: %w", err))
	}
	if len(out.Same) > 0 {
		res := t.unchanged(out.Same[0])
		res.ReplacedDocumentIDs = []string{}
		return res, nil
	}
	replaced := make([]string, 0, len(out.Old))
	for _, o := range out.Old {
		replaced = append(replaced, o.ID)
	}
	// Closed versions stay in the text index for recall_at_time, as update_fact leaves them.
	aw := t.afterWrite(ctx, e)
	t.c.log.Info("document ingested", "tenant", t.Name, "id", e.id, "title", title,
		"chunks", len(e.chunks), "replaced", replaced, "took", time.Since(started).Round(time.Millisecond))
	return knowmind.StoreResult{MemoryID: e.id, ID: e.id, Title: title, Status: knowmind.StatusIndexed,
		ChunksWritten: len(e.chunks), EmbeddingProvider: t.provider(), ReplacedDocumentIDs: replaced,
		PMMatches: aw.pmMatches()}, nil
}

func (t *Tenant) recordFailedDocument(ctx context.Context, e *entry, cause error) (knowmind.StoreResult, error) {
	res, err := t.recordFailed(ctx, e, cause)
	res.ReplacedDocumentIDs = []string{}
	return res, err
}

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
// The new document and the deletion of the old ones are one transaction, so
// the old version is replaced only by a completely ingested new one, and
// readers never see both or neither. A replaced document that is a version
// in a history (knowmind_update_fact wrote or superseded it) is not deleted:
// it is closed and superseded by the new one, so history stays append-only
// and its chain leads to the new document. If the new one cannot be embedded or
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
// whether anything is written, "o" are the current documents of the title
// (failed ones included). Of these, "p" are plain documents: they are
// deleted with their chunks "c" and, per relation predicate R_i, the edges
// of the nodes "in_i" that point at them (relation predicates are not in the
// Memory type, so "uid(p) * *" would leave them: they are deleted one by one,
// outgoing and incoming, leaving no edge into nothing). "hist" are versions
// in a history (update_fact wrote them or superseded them): history is
// append-only, so they are closed and superseded by the new document instead
// (see UploadDocument), never deleted.
func uploadDocumentUpsert(relations []string) (query, deletions string) {
	var q, del strings.Builder
	q.WriteString(`query q($title: string, $sha: string) {
  same(func: eq(Memory.content_sha, $sha)) @filter(eq(Memory.kind, "document") AND eq(Memory.title, $title) AND eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)) {
    s as uid Memory.id Memory.title Memory.status
  }
  o as var(func: eq(Memory.title, $title)) @filter(eq(Memory.kind, "document") AND NOT has(Memory.valid_to))
  p as var(func: uid(o)) @filter(NOT has(` + RelSupersedes + `) AND NOT has(` + RelSupersededBy + `)) {
    c as Memory.chunks
  }
  hist(func: uid(o)) @filter(has(` + RelSupersedes + `) OR has(` + RelSupersededBy + `)) { uid Memory.id }
`)
	del.WriteString("uid(c) * * .\nuid(p) * * .\n")
	// Dgraph allows one reverse edge per block, hence a block per predicate.
	// (Written <~R>: Dgraph reads ~<R> without complaint but finds nothing.)
	for i, r := range relations {
		fmt.Fprintf(&q, "  var(func: uid(p)) { in_%d as <~%s> }\n", i, r)
		fmt.Fprintf(&del, "uid(p) <%s> * .\nuid(in_%d) <%s> uid(p) .\n", r, i, r)
	}
	q.WriteString(`  old(func: uid(o)) { Memory.id }
}`)
	return q.String(), del.String()
}

// supersedeVersions closes the replaced documents that are versions in a
// history (valid_to = now, as update_fact closes its target) and links the
// new document to each: new -SUPERSEDES-> old and its inverse, with the
// facets update_fact writes. Re-setting Memory.id (@upsert) makes the write
// conflict with a concurrent update_fact of the same version.
func supersedeVersions(ctx context.Context, txn *dgo.Txn, newID, newUID string, versions []dgMemory) error {
	if len(versions) == 0 {
		return nil
	}
	stamp := nowString()
	var nq strings.Builder
	for _, v := range versions {
		fmt.Fprintf(&nq, "<%s> <Memory.id> %q .\n<%s> <Memory.valid_to> %q .\n<%s> <Memory.updated_at> %q .\n",
			v.UID, v.ID, v.UID, stamp, v.UID, stamp)
		fmt.Fprintf(&nq, "<%[1]s> <%[3]s> <%[2]s> (id=%[5]q, created_at=%[7]s, valid_from=%[7]s, inverse=false) .\n"+
			"<%[2]s> <%[4]s> <%[1]s> (id=%[6]q, created_at=%[7]s, valid_from=%[7]s, inverse=true) .\n",
			newUID, v.UID, RelSupersedes, RelSupersededBy,
			EdgeID(newID, RelSupersedes, v.ID), EdgeID(v.ID, RelSupersededBy, newID), stamp)
	}
	_, err := txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(nq.String())})
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
		query, deletions := uploadDocumentUpsert(t.c.cfg.Relations)
		req.Query = query
		req.Vars = map[string]string{"$title": title, "$sha": e.sha}
		req.Mutations = append(req.Mutations, &api.Mutation{
			Cond:      `@if(eq(len(s), 0) AND gt(len(p), 0))`,
			DelNquads: []byte(deletions),
		})
		unlock, err := t.c.titleLocks.lock(ctx, t.Namespace, title)
		if err != nil {
			return knowmind.StoreResult{}, fmt.Errorf("upload document: wait for the title's other upload: %w", err)
		}
		defer unlock()
	}
	var out struct {
		Same []dgMemory
		Old  []dgMemory
		Hist []dgMemory
	}
	err = RunTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Same, out.Old, out.Hist = nil, nil, nil
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
		return supersedeVersions(ctx, txn, e.id, resp.Uids["m"], out.Hist)
	})
	if err != nil {
		return t.recordFailedDocument(ctx, e, fmt.Errorf("write document: %w", err))
	}
	if len(out.Same) > 0 {
		res := t.unchanged(out.Same[0])
		res.ReplacedDocumentIDs = []string{}
		return res, nil
	}
	replaced := make([]string, 0, len(out.Old))
	var deleted []string
	for _, o := range out.Old {
		replaced = append(replaced, o.ID)
		if !slices.ContainsFunc(out.Hist, func(h dgMemory) bool { return h.ID == o.ID }) {
			deleted = append(deleted, o.ID)
		}
	}
	t.indexed(e)
	// Closed versions stay searchable for recall_at_time, as update_fact leaves them.
	t.unindexText(deleted...)
	t.c.log.Info("document ingested", "tenant", t.Name, "id", e.id, "title", title,
		"chunks", len(e.chunks), "replaced", replaced, "took", time.Since(started).Round(time.Millisecond))
	return knowmind.StoreResult{MemoryID: e.id, ID: e.id, Title: title, Status: knowmind.StatusIndexed,
		ChunksWritten: len(e.chunks), EmbeddingProvider: t.provider(), ReplacedDocumentIDs: replaced}, nil
}

func (t *Tenant) recordFailedDocument(ctx context.Context, e *entry, cause error) (knowmind.StoreResult, error) {
	res, err := t.recordFailed(ctx, e, cause)
	res.ReplacedDocumentIDs = []string{}
	return res, err
}

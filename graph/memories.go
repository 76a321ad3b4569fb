package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// sameMemoryFilter selects the memory that makes a store idempotent: same
// normalised content, kind memory, indexed and current. A failed memory does
// not count (storing again retries it as a new memory), nor does a version
// superseded by update_fact (storing its old content again asserts it anew).
const sameMemoryFilter = `@filter(eq(Memory.kind, "memory") AND eq(Memory.status, "indexed") AND NOT has(Memory.valid_to))`

// findSameMemoryQuery is the cheap check before embedding anything.
const findSameMemoryQuery = `query q($sha: string) {
  same(func: eq(Memory.content_sha, $sha)) ` + sameMemoryFilter + ` {
    uid Memory.id Memory.title Memory.status
  }
}`

// storeMemoryUpsert writes the memory only if no same memory exists. Two
// concurrent stores of one content both write Memory.content_sha, which is
// @upsert: Dgraph aborts one, runTxn retries it, and the retry finds the
// other's memory. So 20 identical stores make one memory.
const storeMemoryUpsert = `query q($sha: string) {
  same(func: eq(Memory.content_sha, $sha)) ` + sameMemoryFilter + ` {
    s as uid Memory.id Memory.title Memory.status
  }
}`

// StoreMemory stores a new memory: validated, chunked (short memories are
// one chunk), embedded, and written with its chunks and vectors in one
// transaction. Content already stored returns the existing memory with
// Unchanged and writes nothing. Titles are not unique: same title, other
// content is another memory (versioning is UpdateFact's).
//
// If embedding or writing fails, the memory is kept with status failed and
// an ingest_failed error is returned with the result naming it.
func (t *Tenant) StoreMemory(ctx context.Context, in knowmind.StoreMemoryInput) (knowmind.StoreResult, error) {
	content, err := checkContent(in.Content)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	title, err := checkText("title", in.Title, knowmind.MaxTitleChars, false)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	memoryType, err := checkMemoryType(in.MemoryType)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	tags, err := checkTags(in.Tags)
	if err != nil {
		return knowmind.StoreResult{}, err
	}
	source, err := checkText("source", in.Source, knowmind.MaxSourceChars, false)
	if err != nil {
		return knowmind.StoreResult{}, err
	}

	sequence, position, err := checkSequence(in.Sequence, in.Position)
	if err != nil {
		return knowmind.StoreResult{}, err
	}

	ents, err := t.checkEntities(in.Entities, in.EntityTypes)
	if err != nil {
		return knowmind.StoreResult{}, err
	}

	e := newEntry(knowmind.KindMemory, title, content)
	e.memoryType, e.tags, e.source = memoryType, tags, source
	if in.OccurredAt != nil {
		e.at = *in.OccurredAt
	}
	e.sequence = sequence
	if position != nil {
		e.position, e.positioned = *position, true
	}

	var found struct{ Same []dgMemory }
	if err := t.queryVars(ctx, findSameMemoryQuery, map[string]string{"$sha": e.sha}, &found); err != nil {
		return knowmind.StoreResult{}, fmt.Errorf("store memory: look up content: %w", err)
	}
	if len(found.Same) > 0 {
		return t.unchanged(found.Same[0]), nil
	}

	if err := e.split(); err != nil {
		return knowmind.StoreResult{}, err
	}
	if err := t.implicitSequence(ctx, t.dg.NewReadOnlyTxn(), e, sequenceWriter(in), time.Now()); err != nil {
		return knowmind.StoreResult{}, err
	}
	if err := t.placeInSequences(ctx, t.dg.NewReadOnlyTxn(), []*entry{e}); err != nil {
		return knowmind.StoreResult{}, err
	}
	if err := t.embed(ctx, e); err != nil {
		return t.recordFailed(ctx, e, err)
	}
	if err := t.attachEntityUIDs(ctx, e, ents); err != nil {
		return t.recordFailed(ctx, e, err)
	}
	body, err := json.Marshal(e.node("m", nowString(), knowmind.StatusIndexed, ""))
	if err != nil {
		return t.recordFailed(ctx, e, err)
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		found.Same = nil
		resp, err := txn.Do(ctx, &api.Request{
			Query: storeMemoryUpsert,
			Vars:  map[string]string{"$sha": e.sha},
			Mutations: []*api.Mutation{{
				Cond:    `@if(eq(len(s), 0))`,
				SetJson: body,
			}},
		})
		if err != nil {
			return err
		}
		e.committed("m", resp.Uids)
		return json.Unmarshal(resp.Json, &found)
	})
	if err != nil {
		return t.recordFailed(ctx, e, fmt.Errorf("write memory: %w", err))
	}
	if len(found.Same) > 0 {
		return t.unchanged(found.Same[0]), nil
	}
	for _, en := range ents {
		e.entityRefs = append(e.entityRefs, knowmind.EntityRef{Type: en.Type, ID: en.ID})
	}
	e.candidates, e.checkConflicts = ents, true
	aw := t.afterWrite(ctx, e)
	res := knowmind.StoreResult{MemoryID: e.id, ID: e.id, Title: e.title, Status: knowmind.StatusIndexed,
		ChunksWritten: len(e.chunks), EmbeddingProvider: t.provider(), PMMatches: aw.pmMatches()}
	res.Entities, res.Conflicts = e.entityRefs, aw.conflicts
	return res, nil
}

const getMemoryQuery = `query q($id: string) {
  m(func: eq(Memory.id, $id)) {
    uid Memory.id Memory.kind Memory.title Memory.content Memory.memory_type Memory.tags
    Memory.source Memory.status Memory.content_sha Memory.created_at Memory.updated_at
    Memory.valid_from Memory.valid_to Memory.update_reason Memory.dates Memory.sequence Memory.position
    chunks: count(Memory.chunks)
  }
}`

// GetMemory returns the memory or document with this id (ENOTFOUND if the
// tenant has none), any version and status; Chunks counts its chunks.
func (t *Tenant) GetMemory(ctx context.Context, id string) (knowmind.Memory, error) {
	var out struct{ M []dgMemory }
	if err := t.queryVars(ctx, getMemoryQuery, map[string]string{"$id": id}, &out); err != nil {
		return knowmind.Memory{}, fmt.Errorf("get memory: %w", err)
	}
	if len(out.M) == 0 {
		return knowmind.Memory{}, knowmind.Errorf(knowmind.ENOTFOUND, "memory %q not found", id)
	}
	return out.M[0].domain(), nil
}

// queryVars runs a read-only query and decodes its JSON into out.
func (t *Tenant) queryVars(ctx context.Context, q string, vars map[string]string, out any) error {
	return queryInto(ctx, t.dg, q, vars, out)
}

// queryInto runs a read-only query on dg and decodes its JSON into out.
func queryInto(ctx context.Context, dg *dgo.Dgraph, q string, vars map[string]string, out any) error {
	resp, err := dg.NewReadOnlyTxn().QueryWithVars(ctx, q, vars)
	if err != nil {
		return err
	}
	return json.Unmarshal(resp.Json, out)
}

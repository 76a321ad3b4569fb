package graph

// The trash: knowmind_delete_note moves a note there (status trashed, so recall, search and
// lists skip it, and its chunks leave the BM25/vector statistics); only people restore or
// empty it (`knowmind trash list|restore|empty`). A note in the trash gives up its title key,
// so its title can be used again; restoring takes it back, or is refused with 409.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// TrashedNote is one entry of `knowmind trash list`.
type TrashedNote struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Project   string    `json:"project"`
	Path      string    `json:"path"`
	TrashedAt time.Time `json:"trashed_at"`
}

const trashNoteUpsert = `query q($id: string) {
  n as var(func: eq(Memory.id, $id)) @filter(eq(Memory.kind, "note") AND eq(Memory.status, "indexed"))
  matched(func: uid(n)) { uid }
}`

const listTrashQuery = `{
  t(func: eq(Memory.status, "trashed"), orderdesc: Note.trashed_at, first: 1000) @filter(eq(Memory.kind, "note")) {
    Memory.id Memory.title Note.path Note.trashed_at Note.project { Project.handle }
  }
}`

const restoreNoteUpsert = `query q($id: string, $key: string) {
  n as var(func: eq(Memory.id, $id)) @filter(eq(Memory.kind, "note") AND eq(Memory.status, "trashed"))
  d as var(func: eq(Note.title_key, $key))
  matched(func: uid(n)) { uid }
  dup(func: uid(d)) { Memory.id }
}`

// TrashNote moves a visible note to the trash; versionToken, when given, must be current.
func (t *Tenant) TrashNote(ctx context.Context, scope knowmind.NoteScope, id, versionToken string, actor knowmind.Actor) error {
	n, err := t.findNote(ctx, scope, id, "")
	if err != nil {
		return err
	}
	if versionToken != "" && versionToken != n.Version {
		return knowmind.VersionConflict(n.Version)
	}
	now := nowString()
	set, _ := json.Marshal(map[string]any{"uid": "uid(n)", "Memory.status": knowmind.StatusTrashed, "Note.trashed_at": now,
		"Memory.updated_at": now, "Note.updated_by": actor.Principal, "Note.updated_via": actor.Via, "Note.version": newVersionToken(n.Revision)})
	var out struct{ Matched []struct{ UID string } }
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Matched = nil
		resp, err := txn.Do(ctx, &api.Request{Query: trashNoteUpsert, Vars: map[string]string{"$id": n.ID},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(n), 1))`, SetJson: set,
				DelNquads: []byte("uid(n) <Note.title_key> * .")}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return fmt.Errorf("trash note: %w", err)
	}
	if len(out.Matched) == 0 {
		return &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "id", Message: fmt.Sprintf("note %q not found", n.ID)}
	}
	t.unindexText(n.ID)
	return nil
}

// ListTrash lists the tenant's notes in the trash, newest first (for people, via the CLI).
func (t *Tenant) ListTrash(ctx context.Context) ([]TrashedNote, error) {
	var out struct {
		T []struct {
			ID        string    `json:"Memory.id"`
			Title     string    `json:"Memory.title"`
			Path      string    `json:"Note.path"`
			TrashedAt time.Time `json:"Note.trashed_at"`
			Project   *struct {
				Handle string `json:"Project.handle"`
			} `json:"Note.project"`
		}
	}
	if err := t.queryVars(ctx, listTrashQuery, nil, &out); err != nil {
		return nil, fmt.Errorf("list trash: %w", err)
	}
	list := []TrashedNote{}
	for _, n := range out.T {
		tn := TrashedNote{ID: n.ID, Title: n.Title, Path: n.Path, TrashedAt: n.TrashedAt}
		if n.Project != nil {
			tn.Project = n.Project.Handle
		}
		list = append(list, tn)
	}
	return list, nil
}

// RestoreNote takes a note out of the trash (ECONFLICT if its title is taken meanwhile) and
// puts its chunks back into the statistics.
func (t *Tenant) RestoreNote(ctx context.Context, id string, actor knowmind.Actor) error {
	var cur struct{ N []dgNote }
	if err := t.queryVars(ctx, getNoteQuery, map[string]string{"$id": id}, &cur); err != nil {
		return fmt.Errorf("restore note: %w", err)
	}
	if len(cur.N) == 0 || cur.N[0].Status != knowmind.StatusTrashed {
		return knowmind.Errorf(knowmind.ENOTFOUND, "no note %q in the trash", id)
	}
	n := cur.N[0]
	key := titleKey(n.Class, n.Owner, n.projectUID(), n.Path, n.Title)
	set, _ := json.Marshal(map[string]any{"uid": "uid(n)", "Memory.status": knowmind.StatusIndexed, "Note.title_key": key,
		"Note.updated_by": actor.Principal, "Note.updated_via": actor.Via, "Note.actor_kind": actorKind(actor),
		"Note.version": newVersionToken(n.Revision)})
	var out struct {
		Matched []struct{ UID string }
		Dup     []struct {
			ID string `json:"Memory.id"`
		}
	}
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Matched, out.Dup = nil, nil
		resp, err := txn.Do(ctx, &api.Request{Query: restoreNoteUpsert, Vars: map[string]string{"$id": id, "$key": key},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(n), 1) AND eq(len(d), 0))`, SetJson: set,
				DelNquads: []byte("uid(n) <Note.trashed_at> * .")}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return fmt.Errorf("restore note: %w", err)
	}
	if len(out.Dup) > 0 {
		return knowmind.Errorf(knowmind.ECONFLICT, "another note titled %q exists in its folder: %s; rename one first", n.Title, out.Dup[0].ID)
	}
	if len(out.Matched) == 0 {
		return knowmind.Errorf(knowmind.ENOTFOUND, "no note %q in the trash", id)
	}
	return t.reindexStored(ctx, n.UID)
}

// reindexStored reads a memory's stored chunks and adds them to the statistics, as a sync does.
func (t *Tenant) reindexStored(ctx context.Context, uid string) error {
	memories, err := t.readChunks(ctx, t.dg.NewReadOnlyTxn(), uid)
	if err != nil {
		return err
	}
	for _, m := range memories {
		t.text.apply(t.Name, textOp{memoryID: m.ID, docs: m.analyse(ctx, t.c.log, t.recomputeVectors(), t.analyzeDoc)})
	}
	return nil
}

// emptyTrashUpsert deletes the notes in the trash with their chunks, revisions, forward
// references and every relation edge into them (see uploadDocumentUpsert for why one block per
// relation predicate).
func emptyTrashUpsert(relations []string) (string, string) {
	var q, del strings.Builder
	q.WriteString(`{
  o as var(func: eq(Memory.status, "trashed")) @filter(eq(Memory.kind, "note")) {
    c as Memory.chunks
    r as ~Revision.note
    f as ~Forward.from
  }
`)
	del.WriteString("uid(c) * * .\nuid(r) * * .\nuid(f) * * .\nuid(o) * * .\n")
	for i, r := range relations {
		fmt.Fprintf(&q, "  var(func: uid(o)) { in_%d as <~%s> }\n", i, r)
		fmt.Fprintf(&del, "uid(o) <%s> * .\nuid(in_%d) <%s> uid(o) .\n", r, i, r)
	}
	q.WriteString("  gone(func: uid(o)) { Memory.id }\n}")
	return q.String(), del.String()
}

// EmptyTrash deletes every note in the tenant's trash for good and returns their ids.
func (t *Tenant) EmptyTrash(ctx context.Context) ([]string, error) {
	q, del := emptyTrashUpsert(t.c.cfg.Relations)
	var out struct {
		Gone []struct {
			ID string `json:"Memory.id"`
		}
	}
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Gone = nil
		resp, err := txn.Do(ctx, &api.Request{Query: q, Mutations: []*api.Mutation{{DelNquads: []byte(del)}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("empty trash: %w", err)
	}
	ids := make([]string, len(out.Gone))
	for i, g := range out.Gone {
		ids[i] = g.ID
	}
	return ids, nil
}

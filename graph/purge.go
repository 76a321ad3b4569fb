package graph

// Purge: the only way history leaves the store. Writes never erase (a superseded version, a
// replaced document, a note's former body and a note in the trash all stay); a person reclaims
// the disk space with `knowmind purge --older-than 90d`, which erases what ended before the
// retention:
//
//   - versions superseded before the cutoff (a memory or document with a successor whose
//     valid_to lies before it), with their chunks and every relation edge into them — the
//     successor's SUPERSEDES link to them included;
//   - note revisions that stopped being current before the cutoff;
//   - notes in the trash since before the cutoff, as `knowmind trash empty` deletes them.
//
// A memory closed without a successor (its fact ended in the world) is no superseded version
// and stays. Each kind goes in batches of purgeBatch nodes, one transaction each; an
// interrupted purge leaves whole nodes, and the next run goes on.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
)

// PurgeResult counts what a purge erased, or with DryRun what it would erase.
type PurgeResult struct {
	Before       time.Time `json:"before"`
	DryRun       bool      `json:"dry_run"`
	Versions     int       `json:"versions"`
	Revisions    int       `json:"revisions"`
	TrashedNotes int       `json:"trashed_notes"`
}

// purgeBatch bounds the nodes one purge transaction erases (a document brings its chunks).
const purgeBatch = 100

// purgeKinds select, per kind, the nodes a purge erases ($cut: the cutoff; %s: a first: bound
// or nothing).
var purgeKinds = []struct{ name, sel string }{
	{"versions", `var(func: le(Memory.valid_to, $cut)%s) @filter(has(SUPERSEDED_BY) AND eq(Memory.kind, ["memory", "document"]))`},
	{"trashed notes", `var(func: le(Note.trashed_at, $cut)%s) @filter(eq(Memory.kind, "note") AND eq(Memory.status, "trashed"))`},
	{"revisions", `var(func: le(Revision.valid_to, $cut)%s) @filter(has(Revision.note))`},
}

// eraseUpsert deletes the nodes sel selects (o) with their chunks, revisions, forward
// references and every relation edge into them (one block per relation predicate, as
// emptyTrashUpsert), and names them in "gone".
func eraseUpsert(sel string, relations []string) (string, string) {
	var q, del strings.Builder
	fmt.Fprintf(&q, `query q($cut: string) {
  o as %s {
    c as Memory.chunks
    r as ~Revision.note
    f as ~Forward.from
  }
`, sel)
	del.WriteString("uid(c) * * .\nuid(r) * * .\nuid(f) * * .\nuid(o) * * .\n")
	for i, r := range relations {
		fmt.Fprintf(&q, "  var(func: uid(o)) { in_%d as <~%s> }\n", i, r)
		fmt.Fprintf(&del, "uid(o) <%s> * .\nuid(in_%d) <%s> uid(o) .\n", r, i, r)
	}
	q.WriteString("  gone(func: uid(o)) { uid }\n}")
	return q.String(), del.String()
}

// Purge erases what ended before cut (see above), or with dry only counts it. It never runs as
// part of a write: `knowmind purge` is its one caller.
func (t *Tenant) Purge(ctx context.Context, cut time.Time, dry bool) (PurgeResult, error) {
	res := PurgeResult{Before: cut.UTC(), DryRun: dry}
	vars := map[string]string{"$cut": formatTime(cut)}
	counts := []*int{&res.Versions, &res.TrashedNotes, &res.Revisions}
	for i, kind := range purgeKinds {
		count := counts[i]
		if dry {
			var out struct {
				N []struct{ Count int } `json:"n"`
			}
			q := fmt.Sprintf("query q($cut: string) {\n  o as %s\n  n(func: uid(o)) { count(uid) }\n}", fmt.Sprintf(kind.sel, ""))
			if err := t.queryVars(ctx, q, vars, &out); err != nil {
				return res, fmt.Errorf("purge: count %s: %w", kind.name, err)
			}
			if len(out.N) > 0 {
				*count = out.N[0].Count
			}
			continue
		}
		q, del := eraseUpsert(fmt.Sprintf(kind.sel, fmt.Sprintf(", first: %d", purgeBatch)), t.c.cfg.Relations)
		for {
			var out struct {
				Gone []struct{ UID string } `json:"gone"`
			}
			err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
				out.Gone = nil
				resp, err := txn.Do(ctx, &api.Request{Query: q, Vars: vars, Mutations: []*api.Mutation{{DelNquads: []byte(del)}}})
				if err != nil {
					return err
				}
				return json.Unmarshal(resp.Json, &out)
			})
			if err != nil {
				return res, fmt.Errorf("purge %s: %w", kind.name, err)
			}
			*count += len(out.Gone)
			if len(out.Gone) < purgeBatch {
				break
			}
		}
	}
	if !dry && res.Versions+res.TrashedNotes > 0 {
		t.relationsWritten() // edges into the erased nodes are gone
	}
	return res, nil
}

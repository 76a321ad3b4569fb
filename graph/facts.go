package graph

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

// Facts are versioned bi-temporally. Valid time: Memory.valid_from and
// Memory.valid_to say when a statement held in the world ("what was valid
// at T"). Transaction time: Memory.created_at says when the store learned
// it ("what did the store know at T"); a version's record never changes
// afterwards except for valid_to and updated_at when it is superseded.
//
// An update closes the target (valid_to = now) and adds the new version
// (valid_from = now, the same instant) with an edge new -SUPERSEDES-> old
// and its inverse old -SUPERSEDED_BY-> new, each with the facets id
// (EdgeID), created_at, valid_from and inverse (false on SUPERSEDES, true on
// the materialised SUPERSEDED_BY, as link writes them). The target's open
// relations move to the new version at the same instant (versions.go).
// Nothing is deleted. Only the current version (no valid_to) can be updated,
// so history is a chain, never a tree.

// Relation types written by UpdateFact (declared in shapes/default.yaml).
const (
	RelSupersedes   = "SUPERSEDES"
	RelSupersededBy = "SUPERSEDED_BY"
)

// updateTargetQuery reads the target and counts its open SUPERSEDED_BY
// edges: stores written before knowmind_link refused history edges may hold
// "X SUPERSEDES target" without the target's valid_to, and such a target is
// superseded all the same (a second successor would fork the history; the
// shapes cap SUPERSEDED_BY at one).
const updateTargetQuery = `query q($id: string) {
  target(func: eq(Memory.id, $id)) {
    uid Memory.id Memory.kind Memory.memory_type Memory.category Memory.tags Memory.source Memory.valid_to
    Memory.sequence Memory.position
    Memory.entities { uid }
    Memory.extractor Memory.confidence Memory.reviewed_at
    successors: count(SUPERSEDED_BY @facets(` + openFacetFilter + `))
  }
}`

// currentVersionQuery follows the successors of a version to the newest.
const currentVersionQuery = `query q($id: string) {
  chain(func: eq(Memory.id, $id)) @recurse(depth: 1000, loop: false) {
    Memory.id
    SUPERSEDED_BY
  }
}`

// UpdateFact supersedes the memory TargetID with a new version holding the
// new title and content and the target's memory_type, tags and source, in
// one transaction (see above). Errors: EINVALID for a missing field or a note (refuseNote),
// too_large for content over the limit, ENOTFOUND for an unknown target,
// ECONFLICT (Data["current_version_id"]) when the target is already
// superseded, also when a concurrent update of it won, and ingest_failed
// when the new version cannot be embedded or written (then nothing changed).
func (t *Tenant) UpdateFact(ctx context.Context, in knowmind.UpdateFactInput) (knowmind.UpdateFactResult, error) {
	defer t.relationsWritten() // it may write a relation's first edge: recall asks again (linkedrelations.go)
	targetID, err := checkText("target_id", in.TargetID, knowmind.MaxIDChars, true)
	if err != nil {
		return knowmind.UpdateFactResult{}, err
	}
	title, err := checkText("new_title", in.NewTitle, knowmind.MaxTitleChars, true)
	if err != nil {
		return knowmind.UpdateFactResult{}, err
	}
	if strings.TrimSpace(in.NewContent) == "" {
		return knowmind.UpdateFactResult{}, knowmind.InvalidParam("new_content", "new_content is required")
	}
	content, err := checkContent(in.NewContent)
	if err != nil {
		return knowmind.UpdateFactResult{}, err
	}
	reason, err := checkText("update_reason", in.UpdateReason, knowmind.MaxUpdateReasonChars, false)
	if err != nil {
		return knowmind.UpdateFactResult{}, err
	}

	// A note's kind never changes, so this check outside the transaction holds inside it.
	if err := t.refuseNote(ctx, "target_id", targetID); err != nil {
		return knowmind.UpdateFactResult{}, err
	}
	// Checked before embedding, so a bad target costs no embedding; checked
	// again inside the transaction, which decides.
	target, err := currentTarget(ctx, t.dg.NewReadOnlyTxn(), targetID)
	if err != nil {
		return knowmind.UpdateFactResult{}, err
	}
	e := newEntry(target.Kind, title, content)
	e.memoryType, e.tags, e.source, e.updateReason = target.MemoryType, target.Tags, target.Source, reason
	e.category = target.Category                         // a captured fact's new version stays in its category
	if target.Sequence != "" && target.Position != nil { // and in its place in a sequence
		e.sequence, e.position, e.positioned = target.Sequence, *target.Position, true
	}
	for _, ent := range target.Entities { // the new version is about what the old one was about
		e.entityUIDs = append(e.entityUIDs, ent.UID)
	}
	if err := e.split(); err != nil {
		return knowmind.UpdateFactResult{}, err
	}
	if err := t.embed(ctx, e); err != nil {
		t.c.log.Error("update fact: embedding failed", "tenant", t.Name, "target", targetID, "err", err)
		return knowmind.UpdateFactResult{}, knowmind.Internal(knowmind.ReasonIngestFailed,
			"the new version could not be indexed; nothing was changed")
	}

	res := knowmind.UpdateFactResult{
		OldMemoryID:    targetID,
		NewMemoryID:    e.id,
		SupersedesEdge: EdgeID(e.id, RelSupersedes, targetID),
	}
	inverseEdge := EdgeID(targetID, RelSupersededBy, e.id)
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		target, err := currentTarget(ctx, txn, targetID)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		stamp := now.Format(time.RFC3339Nano)
		// Re-setting the target's Memory.id (@upsert) makes this write
		// conflict with any concurrent update, link or unlink of the target
		// (see relations.go, "Concurrency"); valid_to alone would only
		// conflict with other updates.
		closed := map[string]any{
			"uid":               target.UID,
			"Memory.id":         targetID,
			"Memory.valid_to":   stamp,
			"Memory.updated_at": stamp,
		}
		body, err := json.Marshal([]any{closed, e.node("new", stamp, knowmind.StatusIndexed, "")})
		if err != nil {
			return err
		}
		resp, err := txn.Mutate(ctx, &api.Mutation{SetJson: body})
		if err != nil {
			return err
		}
		newUID := resp.Uids["new"]
		e.committed("new", resp.Uids)
		if newUID == "" {
			return fmt.Errorf("update fact: no uid assigned to the new version")
		}
		// The edges as N-Quads, so created_at and valid_from are datetime
		// facets like those link writes; "inverse" marks the materialised
		// direction (see relations.go).
		edges := fmt.Sprintf(
			"<%[1]s> <%[3]s> <%[2]s> (id=%[5]q, created_at=%[7]s, valid_from=%[7]s, inverse=false) .\n"+
				"<%[2]s> <%[4]s> <%[1]s> (id=%[6]q, created_at=%[7]s, valid_from=%[7]s, inverse=true) .\n",
			newUID, target.UID, RelSupersedes, RelSupersededBy, res.SupersedesEdge, inverseEdge, stamp)
		if _, err = txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(edges)}); err != nil {
			return err
		}
		_, err = t.moveRelations(ctx, txn, []versionRef{{UID: target.UID, ID: targetID}}, versionRef{UID: newUID, ID: e.id}, true, now, now)
		return err
	})
	if err != nil {
		if knowmind.AsError(err) != nil {
			return knowmind.UpdateFactResult{}, err
		}
		t.c.log.Error("update fact: write failed", "tenant", t.Name, "target", targetID, "err", err)
		return knowmind.UpdateFactResult{}, knowmind.Internal(knowmind.ReasonIngestFailed,
			"the new version could not be written; nothing was changed")
	}
	res.PMMatches = t.afterWrite(ctx, e).pmMatches()
	t.supersededCapture(ctx, target)
	return res, nil
}

type querier interface {
	QueryWithVars(ctx context.Context, q string, vars map[string]string) (*api.Response, error)
}

// currentTarget reads the version to update: ENOTFOUND when unknown,
// ECONFLICT naming the newest version when it is superseded.
func currentTarget(ctx context.Context, q querier, id string) (dgMemory, error) {
	resp, err := q.QueryWithVars(ctx, updateTargetQuery, map[string]string{"$id": id})
	if err != nil {
		return dgMemory{}, fmt.Errorf("update fact: read target: %w", err)
	}
	var out struct{ Target []dgMemory }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return dgMemory{}, err
	}
	if len(out.Target) == 0 {
		return dgMemory{}, knowmind.Errorf(knowmind.ENOTFOUND, "memory %q not found", id)
	}
	target := out.Target[0]
	if target.ValidTo == nil && target.Successors == 0 {
		return target, nil
	}
	current, err := currentVersion(ctx, q, id)
	if err != nil {
		return dgMemory{}, err
	}
	if current == "" || current == id {
		until := "now"
		if target.ValidTo != nil {
			until = target.ValidTo.UTC().Format("2006-01-02T15:04:05Z07:00")
		}
		e := knowmind.Errorf(knowmind.ECONFLICT, "memory %q is no longer current (valid until %s) and has no successor", id, until)
		return dgMemory{}, e
	}
	e := knowmind.Errorf(knowmind.ECONFLICT, "memory %q is already superseded; update the current version %q", id, current)
	e.Data = map[string]any{"current_version_id": current}
	return dgMemory{}, e
}

// currentVersion returns the id of the newest version in id's chain.
func currentVersion(ctx context.Context, q querier, id string) (string, error) {
	resp, err := q.QueryWithVars(ctx, currentVersionQuery, map[string]string{"$id": id})
	if err != nil {
		return "", fmt.Errorf("update fact: read version chain: %w", err)
	}
	type link struct {
		ID   string            `json:"Memory.id"`
		Next []json.RawMessage `json:"SUPERSEDED_BY"`
	}
	var out struct{ Chain []json.RawMessage }
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return "", err
	}
	if len(out.Chain) == 0 {
		return "", nil
	}
	raw, current := out.Chain[0], ""
	for raw != nil {
		var l link
		if err := json.Unmarshal(raw, &l); err != nil {
			return "", err
		}
		if l.ID != "" {
			current = l.ID
		}
		raw = nil
		if len(l.Next) > 0 {
			raw = l.Next[0]
		}
	}
	return current, nil
}

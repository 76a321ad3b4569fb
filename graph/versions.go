package graph

// Versions and their relations. A memory's versions form a chain over
// SUPERSEDES / SUPERSEDED_BY (facts.go); the typed relations of the fact
// belong to whichever version is current. So when a version is superseded
// (knowmind_update_fact, a document replaced by knowmind_upload_document),
// every open relation edge of the old version — outgoing and the peer's
// materialised edge back — is closed at that instant (valid_to) and written
// again on the new version from the same instant (valid_from), with the same
// type, direction flag, confidence, created_by and reason, in the
// transaction that supersedes it. A point-in-time read before the update
// sees the old version's wiring, one after it the new version's; nothing is
// erased (see relations.go's bi-temporal rule).
//
// Stores written before relations moved with their version are migrated
// once when a tenant is opened (migrateVersionRelations): the relations of
// each superseded version move along its chain, each at the instant its
// version was superseded.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/shapes"
)

// versionRelationsQuery reads the open relation edges of the superseded
// versions (uids checked against uidPattern) with every facet, each peer's
// materialised edge back, and the relations the new version already holds
// (a migration may find some there; a fresh version has none).
var versionRelationsQuery = template.Must(template.New("versionRelations").Parse(`{
  old(func: uid({{.Old}})) {
    uid Memory.id
{{- range .Rels}}
    <{{.Name}}> @facets({{$.Open}}) @facets({{$.Facets}}) {
      uid Memory.id
      back: <{{.Inverse}}> @facets({{$.Open}}) @facets({{$.Facets}}) @filter(uid({{$.Old}})) { uid }
    }
{{- end}}
  }
{{- if .New}}
  new(func: uid({{.New}})) {
    uid
{{- range .Rels}}
    <{{.Name}}> @facets({{$.Open}}) { uid }
{{- end}}
  }
{{- end}}
}`))

// versionEdgeCountQuery counts the open relation edges of the superseded versions, before
// moveRelations reads them (one count per predicate: c0, c1, …).
var versionEdgeCountQuery = template.Must(template.New("versionEdgeCount").Parse(`{
  old(func: uid({{.Old}})) {
{{- range $i, $r := .Rels}}
    c{{$i}}: count(<{{$r.Name}}> @facets({{$.Open}}))
{{- end}}
  }
}`))

// DefaultMaxMovedRelations bounds the open relations one supersede moves to the new version in
// its transaction (Config.MaxMovedRelations); a version holding more is refused before
// anything is written. Each relation is four edge writes (the old edge and its way back
// closed, both written again on the new version); the README (Versions and time) has what a move of this
// many costs.
const DefaultMaxMovedRelations = 10000

func (t *Tenant) maxMovedRelations() int {
	if n := t.c.cfg.MaxMovedRelations; n > 0 {
		return n
	}
	return DefaultMaxMovedRelations
}

// checkMovable refuses, with too_large and nothing written, to supersede versions holding more
// open relations than one transaction moves: the move is all or nothing, so a reader never sees
// a version with part of its relations.
func (t *Tenant) checkMovable(ctx context.Context, txn *dgo.Txn, old []versionRef, oldUIDs []string, rels []shapes.Relation) error {
	var b strings.Builder
	if err := versionEdgeCountQuery.Execute(&b, struct {
		Old, Open string
		Rels      []shapes.Relation
	}{strings.Join(oldUIDs, ", "), openFacetFilter, rels}); err != nil {
		return err
	}
	resp, err := txn.Query(ctx, b.String())
	if err != nil {
		return fmt.Errorf("move relations: count: %w", err)
	}
	var out struct {
		Old []map[string]int `json:"old"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return fmt.Errorf("move relations: decode count: %w", err)
	}
	total := 0
	for _, node := range out.Old {
		for _, n := range node {
			total += n
		}
	}
	if limit := t.maxMovedRelations(); total > limit {
		ids := make([]string, len(old))
		for i, o := range old {
			ids[i] = o.ID
		}
		e := knowmind.Internal(knowmind.ReasonTooLarge, "%s holds %d open relations; a new version takes at most %d with it "+
			"in one step, so nothing was changed: unlink relations it no longer needs, or store the new fact as a new memory "+
			"and link it", strings.Join(ids, ", "), total, limit)
		e.Data = map[string]any{"relations": total, "max_relations": limit}
		return e
	}
	return nil
}

const allEdgeFacets = `id: id, created_at: created_at, valid_from: valid_from, valid_to: valid_to, inverse: inverse, confidence: confidence, created_by: created_by, reason: reason`

// versionRef names one version by uid and Memory.id.
type versionRef struct {
	UID string `json:"uid"`
	ID  string `json:"Memory.id"`
}

// movableRelations are the relation predicates whose edges follow the
// current version, each with its inverse: every relation of the tenant but
// version history, which stays where update_fact wrote it.
func (t *Tenant) movableRelations() []shapes.Relation {
	var out []shapes.Relation
	for _, name := range t.c.cfg.Relations {
		if shapes.ValidName(name) != nil || slices.Contains(historyRelations, name) {
			continue // never splice anything else into DQL
		}
		r, ok := t.c.cfg.Shapes.Relation(name)
		if !ok || shapes.ValidName(r.Inverse) != nil || !slices.Contains(t.c.cfg.Relations, r.Inverse) {
			r = shapes.Relation{Name: name, Inverse: name}
		}
		out = append(out, shapes.Relation{Name: r.Name, Inverse: r.Inverse})
	}
	return out
}

// moveRelations closes, in txn, the open relation edges of the versions old
// at validFrom and writes them again on the version to (see above). Edges
// between two of the versions involved stay as they are; a relation the new
// version already holds to the same peer is kept and only the old edge is
// closed. created is the transaction time of the new edge records (now);
// validFrom is the instant the old versions were superseded. The peers'
// Memory.id is set again to its value, so a concurrent link or unlink of a
// peer conflicts with this write (relations.go, "Concurrency").
func (t *Tenant) moveRelations(ctx context.Context, txn *dgo.Txn, old []versionRef, to versionRef, fresh bool, created, validFrom time.Time) (int, error) {
	var oldUIDs []string
	for _, o := range old {
		if !uidPattern.MatchString(o.UID) {
			return 0, fmt.Errorf("move relations: bad uid %q", o.UID)
		}
		oldUIDs = append(oldUIDs, o.UID)
	}
	if len(oldUIDs) == 0 {
		return 0, nil
	}
	if !uidPattern.MatchString(to.UID) {
		return 0, fmt.Errorf("move relations: bad uid %q", to.UID)
	}
	rels := t.movableRelations()
	if fresh { // a write superseding now; the one-time migration moves what an old store holds
		if err := t.checkMovable(ctx, txn, old, oldUIDs, rels); err != nil {
			return 0, err
		}
	}
	newUID := to.UID
	if fresh {
		newUID = "" // nothing to read: the version was created in this transaction
	}
	var b strings.Builder
	if err := versionRelationsQuery.Execute(&b, struct {
		Old, New, Open, Facets string
		Rels                   []shapes.Relation
	}{strings.Join(oldUIDs, ", "), newUID, openFacetFilter, allEdgeFacets, rels}); err != nil {
		return 0, err
	}
	resp, err := txn.Query(ctx, b.String())
	if err != nil {
		return 0, fmt.Errorf("move relations: read: %w", err)
	}
	var out struct {
		Old []map[string]json.RawMessage `json:"old"`
		New []map[string]json.RawMessage `json:"new"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return 0, fmt.Errorf("move relations: decode: %w", err)
	}
	held := map[string]bool{} // rel|peer uid the new version already has open
	for _, n := range out.New {
		for _, r := range rels {
			var peers []struct {
				UID string `json:"uid"`
			}
			if raw, ok := n[r.Name]; ok {
				if err := json.Unmarshal(raw, &peers); err != nil {
					return 0, fmt.Errorf("move relations: decode %s: %w", r.Name, err)
				}
			}
			for _, p := range peers {
				held[r.Name+"|"+p.UID] = true
			}
		}
	}
	involved := map[string]bool{to.UID: true}
	for _, o := range oldUIDs {
		involved[o] = true
	}
	type peerEdge struct {
		edgeFacets
		ID   string       `json:"Memory.id"`
		Back []edgeFacets `json:"back"`
	}
	var nquads []string
	locks := map[string]string{} // peer uid → Memory.id
	moved := 0
	for _, node := range out.Old {
		var self versionRef
		if err := json.Unmarshal(node["uid"], &self.UID); err != nil {
			return 0, fmt.Errorf("move relations: decode: %w", err)
		}
		if raw, ok := node["Memory.id"]; ok {
			_ = json.Unmarshal(raw, &self.ID)
		}
		for _, r := range rels {
			raw, ok := node[r.Name]
			if !ok {
				continue
			}
			var peers []peerEdge
			if err := json.Unmarshal(raw, &peers); err != nil {
				return 0, fmt.Errorf("move relations: decode %s: %w", r.Name, err)
			}
			for _, p := range peers {
				if p.ID == "" || !uidPattern.MatchString(p.UID) || involved[p.UID] {
					continue // not a memory, or an edge within the chain
				}
				// A relation the new version holds already (a migration) keeps
				// its own edges; the old ones are closed all the same.
				reopen := !held[r.Name+"|"+p.UID]
				held[r.Name+"|"+p.UID] = true
				nquads = append(nquads, closeNQuad(self.UID, r.Name, p.UID, &p.edgeFacets, EdgeID(self.ID, r.Name, p.ID), validFrom))
				if reopen {
					nquads = append(nquads, edgeNQuadMeta(to.UID, r.Name, p.UID, EdgeID(to.ID, r.Name, p.ID),
						created, validFrom, nil, p.Inverse, p.meta()))
					moved++
				}
				for i := range p.Back {
					back := &p.Back[i]
					if back.UID != self.UID {
						continue
					}
					nquads = append(nquads, closeNQuad(p.UID, r.Inverse, self.UID, back, EdgeID(p.ID, r.Inverse, self.ID), validFrom))
					if reopen {
						nquads = append(nquads, edgeNQuadMeta(p.UID, r.Inverse, to.UID, EdgeID(p.ID, r.Inverse, to.ID),
							created, validFrom, nil, back.Inverse, back.meta()))
					}
				}
				locks[p.UID] = p.ID
			}
		}
	}
	if len(nquads) == 0 {
		return 0, nil
	}
	lock := make([]map[string]string, 0, len(locks))
	for uid, id := range locks {
		lock = append(lock, map[string]string{"uid": uid, "Memory.id": id})
	}
	sort.Slice(lock, func(i, j int) bool { return lock[i]["uid"] < lock[j]["uid"] })
	lockJSON, err := json.Marshal(lock)
	if err != nil {
		return 0, err
	}
	if _, err := txn.Mutate(ctx, &api.Mutation{SetJson: lockJSON}); err != nil {
		return 0, fmt.Errorf("move relations: %w", err)
	}
	if _, err := txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(strings.Join(nquads, "\n"))}); err != nil {
		return 0, fmt.Errorf("move relations: %w", err)
	}
	return moved, nil
}

// relationsSchemaVersion is the tenant schema version from which relations
// follow the current version; a tenant recorded below it is migrated once.
const relationsSchemaVersion = 8

// supersededVersionsQuery lists the versions that have a successor, with the
// instant each was superseded and its successor, for the one-time migration.
const supersededVersionsQuery = `{
  v(func: has(SUPERSEDED_BY)) {
    uid Memory.id Memory.valid_to Memory.updated_at
    next: SUPERSEDED_BY @facets(` + openFacetFilter + `) @facets(valid_from: valid_from) { uid Memory.id }
  }
}`

// migrateVersionRelations moves the open relations of every superseded
// version to its successor, at the instant it was superseded (its valid_to;
// the SUPERSEDED_BY edge's valid_from when it has none), oldest first, so a
// relation of the first version of a chain walks along it to the current one
// and a point-in-time read sees it on the version current then. One
// transaction per version; it is idempotent (a moved relation is closed and
// not read again), so an interrupted migration is completed by the next open.
func (t *Tenant) migrateVersionRelations(ctx context.Context) (int, error) {
	var out struct {
		V []struct {
			versionRef
			ValidTo   *time.Time `json:"Memory.valid_to"`
			UpdatedAt *time.Time `json:"Memory.updated_at"`
			Next      []struct {
				versionRef
				ValidFrom *time.Time `json:"valid_from"`
			} `json:"next"`
		}
	}
	if err := t.queryVars(ctx, supersededVersionsQuery, nil, &out); err != nil {
		return 0, fmt.Errorf("migrate version relations: %w", err)
	}
	type step struct {
		from, to versionRef
		at       time.Time
	}
	var steps []step
	for _, v := range out.V {
		if len(v.Next) == 0 || v.Next[0].UID == "" {
			continue
		}
		var at time.Time
		switch {
		case v.ValidTo != nil:
			at = *v.ValidTo
		case v.Next[0].ValidFrom != nil:
			at = *v.Next[0].ValidFrom
		case v.UpdatedAt != nil:
			at = *v.UpdatedAt
		default:
			continue
		}
		steps = append(steps, step{from: v.versionRef, to: v.Next[0].versionRef, at: at})
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].at.Before(steps[j].at) })
	total := 0
	for _, s := range steps {
		moved := 0
		err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
			n, err := t.moveRelations(ctx, txn, []versionRef{s.from}, s.to, false, time.Now().UTC(), s.at)
			moved = n
			return err
		})
		total += moved
		if err != nil {
			return total, fmt.Errorf("migrate version relations of %s: %w", s.from.ID, err)
		}
	}
	if total > 0 {
		t.relationsWritten()
	}
	return total, nil
}

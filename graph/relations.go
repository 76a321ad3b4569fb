package graph

// Typed relations between memories: knowmind_link, knowmind_unlink and
// knowmind_list_relations.
//
// # Edges in Dgraph
//
// A link A --FOR_CLIENT--> B is two real edges, written in one transaction:
//
//	<A> <FOR_CLIENT>   <B> (id="edge_…", created_at=…, valid_from=…, inverse=false) .
//	<B> <HAS_WORKSHOP> <A> (id="edge_…", created_at=…, valid_from=…, inverse=true) .
//
// Every relation type (inverses included) is a [uid] @reverse @count
// predicate generated from shapes/. The facet "inverse" marks the
// materialised direction, so list_relations shows each link once per end
// (outgoing FOR_CLIENT on A, incoming FOR_CLIENT on B) instead of also
// listing B's HAS_WORKSHOP as a second, outgoing edge. A symmetric relation
// (RELATES_TO) is the same predicate both ways; its two edges still have
// different ids (EdgeID hashes the direction).
//
// # Bi-temporal rule
//
//   - An edge is open (current) while it has no valid_to facet. link opens it
//     with valid_from = now; created_at is when the edge record was first
//     written and never changes.
//   - unlink never erases: it rewrites both edges with valid_to = now (Dgraph
//     replaces all facets of an edge when it is set again, so every write
//     carries the full facet set). list_relations (and recall) show only open
//     edges; a point-in-time read at T sees an edge when
//     valid_from <= T < valid_to (valid_to absent = still open). A second
//     unlink of a closed edge is ENOTFOUND.
//   - Re-linking a closed edge reopens the same record: valid_from = now,
//     valid_to removed, same edge ids. Dgraph keeps one edge per
//     (node, predicate, node), so only the latest interval survives; the
//     earlier one is lost. Memory versions (update_fact) keep full history;
//     an edge keeps one interval, the current or the last closed one.
//   - SUPERSEDES / SUPERSEDED_BY are version history written by
//     knowmind_update_fact: link and unlink refuse them with ECONSTRAINT
//     (constraint "history"), so history is append-only.
//   - The DQL filter for "open" is @facets(NOT le(valid_to, "9999-…")): a
//     facet filter on a missing facet is false, so NOT … holds exactly for
//     edges without valid_to. For a point in time T:
//     @facets(le(valid_from, T) AND NOT le(valid_to, T)).
//
// # Concurrency
//
// link and unlink read both nodes and their edges, decide in Go (the shapes
// check needs the node classes and open-edge counts), then write in the same
// transaction. Dgraph only detects write-write conflicts, so each write also
// re-sets Memory.id of both nodes to its current value: Memory.id is @upsert,
// so two transactions touching the same node conflict, one is aborted and
// runTxn retries it against the new state. That serialises every edge change
// of a node (cardinality checks included), at the price of retries on hub
// nodes under concurrent linking.
//
// Self-links (from_id == to_id) are refused as invalid parameters.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/shapes"
)

// openFacetFilter keeps edges without valid_to (see the bi-temporal rule).
const openFacetFilter = `NOT le(valid_to, "9999-12-31T23:59:59Z")`

// historyRelations are version-history edges owned by update_fact: unlink
// refuses them.
var historyRelations = []string{"SUPERSEDES", "SUPERSEDED_BY"}

// IsHistoryRelation reports whether rel is version history, which only
// UpdateFact writes (knowmind_link refuses it).
func IsHistoryRelation(rel string) bool { return slices.Contains(historyRelations, rel) }

// edgePairQuery reads both ends of a link, the edge each way between them
// and, where a max_count applies, how many open edges of the type each end
// already has. Predicate names come from the shapes set (UPPER_SNAKE,
// validated), ids travel as variables.
var edgePairQuery = template.Must(template.New("edgePair").Parse(`query edgePair($from: string, $to: string) {
  from(func: eq(Memory.id, $from), first: 1) {
    uid
    Memory.kind
    Memory.memory_type
    Memory.tags
    Memory.status Note.class Note.owner Note.project { uid Project.handle Project.aliases }
    successors: count(SUPERSEDED_BY)
    edge: <{{.Rel}}> @filter(eq(Memory.id, $to)) @facets(id: id, created_at: created_at, valid_from: valid_from, valid_to: valid_to, inverse: inverse, confidence: confidence, created_by: created_by, reason: reason) { uid }
{{- if .CountRel}}
    open: count(<{{.Rel}}> @facets({{.Open}}))
{{- end}}
  }
  to(func: eq(Memory.id, $to), first: 1) {
    uid
    Memory.kind
    Memory.memory_type
    Memory.tags
    Memory.status Note.class Note.owner Note.project { uid Project.handle Project.aliases }
    successors: count(SUPERSEDED_BY)
    edge: <{{.Inverse}}> @filter(eq(Memory.id, $from)) @facets(id: id, created_at: created_at, valid_from: valid_from, valid_to: valid_to, inverse: inverse, confidence: confidence, created_by: created_by, reason: reason) { uid }
{{- if .CountInverse}}
    open: count(<{{.Inverse}}> @facets({{.Open}}))
{{- end}}
  }
}`))

// relationsQuery lists every open edge of one memory over all relation
// predicates, each with the peer's id and title and the edge's facets.
var relationsQuery = template.Must(template.New("relations").Parse(`query relations($id: string) {
  node(func: eq(Memory.id, $id), first: 1) {
    uid
{{- range .Rels}}
    <{{.}}> @facets({{$.Open}}) @facets(id: id, created_at: created_at, valid_from: valid_from, inverse: inverse) { Memory.id Memory.title }
{{- end}}
  }
}`))

// edgeFacets is one edge as read back: the peer's uid plus the facets.
type edgeFacets struct {
	UID        string     `json:"uid"`
	ID         string     `json:"id"`
	CreatedAt  *time.Time `json:"created_at"`
	ValidFrom  *time.Time `json:"valid_from"`
	ValidTo    *time.Time `json:"valid_to"`
	Inverse    bool       `json:"inverse"`
	Confidence *float64   `json:"confidence"`
	CreatedBy  string     `json:"created_by"`
	Reason     string     `json:"reason"`
}

func (e *edgeFacets) meta() knowmind.EdgeMeta {
	if e == nil {
		return knowmind.EdgeMeta{}
	}
	return knowmind.EdgeMeta{Confidence: e.Confidence, CreatedBy: e.CreatedBy, Reason: e.Reason}
}

func (e *edgeFacets) isOpen() bool { return e != nil && e.ValidTo == nil }

// linkEnd is one end of a link as edgePairQuery returns it; a note's fields say who sees it.
type linkEnd struct {
	dgNote
	UID        string       `json:"uid"`
	Kind       string       `json:"Memory.kind"`
	MemoryType string       `json:"Memory.memory_type"`
	Tags       []string     `json:"Memory.tags"`
	Edge       []edgeFacets `json:"edge"`
	Open       int          `json:"open"`
	Successors int          `json:"successors"` // newer versions: a superseded version takes no new link
}

func (n *linkEnd) edge() *edgeFacets {
	if len(n.Edge) == 0 {
		return nil
	}
	return &n.Edge[0]
}

func (n *linkEnd) hidden(scope *knowmind.NoteScope) bool {
	return n.Kind == knowmind.KindNote && n.hiddenFrom(scope)
}

func (n *linkEnd) classes() []string { return shapes.NodeClasses(n.Kind, n.MemoryType, n.Tags) }

// Link writes fromID --relType--> toID and its inverse in one transaction
// after checking the shapes (classes of both ends, max_count both ways).
// Linking an open edge again writes nothing and returns the same ids;
// linking a closed (unlinked) edge reopens it. An end the caller may not
// see is not found (visibility.go); two notes must share their project.
func (t *Tenant) Link(ctx context.Context, fromID, toID, relType string) (knowmind.LinkResult, error) {
	return t.LinkWith(ctx, fromID, toID, relType, knowmind.EdgeMeta{})
}

// LinkWith is Link recording meta on both edges (facets confidence, created_by, reason).
// Linking an open edge again with other meta rewrites it.
func (t *Tenant) LinkWith(ctx context.Context, fromID, toID, relType string, meta knowmind.EdgeMeta) (knowmind.LinkResult, error) {
	return t.link(ctx, callerScope(ctx), fromID, toID, relType, meta)
}

// link is LinkWith for scope; nil links for the service itself (a forward reference
// resolving, whoever created its target).
func (t *Tenant) link(ctx context.Context, scope *knowmind.NoteScope, fromID, toID, relType string, meta knowmind.EdgeMeta) (knowmind.LinkResult, error) {
	defer t.relationsWritten() // it may write a relation's first edge: recall asks again (linkedrelations.go)
	if c := meta.Confidence; c != nil && (*c < 0 || *c > 1) {
		return knowmind.LinkResult{}, knowmind.InvalidParam("confidence", "confidence must lie in 0..1")
	}
	meta.Reason = cleanReason(meta.Reason)
	if utf8.RuneCountInString(meta.Reason) > knowmind.MaxEdgeReasonChars {
		return knowmind.LinkResult{}, knowmind.InvalidParam("reason", "metadata.reason exceeds %d characters", knowmind.MaxEdgeReasonChars)
	}
	if utf8.RuneCountInString(meta.CreatedBy) > knowmind.MaxIDChars {
		return knowmind.LinkResult{}, fmt.Errorf("link: created_by exceeds %d characters", knowmind.MaxIDChars)
	}
	rel, err := t.relationFor(fromID, toID, relType)
	if err != nil {
		return knowmind.LinkResult{}, err
	}
	if err := historyRefused(rel.Name, "written"); err != nil {
		return knowmind.LinkResult{}, err
	}
	q, err := pairQuery(t.c.cfg.Shapes, rel, true)
	if err != nil {
		return knowmind.LinkResult{}, err
	}
	set := t.c.cfg.Shapes
	var res knowmind.LinkResult
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		src, dst, err := readPair(ctx, txn, q, scope, fromID, toID)
		if err != nil {
			return err
		}
		if err := refuseSuperseded(ctx, txn, src, "from_id", fromID); err != nil {
			return err
		}
		if err := refuseSuperseded(ctx, txn, dst, "to_id", toID); err != nil {
			return err
		}
		if src.Kind == knowmind.KindNote && dst.Kind == knowmind.KindNote && src.projectUID() != dst.projectUID() {
			return knowmind.InvalidParam("to_id", "to_id is a note of another project: links never cross projects")
		}
		now := time.Now().UTC()
		fwd, bwd := src.edge(), dst.edge()
		res = knowmind.LinkResult{
			EdgeID:        storedOr(fwd, EdgeID(fromID, rel.Name, toID)),
			InverseEdgeID: storedOr(bwd, EdgeID(toID, rel.Inverse, fromID)),
		}
		var nquads []string
		switch {
		case fwd.isOpen() && bwd.isOpen() && (meta == (knowmind.EdgeMeta{}) || sameMeta(fwd.meta(), meta)):
			return nil // idempotent: nothing to write (no meta given keeps what the edge records)
		case fwd.isOpen() && bwd.isOpen():
			// The same link with other meta: rewrite both edges' facets, keeping their interval.
			nquads = append(nquads,
				edgeNQuadMeta(src.UID, rel.Name, dst.UID, res.EdgeID, createdOr(fwd, now), validFromOr(fwd, now), nil, fwd.Inverse, meta),
				edgeNQuadMeta(dst.UID, rel.Inverse, src.UID, res.InverseEdgeID, createdOr(bwd, now), validFromOr(bwd, now), nil, bwd.Inverse, meta))
		case fwd.isOpen():
			// The inverse went missing (or was closed on its own): restore it,
			// keeping the direction flag opposite to the edge's.
			nquads = append(nquads, edgeNQuadMeta(dst.UID, rel.Inverse, src.UID, res.InverseEdgeID, createdOr(bwd, now), now, nil, !fwd.Inverse, fwd.meta()))
		default:
			from, to := src.classes(), dst.classes()
			if err := set.Check(rel.Name, from, to, src.Open); err != nil {
				return err
			}
			inverseExisting := dst.Open
			if bwd.isOpen() { // counted, but it is this link's own inverse
				inverseExisting--
			}
			if err := set.Check(rel.Inverse, to, from, inverseExisting); err != nil {
				return err
			}
			nquads = append(nquads,
				edgeNQuadMeta(src.UID, rel.Name, dst.UID, res.EdgeID, createdOr(fwd, now), now, nil, false, meta),
				edgeNQuadMeta(dst.UID, rel.Inverse, src.UID, res.InverseEdgeID, createdOr(bwd, now), now, nil, true, meta))
		}
		return writeEdges(ctx, txn, nquads, src.UID, fromID, dst.UID, toID)
	})
	if err != nil {
		return knowmind.LinkResult{}, wrapOp("link", err)
	}
	return res, nil
}

// Unlink closes fromID --relType--> toID and its inverse (valid_to = now)
// in one transaction. There must be an open edge in that direction
// (ENOTFOUND otherwise), between ends the caller may see; version-history
// edges are refused.
func (t *Tenant) Unlink(ctx context.Context, fromID, toID, relType string) (knowmind.UnlinkResult, error) {
	return t.unlink(ctx, callerScope(ctx), fromID, toID, relType)
}

// unlink is Unlink for scope; nil unlinks for the service itself (an edit closing the links
// its body dropped, whoever sees their targets).
func (t *Tenant) unlink(ctx context.Context, scope *knowmind.NoteScope, fromID, toID, relType string) (knowmind.UnlinkResult, error) {
	rel, err := t.relationFor(fromID, toID, relType)
	if err != nil {
		return knowmind.UnlinkResult{}, err
	}
	if err := historyRefused(rel.Name, "removed"); err != nil {
		return knowmind.UnlinkResult{}, err
	}
	q, err := pairQuery(t.c.cfg.Shapes, rel, false)
	if err != nil {
		return knowmind.UnlinkResult{}, err
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		src, dst, err := readPair(ctx, txn, q, scope, fromID, toID)
		if err != nil {
			return err
		}
		fwd, bwd := src.edge(), dst.edge()
		if !fwd.isOpen() {
			msg := fmt.Sprintf("no %s edge from %q to %q", rel.Name, fromID, toID)
			if fwd != nil {
				msg = fmt.Sprintf("the %s edge from %q to %q was unlinked at %s", rel.Name, fromID, toID, fwd.ValidTo.Format(time.RFC3339))
			}
			e := &knowmind.Error{Code: knowmind.ENOTFOUND, Message: msg}
			// Closed because an end was superseded: the relation moved to the current version.
			for _, end := range []struct {
				node *linkEnd
				id   string
			}{{src, fromID}, {dst, toID}} {
				if fwd != nil && end.node.Successors > 0 {
					current, err := currentVersion(ctx, txn, end.id)
					if err != nil {
						return err
					}
					e.Message = fmt.Sprintf("the %s edge from %q to %q was closed at %s, when %q was superseded: its relations moved to the current version %q",
						rel.Name, fromID, toID, fwd.ValidTo.Format(time.RFC3339), end.id, current)
					e.Data = map[string]any{"current_version_id": current}
					break
				}
			}
			return e
		}
		now := time.Now().UTC()
		nquads := []string{closeNQuad(src.UID, rel.Name, dst.UID, fwd, EdgeID(fromID, rel.Name, toID), now)}
		if bwd.isOpen() {
			nquads = append(nquads, closeNQuad(dst.UID, rel.Inverse, src.UID, bwd, EdgeID(toID, rel.Inverse, fromID), now))
		}
		return writeEdges(ctx, txn, nquads, src.UID, fromID, dst.UID, toID)
	})
	if err != nil {
		return knowmind.UnlinkResult{}, wrapOp("unlink", err)
	}
	return knowmind.UnlinkResult{Deleted: true}, nil
}

// ListRelations returns the open edges of a memory over every relation
// predicate, read in one query through the materialised edges: an edge
// written as asked (inverse=false) is outgoing; a materialised inverse
// B --HAS_WORKSHOP--> A is shown as the link it stands for, incoming
// FOR_CLIENT from A, with that edge's id. A note the caller may not see is
// not found, and edges to such notes are left out (visibility.go).
func (t *Tenant) ListRelations(ctx context.Context, memoryID string) (knowmind.RelationsResult, error) {
	if strings.TrimSpace(memoryID) == "" {
		return knowmind.RelationsResult{}, knowmind.InvalidParam("memory_id", "memory_id is required")
	}
	if err := checkIDLength("memory_id", memoryID); err != nil {
		return knowmind.RelationsResult{}, err
	}
	rels := make([]string, 0, len(t.c.cfg.Relations))
	for _, r := range t.c.cfg.Relations {
		if shapes.ValidName(r) == nil { // never splice anything else into DQL
			rels = append(rels, r)
		}
	}
	var b strings.Builder
	if err := relationsQuery.Execute(&b, struct {
		Rels []string
		Open string
	}{rels, openFacetFilter}); err != nil {
		return knowmind.RelationsResult{}, err
	}
	resp, err := t.dg.NewReadOnlyTxn().QueryWithVars(ctx, b.String(), map[string]string{"$id": memoryID})
	if err != nil {
		return knowmind.RelationsResult{}, fmt.Errorf("list relations: %w", err)
	}
	var out struct {
		Node []map[string]json.RawMessage `json:"node"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return knowmind.RelationsResult{}, fmt.Errorf("list relations: decode: %w", err)
	}
	if len(out.Node) == 0 {
		return knowmind.RelationsResult{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "memory_id",
			Message: fmt.Sprintf("memory %q not found", memoryID)}
	}
	res := knowmind.RelationsResult{Outgoing: []knowmind.OutEdge{}, Incoming: []knowmind.InEdge{}}
	for _, relName := range rels {
		raw, ok := out.Node[0][relName]
		if !ok {
			continue
		}
		var edges []struct {
			edgeFacets
			PeerID string `json:"Memory.id"`
			Title  string `json:"Memory.title"`
		}
		if err := json.Unmarshal(raw, &edges); err != nil {
			return knowmind.RelationsResult{}, fmt.Errorf("list relations: decode %s: %w", relName, err)
		}
		r, known := t.c.cfg.Shapes.Relation(relName)
		for _, e := range edges {
			if e.PeerID == "" { // not a memory (or one being deleted)
				continue
			}
			created := createdOr(&e.edgeFacets, time.Time{})
			validFrom := created
			if e.ValidFrom != nil {
				validFrom = *e.ValidFrom
			}
			if e.Inverse && known {
				res.Incoming = append(res.Incoming, knowmind.InEdge{
					RelType: r.Inverse, From: e.PeerID, Title: e.Title,
					CreatedAt: created, ValidFrom: validFrom,
					EdgeID: EdgeID(e.PeerID, r.Inverse, memoryID),
				})
				continue
			}
			res.Outgoing = append(res.Outgoing, knowmind.OutEdge{
				RelType: relName, To: e.PeerID, Title: e.Title,
				CreatedAt: created, ValidFrom: validFrom,
				EdgeID: storedOr(&e.edgeFacets, EdgeID(memoryID, relName, e.PeerID)),
			})
		}
	}
	sort.SliceStable(res.Outgoing, func(i, j int) bool {
		a, b := res.Outgoing[i], res.Outgoing[j]
		return edgeLess(a.CreatedAt, b.CreatedAt, a.RelType, b.RelType, a.To, b.To)
	})
	sort.SliceStable(res.Incoming, func(i, j int) bool {
		a, b := res.Incoming[i], res.Incoming[j]
		return edgeLess(a.CreatedAt, b.CreatedAt, a.RelType, b.RelType, a.From, b.From)
	})
	return t.hideRelations(ctx, memoryID, res)
}

// edgeLess orders edges oldest first, then by type and peer, so the list is
// stable across calls.
func edgeLess(ta, tb time.Time, ra, rb, pa, pb string) bool {
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if ra != rb {
		return ra < rb
	}
	return pa < pb
}

// relationFor validates the parameters shared by link and unlink and
// returns the relation, refusing what needs no storage to refuse: a
// malformed or unknown rel_type, missing ids, a self-link.
func (t *Tenant) relationFor(fromID, toID, relType string) (shapes.Relation, error) {
	if err := shapes.ValidName(relType); err != nil {
		return shapes.Relation{}, err
	}
	if strings.TrimSpace(fromID) == "" {
		return shapes.Relation{}, knowmind.InvalidParam("from_id", "from_id is required")
	}
	if strings.TrimSpace(toID) == "" {
		return shapes.Relation{}, knowmind.InvalidParam("to_id", "to_id is required")
	}
	if err := checkIDLength("from_id", fromID); err != nil {
		return shapes.Relation{}, err
	}
	if err := checkIDLength("to_id", toID); err != nil {
		return shapes.Relation{}, err
	}
	if fromID == toID {
		return shapes.Relation{}, knowmind.InvalidParam("to_id", "to_id must differ from from_id: a memory cannot be linked to itself")
	}
	set := t.c.cfg.Shapes
	rel, ok := set.Relation(relType)
	if !ok {
		return shapes.Relation{}, set.Check(relType, nil, nil, 0) // the rel_type violation
	}
	for _, p := range []string{rel.Name, rel.Inverse} {
		if !slices.Contains(t.c.cfg.Relations, p) {
			// Config.Relations and Config.Shapes disagree: writing would create
			// a predicate without @reverse/@count. A wiring bug, not input.
			return shapes.Relation{}, fmt.Errorf("relation %s is in the shapes but not in the tenant schema (graph.Config.Relations)", p)
		}
	}
	return rel, nil
}

// checkIDLength bounds an id (as update_fact bounds target_id): a longer one
// names no memory, and must not be looked up or echoed back in a 404.
func checkIDLength(param, id string) error {
	if utf8.RuneCountInString(id) > knowmind.MaxIDChars {
		return knowmind.InvalidParam(param, "%s exceeds %d characters", param, knowmind.MaxIDChars)
	}
	return nil
}

// pairQuery renders edgePairQuery for rel; withCounts asks for open-edge
// counts where a max_count applies (link only).
func pairQuery(set *shapes.Set, rel shapes.Relation, withCounts bool) (string, error) {
	inverse, _ := set.Relation(rel.Inverse) // every relation's inverse is in the set
	var b strings.Builder
	err := edgePairQuery.Execute(&b, struct {
		Rel, Inverse, Open     string
		CountRel, CountInverse bool
	}{rel.Name, rel.Inverse, openFacetFilter, withCounts && rel.MaxCount > 0, withCounts && inverse.MaxCount > 0})
	return b.String(), err
}

// readPair runs the edge-pair query in txn and returns both ends, or
// ENOTFOUND naming the missing id or one scope may not see.
func readPair(ctx context.Context, txn *dgo.Txn, q string, scope *knowmind.NoteScope, fromID, toID string) (*linkEnd, *linkEnd, error) {
	resp, err := txn.QueryWithVars(ctx, q, map[string]string{"$from": fromID, "$to": toID})
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		From []linkEnd `json:"from"`
		To   []linkEnd `json:"to"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	if len(out.From) == 0 || out.From[0].hidden(scope) {
		return nil, nil, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "from_id", Message: fmt.Sprintf("memory %q (from_id) not found", fromID)}
	}
	if len(out.To) == 0 || out.To[0].hidden(scope) {
		return nil, nil, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "to_id", Message: fmt.Sprintf("memory %q (to_id) not found", toID)}
	}
	return &out.From[0], &out.To[0], nil
}

// refuseSuperseded is link's rule for versions: relations follow the current version
// (versions.go), so a link to or from one a newer version superseded is refused (409, naming the
// current version) rather than left hanging off history that no current view reaches.
func refuseSuperseded(ctx context.Context, q querier, end *linkEnd, param, id string) error {
	if end.Successors == 0 {
		return nil
	}
	current, err := currentVersion(ctx, q, id)
	if err != nil {
		return err
	}
	e := knowmind.Errorf(knowmind.ECONFLICT, "%s %q is superseded; link the current version %q", param, id, current)
	e.Data = map[string]any{"param": param, "current_version_id": current}
	return e
}

// writeEdges sets the edges and re-sets Memory.id of both nodes to its
// current value: the write that makes concurrent edge changes on the same
// node conflict (see "Concurrency"). Memory.id goes as JSON so the id is
// written back byte for byte.
func writeEdges(ctx context.Context, txn *dgo.Txn, nquads []string, fromUID, fromID, toUID, toID string) error {
	lock, err := json.Marshal([]map[string]string{
		{"uid": fromUID, "Memory.id": fromID},
		{"uid": toUID, "Memory.id": toID},
	})
	if err != nil {
		return err
	}
	if _, err := txn.Mutate(ctx, &api.Mutation{SetJson: lock}); err != nil {
		return err
	}
	_, err = txn.Mutate(ctx, &api.Mutation{SetNquads: []byte(strings.Join(nquads, "\n"))})
	return err
}

// edgeNQuadMeta renders one edge with its full facet set (setting an edge again replaces all
// its facets) and the link's meta (absent ones not written). validTo nil = open.
func edgeNQuadMeta(fromUID, rel, toUID, id string, createdAt, validFrom time.Time, validTo *time.Time, inverse bool, meta knowmind.EdgeMeta) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<%s> <%s> <%s> (id=%q, created_at=%s, valid_from=%s", fromUID, rel, toUID, id,
		createdAt.UTC().Format(time.RFC3339Nano), validFrom.UTC().Format(time.RFC3339Nano))
	if validTo != nil {
		fmt.Fprintf(&b, ", valid_to=%s", validTo.UTC().Format(time.RFC3339Nano))
	}
	if meta.Confidence != nil {
		fmt.Fprintf(&b, ", confidence=%s", strconv.FormatFloat(*meta.Confidence, 'f', -1, 64))
	}
	if meta.CreatedBy != "" {
		fmt.Fprintf(&b, ", created_by=%q", meta.CreatedBy)
	}
	if meta.Reason != "" {
		fmt.Fprintf(&b, ", reason=%q", meta.Reason)
	}
	fmt.Fprintf(&b, ", inverse=%t) .", inverse)
	return b.String()
}

// cleanReason makes a reason safe as an N-Quad facet string: valid UTF-8, no control characters.
func cleanReason(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
}

func sameMeta(a, b knowmind.EdgeMeta) bool {
	ca, cb := 1.0, 1.0
	if a.Confidence != nil {
		ca = *a.Confidence
	}
	if b.Confidence != nil {
		cb = *b.Confidence
	}
	return ca == cb && a.CreatedBy == b.CreatedBy && a.Reason == b.Reason
}

func validFromOr(e *edgeFacets, t time.Time) time.Time {
	if e != nil && e.ValidFrom != nil {
		return *e.ValidFrom
	}
	return t
}

// closeNQuad rewrites an open edge with valid_to = now, keeping its facets.
func closeNQuad(fromUID, rel, toUID string, e *edgeFacets, defaultID string, now time.Time) string {
	created := createdOr(e, now)
	validFrom := created
	if e.ValidFrom != nil {
		validFrom = *e.ValidFrom
	}
	return edgeNQuadMeta(fromUID, rel, toUID, storedOr(e, defaultID), created, validFrom, &now, e.Inverse, e.meta())
}

func storedOr(e *edgeFacets, id string) string {
	if e != nil && e.ID != "" {
		return e.ID
	}
	return id
}

func createdOr(e *edgeFacets, t time.Time) time.Time {
	if e != nil && e.CreatedAt != nil {
		return *e.CreatedAt
	}
	return t
}

// wrapOp passes domain errors through unchanged and names the operation on
// anything else (Dgraph failures, exhausted retries).
func wrapOp(op string, err error) error {
	if knowmind.AsError(err) != nil {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// historyRefused refuses link and unlink of version-history edges: only
// knowmind_update_fact writes them (and upload_document, replacing a version),
// and nothing removes them, so no caller can close a memory or rewrite its past.
func historyRefused(rel, what string) error {
	if !slices.Contains(historyRelations, rel) {
		return nil
	}
	return &knowmind.Error{Code: knowmind.ECONSTRAINT,
		Message: fmt.Sprintf("history edges cannot be %s: %s is version history, written only by knowmind_update_fact", what, rel),
		Data:    map[string]any{"constraint": "history", "rel_type": rel}}
}

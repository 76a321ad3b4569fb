package graph

// knowmind_explore: one memory as the graph explorer (/ui) shows it — its
// content and chunks, its version chain, and its neighbourhood up to three
// hops over the typed relations, now or as of a point in time.
//
// The neighbourhood is read hop by hop (one query per hop, at most three),
// each reading every relation predicate of the frontier with the edge
// facets. Links are materialised both ways (see relations.go), so reading a
// node's own predicates reaches its incoming links too; the "inverse" facet
// tells which direction was linked, and each link is reported once, in that
// direction.

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/shapes"
)

// versionChainQuery reads the chain around a memory both ways: older
// versions over SUPERSEDES, newer ones over SUPERSEDED_BY.
var versionChainQuery = fmt.Sprintf(`query q($id: string) {
  older(func: eq(Memory.id, $id), first: 1) @recurse(depth: %[1]d, loop: false) {
    Memory.id Memory.title Memory.valid_from Memory.valid_to Memory.update_reason Memory.created_at
    SUPERSEDES
  }
  newer(func: eq(Memory.id, $id), first: 1) @recurse(depth: %[1]d, loop: false) {
    Memory.id Memory.title Memory.valid_from Memory.valid_to Memory.update_reason Memory.created_at
    SUPERSEDED_BY
  }
}`, knowmind.ExploreMaxVersions)

// exploreMemoryQuery reads the centre with its error, its entities and its
// first chunks in order (German text is stored as Chunk.text@de).
var exploreMemoryQuery = fmt.Sprintf(`query q($id: string) {
  m(func: eq(Memory.id, $id), first: 1) {
    uid Memory.id Memory.kind Memory.title Memory.content Memory.memory_type Memory.tags
    Memory.source Memory.status Memory.created_at Memory.updated_at
    Memory.valid_from Memory.valid_to Memory.update_reason Memory.error Memory.dates Memory.sequence Memory.position
    Note.frontmatter Note.path
    chunks: count(Memory.chunks)
    ents: Memory.entities (orderasc: Entity.key, first: %d) { Entity.type Entity.id Entity.name }
    sections: Memory.chunks (orderasc: Chunk.position, first: %d) {
      Chunk.position Chunk.heading de: Chunk.text@de en: Chunk.text
    }
  }
}`, knowmind.ExploreMaxEntities, knowmind.ExploreMaxChunks)

// exploreHopQuery reads every relation edge of a frontier of nodes (uids
// from Dgraph, checked against uidPattern), filtered by the facets: open
// edges now, or edges valid at a point in time.
var exploreHopQuery = template.Must(template.New("hop").Parse(`{
  n(func: uid({{.UIDs}})) {
    uid
{{- range .Rels}}
    <{{.}}> @facets({{$.Filter}}) @facets(id: id, valid_from: valid_from, valid_to: valid_to, inverse: inverse) {
      uid Memory.id Memory.title Memory.kind Memory.status Memory.valid_from Memory.valid_to
    }
{{- end}}
  }
}`))

var uidPattern = regexp.MustCompile(`^0x[0-9a-f]+$`)

// Explore returns the memory q.MemoryID (or, with q.AsOf, the version of its
// chain valid then) with its chunks, version chain and the memories within
// q.Hops relations. ENOTFOUND for an unknown memory or a note the caller may
// not see; such notes leave the neighbourhood (visibility.go).
func (t *Tenant) Explore(ctx context.Context, q knowmind.ExploreQuery) (knowmind.ExploreResult, error) {
	if strings.TrimSpace(q.MemoryID) == "" {
		return knowmind.ExploreResult{}, knowmind.InvalidParam("memory_id", "memory_id is required")
	}
	if err := checkIDLength("memory_id", q.MemoryID); err != nil {
		return knowmind.ExploreResult{}, err
	}
	if q.Hops < 1 || q.Hops > knowmind.ExploreMaxHops {
		return knowmind.ExploreResult{}, knowmind.InvalidParam("hops", "hops must be 1 to %d", knowmind.ExploreMaxHops)
	}
	versions, err := t.versionChain(ctx, q.MemoryID)
	if err != nil {
		return knowmind.ExploreResult{}, err
	}
	if len(versions) == 0 {
		return knowmind.ExploreResult{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "memory_id",
			Message: fmt.Sprintf("memory %q not found", q.MemoryID)}
	}
	res := knowmind.ExploreResult{Versions: versions, Chunks: []knowmind.ExploreChunk{}, AsOf: q.AsOf}
	centre := q.MemoryID
	if q.AsOf != nil {
		for _, v := range versions {
			if validAt(v.ValidFrom, v.ValidTo, *q.AsOf) {
				centre = v.ID
			}
		}
		if centre != q.MemoryID {
			res.RequestedID = q.MemoryID
		}
	}
	uid, err := t.exploreMemory(ctx, centre, &res)
	if err != nil {
		return knowmind.ExploreResult{}, err
	}
	if q.AsOf != nil && res.Memory.Kind == knowmind.KindNote {
		if err := t.noteAsOf(ctx, uid, *q.AsOf, &res); err != nil {
			// "did not exist at" is for a note the caller may see; a hidden one answers as a
			// missing id does, whatever the time.
			if _, hidden := t.hideExplored(ctx, q.MemoryID, res); hidden != nil {
				return knowmind.ExploreResult{}, hidden
			}
			return knowmind.ExploreResult{}, err
		}
	}
	if err := t.neighbourhood(ctx, uid, q, &res); err != nil {
		return knowmind.ExploreResult{}, err
	}
	return t.hideExplored(ctx, q.MemoryID, res)
}

// validAt: valid_from ≤ at < valid_to (valid_to absent = still valid).
func validAt(from time.Time, to *time.Time, at time.Time) bool {
	return !from.After(at) && (to == nil || to.After(at))
}

// versionChain returns id's chain oldest first; empty when id is unknown.
func (t *Tenant) versionChain(ctx context.Context, id string) ([]knowmind.ExploreVersion, error) {
	type link struct {
		ID           string            `json:"Memory.id"`
		Title        string            `json:"Memory.title"`
		ValidFrom    time.Time         `json:"Memory.valid_from"`
		ValidTo      *time.Time        `json:"Memory.valid_to"`
		UpdateReason string            `json:"Memory.update_reason"`
		CreatedAt    time.Time         `json:"Memory.created_at"`
		Older        []json.RawMessage `json:"SUPERSEDES"`
		Newer        []json.RawMessage `json:"SUPERSEDED_BY"`
	}
	var out struct{ Older, Newer []json.RawMessage }
	if err := t.queryVars(ctx, versionChainQuery, map[string]string{"$id": id}, &out); err != nil {
		return nil, fmt.Errorf("explore: version chain: %w", err)
	}
	seen := map[string]bool{}
	var chain []knowmind.ExploreVersion
	walk := func(start []json.RawMessage) error {
		for raw := start; len(raw) > 0; {
			var l link
			if err := json.Unmarshal(raw[0], &l); err != nil {
				return fmt.Errorf("explore: decode version chain: %w", err)
			}
			if l.ID != "" && !seen[l.ID] {
				seen[l.ID] = true
				chain = append(chain, knowmind.ExploreVersion{ID: l.ID, Title: l.Title, ValidFrom: l.ValidFrom,
					ValidTo: l.ValidTo, UpdateReason: l.UpdateReason, CreatedAt: l.CreatedAt})
			}
			raw = l.Older
			if len(l.Newer) > 0 {
				raw = l.Newer
			}
		}
		return nil
	}
	if err := walk(out.Older); err != nil {
		return nil, err
	}
	if err := walk(out.Newer); err != nil {
		return nil, err
	}
	sort.SliceStable(chain, func(i, j int) bool { return chain[i].ValidFrom.Before(chain[j].ValidFrom) })
	return chain, nil
}

// exploreMemory fills res.Memory, res.Entities, res.Chunks and res.IngestError from the
// memory id and returns its uid.
func (t *Tenant) exploreMemory(ctx context.Context, id string, res *knowmind.ExploreResult) (string, error) {
	var out struct {
		M []struct {
			dgMemory
			Error       string     `json:"Memory.error"`
			Frontmatter string     `json:"Note.frontmatter"`
			Path        string     `json:"Note.path"`
			Ents        []dgEntity `json:"ents"`
			Sections    []struct {
				Position int    `json:"Chunk.position"`
				Heading  string `json:"Chunk.heading"`
				dgChunkText
			} `json:"sections"`
		}
	}
	if err := t.queryVars(ctx, exploreMemoryQuery, map[string]string{"$id": id}, &out); err != nil {
		return "", fmt.Errorf("explore: read memory: %w", err)
	}
	if len(out.M) == 0 {
		return "", &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "memory_id", Message: fmt.Sprintf("memory %q not found", id)}
	}
	m := out.M[0]
	res.Memory = m.domain()
	res.Memory.Content, res.ContentTruncated = cutRunes(res.Memory.Content, knowmind.ExploreMaxContentChars)
	res.IngestError = m.Error
	if m.Kind == knowmind.KindNote {
		res.Path = m.Path
	}
	if m.Frontmatter != "" {
		if err := yaml.Unmarshal([]byte(m.Frontmatter), &res.Properties); err != nil {
			res.Properties = nil // stored by CreateNote/EditNote as YAML; a bad one shows none
		}
	}
	res.Entities = make([]knowmind.ExploreEntity, 0, len(m.Ents))
	for _, e := range m.Ents {
		res.Entities = append(res.Entities, knowmind.ExploreEntity{Type: e.Type, ID: e.ID, Name: e.Name})
	}
	if m.Kind == knowmind.KindDocument {
		for _, s := range m.Sections {
			text, _ := cutRunes(s.text(), knowmind.ExploreMaxChunkChars)
			res.Chunks = append(res.Chunks, knowmind.ExploreChunk{Position: s.Position, Heading: s.Heading, Text: text})
		}
	}
	return m.UID, nil
}

// cutRunes is runes.Truncate, saying whether it cut.
func cutRunes(s string, max int) (string, bool) {
	t := runes.Truncate(s, max)
	return t, t != s
}

// hopNode is a peer as exploreHopQuery returns it, with the edge's facets.
type hopNode struct {
	edgeFacets
	MemoryID  string     `json:"Memory.id"`
	Title     string     `json:"Memory.title"`
	Kind      string     `json:"Memory.kind"`
	Status    string     `json:"Memory.status"`
	NodeFrom  *time.Time `json:"Memory.valid_from"`
	NodeUntil *time.Time `json:"Memory.valid_to"`
}

// neighbourhood fills res.Nodes and res.Edges, breadth first from the
// centre (uid), at most ExploreMaxNodes nodes.
func (t *Tenant) neighbourhood(ctx context.Context, uid string, q knowmind.ExploreQuery, res *knowmind.ExploreResult) error {
	m := res.Memory
	res.Nodes = []knowmind.ExploreNode{{ID: m.ID, Title: m.Title, Kind: m.Kind, Status: m.Status,
		ValidFrom: m.ValidFrom, ValidTo: m.ValidTo}}
	res.Edges = []knowmind.ExploreEdge{}
	filter := openFacetFilter
	if q.AsOf != nil {
		at := q.AsOf.UTC().Format(time.RFC3339Nano)
		filter = fmt.Sprintf(`le(valid_from, %q) AND NOT le(valid_to, %q)`, at, at)
	}
	rels := make([]string, 0, len(t.c.cfg.Relations))
	for _, r := range t.c.cfg.Relations {
		if shapes.ValidName(r) == nil { // never splice anything else into DQL
			rels = append(rels, r)
		}
	}
	byUID := map[string]string{uid: m.ID} // uid → Memory.id of every node placed
	edgeSeen := map[string]bool{}
	frontier := []string{uid}
	for hop := 1; hop <= q.Hops && len(frontier) > 0; hop++ {
		var b strings.Builder
		if err := exploreHopQuery.Execute(&b, struct {
			UIDs, Filter string
			Rels         []string
		}{strings.Join(frontier, ", "), filter, rels}); err != nil {
			return err
		}
		var out struct {
			N []map[string]json.RawMessage `json:"n"`
		}
		if err := t.queryVars(ctx, b.String(), nil, &out); err != nil {
			return fmt.Errorf("explore: hop %d: %w", hop, err)
		}
		var next []string
		for _, node := range out.N {
			var self string
			if err := json.Unmarshal(node["uid"], &self); err != nil {
				return fmt.Errorf("explore: decode hop %d: %w", hop, err)
			}
			selfID := byUID[self]
			for _, relName := range rels {
				raw, ok := node[relName]
				if !ok {
					continue
				}
				var peers []hopNode
				if err := json.Unmarshal(raw, &peers); err != nil {
					return fmt.Errorf("explore: decode %s: %w", relName, err)
				}
				for _, p := range peers {
					if p.MemoryID == "" || !uidPattern.MatchString(p.UID) {
						continue // not a memory (or one being deleted)
					}
					if q.AsOf != nil && (p.NodeFrom == nil || !validAt(*p.NodeFrom, p.NodeUntil, *q.AsOf)) {
						continue // the neighbour did not hold then
					}
					if _, placed := byUID[p.UID]; !placed {
						if len(res.Nodes) >= knowmind.ExploreMaxNodes {
							res.Truncated = true
							continue
						}
						byUID[p.UID] = p.MemoryID
						n := knowmind.ExploreNode{ID: p.MemoryID, Title: p.Title, Kind: p.Kind, Status: p.Status,
							ValidTo: p.NodeUntil, Hop: hop}
						if p.NodeFrom != nil {
							n.ValidFrom = *p.NodeFrom
						}
						res.Nodes = append(res.Nodes, n)
						next = append(next, p.UID)
					}
					e := exploreEdge(t.c.cfg.Shapes, selfID, relName, p)
					if key := e.From + "|" + e.RelType + "|" + e.To; !edgeSeen[key] {
						edgeSeen[key] = true
						res.Edges = append(res.Edges, e)
					}
				}
			}
		}
		frontier = next
	}
	sort.SliceStable(res.Edges, func(i, j int) bool {
		a, b := res.Edges[i], res.Edges[j]
		return edgeLess(a.ValidFrom, b.ValidFrom, a.RelType, b.RelType, a.From+a.To, b.From+b.To)
	})
	return nil
}

// exploreEdge turns the edge self --rel--> peer as stored into the link it
// stands for: a materialised inverse (facet inverse=true) is reported as
// peer --(rel's inverse)--> self, so each link appears once.
func exploreEdge(set *shapes.Set, selfID, relName string, p hopNode) knowmind.ExploreEdge {
	created := createdOr(&p.edgeFacets, time.Time{})
	validFrom := created
	if p.ValidFrom != nil {
		validFrom = *p.ValidFrom
	}
	e := knowmind.ExploreEdge{From: selfID, To: p.MemoryID, RelType: relName, InverseType: relName,
		ValidFrom: validFrom, ValidTo: p.ValidTo}
	r, known := set.Relation(relName)
	if known {
		e.InverseType = r.Inverse
		if p.Inverse {
			e.From, e.To, e.RelType, e.InverseType = p.MemoryID, selfID, r.Inverse, relName
		}
	}
	if r.Symmetric && e.From > e.To { // one key for both directions of a symmetric link
		e.From, e.To = e.To, e.From
	}
	// The id of the link as knowmind_link returned it: the stored facet on
	// the linked direction, derived for a materialised inverse.
	e.ID = EdgeID(e.From, e.RelType, e.To)
	if !p.Inverse && !r.Symmetric {
		e.ID = storedOr(&p.edgeFacets, e.ID)
	}
	return e
}

// noteRevisionsQuery lists a note's revisions (its former bodies, each with
// the interval it was current) without their bodies; noteRevisionBodyQuery
// reads the one body needed.
const noteRevisionsQuery = `{
  n(func: uid(%s)) {
    r: ~Revision.note (orderdesc: Revision.revision, first: %d) { uid Revision.valid_from Revision.valid_to }
  }
}`

const noteRevisionBodyQuery = `{ r(func: uid(%s)) { Revision.title Revision.path Revision.body } }`

// noteAsOf replaces the centre's title and content with the note's revision
// current at at, when an edit has replaced it since: a note is edited in
// place, and every edit keeps the former title and body as a Revision
// (notes.go). ENOTFOUND when the note did not exist yet.
func (t *Tenant) noteAsOf(ctx context.Context, uid string, at time.Time, res *knowmind.ExploreResult) error {
	if !uidPattern.MatchString(uid) {
		return fmt.Errorf("explore: bad uid %q", uid)
	}
	if res.Memory.CreatedAt.After(at) {
		return &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "memory_id",
			Message: fmt.Sprintf("note %q did not exist at %s", res.Memory.ID, at.UTC().Format(time.RFC3339))}
	}
	var out struct {
		N []struct {
			R []struct {
				UID       string     `json:"uid"`
				ValidFrom time.Time  `json:"Revision.valid_from"`
				ValidTo   *time.Time `json:"Revision.valid_to"`
			} `json:"r"`
		} `json:"n"`
	}
	if err := t.queryVars(ctx, fmt.Sprintf(noteRevisionsQuery, uid, knowmind.MaxNoteRevisionsRead), nil, &out); err != nil {
		return fmt.Errorf("explore: note revisions: %w", err)
	}
	if len(out.N) == 0 {
		return nil
	}
	for _, r := range out.N[0].R {
		if !validAt(r.ValidFrom, r.ValidTo, at) || !uidPattern.MatchString(r.UID) {
			continue
		}
		var body struct {
			R []struct {
				Title string `json:"Revision.title"`
				Path  string `json:"Revision.path"`
				Body  string `json:"Revision.body"`
			} `json:"r"`
		}
		if err := t.queryVars(ctx, fmt.Sprintf(noteRevisionBodyQuery, r.UID), nil, &body); err != nil {
			return fmt.Errorf("explore: note revision: %w", err)
		}
		if len(body.R) > 0 {
			res.Memory.Title, res.Path = body.R[0].Title, body.R[0].Path
			res.Memory.Content, res.ContentTruncated = cutRunes(body.R[0].Body, knowmind.ExploreMaxContentChars)
		}
		return nil
	}
	return nil
}

package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// Entities are nodes keyed by type and slug (Entity.key = "<type>/<id>");
// memories and drafts point at them (Memory.entities, Draft.entities, both
// @reverse). They are created by knowmind_capture as facts name them.

// maxKnownEntities bounds the entities handed to an extractor per capture.
const maxKnownEntities = 5000

var knownEntitiesQuery = fmt.Sprintf(`{
  e(func: has(Entity.key), first: %d) { Entity.type Entity.id Entity.name Entity.aliases }
}`, maxKnownEntities)

// knownEntities are the tenant's entities with names and aliases, for the
// extractor's recognition.
func (t *Tenant) knownEntities(ctx context.Context) ([]knowmind.Entity, error) {
	var out struct{ E []dgEntity }
	if err := t.queryVars(ctx, knownEntitiesQuery, nil, &out); err != nil {
		return nil, fmt.Errorf("read known entities: %w", err)
	}
	ents := make([]knowmind.Entity, 0, len(out.E))
	for _, e := range out.E {
		ents = append(ents, e.domain())
	}
	return ents, nil
}

type dgEntity struct {
	UID     string   `json:"uid"`
	Key     string   `json:"Entity.key"`
	Type    string   `json:"Entity.type"`
	ID      string   `json:"Entity.id"`
	Name    string   `json:"Entity.name"`
	Aliases []string `json:"Entity.aliases"`
	Facts   int      `json:"facts"`
}

func (e dgEntity) domain() knowmind.Entity {
	return knowmind.Entity{Type: e.Type, ID: e.ID, Name: e.Name, Aliases: e.Aliases, Facts: e.Facts}
}

func (e dgEntity) ref() knowmind.EntityRef { return knowmind.EntityRef{Type: e.Type, ID: e.ID} }

func entityKey(typ, id string) string { return typ + "/" + id }

// ensureEntities creates the entities that do not exist yet and returns the
// uid of each, by key. Entity.key is @upsert: a concurrent capture creating
// the same entity aborts one transaction, whose retry finds the other's node.
func (t *Tenant) ensureEntities(ctx context.Context, ents []knowmind.CandidateEntity) (map[string]string, error) {
	uids := map[string]string{}
	if len(ents) == 0 {
		return uids, nil
	}
	var q strings.Builder
	q.WriteString("{\n")
	var muts []*api.Mutation
	keys := make([]string, len(ents))
	now := nowString()
	for i, e := range ents {
		keys[i] = entityKey(e.Type, e.ID)
		fmt.Fprintf(&q, "  e%d as var(func: eq(Entity.key, %s))\n", i, strconv.Quote(keys[i]))
		node, err := json.Marshal(map[string]any{
			"uid": fmt.Sprintf("_:e%d", i), "dgraph.type": "Entity", "Entity.key": keys[i],
			"Entity.type": e.Type, "Entity.id": e.ID, "Entity.name": e.Name, "Entity.created_at": now,
		})
		if err != nil {
			return nil, err
		}
		muts = append(muts, &api.Mutation{Cond: fmt.Sprintf("@if(eq(len(e%d), 0))", i), SetJson: node})
	}
	fmt.Fprintf(&q, "  found(func: eq(Entity.key, [%s])) { uid Entity.key }\n}", quoteAll(keys))
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		clear(uids)
		resp, err := txn.Do(ctx, &api.Request{Query: q.String(), Mutations: muts})
		if err != nil {
			return err
		}
		var out struct{ Found []dgEntity }
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		for _, f := range out.Found {
			uids[f.Key] = f.UID
		}
		for i, k := range keys {
			if u := resp.Uids[fmt.Sprintf("e%d", i)]; u != "" {
				uids[k] = u
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write entities: %w", err)
	}
	return uids, nil
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// listEntitiesQuery lists entities, optionally of one type; facts counts the
// current memories naming each.
const listEntitiesQuery = `query q($type: string, $first: int) {
  e(func: {{.Root}}, orderasc: Entity.key, first: $first) {
    Entity.type Entity.id Entity.name Entity.aliases
    facts: count(~Memory.entities @filter(eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)))
  }
}`

// ListEntities returns up to limit entities in key order, of entityType if set.
func (t *Tenant) ListEntities(ctx context.Context, entityType string, limit int) ([]knowmind.Entity, error) {
	root := "has(Entity.key)"
	if entityType != "" {
		root = "eq(Entity.type, $type)"
	}
	q := strings.Replace(listEntitiesQuery, "{{.Root}}", root, 1)
	var out struct{ E []dgEntity }
	if err := t.queryVars(ctx, q, map[string]string{"$type": entityType, "$first": strconv.Itoa(limit)}, &out); err != nil {
		return nil, fmt.Errorf("list entities: %w", err)
	}
	ents := make([]knowmind.Entity, 0, len(out.E))
	for _, e := range out.E {
		ents = append(ents, e.domain())
	}
	return ents, nil
}

// entityFactsQuery reads the current memories naming any of the keys, for
// conflict detection.
const entityFactsQuery = `{
  e(func: eq(Entity.key, [%s])) {
    Entity.key
    facts: ~Memory.entities @filter(eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)) (first: %d) {
      uid Memory.id Memory.content
    }
  }
}`

// maxFactsPerEntity bounds the current facts of one entity a new fact is compared with.
const maxFactsPerEntity = 200

type entityFact struct {
	UID     string `json:"uid"`
	ID      string `json:"Memory.id"`
	Content string `json:"Memory.content"`
}

// currentFacts returns, per entity key, its current memories.
func (t *Tenant) currentFacts(ctx context.Context, keys []string) (map[string][]entityFact, error) {
	out := map[string][]entityFact{}
	if len(keys) == 0 {
		return out, nil
	}
	var res struct {
		E []struct {
			Key   string       `json:"Entity.key"`
			Facts []entityFact `json:"facts"`
		}
	}
	if err := t.queryVars(ctx, fmt.Sprintf(entityFactsQuery, quoteAll(keys), maxFactsPerEntity), nil, &res); err != nil {
		return nil, fmt.Errorf("read facts of entities: %w", err)
	}
	for _, e := range res.E {
		out[e.Key] = e.Facts
	}
	return out, nil
}

// formatTime is how datetimes are written.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// AttachEntities sets each hit's entities (never nil) and the first as
// entity_type/entity_id, in one query for all hits.
func (t *Tenant) AttachEntities(ctx context.Context, hits []knowmind.RecallHit) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.MemoryID
	}
	refs, err := t.EntitiesOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Entities = refs[hits[i].MemoryID]
		if hits[i].Entities == nil {
			hits[i].Entities = []knowmind.EntityRef{}
		} else {
			hits[i].EntityType, hits[i].EntityID = hits[i].Entities[0].Type, hits[i].Entities[0].ID
		}
	}
	return nil
}

const entitiesOfQuery = `{
  m(func: eq(Memory.id, [%s])) { Memory.id Memory.entities (orderasc: Entity.key) { Entity.type Entity.id } }
}`

// EntitiesOf returns the entities of each memory id, in key order.
func (t *Tenant) EntitiesOf(ctx context.Context, ids []string) (map[string][]knowmind.EntityRef, error) {
	var out struct {
		M []struct {
			ID       string     `json:"Memory.id"`
			Entities []dgEntity `json:"Memory.entities"`
		}
	}
	if err := t.queryVars(ctx, fmt.Sprintf(entitiesOfQuery, quoteAll(ids)), nil, &out); err != nil {
		return nil, fmt.Errorf("read entities of memories: %w", err)
	}
	refs := map[string][]knowmind.EntityRef{}
	for _, m := range out.M {
		for _, e := range m.Entities {
			refs[m.ID] = append(refs[m.ID], e.ref())
		}
	}
	return refs, nil
}

// checkEntities validates entities given with knowmind_store_memory: a
// declared type, a name or id that makes a slug; sorted by key, duplicates dropped.
func (t *Tenant) checkEntities(in []knowmind.CandidateEntity, types []string) ([]knowmind.CandidateEntity, error) {
	if len(in) > knowmind.MaxEntitiesPerFact {
		return nil, knowmind.InvalidParam("entities", "at most %d entities", knowmind.MaxEntitiesPerFact)
	}
	if types == nil {
		types = t.c.cfg.Shapes.EntityTypes()
	}
	var out []knowmind.CandidateEntity
	seen := map[string]bool{}
	for _, e := range in {
		if !slices.Contains(types, e.Type) {
			return nil, knowmind.InvalidParam("entities", "entities: entity type %q is not declared; declared: %s", e.Type, strings.Join(types, ", "))
		}
		id := knowmind.EntitySlug(e.ID)
		if id == "" {
			id = knowmind.EntitySlug(e.Name)
		}
		if id == "" || utf8.RuneCountInString(e.Name) > knowmind.MaxEntityNameChars || len(id) > knowmind.MaxIDChars {
			return nil, knowmind.InvalidParam("entities", "entities: each entity needs an id or a name (at most %d characters)", knowmind.MaxEntityNameChars)
		}
		name := strings.TrimSpace(e.Name)
		if name == "" {
			name = id
		}
		if key := entityKey(e.Type, id); !seen[key] {
			seen[key] = true
			out = append(out, knowmind.CandidateEntity{Type: e.Type, ID: id, Name: name})
		}
	}
	slices.SortFunc(out, func(a, b knowmind.CandidateEntity) int {
		return strings.Compare(entityKey(a.Type, a.ID), entityKey(b.Type, b.ID))
	})
	return out, nil
}

// attachEntityUIDs creates the entities as needed and points e at them.
func (t *Tenant) attachEntityUIDs(ctx context.Context, e *entry, ents []knowmind.CandidateEntity) error {
	if len(ents) == 0 {
		return nil
	}
	uids, err := t.ensureEntities(ctx, ents)
	if err != nil {
		return err
	}
	for _, en := range ents {
		if u := uids[entityKey(en.Type, en.ID)]; u != "" {
			e.entityUIDs = append(e.entityUIDs, u)
		}
	}
	return nil
}

// storedConflicts compares a memory just stored with the current memories
// about its entities and the nearest by meaning (conflicts.go), and links
// each contradiction. A failed lookup is logged: the memory is stored either way.
func (t *Tenant) storedConflicts(ctx context.Context, e *entry, ents []knowmind.CandidateEntity) ([]knowmind.EntityRef, []knowmind.Conflict) {
	var refs []knowmind.EntityRef
	keys := make([]string, 0, len(ents))
	for _, en := range ents {
		refs = append(refs, knowmind.EntityRef{Type: en.Type, ID: en.ID})
		keys = append(keys, entityKey(en.Type, en.ID))
	}
	current, err := t.currentFacts(ctx, keys)
	if err != nil {
		t.c.log.Warn("store memory: conflict lookup failed", "tenant", t.Name, "id", e.id, "err", err)
		return refs, nil
	}
	found, err := t.FindConflicts(ctx, e.content, keys, current, e.id)
	if err != nil {
		t.c.log.Warn("store memory: conflict lookup failed", "tenant", t.Name, "id", e.id, "err", err)
		return refs, nil
	}
	var out []knowmind.Conflict
	for _, f := range found {
		out = append(out, knowmind.Conflict{NewID: e.id, NewStatus: knowmind.RouteStored, ExistingID: f.ExistingID,
			ExistingText: f.ExistingText, Reason: f.Reason})
		t.linkContradiction(ctx, e.id, f.ExistingID, f.Reason)
	}
	return refs, out
}

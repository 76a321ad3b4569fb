package graph

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/search"
)

// knowmind_retrieve's chronological and profile modes, the semantic profiles every retrieve and
// replay answer carries, and the memory listing replay shares with the chronological mode. The
// relevance mode is recall (recall.go); the graph mode is in retrievegraph.go.

// retrievedFields are what a retrieve answer shows of a memory: the stored preview, never the
// whole content (a document's content can be a million characters).
const retrievedFields = `uid Memory.id Memory.kind Memory.title Memory.preview Memory.category Memory.memory_type Memory.tags
    Memory.source Memory.created_at Memory.valid_from Memory.valid_to Memory.entities (orderasc: Entity.key) { Entity.type Entity.id }`

// currentMemory is a memory or document that is indexed and not superseded.
const currentMemory = `eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)`

// memoryAtTime is a memory or document the tenant held at $at: stored by then, valid from then
// or earlier, and not yet superseded then (a later valid_to is shown, not hidden).
const memoryAtTime = `eq(Memory.status, "indexed") AND le(Memory.created_at, $at) AND le(Memory.valid_from, $at) AND ` +
	`(NOT has(Memory.valid_to) OR gt(Memory.valid_to, $at))`

const corpusKinds = `eq(Memory.kind, ["memory", "document"])`

type dgRetrieved struct {
	UID        string     `json:"uid"`
	ID         string     `json:"Memory.id"`
	Kind       string     `json:"Memory.kind"`
	Title      string     `json:"Memory.title"`
	Preview    string     `json:"Memory.preview"`
	Category   string     `json:"Memory.category"`
	MemoryType string     `json:"Memory.memory_type"`
	Tags       []string   `json:"Memory.tags"`
	Source     string     `json:"Memory.source"`
	CreatedAt  time.Time  `json:"Memory.created_at"`
	ValidFrom  time.Time  `json:"Memory.valid_from"`
	ValidTo    *time.Time `json:"Memory.valid_to"`
	Entities   []dgEntity `json:"Memory.entities"`
}

func (m dgRetrieved) domain() knowmind.RetrievedMemory {
	out := knowmind.RetrievedMemory{ID: m.ID, Kind: m.Kind, Title: m.Title, Content: m.Preview, Category: m.Category,
		MemoryType: m.MemoryType, Tags: m.Tags, Source: m.Source, CreatedAt: m.CreatedAt, ValidFrom: m.ValidFrom, ValidTo: m.ValidTo}
	for _, e := range m.Entities {
		out.Entities = append(out.Entities, e.ref())
	}
	out.FirstEntity()
	return out
}

// memoryFilter narrows a memory listing. At nil lists current memories.
type memoryFilter struct {
	At         *time.Time
	Query      string // any of its words, German or English analysis
	Category   string
	EntityType string
	EntityKey  string
	Limit      int
}

// memoryListQuery renders the listing: candidates from the most selective input (the query's
// chunks, the entity's memories, or every memory), filtered by time, kind, category and entity,
// newest valid_from first, limit of them, and how many matched.
func memoryListQuery(f memoryFilter) (string, map[string]string) {
	vars := map[string]string{"$first": strconv.Itoa(f.Limit)}
	var head, blocks []string
	head = append(head, "$first: int")
	filter := []string{corpusKinds}
	if f.At != nil {
		vars["$at"] = formatTime(*f.At)
		head = append(head, "$at: string")
		filter = append(filter, memoryAtTime)
	} else {
		filter = append(filter, currentMemory)
	}
	root := corpusKinds
	if f.Query != "" {
		vars["$q"] = f.Query
		head = append(head, "$q: string")
		blocks = append(blocks, "  var(func: anyoftext(Chunk.text@de, $q)) { QD as ~Memory.chunks }",
			"  var(func: anyoftext(Chunk.text, $q)) { QE as ~Memory.chunks }")
		root = "uid(QD, QE)"
	}
	// byEntity narrows to the memories of the entities whose pred equals value: the root when
	// nothing narrower is, else a filter.
	byEntity := func(pred, value, param, set string) {
		if value == "" {
			return
		}
		vars[param] = value
		head = append(head, param+": string")
		blocks = append(blocks, fmt.Sprintf("  var(func: eq(%s, %s)) { %s as ~Memory.entities }", pred, param, set))
		if root == corpusKinds {
			root = "uid(" + set + ")"
		} else {
			filter = append(filter, "uid("+set+")")
		}
	}
	byEntity("Entity.key", f.EntityKey, "$ekey", "EK")
	byEntity("Entity.type", f.EntityType, "$etype", "ET")
	if f.Category != "" {
		vars["$cat"] = f.Category
		head = append(head, "$cat: string")
		filter = append(filter, "eq(Memory.category, $cat)")
	}
	q := fmt.Sprintf(`query q(%s) {
%s
  M as var(func: %s) @filter(%s)
  m(func: uid(M), orderdesc: Memory.valid_from, first: $first) { %s }
  n(func: uid(M)) { count(uid) }
}`, strings.Join(head, ", "), strings.Join(blocks, "\n"), root, strings.Join(filter, " AND "), retrievedFields)
	return q, vars
}

// listMemories runs memoryListQuery: the memories newest valid first and whether more matched.
func (t *Tenant) listMemories(ctx context.Context, f memoryFilter) ([]knowmind.RetrievedMemory, bool, error) {
	q, vars := memoryListQuery(f)
	var out struct {
		M []dgRetrieved
		N []struct{ Count int }
	}
	if err := t.queryVars(ctx, q, vars, &out); err != nil {
		return nil, false, err
	}
	ms := make([]knowmind.RetrievedMemory, 0, len(out.M))
	for _, m := range out.M {
		if m.ID != "" {
			ms = append(ms, m.domain())
		}
	}
	return ms, len(out.N) > 0 && out.N[0].Count > len(ms), nil
}

// checkRetrieveFilters bounds the filters every mode shares.
func checkRetrieveFilters(query, category, entityType string) error {
	if utf8.RuneCountInString(query) > knowmind.RecallMaxQueryChars {
		return knowmind.InvalidParam("query", "query exceeds %d characters", knowmind.RecallMaxQueryChars)
	}
	if utf8.RuneCountInString(category) > knowmind.MaxFilterChars {
		return knowmind.InvalidParam("category", "category exceeds %d characters", knowmind.MaxFilterChars)
	}
	if utf8.RuneCountInString(entityType) > knowmind.MaxFilterChars {
		return knowmind.InvalidParam("entity_type", "entity_type exceeds %d characters", knowmind.MaxFilterChars)
	}
	return nil
}

// Chronological lists current memories newest valid first, filtered (knowmind_retrieve
// sort_by chronological), with the profiles of the entities they name.
func (t *Tenant) Chronological(ctx context.Context, q knowmind.RetrieveQuery) (knowmind.RetrieveResult, error) {
	start := time.Now()
	if err := checkRetrieveFilters(q.Query, q.Category, q.EntityType); err != nil {
		return knowmind.RetrieveResult{}, err
	}
	f := memoryFilter{Query: strings.TrimSpace(q.Query), Category: q.Category, EntityType: q.EntityType, Limit: q.Limit}
	if q.Entity != nil {
		f.EntityKey = entityKey(q.Entity.Type, q.Entity.ID)
	}
	ms, more, err := t.listMemories(ctx, f)
	if err != nil {
		return knowmind.RetrieveResult{}, fmt.Errorf("retrieve chronological: %w", err)
	}
	return t.finishRetrieve(ctx, knowmind.SortChronological, ms, more, start)
}

// finishRetrieve adds the semantic profiles of the memories' entities and the token count.
func (t *Tenant) finishRetrieve(ctx context.Context, sortBy string, ms []knowmind.RetrievedMemory, more bool, start time.Time) (knowmind.RetrieveResult, error) {
	res := knowmind.RetrieveResult{SortBy: sortBy, Memories: ms, Truncated: more}
	if res.Memories == nil {
		res.Memories = []knowmind.RetrievedMemory{}
	}
	var keys []string
	seen := map[string]bool{}
	for _, m := range ms {
		for _, e := range m.Entities {
			if k := entityKey(e.Type, e.ID); !seen[k] && len(keys) < knowmind.MaxProfiles {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	profiles, err := t.profiles(ctx, profileRoot{keys: keys}, "", knowmind.MaxProfiles)
	if err != nil {
		return res, err
	}
	res.SemanticProfiles = profiles
	res.ContextTokens = knowmind.CountContextTokens(res.Memories)
	res.ElapsedMS = time.Since(start).Milliseconds()
	return res, nil
}

// profileRoot says which entities to profile: keys, one key, a type, or all.
type profileRoot struct {
	keys       []string
	entityType string
}

// semanticProfileQuery counts each entity's current facts (of a category when given) and reads the
// newest of them, for the entities with most facts first.
const semanticProfileQuery = `query q(%s) {
  var(func: %s) { c as count(~Memory.entities @filter(%s)) }
  p(func: uid(c), orderdesc: val(c), first: %d) @filter(gt(val(c), 0)) {
    Entity.type Entity.id Entity.name
    n: val(c)
    f: ~Memory.entities (orderdesc: Memory.created_at, first: %d) @filter(%s) {
      Memory.id Memory.title Memory.preview Memory.category Memory.created_at
    }
  }
}`

// profileFactChars bounds one fact's text in a profile.
const profileFactChars = 300

// profiles condenses entities into semantic profiles: always their current facts.
func (t *Tenant) profiles(ctx context.Context, r profileRoot, category string, limit int) ([]knowmind.SemanticProfile, error) {
	out := []knowmind.SemanticProfile{}
	vars := map[string]string{}
	var head []string
	root := "has(Entity.key)"
	switch {
	case r.keys != nil && len(r.keys) == 0:
		return out, nil
	case r.keys != nil:
		root = fmt.Sprintf("eq(Entity.key, [%s])", quoteAll(r.keys))
	case r.entityType != "":
		root = "eq(Entity.type, $etype)"
		vars["$etype"] = r.entityType
		head = append(head, "$etype: string")
	}
	facts := `eq(Memory.status, "indexed") AND NOT has(Memory.valid_to) AND ` + corpusKinds
	if category != "" {
		facts += " AND eq(Memory.category, $cat)"
		vars["$cat"] = category
		head = append(head, "$cat: string")
	}
	q := fmt.Sprintf(semanticProfileQuery, strings.Join(head, ", "), root, facts, limit, knowmind.ProfileMaxFacts, facts)
	if len(head) == 0 {
		q = strings.Replace(q, "query q()", "", 1)
	}
	var res struct {
		P []struct {
			dgEntity
			N int `json:"n"`
			F []struct {
				ID        string    `json:"Memory.id"`
				Title     string    `json:"Memory.title"`
				Preview   string    `json:"Memory.preview"`
				Category  string    `json:"Memory.category"`
				CreatedAt time.Time `json:"Memory.created_at"`
			} `json:"f"`
		}
	}
	if err := t.queryVars(ctx, q, vars, &res); err != nil {
		return nil, fmt.Errorf("semantic profiles: %w", err)
	}
	for _, p := range res.P {
		sp := knowmind.SemanticProfile{Type: p.Type, ID: p.ID, Name: p.Name, FactCount: p.N, Facts: []knowmind.ProfileFact{}}
		var texts []string
		for _, f := range p.F {
			text := strings.Join(strings.Fields(f.Preview), " ")
			if text == "" {
				text = f.Title
			}
			text = runes.Truncate(text, profileFactChars)
			sp.Facts = append(sp.Facts, knowmind.ProfileFact{MemoryID: f.ID, Text: text, Category: f.Category, CreatedAt: f.CreatedAt})
			texts = append(texts, strings.TrimRight(text, ". ")+".")
		}
		name := sp.Name
		if name == "" {
			name = sp.ID
		}
		sp.Summary = fmt.Sprintf("%s (%s): %s", name, sp.Type, strings.Join(texts, " "))
		out = append(out, sp)
	}
	return out, nil
}

// Profiles answers knowmind_retrieve sort_by profile: per entity (of a type, or one entity)
// a condensed profile of its current facts, entities with most facts first; memories are the
// facts the profiles quote, newest first, at most limit.
func (t *Tenant) Profiles(ctx context.Context, q knowmind.RetrieveQuery) (knowmind.RetrieveResult, error) {
	start := time.Now()
	if err := checkRetrieveFilters(q.Query, q.Category, q.EntityType); err != nil {
		return knowmind.RetrieveResult{}, err
	}
	r := profileRoot{entityType: q.EntityType}
	if q.Entity != nil {
		r = profileRoot{keys: []string{entityKey(q.Entity.Type, q.Entity.ID)}}
	}
	limit := min(q.Limit, knowmind.MaxProfiles)
	profiles, err := t.profiles(ctx, r, q.Category, limit)
	if err != nil {
		return knowmind.RetrieveResult{}, err
	}
	var ids []string
	seen := map[string]bool{}
	more := false
	for _, p := range profiles {
		more = more || p.FactCount > len(p.Facts)
		for _, f := range p.Facts {
			if !seen[f.MemoryID] {
				seen[f.MemoryID] = true
				ids = append(ids, f.MemoryID)
			}
		}
	}
	ms, err := t.retrievedByID(ctx, ids)
	if err != nil {
		return knowmind.RetrieveResult{}, err
	}
	if len(ms) > q.Limit {
		ms, more = ms[:q.Limit], true
	}
	res := knowmind.RetrieveResult{SortBy: knowmind.SortProfile, Memories: ms, SemanticProfiles: profiles, Truncated: more,
		ContextTokens: knowmind.CountContextTokens(ms), ElapsedMS: time.Since(start).Milliseconds()}
	return res, nil
}

const retrievedByIDQuery = `{
  m(func: eq(Memory.id, [%s]), orderdesc: Memory.created_at) { %s }
}`

// retrievedByID reads memories by id, newest first (never nil).
func (t *Tenant) retrievedByID(ctx context.Context, ids []string) ([]knowmind.RetrievedMemory, error) {
	out := []knowmind.RetrievedMemory{}
	if len(ids) == 0 {
		return out, nil
	}
	var res struct{ M []dgRetrieved }
	if err := t.queryVars(ctx, fmt.Sprintf(retrievedByIDQuery, quoteAll(ids), retrievedFields), nil, &res); err != nil {
		return nil, fmt.Errorf("read memories: %w", err)
	}
	for _, m := range res.M {
		out = append(out, m.domain())
	}
	return out, nil
}

// RetrieveRelevance is knowmind_retrieve's relevance mode: recall's ranking of what scope may
// see, with the category and entity-type filters applied before the limit (a filter only the
// 30th best memory passes still returns it), each hit completed into a retrieve memory (its
// content and score, the memory's fields) with profiles. One more hit than the limit is asked
// for, to tell a truncated answer.
func (t *Tenant) RetrieveRelevance(ctx context.Context, scope knowmind.NoteScope, q knowmind.RetrieveQuery) (knowmind.RetrieveResult, error) {
	start := time.Now()
	f := recallFilter{keep: visibleTo(scope, nil)}
	if q.Category != "" || q.EntityType != "" {
		f.memory = func(category string, entities []knowmind.EntityRef) bool {
			return (q.Category == "" || category == q.Category) && (q.EntityType == "" || namesType(entities, q.EntityType))
		}
	}
	r, _, err := t.recall(ctx, knowmind.RecallQuery{Query: q.Query, K: min(q.Limit+1, knowmind.RecallMaxK),
		Hops: knowmind.RecallDefaultHops, MinScore: q.MinScore}, search.Default(), nil, f)
	if err != nil {
		return knowmind.RetrieveResult{}, err
	}
	hits := r.Hits
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.MemoryID
	}
	ms, err := t.retrievedByID(ctx, ids)
	if err != nil {
		return knowmind.RetrieveResult{}, err
	}
	byID := map[string]knowmind.RetrievedMemory{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	var out []knowmind.RetrievedMemory
	more := false
	for _, h := range hits {
		m, ok := byID[h.MemoryID]
		if !ok {
			continue
		}
		if len(out) == q.Limit {
			more = true
			break
		}
		score := h.Score
		m.Score, m.Content = &score, h.Content
		out = append(out, m)
	}
	return t.finishRetrieve(ctx, knowmind.SortRelevance, out, more, start)
}

func namesType(refs []knowmind.EntityRef, typ string) bool {
	for _, r := range refs {
		if r.Type == typ {
			return true
		}
	}
	return false
}

package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/knowmind/knowmind"
)

// Briefing reads what knowmind_briefing is made of (knowmind.BuildBriefing):
// open goals, open conflicts (CONTRADICTS edges without valid_to between two
// current memories), open drafts and current memories — since a time (by
// creation) and about an entity when given, knowmind.BriefingSourceLimit of each.

const briefingMemFields = `Memory.id Memory.title Memory.content Memory.created_at Memory.entities { Entity.type Entity.id }`

const briefingCurrent = `eq(Memory.status, "indexed") AND NOT has(Memory.valid_to)`

type dgBriefMem struct {
	ID        string     `json:"Memory.id"`
	Title     string     `json:"Memory.title"`
	Content   string     `json:"Memory.content"`
	CreatedAt time.Time  `json:"Memory.created_at"`
	Entities  []dgEntity `json:"Memory.entities"`
}

func (m dgBriefMem) domain() knowmind.BriefingMemory {
	out := knowmind.BriefingMemory{ID: m.ID, Title: m.Title, Content: m.Content, CreatedAt: m.CreatedAt}
	for _, e := range m.Entities {
		out.Entities = append(out.Entities, e.ref())
	}
	return out
}

func names(refs []knowmind.EntityRef, e *knowmind.EntityRef) bool {
	if e == nil {
		return true
	}
	for _, r := range refs {
		if r == *e {
			return true
		}
	}
	return false
}

// Briefing returns the input of an extractive briefing.
func (t *Tenant) Briefing(ctx context.Context, since *time.Time, entity *knowmind.EntityRef, maxTokens int) (knowmind.BriefingInput, error) {
	now := time.Now().UTC()
	in := knowmind.BriefingInput{Since: since, Entity: entity, MaxTokens: maxTokens, Now: now}
	sinceFilter := ""
	vars := map[string]string{}
	if since != nil {
		sinceFilter = ` AND ge(Memory.created_at, $since)`
		vars["$since"] = since.UTC().Format(time.RFC3339Nano)
	}
	var q string
	if entity != nil {
		vars["$key"] = entityKey(entity.Type, entity.ID)
		q = fmt.Sprintf(`query q($since: string, $key: string) {
  e(func: eq(Entity.key, $key)) {
    m: ~Memory.entities (orderdesc: Memory.created_at, first: %d) @filter(%s%s) { %s }
  }
  c(func: has(<%s>), first: %d) @filter(%s AND uid_in(Memory.entities, uid(ent))) {
    %s <%s> @facets(%s) @filter(%s) { %s }
  }
  ent as var(func: eq(Entity.key, $key))
}`, knowmind.BriefingSourceLimit, briefingCurrent, sinceFilter, briefingMemFields,
			RelContradicts, knowmind.BriefingSourceLimit, briefingCurrent, briefingMemFields, RelContradicts, openFacetFilter, briefingCurrent, briefingMemFields)
	} else {
		q = fmt.Sprintf(`query q($since: string) {
  m(func: eq(Memory.kind, ["memory", "document"]), orderdesc: Memory.created_at, first: %d) @filter(%s%s) { %s }
  c(func: has(<%s>), first: %d) @filter(%s) {
    %s <%s> @facets(%s) @filter(%s) { %s }
  }
}`, knowmind.BriefingSourceLimit, briefingCurrent, sinceFilter, briefingMemFields,
			RelContradicts, knowmind.BriefingSourceLimit, briefingCurrent, briefingMemFields, RelContradicts, openFacetFilter, briefingCurrent, briefingMemFields)
	}
	type conflictNode struct {
		dgBriefMem
		Other []dgBriefMem `json:"CONTRADICTS"`
	}
	var out struct {
		E []struct {
			M []dgBriefMem `json:"m"`
		}
		M []dgBriefMem
		C []conflictNode
	}
	if err := t.queryVars(ctx, q, vars, &out); err != nil {
		return in, fmt.Errorf("briefing: %w", err)
	}
	mems := out.M
	for _, e := range out.E {
		mems = append(mems, e.M...)
	}
	for _, m := range mems {
		in.Memories = append(in.Memories, m.domain())
	}
	seen := map[string]bool{}
	for _, c := range out.C {
		for _, o := range c.Other {
			a, b := c.domain(), o.domain()
			if a.ID > b.ID {
				a, b = b, a
			}
			if seen[a.ID+"|"+b.ID] {
				continue
			}
			seen[a.ID+"|"+b.ID] = true
			if since != nil && a.CreatedAt.Before(*since) && b.CreatedAt.Before(*since) {
				continue
			}
			in.Conflicts = append(in.Conflicts, knowmind.BriefingConflict{A: a, B: b})
		}
	}
	drafts, err := t.ListDrafts(ctx, knowmind.DraftOpen, knowmind.BriefingSourceLimit)
	if err != nil {
		return in, err
	}
	for _, d := range drafts {
		if (since == nil || !d.CreatedAt.Before(*since)) && names(d.Entities, entity) {
			in.Drafts = append(in.Drafts, d)
		}
	}
	goals, err := t.ListGoals(ctx, knowmind.GoalOpen, knowmind.MaxGoalsListed)
	if err != nil {
		return in, err
	}
	for _, g := range goals {
		if entity != nil && !g.Due && (g.Trigger == nil || g.Trigger.Entity == nil || *g.Trigger.Entity != *entity) {
			continue // about the entity: its event goals; due goals always show
		}
		in.Goals = append(in.Goals, g)
	}
	return in, nil
}

package handlers

import (
	"context"
	"strings"

	"github.com/knowmind/knowmind"
)

// retrieveTool declares knowmind_retrieve (tools.go: toolList).
var retrieveTool = declare(tool{
	Name:  "knowmind_retrieve",
	Title: "Retrieve memories four ways",
	Description: "Memories by sort_by: relevance (knowmind_recall's ranking), chronological (newest valid first, " +
		"filtered), profile (each entity's current facts) or graph (relations from start_memory_id). Each memory " +
		"with its entities.",
	Vocabulary: true,
	Scope:      knowmind.ScopeRead,
	ReadOnly:   true,
	Toolset:    knowmind.ToolsetEngine,
}, (*service).retrieve)

// RetrieveParams are knowmind_retrieve's parameters (seed 001, memory_retrieve).
type RetrieveParams struct {
	SortBy     string       `json:"sort_by,omitempty" jsonschema:"default relevance" validate:"omitempty,oneof=relevance chronological profile graph"`
	Query      string       `json:"query,omitempty" jsonschema:"relevance: the question (required); chronological: any of these words" validate:"max=4000"`
	Limit      *int         `json:"limit,omitempty" jsonschema:"most memories (profile: profiles) to return (default 10; relevance at most 25)" validate:"omitnil,min=1,max=100"`
	Category   string       `json:"category,omitempty" jsonschema:"only memories (profile: facts) of this category" validate:"max=200"`
	EntityType string       `json:"entity_type,omitempty" jsonschema:"only memories naming an entity of this type; profile: only entities of this type" validate:"max=200"`
	Entity     *EntityParam `json:"entity,omitempty" jsonschema:"chronological: only memories naming this entity; profile: only its profile"`
	// Graph mode.
	StartMemoryID string   `json:"start_memory_id,omitempty" jsonschema:"graph: the memory to start from (required)" validate:"max=200"`
	RelationTypes []string `json:"relation_types,omitempty" jsonschema:"graph: only these relation types (default: all but version history)" validate:"max=20,dive,max=64"`
	MaxDepth      *int     `json:"max_depth,omitempty" jsonschema:"graph: hops from the start memory (default 3)" validate:"omitnil,min=1,max=5"`
	// MinScore is recall's floor, for the relevance mode.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"relevance: leave out memories scoring below this (default 0.1; 0 keeps all)" validate:"omitnil,min=0,max=1"`
}

// RetrieveResult is the answer of every mode: memories with entities, semantic profiles,
// context tokens, and in graph mode the relations crossed.
type RetrieveResult = knowmind.RetrieveResult

func (s *service) retrieve(ctx context.Context, p RetrieveParams) (RetrieveResult, error) {
	q := knowmind.RetrieveQuery{SortBy: p.SortBy, Query: p.Query, Limit: intOr(p.Limit, knowmind.RetrieveDefaultLimit),
		Category: p.Category, EntityType: p.EntityType, StartMemoryID: p.StartMemoryID, RelationTypes: p.RelationTypes,
		MaxDepth: intOr(p.MaxDepth, knowmind.GraphDefaultDepth)}
	if q.SortBy == "" {
		q.SortBy = knowmind.SortRelevance
	}
	if e := p.Entity; e != nil {
		id := e.ID
		if id == "" {
			id = knowmind.EntitySlug(e.Name)
		}
		if id == "" {
			return RetrieveResult{}, knowmind.InvalidParam("entity", "entity needs an id or a name")
		}
		q.Entity = &knowmind.EntityRef{Type: e.Type, ID: id}
	}
	if q.SortBy == knowmind.SortGraph && strings.TrimSpace(q.StartMemoryID) == "" {
		return RetrieveResult{}, knowmind.InvalidParam("start_memory_id", "sort_by graph needs start_memory_id")
	}
	if q.SortBy == knowmind.SortRelevance && strings.TrimSpace(q.Query) == "" {
		return RetrieveResult{}, knowmind.InvalidParam("query", "sort_by relevance needs a query")
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return RetrieveResult{}, err
	}
	switch q.SortBy {
	case knowmind.SortChronological:
		return t.Chronological(ctx, q)
	case knowmind.SortProfile:
		return t.Profiles(ctx, q)
	case knowmind.SortGraph:
		return t.RetrieveGraph(ctx, q)
	}
	// Relevance: knowmind_recall's ranking and floor, at most RecallMaxK.
	q.Limit, q.MinScore = min(q.Limit, knowmind.RecallMaxK), floatOr(p.MinScore, knowmind.RecallMinScore)
	scope, err := noteScope(ctx)
	if err != nil {
		return RetrieveResult{}, err
	}
	return t.RetrieveRelevance(ctx, scope, q)
}

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// recallTool declares knowmind_recall (tools.go: toolList).
var recallTool = declare(tool{
	Name:  "knowmind_recall",
	Title: "Recall",
	Description: "Answers a question from memory (what do we know, what was decided about X): current memories and document " +
		"sections ranked by full text (German, English), vectors and graph hops. Scores are absolute (1 = every query word); " +
		"below min_score left out, so few or none is a real answer. The past: knowmind_recall_at_time.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetMemory,
}, (*service).recall)

// RecallParams are knowmind_recall's parameters.
type RecallParams struct {
	Query string `json:"query" jsonschema:"natural-language question" validate:"required,notblank,max=4000"`
	K     *int   `json:"k,omitempty" jsonschema:"number of hits (default 5)" validate:"omitnil,min=1,max=25"`
	Hops  *int   `json:"hops,omitempty" jsonschema:"graph hops over relations (default 2)" validate:"omitnil,min=0,max=3"`
	// MinScore is not in the spec: an optional extra that only narrows the answer.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out hits scoring below this (default 0.1; 0 keeps all)" validate:"omitnil,min=0,max=1"`
}

// RecallResult holds the hits, best first, with scores in 0..1, the time the recall took and
// which reranker ordered them ("none" when none is configured).
type RecallResult struct {
	Hits      []RecallHit `json:"hits"`
	ElapsedMS int64       `json:"elapsed_ms"`
	Rerank    string      `json:"rerank"`
}

// RecallHit is one hit with every field of the spec's example always present (source is ""
// when the memory names none), so an agent reads the same shape for every hit.
type RecallHit struct {
	MemoryID string  `json:"memory_id"`
	Kind     string  `json:"kind"`
	Title    string  `json:"title"`
	Content  string  `json:"content"`
	Score    float64 `json:"score"`
	Source   string  `json:"source"`
	// Entities the memory names and the first as entity_type/entity_id (seed 001).
	Entities   []knowmind.EntityRef `json:"entities"`
	EntityType string               `json:"entity_type,omitempty"`
	EntityID   string               `json:"entity_id,omitempty"`
}

// recall searches what the caller may see of its tenant by full text (BM25), vectors and graph
// hops (graph.Tenant.RecallVisible). Superseded versions and failed ingests never appear.
func (s *service) recall(ctx context.Context, p RecallParams) (RecallResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return RecallResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RecallResult{}, err
	}
	r, err := t.RecallVisible(ctx, scope, knowmind.RecallQuery{
		Query:    p.Query,
		K:        intOr(p.K, knowmind.RecallDefaultK),
		Hops:     intOr(p.Hops, knowmind.RecallDefaultHops),
		MinScore: floatOr(p.MinScore, knowmind.RecallMinScore),
	})
	if err == nil {
		err = t.AttachEntities(ctx, r.Hits)
	}
	if err != nil {
		return RecallResult{}, err
	}
	out := RecallResult{Hits: make([]RecallHit, len(r.Hits)), ElapsedMS: r.ElapsedMS, Rerank: r.Rerank}
	for i, h := range r.Hits {
		out.Hits[i] = RecallHit{MemoryID: h.MemoryID, Kind: h.Kind, Title: h.Title, Content: h.Content, Score: h.Score, Source: h.Source,
			Entities: h.Entities, EntityType: h.EntityType, EntityID: h.EntityID}
	}
	return out, nil
}

package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// recallAtTimeTool declares knowmind_recall_at_time (tools.go: toolList).
var recallAtTimeTool = declare(tool{
	Name:  "knowmind_recall_at_time",
	Title: "Recall at a point in time",
	Description: "knowmind_recall as the memory stood at as_of, before later changes: only memories and relations valid then, " +
		"each hit with valid_from and valid_to (\"what was true on March 14?\").",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetMemory,
}, (*service).recallAtTime)

// RecallAtTimeParams are knowmind_recall_at_time's parameters.
type RecallAtTimeParams struct {
	Query string `json:"query" jsonschema:"natural-language question" validate:"required,notblank,max=4000"`
	AsOf  string `json:"as_of,omitempty" jsonschema:"ISO 8601 time, e.g. 2026-03-14 (UTC without a zone; default now)"`
	K     *int   `json:"k,omitempty" jsonschema:"number of hits (default 5)" validate:"omitnil,min=1,max=25"`
	// MinScore is not in the spec: an optional extra that only narrows the answer.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out hits scoring below this (default 0.1; 0 keeps all)" validate:"omitnil,min=0,max=1"`
}

// RecallAtTimeResult is RecallResult with each hit's validity: valid_from, and valid_to as in
// the spec's example (null while the version is still valid).
type RecallAtTimeResult struct {
	Hits      []RecallAtTimeHit `json:"hits"`
	ElapsedMS int64             `json:"elapsed_ms"`
	Rerank    string            `json:"rerank"`
}

// RecallAtTimeHit is a RecallHit with its validity, every field always present.
type RecallAtTimeHit struct {
	MemoryID  string     `json:"memory_id"`
	Kind      string     `json:"kind"`
	Title     string     `json:"title"`
	Content   string     `json:"content"`
	Score     float64    `json:"score"`
	Source    string     `json:"source"`
	ValidFrom time.Time  `json:"valid_from"`
	ValidTo   *time.Time `json:"valid_to"`
	// Entities the memory names and the first as entity_type/entity_id (seed 001).
	Entities   []knowmind.EntityRef `json:"entities"`
	EntityType string               `json:"entity_type,omitempty"`
	EntityID   string               `json:"entity_id,omitempty"`
}

// recallAtTime recalls what was valid at as_of: memories with valid_from <= as_of and valid_to
// unset or later, over relations valid then (graph hops: the default 2).
func (s *service) recallAtTime(ctx context.Context, p RecallAtTimeParams) (RecallAtTimeResult, error) {
	asOf := time.Now().UTC()
	if strings.TrimSpace(p.AsOf) != "" {
		var err error
		if asOf, err = parseISO8601(p.AsOf); err != nil {
			return RecallAtTimeResult{}, err
		}
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return RecallAtTimeResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return RecallAtTimeResult{}, err
	}
	r, err := t.RecallVisible(ctx, scope, knowmind.RecallQuery{
		Query:    p.Query,
		K:        intOr(p.K, knowmind.RecallDefaultK),
		Hops:     knowmind.RecallDefaultHops,
		AsOf:     &asOf,
		MinScore: floatOr(p.MinScore, knowmind.RecallMinScore),
	})
	if err == nil {
		err = t.AttachEntities(ctx, r.Hits)
	}
	if err != nil {
		return RecallAtTimeResult{}, err
	}
	out := RecallAtTimeResult{Hits: make([]RecallAtTimeHit, len(r.Hits)), ElapsedMS: r.ElapsedMS, Rerank: r.Rerank}
	for i, h := range r.Hits {
		out.Hits[i] = RecallAtTimeHit{MemoryID: h.MemoryID, Kind: h.Kind, Title: h.Title, Content: h.Content,
			Score: h.Score, Source: h.Source, ValidTo: h.ValidTo, Entities: h.Entities, EntityType: h.EntityType, EntityID: h.EntityID}
		if h.ValidFrom != nil {
			out.Hits[i].ValidFrom = *h.ValidFrom
		}
	}
	return out, nil
}

// iso8601Layouts are the ISO 8601 forms as_of accepts: a full timestamp with a zone (Z or
// ±hh:mm, fractions allowed), one without a zone (read as UTC), and a calendar date (midnight
// UTC), each in the extended form (2026-03-14T00:00:00Z) and the basic one (20260314T000000Z).
var iso8601Layouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02",
	"20060102T150405.999999999Z0700", "20060102T150405.999999999", "20060102T1504Z0700", "20060102T1504", "20060102"}

func parseISO8601(s string) (time.Time, error) { return parseISO8601Param("as_of", s) }

// parseISO8601Param parses s (iso8601Layouts); an error names param.
func parseISO8601Param(param, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range iso8601Layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, knowmind.InvalidParam(param, "%s must be an ISO 8601 date or time, e.g. 2026-03-14T00:00:00Z", param)
}

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// replayTool declares knowmind_replay (tools.go: toolList).
var replayTool = declare(tool{
	Name:  "knowmind_replay",
	Title: "Replay a moment",
	Description: "The workspace as it stood at timestamp: memories valid then, including ones superseded later, and notes " +
		"as they read then, newest first; filters as knowmind_retrieve.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetEngine,
}, (*service).replay)

// ReplayParams are knowmind_replay's parameters (seed 001, memory_replay).
type ReplayParams struct {
	Timestamp  string `json:"timestamp" jsonschema:"ISO 8601 time, e.g. 2026-03-14 (UTC without a zone)" validate:"required,notblank,max=64"`
	Query      string `json:"query,omitempty" jsonschema:"only memories containing any of these words" validate:"max=4000"`
	Category   string `json:"category,omitempty" jsonschema:"only memories of this category" validate:"max=200"`
	EntityType string `json:"entity_type,omitempty" jsonschema:"only memories naming an entity of this type" validate:"max=200"`
	Limit      *int   `json:"limit,omitempty" jsonschema:"most memories to return, 1 to 100 (default 50)" validate:"omitnil,min=1,max=100"`
}

// ReplayResult has knowmind_retrieve's shape, with as_of and sort_by "replay".
type ReplayResult = knowmind.RetrieveResult

// replay shows what the tenant knew at timestamp: memories stored by then and valid then,
// superseded ones included with the valid_to they got later, newest valid first.
func (s *service) replay(ctx context.Context, p ReplayParams) (ReplayResult, error) {
	at, err := parseISO8601Param("timestamp", p.Timestamp)
	if err != nil {
		return ReplayResult{}, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return ReplayResult{}, err
	}
	return t.Replay(ctx, knowmind.ReplayQuery{At: at, Query: p.Query, Category: p.Category, EntityType: p.EntityType,
		Limit: intOr(p.Limit, knowmind.ReplayDefaultLimit)})
}

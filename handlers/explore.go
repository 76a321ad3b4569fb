package handlers

import (
	"context"
	"strings"

	"github.com/knowmind/knowmind"
)

// exploreTool declares knowmind_explore (tools.go: toolList).
var exploreTool = declare(tool{
	Name:  "knowmind_explore",
	Title: "Explore a memory",
	Description: "One memory as a graph: its content, version chain and the memories within hops relations, with the edges " +
		"between them; as_of shows it as it was then.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetMemory,
}, (*service).explore)

// ExploreParams are knowmind_explore's parameters.
type ExploreParams struct {
	MemoryID string `json:"memory_id" jsonschema:"id of the memory at the centre" validate:"required,notblank,max=200"`
	Hops     *int   `json:"hops,omitempty" jsonschema:"relations to follow from the centre (default 1)" validate:"omitnil,min=1,max=3"`
	AsOf     string `json:"as_of,omitempty" jsonschema:"ISO 8601 time (default now): the graph as it was then"`
}

// ExploreResult is the centre (content, chunks, version chain) and its
// neighbourhood: nodes and typed, directed edges.
type ExploreResult = knowmind.ExploreResult

// explore reads one memory of the caller's tenant as the graph explorer shows
// it (graph.Tenant.Explore): 404 for an unknown memory.
func (s *service) explore(ctx context.Context, p ExploreParams) (ExploreResult, error) {
	q := knowmind.ExploreQuery{MemoryID: p.MemoryID, Hops: intOr(p.Hops, knowmind.ExploreDefaultHops)}
	if strings.TrimSpace(p.AsOf) != "" {
		asOf, err := parseISO8601(p.AsOf)
		if err != nil {
			return ExploreResult{}, err
		}
		q.AsOf = &asOf
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return ExploreResult{}, err
	}
	return t.Explore(ctx, q)
}

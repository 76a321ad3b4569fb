package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// listRelationsTool declares knowmind_list_relations (tools.go: toolList).
var listRelationsTool = declare(tool{
	Name:  "knowmind_list_relations",
	Title: "Relations of a memory",
	Description: "Which memories this one is related to: its current relations in and out (type, peer id and title). For " +
		"the neighbourhood with contents use knowmind_explore.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetMemory,
}, (*service).listRelations)

// ListRelationsParams are knowmind_list_relations' parameters.
type ListRelationsParams struct {
	MemoryID string `json:"memory_id" jsonschema:"memory id" validate:"required,notblank,max=200"`
}

// ListRelationsResult lists the memory's current outgoing and incoming edges.
type ListRelationsResult = knowmind.RelationsResult

// listRelations lists the open edges of one memory of the caller's tenant
// (404 for an unknown memory).
func (s *service) listRelations(ctx context.Context, p ListRelationsParams) (ListRelationsResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListRelationsResult{}, err
	}
	res, err := t.ListRelations(ctx, p.MemoryID)
	if err != nil {
		return ListRelationsResult{}, err
	}
	// The spec shows arrays: never null.
	if res.Outgoing == nil {
		res.Outgoing = []knowmind.OutEdge{}
	}
	if res.Incoming == nil {
		res.Incoming = []knowmind.InEdge{}
	}
	return res, nil
}

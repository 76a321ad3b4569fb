package handlers

import (
	"context"
	"slices"
	"strings"

	"github.com/knowmind/knowmind"
)

// listEntitiesTool declares knowmind_list_entities (tools.go: toolList).
var listEntitiesTool = declare(tool{
	Name:        "knowmind_list_entities",
	Title:       "List entities",
	Description: "The entities facts are about (type, id, name, aliases) with the number of current facts naming each.",
	Vocabulary:  true,
	Scope:       knowmind.ScopeRead,
	ReadOnly:    true,
	Toolset:     knowmind.ToolsetEngine,
}, (*service).listEntities)

// ListEntitiesParams are knowmind_list_entities' parameters.
type ListEntitiesParams struct {
	Type  string `json:"type,omitempty" jsonschema:"only entities of this type (see the tool description)" validate:"max=64"`
	Limit *int   `json:"limit,omitempty" jsonschema:"at most this many, 1 to 500 (default 100)" validate:"omitnil,min=1,max=500"`
}

// ListEntitiesResult lists entities in type/id order.
type ListEntitiesResult struct {
	Entities []knowmind.Entity `json:"entities"`
	Count    int               `json:"count"`
}

// listEntities lists the caller's entities with the number of current facts naming each.
func (s *service) listEntities(ctx context.Context, p ListEntitiesParams) (ListEntitiesResult, error) {
	if types, _ := s.engine.vocab.get(); p.Type != "" && !slices.Contains(types, p.Type) {
		return ListEntitiesResult{}, knowmind.InvalidParam("type", "type must be one of %s", strings.Join(types, ", "))
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return ListEntitiesResult{}, err
	}
	ents, err := t.ListEntities(ctx, p.Type, intOr(p.Limit, 100))
	if err != nil {
		return ListEntitiesResult{}, err
	}
	return ListEntitiesResult{Entities: ents, Count: len(ents)}, nil
}

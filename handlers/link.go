package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// LinkParams are knowmind_link's parameters.
type LinkParams struct {
	FromID  string `json:"from_id" jsonschema:"memory id of the source node" validate:"required,notblank,max=200"`
	ToID    string `json:"to_id" jsonschema:"memory id of the target node" validate:"required,notblank,max=200"`
	RelType string `json:"rel_type" jsonschema:"edge type in UPPER_SNAKE_CASE, e.g. OWNS, FOR_CLIENT, SUPERSEDES, REFERENCES" validate:"required,notblank,max=64"`
}

// LinkResult carries the ids of the edge and of its materialised inverse.
type LinkResult = knowmind.LinkResult

// link writes from_id --rel_type--> to_id and its inverse in the caller's
// tenant. The rel_type format, the shapes and the ids are checked by the
// graph (-32602, 400 "SHACL constraint violated", 404).
func (s *service) link(ctx context.Context, p LinkParams) (LinkResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return LinkResult{}, err
	}
	if err := checkNoteLink(ctx, t, p.FromID, p.ToID); err != nil {
		return LinkResult{}, err
	}
	return t.Link(ctx, p.FromID, p.ToID, p.RelType)
}

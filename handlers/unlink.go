package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// unlinkTool declares knowmind_unlink (tools.go: toolList).
var unlinkTool = declare(tool{
	Name:  "knowmind_unlink",
	Title: "Unlink two memories",
	Description: "Removes a wrong or outdated link: closes from_id --rel_type--> to_id and its inverse, not erased, so " +
		"point-in-time reads still see it.",
	Scope:       knowmind.ScopeWrite,
	Idempotent:  true,
	Destructive: true,
	RelTypes:    true,
	Toolset:     knowmind.ToolsetMemory,
}, (*service).unlink)

// UnlinkParams are knowmind_unlink's parameters.
type UnlinkParams struct {
	FromID  string `json:"from_id" jsonschema:"memory id of the source node" validate:"required,notblank,max=200"`
	ToID    string `json:"to_id" jsonschema:"memory id of the target node" validate:"required,notblank,max=200"`
	RelType string `json:"rel_type" jsonschema:"edge type in UPPER_SNAKE_CASE, as linked" validate:"required,notblank,max=64"`
}

// UnlinkResult is {"deleted": true} once edge and inverse are closed.
type UnlinkResult = knowmind.UnlinkResult

// unlink closes from_id --rel_type--> to_id and its inverse in the caller's
// tenant (404 when no such edge is open; see docs/relations.md for why the
// record stays, closed with valid_to).
func (s *service) unlink(ctx context.Context, p UnlinkParams) (UnlinkResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return UnlinkResult{}, err
	}
	return t.Unlink(ctx, p.FromID, p.ToID, p.RelType)
}

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// LinkParams are knowmind_link's parameters.
type LinkParams struct {
	FromID  string `json:"from_id" jsonschema:"memory id of the source node" validate:"required,notblank,max=200"`
	ToID    string `json:"to_id,omitempty" jsonschema:"memory id of the target node (or give to_title)" validate:"omitempty,notblank,max=200"`
	ToTitle string `json:"to_title,omitempty" jsonschema:"instead of to_id when from_id is a note: the title of a note of its project; a forward reference, linked when a note of that title is created, if none has it yet" validate:"omitempty,notblank,max=500"`
	RelType string `json:"rel_type" jsonschema:"edge type in UPPER_SNAKE_CASE, e.g. OWNS, FOR_CLIENT, REFERENCES (not SUPERSEDES: knowmind_update_fact writes history)" validate:"required,notblank,max=64"`
	// Seed 001 (memory_link): how sure the linker is and why, recorded on the edge.
	Confidence *float64      `json:"confidence,omitempty" jsonschema:"how sure the link is, 0 to 1 (default 1)" validate:"omitnil,min=0,max=1"`
	Metadata   *LinkMetadata `json:"metadata,omitempty" jsonschema:"optional reason for the link"`
}

// LinkMetadata is memory_link's optional justification.
type LinkMetadata struct {
	Reason string `json:"reason,omitempty" jsonschema:"why the two memories are linked" validate:"max=500"`
}

// LinkResult carries the ids of the edge and of its materialised inverse (with to_title also the
// note it resolved to, or pending).
type LinkResult = knowmind.LinkResult

// link writes from_id --rel_type--> to_id and its inverse in the caller's
// tenant; with to_title (the seed's toTitle) the target is a note named by title. The rel_type format, the shapes and the ids are checked by the
// graph (-32602, 400 "SHACL constraint violated", 404).
func (s *service) link(ctx context.Context, p LinkParams) (LinkResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return LinkResult{}, err
	}
	switch {
	case p.ToID != "" && p.ToTitle != "":
		return LinkResult{}, knowmind.InvalidParam("to_title", "give to_id or to_title, not both")
	case p.ToID == "" && p.ToTitle == "":
		return LinkResult{}, knowmind.InvalidParam("to_id", "to_id is required (or to_title, for a note)")
	case p.ToTitle != "":
		scope, err := noteScope(ctx)
		if err != nil {
			return LinkResult{}, err
		}
		return t.LinkTitle(ctx, scope, p.FromID, p.ToTitle, p.RelType)
	}
	meta := knowmind.EdgeMeta{Confidence: p.Confidence, CreatedBy: actor(ctx, "knowmind_link").Principal}
	if p.Metadata != nil {
		meta.Reason = p.Metadata.Reason
	}
	return t.LinkWith(ctx, p.FromID, p.ToID, p.RelType, meta)
}

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// listDraftsTool declares knowmind_list_drafts (tools.go: toolList).
var listDraftsTool = declare(tool{
	Name:  "knowmind_list_drafts",
	Title: "List drafts",
	Description: "Facts knowmind_capture was unsure about, waiting for review (or accepted, rejected), newest first. " +
		"Drafts never appear in recall.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetEngine,
}, (*service).listDrafts)

// ListDraftsParams are knowmind_list_drafts' parameters.
type ListDraftsParams struct {
	Status string `json:"status,omitempty" jsonschema:"draft (default: waiting for review), accepted or rejected" validate:"omitempty,oneof=draft accepted rejected"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"at most this many, 1 to 200 (default 50)" validate:"omitnil,min=1,max=200"`
}

// ListDraftsResult lists drafts, newest first.
type ListDraftsResult struct {
	Drafts []knowmind.Draft `json:"drafts"`
	Count  int              `json:"count"`
}

// listDrafts lists the caller's drafts of one status.
func (s *service) listDrafts(ctx context.Context, p ListDraftsParams) (ListDraftsResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListDraftsResult{}, err
	}
	status := p.Status
	if status == "" {
		status = knowmind.DraftOpen
	}
	drafts, err := t.ListDrafts(ctx, status, intOr(p.Limit, 50))
	if err != nil {
		return ListDraftsResult{}, err
	}
	return ListDraftsResult{Drafts: drafts, Count: len(drafts)}, nil
}

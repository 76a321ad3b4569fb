package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// reviewDraftTool declares knowmind_review_draft (tools.go: toolList).
var reviewDraftTool = declare(tool{
	Name:  "knowmind_review_draft",
	Title: "Review a draft",
	Description: "Accepts a draft (it becomes a memory), rejects it, or edits and accepts it. Reviews tune " +
		"knowmind_capture's routing.",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetEngine,
}, (*service).reviewDraft)

// ReviewDraftParams are knowmind_review_draft's parameters.
type ReviewDraftParams struct {
	DraftID string `json:"draft_id" jsonschema:"id of the draft (from knowmind_capture or knowmind_list_drafts)" validate:"required,notblank,max=200"`
	Action  string `json:"action" jsonschema:"accept, reject, or edit (accept with the corrected text)" validate:"required,oneof=accept reject edit"`
	Text    string `json:"text,omitempty" jsonschema:"the corrected fact, for action edit" validate:"max=2000"`
}

// ReviewDraftResult says what became of the draft and the thresholds after it.
type ReviewDraftResult = knowmind.ReviewResult

// reviewDraft accepts, rejects or edits a draft; the caller's token is
// recorded as the reviewer.
func (s *service) reviewDraft(ctx context.Context, p ReviewDraftParams) (ReviewDraftResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ReviewDraftResult{}, err
	}
	ci, _ := ctx.Value(callKey{}).(callInfo)
	return t.ReviewDraft(ctx, knowmind.ReviewInput{DraftID: p.DraftID, Action: p.Action, Text: p.Text, Reviewer: ci.principal.TokenID})
}

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// updateFactTool declares knowmind_update_fact (tools.go: toolList).
var updateFactTool = declare(tool{
	Name:  "knowmind_update_fact",
	Title: "Update a fact (bi-temporal)",
	Description: "When a fact changed (someone moved): a new version replaces it; the current one gets " +
		"valid_to = now, the new one supersedes it and takes over its relations; nothing is erased. Only the current version.",
	Scope:      knowmind.ScopeWrite,
	ScopeError: codeForbidden,
	// Repeating a call changes nothing more: the target is no longer
	// current, so the repeat is refused (409 naming the new version).
	Idempotent: true,
	Toolset:    knowmind.ToolsetMemory,
}, (*service).updateFact)

// UpdateFactParams are knowmind_update_fact's parameters.
type UpdateFactParams struct {
	TargetID     string `json:"target_id" jsonschema:"id of the current version" validate:"required,notblank,max=200"`
	NewTitle     string `json:"new_title" jsonschema:"title of the new version" validate:"required,notblank,max=500"`
	NewContent   string `json:"new_content" jsonschema:"content of the new version" validate:"required,notblank" schema:"maxLength=1000000"`
	UpdateReason string `json:"update_reason,omitempty" jsonschema:"why it changed, e.g. address changed" validate:"max=2000"`
}

// UpdateFactResult names both versions and the SUPERSEDES edge new → old.
type UpdateFactResult = knowmind.UpdateFactResult

// updateFact supersedes target_id with a new version in the caller's tenant
// (bi-temporal, nothing deleted; see graph.Tenant.UpdateFact): 404 for an
// unknown target, 409 naming the current version for a superseded one.
func (s *service) updateFact(ctx context.Context, p UpdateFactParams) (UpdateFactResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return UpdateFactResult{}, err
	}
	res, err := t.UpdateFact(ctx, knowmind.UpdateFactInput{
		TargetID: p.TargetID, NewTitle: p.NewTitle, NewContent: p.NewContent, UpdateReason: p.UpdateReason,
	})
	return res, err
}

// precheck answers a new_content over the limit as -32603 too_large, as
// store_memory does, before the SDK's maxLength check would.
func (p UpdateFactParams) precheck() error { return checkContent(p.NewContent) }

package handlers

import (
	"context"
	"time"

	"github.com/knowmind/knowmind"
)

// CaptureParams are knowmind_capture's parameters.
type CaptureParams struct {
	Text       string `json:"text" jsonschema:"raw text to learn from: a conversation turn, meeting notes, an e-mail (at most 100,000 characters)" validate:"required,notblank,max=100000"`
	Source     string `json:"source,omitempty" jsonschema:"where the text comes from, free text" validate:"max=2000"`
	OccurredAt string `json:"occurred_at,omitempty" jsonschema:"ISO 8601 time the text is about (default now); stored facts are valid from then"`
	Category   string `json:"category,omitempty" jsonschema:"one of the domain's categories (see the tool description)" validate:"max=100"`
	Extractor  string `json:"extractor,omitempty" jsonschema:"rules (offline heuristics) or llm when configured; default: the service's" validate:"max=64"`
}

// CaptureResult is the seed's {stored, drafts, pm_matches, conflicts}.
type CaptureResult = knowmind.CaptureResult

// capture runs extraction and confidence routing on the text (see
// graph.Tenant.Capture). An unreachable llm server is -32000.
func (s *service) capture(ctx context.Context, p CaptureParams) (CaptureResult, error) {
	ex, err := s.engine.extractor(p.Extractor)
	if err != nil {
		return CaptureResult{}, err
	}
	in := knowmind.CaptureInput{Text: p.Text, Source: p.Source, Category: p.Category}
	in.EntityTypes, in.Categories = s.engine.vocab.get()
	if p.OccurredAt != "" {
		at, err := time.Parse(time.RFC3339, p.OccurredAt)
		if err != nil {
			return CaptureResult{}, knowmind.InvalidParam("occurred_at", "occurred_at must be an ISO 8601 time such as 2026-03-12T10:00:00Z")
		}
		in.OccurredAt = &at
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return CaptureResult{}, err
	}
	return t.Capture(ctx, in, ex)
}

package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// captureTool declares knowmind_capture (tools.go: toolList).
var captureTool = declare(tool{
	Name:  "knowmind_capture",
	Title: "Capture facts from text",
	Description: "Learns from raw text (a conversation turn, meeting notes): extracts facts with their entities, stores " +
		"the confident ones, keeps unsure ones as drafts (knowmind_review_draft) and reports contradictions with " +
		"current memories. The same text again writes nothing.",
	More: func(s *service) string {
		return " Extractors: " + strings.Join(s.engine.names(), ", ") + "; default " + s.engine.def + "."
	},
	Vocabulary: true,
	Scope:      knowmind.ScopeWrite,
	Idempotent: true,
	Toolset:    knowmind.ToolsetEngine,
}, (*service).capture)

// CaptureParams are knowmind_capture's parameters.
type CaptureParams struct {
	Text       string `json:"text" jsonschema:"raw text to learn from: a conversation turn, meeting notes, an e-mail" validate:"required,notblank,max=100000"`
	Source     string `json:"source,omitempty" jsonschema:"where the text comes from, free text" validate:"max=2000"`
	OccurredAt string `json:"occurred_at,omitempty" jsonschema:"ISO 8601 time the text is about (default now); stored facts are valid from then"`
	Category   string `json:"category,omitempty" jsonschema:"one of the domain's categories (see the tool description)" validate:"max=100"`
	Extractor  string `json:"extractor,omitempty" jsonschema:"rules (offline) or llm when configured; default: the service's" validate:"max=64"`
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

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// setCaptureThresholdsTool declares knowmind_set_capture_thresholds (tools.go: toolList).
var setCaptureThresholdsTool = declare(tool{
	Name:        "knowmind_set_capture_thresholds",
	Title:       "Set capture thresholds",
	Description: "Sets the workspace's base thresholds of knowmind_capture (store, draft).",
	Scope:       knowmind.ScopeAdmin,
	Idempotent:  true,
	Destructive: true, // replaces the thresholds set before
	Toolset:     knowmind.ToolsetEngine,
}, (*service).setCaptureThresholds)

// SetCaptureThresholdsParams are knowmind_set_capture_thresholds' parameters.
type SetCaptureThresholdsParams struct {
	StoreThreshold float64 `json:"store_threshold" jsonschema:"confidence from which facts are stored directly (default 0.85)" validate:"required,gt=0,lte=1"`
	DraftThreshold float64 `json:"draft_threshold" jsonschema:"confidence from which facts are kept as drafts; below they are dropped (default 0.40)" validate:"required,gt=0,lte=1"`
}

// SetCaptureThresholdsResult echoes the tenant's new base thresholds.
type SetCaptureThresholdsResult struct {
	Base knowmind.Thresholds `json:"base"`
}

func (s *service) setCaptureThresholds(ctx context.Context, p SetCaptureThresholdsParams) (SetCaptureThresholdsResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return SetCaptureThresholdsResult{}, err
	}
	th := knowmind.Thresholds{Store: p.StoreThreshold, Draft: p.DraftThreshold}
	if err := t.SetThresholds(ctx, th); err != nil {
		return SetCaptureThresholdsResult{}, err
	}
	return SetCaptureThresholdsResult{Base: th}, nil
}

package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// captureCalibrationTool declares knowmind_capture_calibration (tools.go: toolList).
var captureCalibrationTool = declare(tool{
	Name:  "knowmind_capture_calibration",
	Title: "Capture routing calibration",
	Description: "How knowmind_capture routes an extractor's facts here: base and review-adjusted thresholds, accept and " +
		"reject counts per confidence bucket.",
	Scope:    knowmind.ScopeRead,
	ReadOnly: true,
	Toolset:  knowmind.ToolsetEngine,
}, (*service).captureCalibration)

// CaptureCalibrationParams are knowmind_capture_calibration's parameters.
type CaptureCalibrationParams struct {
	Extractor string `json:"extractor,omitempty" jsonschema:"rules or llm; default: the service's" validate:"max=64"`
}

// CaptureCalibrationResult shows how captures of an extractor are routed and why.
type CaptureCalibrationResult struct {
	Extractor string `json:"extractor"`
	// Base are the tenant's thresholds as set; Thresholds after the reviews moved them.
	Base       knowmind.Thresholds          `json:"base"`
	Thresholds knowmind.Thresholds          `json:"thresholds"`
	Buckets    []knowmind.CalibrationBucket `json:"buckets"`
}

func (s *service) captureCalibration(ctx context.Context, p CaptureCalibrationParams) (CaptureCalibrationResult, error) {
	ex, err := s.engine.extractor(p.Extractor)
	if err != nil {
		return CaptureCalibrationResult{}, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return CaptureCalibrationResult{}, err
	}
	base, th, buckets, err := t.Thresholds(ctx, ex.Name())
	if err != nil {
		return CaptureCalibrationResult{}, err
	}
	if buckets == nil {
		buckets = []knowmind.CalibrationBucket{}
	}
	return CaptureCalibrationResult{Extractor: ex.Name(), Base: base, Thresholds: th, Buckets: buckets}, nil
}

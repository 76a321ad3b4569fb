package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// StartSessionParams are knowmind_start_session's parameters.
type StartSessionParams struct {
	Project string `json:"project,omitempty" jsonschema:"project handle to open: adds its index, knownValues and what others changed since your last start_session with it" validate:"max=64"`
}

// StartSessionResult is the session's bootstrap: profile, projects and, with a project, its
// index, delta and knownValues.
type StartSessionResult = knowmind.Session

func (s *service) startSession(ctx context.Context, p StartSessionParams) (StartSessionResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return StartSessionResult{}, err
	}
	scope, err := noteScope(ctx)
	if err != nil {
		return StartSessionResult{}, err
	}
	return t.StartSession(ctx, scope, p.Project)
}

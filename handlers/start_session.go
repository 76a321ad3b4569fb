package handlers

import (
	"context"

	"github.com/knowmind/knowmind"
)

// startSessionTool declares knowmind_start_session (tools.go: toolList).
var startSessionTool = declare(tool{
	Name:  "knowmind_start_session",
	Title: "Start a session",
	Description: "Call first in a session: the user's profile and your projects; with project also its index, the tags and " +
		"types in use, and what others changed there since your last visit.",
	Scope: knowmind.ScopeRead, Idempotent: true,
	Toolset: knowmind.ToolsetNotes,
}, (*service).startSession)

// StartSessionParams are knowmind_start_session's parameters.
type StartSessionParams struct {
	Project string `json:"project,omitempty" jsonschema:"project handle to open: adds its index, values in use and changes since your last visit" validate:"max=64"`
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
